/* Elementwise operations: correctly rounded arithmetic on low-precision
 * floats (against float64 computed here), integers, comparisons and NaN,
 * broadcasting, output dtypes and rounding, in-place and bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "support/alloc_failures.h"

/* A 1-d array of n random bit patterns of dt (any value, NaN and inf too). */
static mxp_array *random_bits(mxp_dtype dt, int64_t n, uint64_t seed)
{
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_empty(&a, dt, 1, &n), MXP_OK);
    unsigned char *p = mxp_array_data(a);
    uint64_t s = seed;
    for (int64_t i = 0; i < n * (int64_t)mxp_dtype_itemsize(dt); i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (unsigned char)(s >> 56);
    }
    return a;
}

static double *as_f64(const mxp_array *a)
{
    int64_t n = mxp_array_size(a);
    double *d = malloc((size_t)(n ? n : 1) * sizeof *d);
    assert_int_equal(mxp_convert(d, MXP_F64, mxp_array_data(a), mxp_array_dtype(a), (size_t)n, NULL), MXP_OK);
    return d;
}

static double ref_binary(mxp_binary_op op, double x, double y)
{
    switch (op) {
    case MXP_OP_ADD: return x + y;
    case MXP_OP_SUBTRACT: return x - y;
    case MXP_OP_MULTIPLY: return x * y;
    default: return x / y;
    }
}

/* Low-precision + - * / equal float64's exact-then-rounded-once result. */
static void test_low_precision_arithmetic_is_correctly_rounded(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_BF16, MXP_F16, MXP_E4M3, MXP_E5M2, MXP_F32 };
    const int64_t n = 20000;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        mxp_dtype dt = types[t];
        mxp_array *a = random_bits(dt, n, 11 + t), *b = random_bits(dt, n, 99 + t);
        double *x = as_f64(a), *y = as_f64(b);
        size_t size = mxp_dtype_itemsize(dt);
        unsigned char *want = malloc((size_t)n * size);
        for (int op = MXP_OP_ADD; op <= MXP_OP_DIVIDE; op++) {
            mxp_array *r = NULL;
            assert_int_equal(mxp_binary(&r, (mxp_binary_op)op, a, b, NULL), MXP_OK);
            assert_int_equal(mxp_array_dtype(r), dt);
            double *z = malloc((size_t)n * sizeof *z);
            for (int64_t i = 0; i < n; i++)
                z[i] = ref_binary((mxp_binary_op)op, x[i], y[i]);
            assert_int_equal(mxp_convert(want, dt, z, MXP_F64, (size_t)n, NULL), MXP_OK);
            const unsigned char *got = mxp_array_data(r);
            for (int64_t i = 0; i < n; i++) {
                if (z[i] != z[i]) /* NaN: any NaN */
                    continue;
                if (memcmp(got + i * size, want + i * size, size))
                    fail_msg("%s %s: %g op %g gave a result other than the correctly rounded one",
                             mxp_dtype_name(dt), mxp_binary_op_name((mxp_binary_op)op), x[i], y[i]);
            }
            free(z);
            mxp_array_free(r);
        }
        free(want);
        free(x);
        free(y);
        mxp_array_free(a);
        mxp_array_free(b);
    }
}

static double ulps(double got, double want, mxp_dtype dt)
{
    if (got == want || (got != got && want != want))
        return 0;
    if (isinf(want) || isinf(got))
        return INFINITY;
    const mxp_dtype_traits *t = mxp_dtype_get_traits(dt);
    double aw = fabs(want);
    int e = aw < t->min_normal ? (int)log2(t->min_normal) : ilogb(aw);
    return fabs(got - want) / ldexp(1.0, e - t->mant_bits);
}

/* Unary functions within 1 ulp of the float64 reference, over the whole
 * range (overflow, underflow, NaN, inf, subnormals). */
static void test_unary_functions_within_one_ulp(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_F32, MXP_BF16, MXP_F16, MXP_E4M3 };
    const int64_t n = 20000;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        mxp_dtype dt = types[t];
        mxp_array *a = random_bits(dt, n, 5 + t);
        double *x = as_f64(a);
        for (int op = 0; op <= MXP_OP_SILU; op++) { /* test_ufuncs covers the rest */
            mxp_array *r = NULL;
            assert_int_equal(mxp_unary(&r, (mxp_unary_op)op, a, NULL), MXP_OK);
            double *y = as_f64(r);
            for (int64_t i = 0; i < n; i++) {
                double v = x[i], want;
                switch (op) {
                case MXP_OP_NEGATIVE: want = -v; break;
                case MXP_OP_ABS: want = fabs(v); break;
                case MXP_OP_SQRT: want = sqrt(v); break;
                case MXP_OP_EXP: want = exp(v); break;
                case MXP_OP_LOG: want = log(v); break;
                case MXP_OP_TANH: want = tanh(v); break;
                /* long double references, written so nothing cancels */
                case MXP_OP_SIGMOID: want = (double)(v >= 0 ? 1 / (1 + expl(-v)) : expl(v) / (1 + expl(v))); break;
                case MXP_OP_RELU: want = v > 0 ? v : v == v ? 0 : v; break;
                case MXP_OP_GELU: want = (double)(0.5L * v * erfcl(-(long double)v / sqrtl(2.0L))); break;
                case MXP_OP_GELU_TANH: {
                    long double z = sqrtl(2 / 3.14159265358979323846L) * (v + 0.044715L * v * v * v);
                    want = (double)(v / (1 + expl(-2 * z)));
                    break;
                }
                default: want = (double)(v >= 0 ? v / (1 + expl(-v)) : v * expl(v) / (1 + expl(v))); break;
                }
                /* the reference rounded to the type (overflow to inf included) */
                double w;
                unsigned char tmp[8];
                mxp_convert(tmp, dt, &want, MXP_F64, 1, NULL);
                mxp_convert(&w, MXP_F64, tmp, dt, 1, NULL);
                if (ulps(y[i], w, dt) > 1 && !(isinf(w) && y[i] == w))
                    fail_msg("%s(%s %.9g) = %.9g, reference %.9g", mxp_unary_op_name((mxp_unary_op)op),
                             mxp_dtype_name(dt), v, y[i], w);
            }
            free(y);
            mxp_array_free(r);
        }
        free(x);
        mxp_array_free(a);
    }
}

static void test_result_types_follow_numpy(void **state)
{
    (void)state;
    assert_int_equal(mxp_binary_result_type(MXP_OP_ADD, MXP_BF16, MXP_F16), MXP_F32);
    assert_int_equal(mxp_binary_result_type(MXP_OP_ADD, MXP_S8, MXP_U8), MXP_S16);
    assert_int_equal(mxp_binary_result_type(MXP_OP_DIVIDE, MXP_S32, MXP_S32), MXP_F64);
    assert_int_equal(mxp_binary_result_type(MXP_OP_DIVIDE, MXP_F16, MXP_S8), MXP_F16);
    assert_int_equal(mxp_binary_result_type(MXP_OP_LESS, MXP_F16, MXP_F64), MXP_BOOL);
    assert_int_equal(mxp_unary_result_type(MXP_OP_SQRT, MXP_S8), MXP_F16);
    assert_int_equal(mxp_unary_result_type(MXP_OP_EXP, MXP_S16), MXP_F32);
    assert_int_equal(mxp_unary_result_type(MXP_OP_EXP, MXP_S64), MXP_F64);
    assert_int_equal(mxp_unary_result_type(MXP_OP_ABS, MXP_S8), MXP_S8);
    assert_int_equal(mxp_unary_result_type(MXP_OP_EXP, (mxp_dtype)0), MXP_DTYPE_INVALID);
    assert_string_equal(mxp_binary_op_name(MXP_OP_GREATER_EQUAL), "greater_equal");
    assert_string_equal(mxp_unary_op_name(MXP_OP_GELU_TANH), "gelu_tanh");
}

static mxp_array *vec_f64(const double *v, int64_t n)
{
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_empty(&a, MXP_F64, 1, &n), MXP_OK);
    memcpy(mxp_array_data(a), v, (size_t)n * 8);
    return a;
}

static void test_integers_comparisons_and_nan(void **state)
{
    (void)state;
    const int64_t n = 4;
    mxp_array *a = NULL, *b = NULL, *r = NULL;
    assert_int_equal(mxp_array_empty(&a, MXP_S8, 1, &n), MXP_OK);
    assert_int_equal(mxp_array_empty(&b, MXP_S8, 1, &n), MXP_OK);
    memcpy(mxp_array_data(a), (int8_t[]){ 100, -100, 7, -7 }, 4);
    memcpy(mxp_array_data(b), (int8_t[]){ 100, -100, 2, 2 }, 4);
    assert_int_equal(mxp_binary(&r, MXP_OP_ADD, a, b, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(r), ((int8_t[]){ 127, -128, 9, -5 }), 4); /* saturates */
    mxp_array_free(r);
    assert_int_equal(mxp_binary(&r, MXP_OP_DIVIDE, a, b, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(r), MXP_F64);
    assert_true(((double *)mxp_array_data(r))[2] == 3.5 && ((double *)mxp_array_data(r))[3] == -3.5);
    mxp_array_free(r);
    assert_int_equal(mxp_binary(&r, MXP_OP_MAXIMUM, a, b, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(r), ((int8_t[]){ 100, -100, 7, 2 }), 4);
    mxp_array_free(r);
    mxp_array_free(a);
    mxp_array_free(b);
    const double x[4] = { NAN, 1.0, -0.0, INFINITY }, y[4] = { 1.0, NAN, 0.0, INFINITY };
    a = vec_f64(x, 4);
    b = vec_f64(y, 4);
    assert_int_equal(mxp_binary(&r, MXP_OP_MAXIMUM, a, b, NULL), MXP_OK);
    const double *z = mxp_array_data(r);
    assert_true(isnan(z[0]) && isnan(z[1]) && z[3] == INFINITY);
    mxp_array_free(r);
    assert_int_equal(mxp_binary(&r, MXP_OP_EQUAL, a, b, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(r), MXP_BOOL);
    assert_memory_equal(mxp_array_data(r), ((uint8_t[]){ 0, 0, 1, 1 }), 4);
    mxp_array_free(r);
    assert_int_equal(mxp_binary(&r, MXP_OP_NOT_EQUAL, a, b, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(r), ((uint8_t[]){ 1, 1, 0, 0 }), 4);
    mxp_array_free(r);
    mxp_array_free(a);
    mxp_array_free(b);
}

static void test_broadcasting_output_dtype_rounding_and_in_place(void **state)
{
    (void)state;
    mxp_array *col = NULL, *row = NULL, *r = NULL;
    const int64_t s31[2] = { 3, 1 }, s14[2] = { 1, 4 }, s5 = 5;
    assert_int_equal(mxp_array_arange(&col, MXP_F32, 0, 3, 1), MXP_OK);
    mxp_array *c2 = NULL;
    assert_int_equal(mxp_array_reshape(&c2, col, 2, s31), MXP_OK);
    assert_int_equal(mxp_array_full(&row, MXP_BF16, 2, s14, 10.0, NULL), MXP_OK);
    assert_int_equal(mxp_binary(&r, MXP_OP_ADD, c2, row, NULL), MXP_OK);
    assert_int_equal(mxp_array_ndim(r), 2);
    assert_int_equal(mxp_array_shape(r)[0], 3);
    assert_int_equal(mxp_array_shape(r)[1], 4);
    assert_int_equal(mxp_array_dtype(r), MXP_F32);
    assert_true(((float *)mxp_array_data(r))[11] == 12.0f);
    mxp_array_free(r);
    mxp_array *v5 = NULL;
    assert_int_equal(mxp_array_zeros(&v5, MXP_F32, 1, &s5), MXP_OK);
    assert_int_equal(mxp_binary(&r, MXP_OP_ADD, c2, v5, NULL), MXP_OK); /* (3,1) + (5,) -> (3,5) */
    mxp_array_free(r);
    assert_int_equal(mxp_binary(&r, MXP_OP_ADD, row, v5, NULL), MXP_ERR_SHAPE);
    assert_null(r);
    /* out_dtype with a rounding mode: 0.1 in float32, rounded up to bf16. */
    mxp_array *t = NULL, *zero = NULL;
    assert_int_equal(mxp_array_full(&t, MXP_F32, 1, &s5, 0.1, NULL), MXP_OK);
    assert_int_equal(mxp_array_zeros(&zero, MXP_F32, 1, &s5), MXP_OK);
    mxp_ops_opts o = { .out_dtype = MXP_BF16, .convert = { .rounding = MXP_ROUND_UP } };
    assert_int_equal(mxp_binary(&r, MXP_OP_ADD, t, zero, &o), MXP_OK);
    assert_int_equal(((uint16_t *)mxp_array_data(r))[4], 0x3dcd);
    mxp_array_free(r);
    /* In place: t = t * t; read-only and wrong-shaped outputs are refused. */
    assert_int_equal(mxp_binary_into(t, MXP_OP_MULTIPLY, t, t, NULL), MXP_OK);
    assert_true(((float *)mxp_array_data(t))[0] == 0.1f * 0.1f);
    mxp_array *ro = NULL;
    assert_int_equal(mxp_array_broadcast_to(&ro, t, 1, &s5), MXP_OK);
    assert_int_equal(mxp_binary_into(ro, MXP_OP_ADD, t, t, NULL), MXP_ERR_READONLY);
    assert_int_equal(mxp_binary_into(row, MXP_OP_ADD, t, t, NULL), MXP_ERR_SHAPE);
    /* Shifted alias: out = t[1:], input t[:-1] — read before written. */
    mxp_array *ar = NULL, *hi = NULL, *lo = NULL;
    assert_int_equal(mxp_array_arange(&ar, MXP_F64, 0, 6, 1), MXP_OK);
    mxp_slice s_hi[1] = { { 1, MXP_SLICE_NONE, 1 } }, s_lo[1] = { { MXP_SLICE_NONE, -1, 1 } };
    assert_int_equal(mxp_array_slice(&hi, ar, 1, s_hi), MXP_OK);
    assert_int_equal(mxp_array_slice(&lo, ar, 1, s_lo), MXP_OK);
    assert_int_equal(mxp_unary_into(hi, MXP_OP_NEGATIVE, lo, NULL), MXP_OK);
    const double *d = mxp_array_data(ar);
    assert_true(d[0] == 0 && d[1] == -0.0 && d[2] == -1 && d[5] == -4);
    mxp_array_free(hi);
    mxp_array_free(lo);
    mxp_array_free(ar);
    mxp_array_free(ro);
    mxp_array_free(t);
    mxp_array_free(zero);
    mxp_array_free(v5);
    mxp_array_free(c2);
    mxp_array_free(col);
    mxp_array_free(row);
    /* Bad input. */
    assert_int_equal(mxp_binary(&r, MXP_OP_ADD, NULL, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_unary(&r, (mxp_unary_op)77, v5, NULL), MXP_ERR_INVALID_ARGUMENT);
}

static void test_strided_inputs_match_contiguous(void **state)
{
    (void)state;
    mxp_array *a = NULL, *t = NULL, *c = NULL, *r1 = NULL, *r2 = NULL;
    const int64_t shape[2] = { 37, 53 };
    assert_int_equal(mxp_array_random_normal(&a, MXP_BF16, 2, shape, 0, 1, 3), MXP_OK);
    assert_int_equal(mxp_array_transpose(&t, a, NULL), MXP_OK);
    assert_int_equal(mxp_array_ascontiguous(&c, t, 'C'), MXP_OK);
    mxp_ops_opts sr = { .convert = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 9 } };
    assert_int_equal(mxp_unary(&r1, MXP_OP_GELU, t, &sr), MXP_OK);
    assert_int_equal(mxp_unary(&r2, MXP_OP_GELU, c, &sr), MXP_OK);
    assert_memory_equal(mxp_array_data(r1), mxp_array_data(r2), 37 * 53 * 2);
    mxp_array_free(r1);
    mxp_array_free(r2);
    mxp_array_free(a);
    mxp_array_free(t);
    mxp_array_free(c);
}

/* Operations and reductions: every allocation failure is reported as
 * MXP_ERR_NO_MEMORY and leaks nothing. */
static mxp_status ops_workload(void)
{
    mxp_array *a = NULL, *b = NULL, *t = NULL, *r1 = NULL, *r2 = NULL, *r3 = NULL, *r4 = NULL;
    const int64_t shape[2] = { 9, 5 }, row = 5;
    const int ax = 0;
    mxp_reduce_opts keep = { .keepdims = true };
    mxp_status st = mxp_array_random_normal(&a, MXP_BF16, 2, shape, 0, 1, 1);
    if (st == MXP_OK)
        st = mxp_array_random_normal(&b, MXP_F16, 1, &row, 0, 1, 2);
    if (st == MXP_OK)
        st = mxp_array_transpose(&t, a, NULL);
    if (st == MXP_OK)
        st = mxp_binary(&r1, MXP_OP_MULTIPLY, a, b, NULL);
    if (st == MXP_OK)
        st = mxp_unary(&r2, MXP_OP_SILU, t, NULL);
    if (st == MXP_OK)
        st = mxp_reduce(&r3, MXP_REDUCE_STD, a, 1, &ax, &keep);
    if (st == MXP_OK)
        st = mxp_binary_into(r1, MXP_OP_ADD, r1, b, NULL);
    if (st == MXP_OK)
        st = mxp_reduce(&r4, MXP_REDUCE_ARGMAX, t, 1, &ax, NULL);
    mxp_array_free(a);
    mxp_array_free(b);
    mxp_array_free(t);
    mxp_array_free(r1);
    mxp_array_free(r2);
    mxp_array_free(r3);
    mxp_array_free(r4);
    return st;
}

static void test_every_allocation_failure_is_reported_and_leaks_nothing(void **state)
{
    (void)state;
    assert_true(check_every_allocation_failure(ops_workload) >= 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_low_precision_arithmetic_is_correctly_rounded),
        cmocka_unit_test(test_unary_functions_within_one_ulp),
        cmocka_unit_test(test_result_types_follow_numpy),
        cmocka_unit_test(test_integers_comparisons_and_nan),
        cmocka_unit_test(test_broadcasting_output_dtype_rounding_and_in_place),
        cmocka_unit_test(test_strided_inputs_match_contiguous),
        cmocka_unit_test(test_every_allocation_failure_is_reported_and_leaks_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

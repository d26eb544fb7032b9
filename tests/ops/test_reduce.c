/* Reductions: the accuracy the issue promises (2^24 float16/bfloat16
 * normals summed to within 1 ulp of the exact sum), axes and keepdims,
 * NaN propagation, argmax/argmin, mean/var/std/norm2, the summation
 * algorithms, integers, and bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

/* The exact sum of doubles, rounded once: Neumaier in long double is
 * plenty for 2^24 values of 11 significant bits. */
static double exact_sum(const double *x, int64_t n)
{
    long double s = 0, c = 0;
    for (int64_t i = 0; i < n; i++) {
        long double t = s + x[i];
        c += fabsl(s) >= fabsl((long double)x[i]) ? (s - t) + x[i] : ((long double)x[i] - t) + s;
        s = t;
    }
    return (double)(s + c);
}

static double scalar(const mxp_array *r)
{
    double d;
    assert_int_equal(mxp_convert(&d, MXP_F64, mxp_array_data(r), mxp_array_dtype(r), 1, NULL), MXP_OK);
    return d;
}

static void check_big_sum(mxp_dtype dt)
{
    const int64_t n = 1 << 24;
    mxp_array *a = NULL, *r = NULL;
    assert_int_equal(mxp_array_random_normal(&a, dt, 1, &n, 0, 1, 2024), MXP_OK);
    double *x = malloc((size_t)n * sizeof *x);
    assert_int_equal(mxp_convert(x, MXP_F64, mxp_array_data(a), dt, (size_t)n, NULL), MXP_OK);
    double want = exact_sum(x, n);
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_SUM, a, 0, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(r), dt);
    assert_int_equal(mxp_array_ndim(r), 0);
    double got = scalar(r);
    const mxp_dtype_traits *t = mxp_dtype_get_traits(dt);
    double ulp = ldexp(1.0, ilogb(want) - t->mant_bits);
    print_message("%s: sum of 2^24 normals = %.6g, exact %.6f (%.2f ulp)\n", t->name, got, want,
                  fabs(got - want) / ulp);
    assert_true(fabs(got - want) <= ulp);
    mxp_array_free(r);
    free(x);
    mxp_array_free(a);
}

static void test_sum_of_2_24_normals_is_within_one_ulp(void **state)
{
    (void)state;
    check_big_sum(MXP_F16);
    check_big_sum(MXP_BF16);
}

static void test_sum_of_ones_in_bfloat16_does_not_stop_at_256(void **state)
{
    (void)state;
    const int64_t n = 1 << 20;
    mxp_array *a = NULL, *r = NULL;
    assert_int_equal(mxp_array_ones(&a, MXP_BF16, 1, &n), MXP_OK);
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_SUM, a, 0, NULL, NULL), MXP_OK);
    assert_true(scalar(r) == 1048576.0);
    mxp_array_free(r);
    mxp_reduce_opts naive = { .algorithm = MXP_SUM_NAIVE }; /* float32 accumulator: still exact to 2^24 */
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_SUM, a, 0, NULL, &naive), MXP_OK);
    assert_true(scalar(r) == 1048576.0);
    mxp_array_free(r);
    mxp_array_free(a);
}

/* A float16 accumulator rounds the running sum after every addition: the
 * naive sum of 4096 ones stalls at 2048 (2048 + 1 is a tie, to even 2048),
 * bfloat16's at 256; pairwise and Kahan summation in the same format get
 * 4096 exactly. */
static double sum_with(const mxp_array *a, mxp_dtype acc, mxp_sum_algorithm alg, mxp_reduce_op op)
{
    mxp_array *r = NULL;
    mxp_reduce_opts o = { .acc_dtype = acc, .algorithm = alg, .out_dtype = MXP_F64 };
    assert_int_equal(mxp_reduce(&r, op, a, 0, NULL, &o), MXP_OK);
    const double v = scalar(r);
    mxp_array_free(r);
    return v;
}

static void test_low_precision_accumulators(void **state)
{
    (void)state;
    const int64_t n = 4096;
    mxp_array *ones = NULL, *ones32 = NULL, *tenths = NULL;
    assert_int_equal(mxp_array_ones(&ones, MXP_F16, 1, &n), MXP_OK);
    assert_int_equal(mxp_array_ones(&ones32, MXP_F32, 1, &n), MXP_OK);
    for (int lvl = MXP_ISA_SCALAR; lvl <= (int)mxp_isa_supported(); lvl++) {
        assert_int_equal(mxp_set_isa((mxp_isa)lvl), MXP_OK);
        assert_true(sum_with(ones, MXP_F16, MXP_SUM_NAIVE, MXP_REDUCE_SUM) == 2048.0);
        assert_true(sum_with(ones32, MXP_F16, MXP_SUM_NAIVE, MXP_REDUCE_SUM) == 2048.0);
        assert_true(sum_with(ones, MXP_BF16, MXP_SUM_NAIVE, MXP_REDUCE_SUM) == 256.0);
        assert_true(sum_with(ones, MXP_F16, MXP_SUM_PAIRWISE, MXP_REDUCE_SUM) == 4096.0);
        assert_true(sum_with(ones, MXP_F16, MXP_SUM_KAHAN, MXP_REDUCE_SUM) == 4096.0);
        assert_true(sum_with(ones, MXP_F32, MXP_SUM_NAIVE, MXP_REDUCE_SUM) == 4096.0);
        /* mean: the stalled sum / n, rounded to float16 */
        assert_true(sum_with(ones, MXP_F16, MXP_SUM_NAIVE, MXP_REDUCE_MEAN) == 0.5);
    }
    assert_int_equal(mxp_set_isa(mxp_isa_supported()), MXP_OK);
    /* float16 0.1 is 0.0999755859375; ten of them added left to right in
     * float16 (each sum rounded: 0.5, 0.60009765625, 0.7001953125, ...,
     * as NumPy's np.float16 loop gives) reach 1.0, the float32 sum is the
     * exact 0.999755859375.  Float64 inputs enter the accumulator's
     * format first: the same sums. */
    const int64_t ten = 10;
    mxp_array *tenths16 = NULL;
    assert_int_equal(mxp_array_full(&tenths16, MXP_F16, 1, &ten, 0.1, NULL), MXP_OK);
    assert_int_equal(mxp_array_full(&tenths, MXP_F64, 1, &ten, 0.1, NULL), MXP_OK);
    assert_true(sum_with(tenths16, MXP_F16, MXP_SUM_NAIVE, MXP_REDUCE_SUM) == 1.0);
    assert_true(sum_with(tenths16, MXP_F32, MXP_SUM_NAIVE, MXP_REDUCE_SUM) == 0.999755859375);
    assert_true(sum_with(tenths, MXP_F16, MXP_SUM_NAIVE, MXP_REDUCE_SUM) == 1.0);
    double s;
    assert_int_equal(mxp_sum_strided(&s, mxp_array_data(tenths16), MXP_F16, 2, 10, MXP_F32), MXP_OK);
    assert_true(s == 0.999755859375);
    assert_int_equal(mxp_sum_strided(&s, mxp_array_data(tenths16), MXP_F16, 2, 10, MXP_BF16), MXP_OK);
    assert_true(s == 1.0); /* bfloat16 0.0999755859375 -> 0.10009765625 ... rounded sums reach 1 */
    mxp_array_free(tenths16);
    /* overflow: float16's running sum passes 65504 and becomes inf */
    const int64_t three = 3;
    mxp_array *big = NULL;
    assert_int_equal(mxp_array_full(&big, MXP_F32, 1, &three, 30000.0, NULL), MXP_OK);
    assert_true(isinf(sum_with(big, MXP_F16, MXP_SUM_NAIVE, MXP_REDUCE_SUM)));
    assert_true(sum_with(big, MXP_BF16, MXP_SUM_NAIVE, MXP_REDUCE_SUM) == 90112.0); /* 29952 x 3, rounded */
    /* max/min ignore the accumulator (they do not add) */
    ((float *)mxp_array_data(big))[1] = 30001.0f;
    assert_true(sum_with(big, MXP_F16, MXP_SUM_NAIVE, MXP_REDUCE_MAX) == 30001.0);
    mxp_array_free(big);
    mxp_array_free(tenths);
    mxp_array_free(ones32);
    mxp_array_free(ones);
}

static void test_algorithms_differ_where_they_should(void **state)
{
    (void)state;
    const int64_t n = 1000001;
    mxp_array *a = NULL, *r = NULL;
    assert_int_equal(mxp_array_full(&a, MXP_F32, 1, &n, 1e-8, NULL), MXP_OK);
    ((float *)mxp_array_data(a))[0] = 1.0f;
    mxp_reduce_opts o = { .acc_dtype = MXP_F32, .algorithm = MXP_SUM_NAIVE, .out_dtype = MXP_F64 };
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_SUM, a, 0, NULL, &o), MXP_OK);
    assert_true(scalar(r) == 1.0); /* every 1e-8 is lost against 1.0 */
    mxp_array_free(r);
    o.algorithm = MXP_SUM_KAHAN;
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_SUM, a, 0, NULL, &o), MXP_OK);
    assert_true(fabs(scalar(r) - 1.01) < 1e-6);
    mxp_array_free(r);
    o.algorithm = MXP_SUM_PAIRWISE;
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_SUM, a, 0, NULL, &o), MXP_OK);
    assert_true(fabs(scalar(r) - 1.01) < 1e-5);
    mxp_array_free(r);
    mxp_array_free(a);
}

static void test_axes_keepdims_and_values(void **state)
{
    (void)state;
    mxp_array *a = NULL, *v = NULL, *r = NULL;
    const int64_t shape[3] = { 2, 3, 4 };
    assert_int_equal(mxp_array_arange(&a, MXP_F64, 0, 24, 1), MXP_OK);
    assert_int_equal(mxp_array_reshape(&v, a, 3, shape), MXP_OK);
    const int axes[2] = { 0, -1 };
    mxp_reduce_opts keep = { .keepdims = true };
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_SUM, v, 2, axes, &keep), MXP_OK);
    assert_int_equal(mxp_array_ndim(r), 3);
    assert_true(mxp_array_shape(r)[0] == 1 && mxp_array_shape(r)[1] == 3 && mxp_array_shape(r)[2] == 1);
    /* sum over i,k of 12i + 4j + k = 2*4*4j + (0+12)*4 + 2*(0+1+2+3) = 32j + 60 */
    const double *d = mxp_array_data(r);
    assert_true(d[0] == 60 && d[1] == 92 && d[2] == 124);
    mxp_array_free(r);
    const int ax1 = 1;
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_MAX, v, 1, &ax1, NULL), MXP_OK);
    assert_int_equal(mxp_array_ndim(r), 2);
    assert_true(((double *)mxp_array_data(r))[7] == 23);
    mxp_array_free(r);
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_ARGMIN, v, 1, &ax1, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(r), MXP_S64);
    assert_int_equal(((int64_t *)mxp_array_data(r))[5], 0);
    mxp_array_free(r);
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_ARGMAX, v, 0, NULL, NULL), MXP_OK); /* flattened */
    assert_int_equal(*(int64_t *)mxp_array_data(r), 23);
    mxp_array_free(r);
    /* A transposed view gives the same per-axis results. */
    mxp_array *t = NULL;
    assert_int_equal(mxp_array_transpose(&t, v, NULL), MXP_OK);
    const int ax2 = 2;
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_MEAN, t, 1, &ax2, NULL), MXP_OK); /* (4,3) means over i */
    assert_true(((double *)mxp_array_data(r))[0] == 6.0);
    mxp_array_free(r);
    mxp_array_free(t);
    mxp_array_free(v);
    mxp_array_free(a);
}

static void test_statistics_and_integers(void **state)
{
    (void)state;
    const double x[6] = { 2, 4, 4, 4, 5, 7 };
    const int64_t n = 6;
    mxp_array *a = NULL, *r = NULL;
    assert_int_equal(mxp_array_empty(&a, MXP_F64, 1, &n), MXP_OK);
    memcpy(mxp_array_data(a), x, sizeof x);
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_MEAN, a, 0, NULL, NULL), MXP_OK);
    assert_true(scalar(r) == 13.0 / 3.0);
    mxp_array_free(r);
    mxp_reduce_opts ddof = { .ddof = 1 };
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_VAR, a, 0, NULL, &ddof), MXP_OK);
    double m = 13.0 / 3.0, ss = 0;
    for (int i = 0; i < 6; i++)
        ss += (x[i] - m) * (x[i] - m);
    assert_true(fabs(scalar(r) - ss / 5) < 1e-14);
    mxp_array_free(r);
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_STD, a, 0, NULL, NULL), MXP_OK);
    assert_true(fabs(scalar(r) - sqrt(ss / 6)) < 1e-14);
    mxp_array_free(r);
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_NORM2, a, 0, NULL, NULL), MXP_OK);
    assert_true(fabs(scalar(r) - sqrt(4 + 16 + 16 + 16 + 25 + 49.0)) < 1e-14);
    mxp_array_free(r);
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_PROD, a, 0, NULL, NULL), MXP_OK);
    assert_true(scalar(r) == 2 * 4 * 4 * 4 * 5 * 7.0);
    mxp_array_free(r);
    mxp_array_free(a);
    /* int8: the sum is int64 and does not overflow; max/min stay int8. */
    const int64_t m8 = 200;
    assert_int_equal(mxp_array_full(&a, MXP_S8, 1, &m8, 100, NULL), MXP_OK);
    ((int8_t *)mxp_array_data(a))[50] = -128;
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_SUM, a, 0, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(r), MXP_S64);
    assert_int_equal(*(int64_t *)mxp_array_data(r), 199 * 100 - 128);
    mxp_array_free(r);
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_MIN, a, 0, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(r), MXP_S8);
    assert_int_equal(*(int8_t *)mxp_array_data(r), -128);
    mxp_array_free(r);
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_ARGMIN, a, 0, NULL, NULL), MXP_OK);
    assert_int_equal(*(int64_t *)mxp_array_data(r), 50);
    mxp_array_free(r);
    mxp_array_free(a);
}

/* Contiguous float32 sums and means in float64 (the default) go through a
 * kernel that widens in registers at the AVX2/AVX-512 levels: the same bits
 * as the scalar level's convert-then-pairwise path, for lengths around the
 * 8-, 128- and 1024-element blocks, along either axis of a matrix, and for
 * a view starting one element in. */
static void test_float32_sums_are_the_same_bits_at_every_level(void **state)
{
    (void)state;
    const int64_t lens[] = { 0, 1, 7, 8, 9, 127, 128, 129, 255, 1023, 1024, 1025, 3001, 100003 };
    const mxp_reduce_op ops[2] = { MXP_REDUCE_SUM, MXP_REDUCE_MEAN };
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
        mxp_array *a = NULL;
        const int64_t n = lens[l] + 1;
        assert_int_equal(mxp_array_random_normal(&a, MXP_F32, 1, &n, 3, 10, (uint64_t)l), MXP_OK);
        float *x = mxp_array_data(a);
        if (n > 50)
            x[40] = 1e30f, x[41] = -1e30f, x[42] = 1e-40f; /* cancellation, a subnormal */
        for (int o = 0; o < 2; o++) {
            for (int start = 0; start < 2; start++) {
                const int64_t vshape = lens[l];
                mxp_array *w = NULL;
                mxp_slice sl = { start, start + vshape, 1 };
                assert_int_equal(mxp_array_slice(&w, a, 1, &sl), MXP_OK);
                uint64_t want = 0;
                for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
                    mxp_set_isa((mxp_isa)isa);
                    mxp_array *r = NULL;
                    if (ops[o] == MXP_REDUCE_MEAN && vshape == 0)
                        continue;
                    assert_int_equal(mxp_reduce(&r, ops[o], w, 0, NULL, NULL), MXP_OK);
                    double d = scalar(r);
                    uint64_t bits;
                    memcpy(&bits, &d, 8);
                    if (isa == 0)
                        want = bits;
                    else if (bits != want)
                        fail_msg("float32 %s of %lld at ISA %s: %a, the scalar level's bits %llx", ops[o] ? "mean" : "sum",
                                 (long long)vshape, mxp_isa_name((mxp_isa)isa), d, (unsigned long long)want);
                    mxp_array_free(r);
                }
                mxp_set_isa(MXP_ISA_COUNT - 1);
                mxp_array_free(w);
            }
        }
        mxp_array_free(a);
    }
    /* a matrix along each axis: rows are contiguous, columns are not */
    mxp_array *m = NULL;
    const int64_t shape[2] = { 37, 300 };
    assert_int_equal(mxp_array_random_normal(&m, MXP_F32, 2, shape, 0, 1, 9), MXP_OK);
    for (int axis = 0; axis < 2; axis++) {
        mxp_array *ref = NULL;
        mxp_set_isa(MXP_ISA_SCALAR);
        assert_int_equal(mxp_reduce(&ref, MXP_REDUCE_SUM, m, 1, &axis, NULL), MXP_OK);
        mxp_set_isa(MXP_ISA_COUNT - 1);
        mxp_array *r = NULL;
        assert_int_equal(mxp_reduce(&r, MXP_REDUCE_SUM, m, 1, &axis, NULL), MXP_OK);
        assert_memory_equal(mxp_array_data(r), mxp_array_data(ref), (size_t)mxp_array_size(r) * 4);
        mxp_array_free(r);
        mxp_array_free(ref);
    }
    mxp_array_free(m);
}

static void test_nan_propagates_identically_at_every_level(void **state)
{
    (void)state;
    const int64_t n = 3000;
    mxp_array *a = NULL, *r = NULL;
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        mxp_set_isa((mxp_isa)isa);
        assert_int_equal(mxp_array_random_normal(&a, MXP_BF16, 1, &n, 0, 1, 1), MXP_OK);
        ((uint16_t *)mxp_array_data(a))[1234] = 0xffc1; /* -NaN */
        ((uint16_t *)mxp_array_data(a))[2000] = 0x7fc0;
        assert_int_equal(mxp_reduce(&r, MXP_REDUCE_MAX, a, 0, NULL, NULL), MXP_OK);
        assert_true(isnan(scalar(r)));
        mxp_array_free(r);
        assert_int_equal(mxp_reduce(&r, MXP_REDUCE_ARGMAX, a, 0, NULL, NULL), MXP_OK);
        assert_int_equal(*(int64_t *)mxp_array_data(r), 1234); /* the first NaN */
        mxp_array_free(r);
        assert_int_equal(mxp_reduce(&r, MXP_REDUCE_ARGMIN, a, 0, NULL, NULL), MXP_OK);
        assert_int_equal(*(int64_t *)mxp_array_data(r), 1234);
        mxp_array_free(r);
        assert_int_equal(mxp_reduce(&r, MXP_REDUCE_SUM, a, 0, NULL, NULL), MXP_OK);
        assert_true(isnan(scalar(r)));
        mxp_array_free(r);
        mxp_array_free(a);
    }
    mxp_set_isa(MXP_ISA_COUNT - 1);
}

static void test_bad_input(void **state)
{
    (void)state;
    mxp_array *a = NULL, *r = NULL;
    const int64_t shape[2] = { 0, 3 };
    assert_int_equal(mxp_array_zeros(&a, MXP_F32, 2, shape), MXP_OK);
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_SUM, a, 0, NULL, NULL), MXP_OK); /* empty sum is 0 */
    assert_true(scalar(r) == 0);
    mxp_array_free(r);
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_MAX, a, 0, NULL, NULL), MXP_ERR_SHAPE);
    const int bad[1] = { 2 }, two[2] = { 0, 1 }, dup[2] = { 1, -1 };
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_SUM, a, 1, bad, NULL), MXP_ERR_INDEX);
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_SUM, a, 2, dup, NULL), MXP_ERR_INDEX);
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_ARGMAX, a, 2, two, NULL), MXP_ERR_INVALID_ARGUMENT);
    mxp_reduce_opts fp8acc = { .acc_dtype = MXP_E4M3 };
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_SUM, a, 0, NULL, &fp8acc), MXP_ERR_UNSUPPORTED);
    assert_non_null(strstr(mxp_last_error(), "accumulator dtype float8_e4m3fn: use float16, bfloat16, float32"));
    double d;
    assert_int_equal(mxp_sum_strided(&d, NULL, MXP_F16, 2, 0, MXP_E5M2), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_sum_strided(&d, NULL, MXP_F16, 2, 0, MXP_S8), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_reduce(&r, (mxp_reduce_op)42, a, 0, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_null(r);
    assert_string_equal(mxp_reduce_op_name(MXP_REDUCE_NORM2), "norm2");
    mxp_array_free(a);
}

/* ddof = INT64_MIN: n - ddof in int64 wrapped to a negative divisor and a
 * negative variance (issue 24); NumPy's max(n - ddof, 0) in double. */
static void test_extreme_ddof_does_not_wrap(void **state)
{
    (void)state;
    const double v[] = { 1, 2, 3, 4 };
    const int64_t n = 4;
    mxp_array *a = NULL, *r = NULL;
    assert_int_equal(mxp_array_empty(&a, MXP_F64, 1, &n), MXP_OK);
    memcpy(mxp_array_data(a), v, sizeof v);
    mxp_reduce_opts o = { .ddof = INT64_MIN };
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_VAR, a, 0, NULL, &o), MXP_OK);
    const double var = *(const double *)mxp_array_data(r);
    assert_true(var >= 0 && var < 1e-15); /* 5 / (4 + 2^63) */
    mxp_array_free(r);
    o.ddof = INT64_MAX; /* more ddof than elements: NumPy divides by zero */
    assert_int_equal(mxp_reduce(&r, MXP_REDUCE_STD, a, 0, NULL, &o), MXP_OK);
    assert_true(isinf(*(const double *)mxp_array_data(r)));
    mxp_array_free(r);
    mxp_array_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sum_of_2_24_normals_is_within_one_ulp),
        cmocka_unit_test(test_sum_of_ones_in_bfloat16_does_not_stop_at_256),
        cmocka_unit_test(test_algorithms_differ_where_they_should),
        cmocka_unit_test(test_low_precision_accumulators),
        cmocka_unit_test(test_axes_keepdims_and_values),
        cmocka_unit_test(test_statistics_and_integers),
        cmocka_unit_test(test_nan_propagates_identically_at_every_level),
        cmocka_unit_test(test_float32_sums_are_the_same_bits_at_every_level),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_extreme_ddof_does_not_wrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Scalar operands: mxp_array_scalar, mxp_binary_scalar & co. with exact
 * result dtypes (NumPy 1.24's value-based rules; pytest_scalar compares
 * every NumPy dtype with NumPy itself) and values; bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static double at(const mxp_array *a, int64_t i)
{
    double v;
    assert_int_equal(mxp_array_get_f64(a, mxp_array_ndim(a) ? &i : NULL, &v), MXP_OK);
    return v;
}

static void test_array_scalar(void **state)
{
    (void)state;
    mxp_array *s = NULL;
    assert_int_equal(mxp_array_scalar(&s, 0.1, MXP_BF16), MXP_OK);
    assert_int_equal(mxp_array_ndim(s), 0);
    assert_int_equal(mxp_array_size(s), 1);
    assert_int_equal(mxp_array_dtype(s), MXP_BF16);
    assert_true(at(s, 0) == 0.10009765625); /* bfloat16's nearest to 0.1 */
    mxp_array_free(s);
    assert_int_equal(mxp_array_scalar(&s, 300, MXP_S8), MXP_OK); /* saturated, as mxp_convert does */
    assert_true(at(s, 0) == 127);
    mxp_array_free(s);
    assert_int_equal(mxp_array_scalar(&s, 1, (mxp_dtype)99), MXP_ERR_INVALID_DTYPE);
    assert_null(s);
    assert_int_equal(mxp_array_scalar(NULL, 1, MXP_F32), MXP_ERR_INVALID_ARGUMENT);
}

static void test_one_call_and_dtypes(void **state)
{
    (void)state;
    const int64_t n = 4;
    mxp_array *h = NULL, *i8 = NULL, *u8 = NULL, *b = NULL, *y = NULL;
    assert_int_equal(mxp_array_arange(&h, MXP_F16, 0, 4, 1), MXP_OK);
    assert_int_equal(mxp_array_arange(&i8, MXP_S8, -2, 2, 1), MXP_OK);
    assert_int_equal(mxp_array_arange(&u8, MXP_U8, 0, 4, 1), MXP_OK);
    assert_int_equal(mxp_array_ones(&b, MXP_BOOL, 1, &n), MXP_OK);
    /* a * 0.5: float16 stays float16 */
    assert_int_equal(mxp_binary_scalar(&y, MXP_OP_MULTIPLY, h, 0.5, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), MXP_F16);
    assert_true(at(y, 3) == 1.5);
    mxp_array_free(y);
    /* float16 * 1e5: the value overflows float16, so float32 (NumPy 1.24) */
    assert_int_equal(mxp_binary_scalar(&y, MXP_OP_MULTIPLY, h, 1e5, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), MXP_F32);
    assert_true(at(y, 3) == 3e5);
    mxp_array_free(y);
    /* float16 + 0.1: 0.1 is rounded to float16 first (0.0999755859375), the sum once */
    assert_int_equal(mxp_binary_scalar(&y, MXP_OP_ADD, h, 0.1, NULL), MXP_OK);
    assert_true(at(y, 0) == 0.0999755859375);
    assert_true(at(y, 1) == 1.099609375); /* 1 + 0.0999755859375 rounded to float16 */
    mxp_array_free(y);
    /* int8 + 1 stays int8, int8 + 200 is int16, int8 * 0.5 float64 */
    assert_int_equal(mxp_binary_scalar_int(&y, MXP_OP_ADD, i8, 1, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), MXP_S8);
    assert_true(at(y, 0) == -1);
    mxp_array_free(y);
    assert_int_equal(mxp_binary_scalar_int(&y, MXP_OP_ADD, i8, 200, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), MXP_S16);
    assert_true(at(y, 0) == 198);
    mxp_array_free(y);
    assert_int_equal(mxp_binary_scalar(&y, MXP_OP_MULTIPLY, i8, 0.5, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), MXP_F64);
    assert_true(at(y, 0) == -1.0);
    mxp_array_free(y);
    /* 1 - uint8: the scalar first; uint8 - 1 where -1 makes int16 */
    assert_int_equal(mxp_scalar_int_binary(&y, MXP_OP_SUBTRACT, 10, u8, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), MXP_U8);
    assert_true(at(y, 3) == 7);
    mxp_array_free(y);
    assert_int_equal(mxp_binary_scalar_int(&y, MXP_OP_ADD, u8, -1, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), MXP_S16);
    assert_true(at(y, 0) == -1);
    mxp_array_free(y);
    /* 2.0 / a; comparisons give bool; bool + 1 is int64 */
    assert_int_equal(mxp_scalar_binary(&y, MXP_OP_DIVIDE, 3.0, h, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), MXP_F16);
    assert_true(isinf(at(y, 0)) && at(y, 2) == 1.5);
    mxp_array_free(y);
    assert_int_equal(mxp_binary_scalar(&y, MXP_OP_LESS, h, 1.5, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), MXP_BOOL);
    assert_true(at(y, 1) == 1 && at(y, 2) == 0);
    mxp_array_free(y);
    assert_int_equal(mxp_binary_scalar_int(&y, MXP_OP_ADD, b, 1, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), MXP_S64);
    assert_true(at(y, 0) == 2);
    mxp_array_free(y);
    /* opts apply: out_dtype and rounding */
    mxp_ops_opts o = { .out_dtype = MXP_E4M3 };
    assert_int_equal(mxp_binary_scalar(&y, MXP_OP_MULTIPLY, h, 0.5, &o), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), MXP_E4M3);
    mxp_array_free(y);
    /* the result-type functions */
    assert_int_equal(mxp_scalar_result_type(MXP_F32, 1, 1e300), MXP_F64);
    assert_int_equal(mxp_scalar_result_type(MXP_F32, 0, 0.5), MXP_F64); /* 0-d: no value-based casting */
    assert_int_equal(mxp_scalar_int_result_type(MXP_S8, 1, 127), MXP_S8);
    assert_int_equal(mxp_scalar_int_result_type(MXP_S8, 1, 128), MXP_S16);
    assert_int_equal(mxp_scalar_int_result_type(MXP_U64, 1, -1), MXP_F64);
    assert_int_equal(mxp_scalar_result_type(MXP_BF16, 1, 1e30), MXP_BF16);
    assert_int_equal(mxp_scalar_int_result_type(MXP_E4M3, 1, 2), MXP_E4M3);
    mxp_array_free(b);
    mxp_array_free(u8);
    mxp_array_free(i8);
    mxp_array_free(h);
}

static void test_bad_input(void **state)
{
    (void)state;
    mxp_array *a = NULL, *y = (mxp_array *)1;
    assert_int_equal(mxp_array_arange(&a, MXP_F32, 0, 3, 1), MXP_OK);
    assert_int_equal(mxp_binary_scalar(NULL, MXP_OP_ADD, a, 1, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_binary_scalar(&y, (mxp_binary_op)77, a, 1, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_null(y);
    assert_string_equal(mxp_last_error(), "mxp_binary_scalar: op 77 is not one of mxp_binary_op's");
    assert_int_equal(mxp_scalar_binary(&y, MXP_OP_ADD, 1, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_binary_scalar(&y, MXP_OP_LDEXP, a, 2.0, NULL), MXP_ERR_UNSUPPORTED);
    mxp_ops_opts bad = { .out_dtype = (mxp_dtype)99 };
    assert_int_equal(mxp_binary_scalar(&y, MXP_OP_ADD, a, 1, &bad), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_scalar_result_type((mxp_dtype)99, 1, 1.0), MXP_DTYPE_INVALID);
    /* allocation failures: an error and nothing leaked */
    mxp_memory_stats s0 = { 0 }, s1 = { 0 };
    mxp_get_memory_stats(&s0);
    for (uint64_t k = 1; k <= 3; k++) {
        mxp_set_alloc_fail_after(k);
        mxp_status st = mxp_binary_scalar(&y, MXP_OP_ADD, a, 1, NULL);
        mxp_set_alloc_fail_after(0);
        if (st == MXP_OK)
            mxp_array_free(y);
        else
            assert_int_equal(st, MXP_ERR_NO_MEMORY);
    }
    mxp_get_memory_stats(&s1);
    assert_int_equal(s1.current_bytes, s0.current_bytes);
    mxp_array_free(a);
}

/* mxp_binary_f64: every op on a grid of doubles equals mxp_binary_strided's
 * float64 loop (whose NaNs are canonical: a NaN matches any NaN there);
 * Python's divmod signs; remainder by zero is the positive quiet NaN; an
 * operand's NaN is not rewritten. */
static uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static void test_binary_f64(void **state)
{
    (void)state;
    static const double grid[] = { 0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 7.0, -7.0, 0.1, 1e-300, 5e-324, 3e38,
                                   1e308, INFINITY, -INFINITY, NAN, 2.0, -3.0, 0.5, 100.25 };
    enum { G = sizeof grid / sizeof grid[0] };
    for (int op = 0; op < MXP_BINARY_OP_COUNT; op++) {
        for (int i = 0; i < G; i++) {
            for (int j = 0; j < G; j++) {
                double got = 0, want = 0, x = grid[i], y = grid[j];
                mxp_dtype yt = MXP_F64;
                if (op == MXP_OP_LDEXP) { /* the exponent is an integer */
                    y = isfinite(y) ? trunc(fmod(y, 1000)) : 3;
                    yt = MXP_S64;
                }
                const int64_t yi = (int64_t)y;
                assert_int_equal(mxp_binary_f64(&got, (mxp_binary_op)op, x, y), MXP_OK);
                assert_int_equal(mxp_binary_strided((mxp_binary_op)op, 1, &want, MXP_F64, 8, &x, MXP_F64, 8,
                                                    yt == MXP_S64 ? (const void *)&yi : (const void *)&y, yt, 8, NULL),
                                 MXP_OK);
                if (isnan(want) ? !isnan(got) : bits(got) != bits(want))
                    fail_msg("%s(%g, %g): %.17g, the loop %.17g", mxp_binary_op_name((mxp_binary_op)op), x, y, got,
                             want);
            }
        }
    }
    double r;
    assert_int_equal(mxp_binary_f64(&r, MXP_OP_FLOOR_DIVIDE, -7, 2), MXP_OK);
    assert_true(r == -4);
    assert_int_equal(mxp_binary_f64(&r, MXP_OP_REMAINDER, 7, -2), MXP_OK);
    assert_true(r == -1);
    assert_int_equal(mxp_binary_f64(&r, MXP_OP_REMAINDER, -4, 2), MXP_OK);
    assert_true(r == 0 && !signbit(r)); /* the sign of b */
    assert_int_equal(mxp_binary_f64(&r, MXP_OP_FLOOR_DIVIDE, -0.0, 5), MXP_OK);
    assert_true(r == 0 && signbit(r));
    for (int s = 0; s < 2; s++) {
        assert_int_equal(mxp_binary_f64(&r, MXP_OP_REMAINDER, s ? -NAN : 3.0, s ? 0.0 : -0.0), MXP_OK);
        assert_true(bits(r) == bits(NAN)); /* positive quiet NaN */
    }
    assert_int_equal(mxp_binary_f64(&r, MXP_OP_ADD, -NAN, 1.0), MXP_OK);
    assert_true(isnan(r) && signbit(r)); /* the operand's NaN, not rewritten */
    assert_int_equal(mxp_binary_f64(&r, MXP_BINARY_OP_COUNT, 1, 1), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_binary_f64(NULL, MXP_OP_ADD, 1, 1), MXP_ERR_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_array_scalar),
        cmocka_unit_test(test_one_call_and_dtypes),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_binary_f64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* mxp_accumulate_strided: running sums of bfloat16/float16/float8 values
 * against long double prefix sums (exact for these inputs) rounded once;
 * products; maximum/minimum (NaN propagates) against fmax/fmin (NaN
 * ignored); continuing from `start`; in place, negative strides; bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "support/prng.h"

static uint64_t state = 2463534242u;
static double normal(void) /* a crude N(0, 1): the sum of 12 uniforms - 6 */
{
    double s = 0;
    for (int i = 0; i < 12; i++)
        s += prng_uniform(&state);
    return s - 6;
}

static double value(const void *p, mxp_dtype t)
{
    double v;
    assert_int_equal(mxp_convert(&v, MXP_F64, p, t, 1, NULL), MXP_OK);
    return v;
}

static void test_running_sums_are_rounded_once(void **s)
{
    (void)s;
    const mxp_dtype types[] = { MXP_BF16, MXP_F16, MXP_E4M3, MXP_E5M2, MXP_F32 };
    enum { N = 3000 };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        mxp_dtype t = types[k];
        size_t size = mxp_dtype_itemsize(t);
        unsigned char a[N * 4], out[N * 4];
        double x[N];
        for (int i = 0; i < N; i++)
            x[i] = normal() * (t == MXP_E4M3 ? 0.05 : 1);
        assert_int_equal(mxp_convert(a, t, x, MXP_F64, N, NULL), MXP_OK);
        assert_int_equal(mxp_accumulate_strided(MXP_OP_ADD, N, out, t, (ptrdiff_t)size, a, t, (ptrdiff_t)size, NULL),
                         MXP_OK);
        long double exact = 0;
        for (int i = 0; i < N; i++) {
            exact += value(a + i * size, t);
            double e = (double)exact; /* exact: a few dozen significant bits */
            unsigned char want[4];
            assert_int_equal(mxp_convert(want, t, &e, MXP_F64, 1, NULL), MXP_OK);
            if (memcmp(want, out + i * size, size))
                fail_msg("%s cumsum[%d] = %g, want %g (exact %Lg)", mxp_dtype_name(t), i, value(out + i * size, t),
                         value(want, t), exact);
        }
        /* a chain of roundings in the type would stall: 0.1 added 3000 times */
        if (t == MXP_BF16) {
            double tenth = 0.1;
            for (int i = 0; i < N; i++)
                assert_int_equal(mxp_convert(a + i * 2, t, &tenth, MXP_F64, 1, NULL), MXP_OK);
            assert_int_equal(mxp_accumulate_strided(MXP_OP_ADD, N, out, t, 2, a, t, 2, NULL), MXP_OK);
            double e = (double)N * value(a, t); /* 300.29...: exact in float64 */
            uint16_t want;
            assert_int_equal(mxp_convert(&want, t, &e, MXP_F64, 1, NULL), MXP_OK);
            assert_true(value(out + (N - 1) * 2, t) == value(&want, t)); /* 300; a bfloat16 chain stalls at 32 */
        }
    }
}

static void test_products_extremes_and_nan(void **s)
{
    (void)s;
    float a[] = { 2, 3, -1, NAN, 5, 0.5f };
    float out[6];
    assert_int_equal(mxp_accumulate_strided(MXP_OP_MULTIPLY, 3, out, MXP_F32, 4, a, MXP_F32, 4, NULL), MXP_OK);
    assert_true(out[0] == 2 && out[1] == 6 && out[2] == -6);
    assert_int_equal(mxp_accumulate_strided(MXP_OP_MAXIMUM, 6, out, MXP_F32, 4, a, MXP_F32, 4, NULL), MXP_OK);
    assert_true(out[0] == 2 && out[1] == 3 && out[2] == 3 && isnan(out[3]) && isnan(out[4]) && isnan(out[5]));
    assert_int_equal(mxp_accumulate_strided(MXP_OP_FMAX, 6, out, MXP_F32, 4, a, MXP_F32, 4, NULL), MXP_OK);
    assert_true(out[2] == 3 && out[3] == 3 && out[4] == 5 && out[5] == 5);
    assert_int_equal(mxp_accumulate_strided(MXP_OP_MINIMUM, 3, out, MXP_F32, 4, a, MXP_F32, 4, NULL), MXP_OK);
    assert_true(out[0] == 2 && out[1] == 2 && out[2] == -1);
    assert_int_equal(mxp_accumulate_strided(MXP_OP_FMIN, 6, out, MXP_F32, 4, a, MXP_F32, 4, NULL), MXP_OK);
    assert_true(out[3] == -1 && out[5] == -1);
}

static void test_start_in_place_and_strides(void **s)
{
    (void)s;
    double a[] = { 1, 2, 3, 4, 5, 6 };
    double start = 100;
    double out[6];
    assert_int_equal(mxp_accumulate_strided(MXP_OP_ADD, 3, out, MXP_F64, 8, a, MXP_F64, 8, &start), MXP_OK);
    assert_true(out[0] == 101 && out[1] == 103 && out[2] == 106);
    /* in place, backwards over every other element: 6, 6+4, 6+4+2 */
    assert_int_equal(mxp_accumulate_strided(MXP_OP_ADD, 3, a + 5, MXP_F64, -16, a + 5, MXP_F64, -16, NULL), MXP_OK);
    assert_true(a[5] == 6 && a[3] == 10 && a[1] == 12 && a[0] == 1 && a[2] == 3);
    /* float32 in, bfloat16 out */
    float f[] = { 1, 1.0f / 256, 1.0f / 256 };
    uint16_t b[3];
    assert_int_equal(mxp_accumulate_strided(MXP_OP_ADD, 3, b, MXP_BF16, 2, f, MXP_F32, 4, NULL), MXP_OK);
    assert_true(value(&b[1], MXP_BF16) == 1.0 && value(&b[2], MXP_BF16) == 1.0078125); /* tie to even, then exact */
}

static void test_bad_input(void **s)
{
    (void)s;
    float a[2] = { 1, 2 }, out[2] = { 7, 7 };
    int32_t i32[2];
    assert_int_equal(mxp_accumulate_strided(MXP_OP_SUBTRACT, 2, out, MXP_F32, 4, a, MXP_F32, 4, NULL),
                     MXP_ERR_UNSUPPORTED);
    assert_non_null(strstr(mxp_last_error(), "mxp_accumulate_strided"));
    assert_int_equal(mxp_accumulate_strided(MXP_OP_ADD, 2, i32, MXP_S32, 4, a, MXP_F32, 4, NULL), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_accumulate_strided(MXP_OP_ADD, 2, out, (mxp_dtype)77, 4, a, MXP_F32, 4, NULL),
                     MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_accumulate_strided(MXP_OP_ADD, 2, NULL, MXP_F32, 4, a, MXP_F32, 4, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_accumulate_strided(MXP_OP_ADD, 2, out, MXP_F32, 0, a, MXP_F32, 4, NULL), MXP_ERR_OVERLAP);
    assert_int_equal(mxp_accumulate_strided((mxp_binary_op)999, 2, out, MXP_F32, 4, a, MXP_F32, 4, NULL),
                     MXP_ERR_UNSUPPORTED);
    assert_true(out[0] == 7 && out[1] == 7);
    assert_int_equal(mxp_accumulate_strided(MXP_OP_ADD, 0, NULL, MXP_F32, 4, NULL, MXP_F32, 4, NULL), MXP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_running_sums_are_rounded_once),
        cmocka_unit_test(test_products_extremes_and_nan),
        cmocka_unit_test(test_start_in_place_and_strides),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

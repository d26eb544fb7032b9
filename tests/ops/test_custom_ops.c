/* Custom elementwise operators: a user-written GELU matches the built-in
 * one (bit for bit from a float64 kernel, within 1 ulp from a float32 one),
 * per-dtype kernels, replacement, and errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static void gelu_f64(void *out, const void *in, size_t n, void *ctx)
{
    (void)ctx;
    double *y = out;
    const double *x = in;
    for (size_t i = 0; i < n; i++)
        y[i] = 0.5 * x[i] * erfc(-x[i] * 0.70710678118654752440);
}

static void gelu_f32(void *out, const void *in, size_t n, void *ctx)
{
    (void)ctx;
    float *y = out;
    const float *x = in;
    for (size_t i = 0; i < n; i++)
        y[i] = 0.5f * x[i] * erfcf(-x[i] * 0.70710678f);
}

static void scale_s32(void *out, const void *in, size_t n, void *ctx)
{
    int32_t *y = out;
    const int32_t *x = in;
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] * *(int *)ctx;
}

static void test_user_gelu_matches_the_builtin(void **state)
{
    (void)state;
    const int64_t n = 50000;
    mxp_array *a = NULL, *want = NULL, *got = NULL;
    assert_int_equal(mxp_register_unary_op("my_gelu", MXP_F64, gelu_f64, NULL), MXP_OK);
    const mxp_dtype types[] = { MXP_BF16, MXP_F16, MXP_F32, MXP_E4M3 };
    for (size_t t = 0; t < 4; t++) {
        assert_int_equal(mxp_array_random_normal(&a, types[t], 1, &n, 0, 3, 17), MXP_OK);
        assert_int_equal(mxp_unary(&want, MXP_OP_GELU, a, NULL), MXP_OK);
        assert_int_equal(mxp_call_unary_op(&got, "my_gelu", a, NULL), MXP_OK);
        assert_int_equal(mxp_array_dtype(got), types[t]);
        assert_memory_equal(mxp_array_data(got), mxp_array_data(want), (size_t)n * mxp_dtype_itemsize(types[t]));
        mxp_array_free(got);
        mxp_array_free(want);
        mxp_array_free(a);
    }
    /* A float32 kernel, wrapped for bfloat16, is within 1 ulp of the built-in. */
    assert_int_equal(mxp_unregister_op("my_gelu"), MXP_OK);
    assert_int_equal(mxp_register_unary_op("my_gelu", MXP_F32, gelu_f32, NULL), MXP_OK);
    assert_int_equal(mxp_array_random_normal(&a, MXP_BF16, 1, &n, 0, 3, 18), MXP_OK);
    assert_int_equal(mxp_unary(&want, MXP_OP_GELU, a, NULL), MXP_OK);
    assert_int_equal(mxp_call_unary_op(&got, "my_gelu", a, NULL), MXP_OK);
    const uint16_t *w = mxp_array_data(want), *g = mxp_array_data(got);
    int differ = 0;
    for (int64_t i = 0; i < n; i++) {
        int d = (int)(int16_t)w[i] - (int)(int16_t)g[i];
        assert_true(d >= -1 && d <= 1); /* same sign: neighbours differ by 1 in the bits */
        differ += d != 0;
    }
    print_message("float32 GELU kernel: %d of %lld bfloat16 results 1 ulp from the built-in\n", differ, (long long)n);
    mxp_array_free(got);
    mxp_array_free(want);
    mxp_array_free(a);
    assert_int_equal(mxp_unregister_op("my_gelu"), MXP_OK);
}

static void test_per_dtype_kernels_and_errors(void **state)
{
    (void)state;
    int three = 3, four = 4;
    const int64_t n = 5;
    mxp_array *a = NULL, *r = NULL;
    assert_int_equal(mxp_array_arange(&a, MXP_S32, 0, 5, 1), MXP_OK);
    assert_int_equal(mxp_register_unary_op("scale", MXP_S32, scale_s32, &three), MXP_OK);
    assert_int_equal(mxp_call_unary_op(&r, "scale", a, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(r), MXP_S32);
    assert_int_equal(((int32_t *)mxp_array_data(r))[4], 12);
    mxp_array_free(r);
    assert_int_equal(mxp_register_unary_op("scale", MXP_S32, scale_s32, &four), MXP_OK); /* replaces */
    assert_int_equal(mxp_call_unary_op(&r, "scale", a, NULL), MXP_OK);
    assert_int_equal(((int32_t *)mxp_array_data(r))[4], 16);
    mxp_array_free(r);
    mxp_array *f = NULL;
    assert_int_equal(mxp_array_zeros(&f, MXP_F32, 1, &n), MXP_OK);
    assert_int_equal(mxp_call_unary_op(&r, "scale", f, NULL), MXP_ERR_UNSUPPORTED); /* no float32 one */
    assert_null(r);
    assert_int_equal(mxp_call_unary_op(&r, "nope", a, NULL), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_register_unary_op("x", MXP_F32, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_register_unary_op("x", (mxp_dtype)0, scale_s32, NULL), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_register_unary_op("", MXP_F32, scale_s32, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_unregister_op("scale"), MXP_OK);
    assert_int_equal(mxp_unregister_op("scale"), MXP_ERR_INVALID_ARGUMENT);
    mxp_array_free(f);
    mxp_array_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_user_gelu_matches_the_builtin),
        cmocka_unit_test(test_per_dtype_kernels_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

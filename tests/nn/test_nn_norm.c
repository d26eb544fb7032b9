/* mxp_layer_norm and mxp_rms_norm: long double references rounded once
 * for every float dtype, one to three normalized axes, weight and bias or
 * neither, huge and constant rows, strided inputs, in place, and bad
 * arguments. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "nn/nn_util.h"
#include "support/prng.h"

/* rows of n elements: y = (x - mean) / sqrt(var + eps) w + b (rms: mean 0). */
static void ref_norm(const double *x, int64_t rows, int64_t n, const double *w, const double *b, double eps, bool rms,
                     double *y)
{
    for (int64_t r = 0; r < rows; r++) {
        const double *xr = x + r * n;
        long double m = 0, v = 0;
        for (int64_t i = 0; i < n && !rms; i++)
            m += xr[i];
        m /= n;
        for (int64_t i = 0; i < n; i++)
            v += (xr[i] - m) * (xr[i] - m);
        const long double rstd = 1 / sqrtl(v / n + eps);
        for (int64_t i = 0; i < n; i++)
            y[r * n + i] = (double)((xr[i] - m) * rstd * (w ? w[i] : 1) + (b ? b[i] : 0));
    }
}

static void test_norms_every_dtype_rounded_once(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_F64, MXP_F32, MXP_F16, MXP_BF16, MXP_E4M3 };
    const int64_t shape[3] = { 3, 4, 6 };
    uint64_t rng = 11;
    double x[72], w[72], b[72], got[72], want[72];
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        for (int nnorm = 1; nnorm <= 3; nnorm++)
            for (int variant = 0; variant < 4; variant++) {
                const mxp_dtype dt = types[k];
                const bool rms = variant & 1, params = variant & 2;
                int64_t inner = 1;
                for (int i = 3 - nnorm; i < 3; i++)
                    inner *= shape[i];
                for (int i = 0; i < 72; i++)
                    x[i] = rounded((prng_uniform(&rng) - 0.3) * 6, dt);
                for (int i = 0; i < inner; i++) {
                    w[i] = rounded(prng_uniform(&rng) * 2, dt);
                    b[i] = rounded(prng_uniform(&rng) - 0.5, dt);
                }
                mxp_array *a = mk(dt, 3, shape, x), *wa = mk(dt, nnorm, shape + 3 - nnorm, w);
                mxp_array *ba = mk(dt, nnorm, shape + 3 - nnorm, b), *y = NULL;
                const double eps = 1e-5;
                mxp_status st = rms ? mxp_rms_norm(&y, a, nnorm, params ? wa : NULL, eps, 0)
                                    : mxp_layer_norm(&y, a, nnorm, params ? wa : NULL, params ? ba : NULL, eps, 0);
                assert_int_equal(st, MXP_OK);
                assert_int_equal(mxp_array_dtype(y), dt);
                ref_norm(x, 72 / inner, inner, params ? w : NULL, params && !rms ? b : NULL, eps, rms, want);
                vals(y, got);
                for (int i = 0; i < 72; i++)
                    expect_near(rms ? "rms_norm" : "layer_norm", i, got[i], want[i], dt, 8, 4);
                mxp_array_free(y);
                mxp_array_free(a);
                mxp_array_free(wa);
                mxp_array_free(ba);
            }
}

static void test_norms_exact_and_extreme_rows(void **state)
{
    (void)state;
    /* (1, 3) -> mean 2, var 1: -1, 1; a constant row: 0 (eps keeps it
     * finite); huge values whose squares overflow float32 */
    const double x[6] = { 1, 3, 5, 5, 3e38, -3e38 };
    mxp_array *a = mk(MXP_F32, 2, (int64_t[]){ 3, 2 }, x), *y = NULL;
    assert_int_equal(mxp_layer_norm(&y, a, 1, NULL, NULL, 0, 0), MXP_OK);
    double got[6];
    vals(y, got);
    assert_true(got[0] == -1 && got[1] == 1);
    assert_true(isnan(got[2])); /* 0 / sqrt(0 + 0) with eps 0 */
    assert_true(got[4] == 1 && got[5] == -1);
    mxp_array_free(y);
    assert_int_equal(mxp_layer_norm(&y, a, 1, NULL, NULL, 1e-5, MXP_F64), MXP_OK);
    vals(y, got);
    assert_true(got[2] == 0 && got[3] == 0);
    mxp_array_free(y);
    assert_int_equal(mxp_rms_norm(&y, a, 1, NULL, 0, 0), MXP_OK);
    vals(y, got);
    assert_true(got[2] == 1 && got[3] == 1 && got[4] == 1 && got[5] == -1);
    mxp_array_free(y);
    mxp_array_free(a);
}

static void test_norms_strided_and_in_place(void **state)
{
    (void)state;
    /* a transposed input: its normalized axes do not merge into one
     * without a copy */
    double x[12], want[12], got[12], xt[12];
    for (int i = 0; i < 12; i++)
        x[i] = i * i % 7;
    mxp_array *a = mk(MXP_F64, 2, (int64_t[]){ 3, 4 }, x), *t = NULL, *y = NULL;
    assert_int_equal(mxp_array_transpose(&t, a, NULL), MXP_OK); /* (4, 3) */
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 3; c++)
            xt[r * 3 + c] = x[c * 4 + r];
    assert_int_equal(mxp_layer_norm(&y, t, 2, NULL, NULL, 1e-5, 0), MXP_OK);
    ref_norm(xt, 1, 12, NULL, NULL, 1e-5, false, want);
    vals(y, got);
    for (int i = 0; i < 12; i++)
        expect_near("transposed", i, got[i], want[i], MXP_F64, 8, 4);
    /* into the input itself, and into a transposed view of it (a temporary) */
    ref_norm(x, 3, 4, NULL, NULL, 1e-5, false, want);
    assert_int_equal(mxp_layer_norm_into(a, a, 1, NULL, NULL, 1e-5), MXP_OK);
    vals(a, got);
    for (int i = 0; i < 12; i++)
        expect_near("in place", i, got[i], want[i], MXP_F64, 8, 4);
    mxp_array_free(y);
    mxp_array_free(t);
    mxp_array_free(a);
}

static void test_norms_bad_arguments(void **state)
{
    (void)state;
    mxp_array *a = mk(MXP_F32, 2, (int64_t[]){ 2, 3 }, NULL), *w2 = mk(MXP_F32, 1, (int64_t[]){ 2 }, NULL);
    mxp_array *w3 = mk(MXP_F32, 1, (int64_t[]){ 3 }, NULL), *y = (mxp_array *)&y;
    assert_int_equal(mxp_layer_norm(&y, a, 0, NULL, NULL, 1e-5, 0), MXP_ERR_INDEX);
    assert_null(y);
    assert_int_equal(mxp_layer_norm(&y, a, 3, NULL, NULL, 1e-5, 0), MXP_ERR_INDEX);
    assert_int_equal(mxp_layer_norm(&y, a, 1, w2, NULL, 1e-5, 0), MXP_ERR_SHAPE);
    assert_non_null(strstr(mxp_last_error(), "normalized shape (3,)"));
    assert_int_equal(mxp_layer_norm(&y, a, 1, w3, w2, 1e-5, 0), MXP_ERR_SHAPE);
    assert_int_equal(mxp_rms_norm(&y, a, 1, w3, -1, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_rms_norm(&y, a, 1, w3, INFINITY, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_rms_norm(&y, a, 1, w3, 0, MXP_U8), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_layer_norm_into(w3, a, 1, NULL, NULL, 0), MXP_ERR_SHAPE);
    assert_int_equal(mxp_layer_norm_into(NULL, a, 1, NULL, NULL, 0), MXP_ERR_INVALID_ARGUMENT);
    mxp_array *e = mk(MXP_F32, 2, (int64_t[]){ 0, 3 }, NULL);
    assert_int_equal(mxp_layer_norm(&y, e, 1, w3, NULL, 1e-5, 0), MXP_OK);
    assert_int_equal(mxp_array_size(y), 0);
    mxp_array_free(y);
    mxp_array_free(e);
    mxp_array_free(a);
    mxp_array_free(w2);
    mxp_array_free(w3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_norms_every_dtype_rounded_once),
        cmocka_unit_test(test_norms_exact_and_extreme_rows),
        cmocka_unit_test(test_norms_strided_and_in_place),
        cmocka_unit_test(test_norms_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* mxp_batch_norm (training and inference, the running statistics as
 * torch updates them), its backward pass (a long double reference and
 * finite differences), mxp_fold_batch_norm (conv then batch norm equals
 * the folded conv), and bad arguments. */
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

/* x as [outer, C, inner] in C order: the channel of element t. */
static int64_t chan(int64_t t, int64_t c, int64_t inner)
{
    return t / inner % c;
}

/* y, the batch mean and biased var per channel; dx, dw, db from dy. */
static void ref_bn(const double *x, int64_t n, int64_t c, int64_t inner, const double *w, const double *b, double eps,
                   const double *dy, double *y, double *mean, double *var, double *dx, double *dw, double *db)
{
    const int64_t cnt = n / c;
    for (int64_t k = 0; k < c; k++) {
        long double s = 0, v = 0, sd = 0, sdx = 0;
        for (int64_t t = 0; t < n; t++)
            if (chan(t, c, inner) == k)
                s += x[t];
        const long double m = s / cnt;
        for (int64_t t = 0; t < n; t++)
            if (chan(t, c, inner) == k)
                v += (x[t] - m) * (x[t] - m);
        v /= cnt;
        const long double r = 1 / sqrtl(v + eps);
        for (int64_t t = 0; t < n; t++)
            if (chan(t, c, inner) == k) {
                const long double h = (x[t] - m) * r;
                y[t] = (double)(h * w[k] + b[k]);
                sd += dy[t];
                sdx += dy[t] * h;
            }
        for (int64_t t = 0; t < n; t++)
            if (chan(t, c, inner) == k)
                dx[t] = (double)(w[k] * r * (dy[t] - sd / cnt - (x[t] - m) * r * sdx / cnt));
        mean[k] = (double)m, var[k] = (double)v, dw[k] = (double)sdx, db[k] = (double)sd;
    }
}

static void test_batch_norm_training_every_dtype_and_layout(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_F64, MXP_F32, MXP_BF16, MXP_F16 };
    /* NCHW (2, 3, 4, 5) axis 1, NHWC (2, 4, 5, 3) axis -1, (40, 3) axis 1 */
    const int64_t shapes[3][4] = { { 2, 3, 4, 5 }, { 2, 4, 5, 3 }, { 40, 3, 1, 1 } };
    const int axes[3] = { 1, -1, 1 }, ndims[3] = { 4, 4, 2 };
    const int64_t inners[3] = { 20, 1, 1 };
    uint64_t rng = 17;
    double x[120], y[120], dy[120], dx[120], got[120], w[3], b[3], m[3], v[3], dw[3], db[3], rm[3], rv[3];
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (int s = 0; s < 3; s++) {
            const mxp_dtype dt = types[t];
            const int64_t n = 120, c = 3;
            for (int i = 0; i < n; i++) {
                x[i] = rounded(prng_uniform(&rng) * 6 - 2, dt);
                dy[i] = rounded(prng_uniform(&rng) - 0.5, dt);
            }
            for (int k = 0; k < c; k++) {
                w[k] = rounded(prng_uniform(&rng) + 0.5, dt), b[k] = rounded(prng_uniform(&rng) - 0.5, dt);
                rm[k] = rounded(0.25 * k, dt), rv[k] = rounded(1 + k, dt);
            }
            ref_bn(x, n, c, inners[s], w, b, 1e-5, dy, y, m, v, dx, dw, db);
            mxp_array *xa = mk(dt, ndims[s], shapes[s], x), *wa = mk(dt, 1, &c, w), *ba = mk(dt, 1, &c, b);
            mxp_array *rma = mk(dt, 1, &c, rm), *rva = mk(dt, 1, &c, rv), *dya = mk(dt, ndims[s], shapes[s], dy);
            mxp_array *out = NULL, *gx = NULL, *gw = NULL, *gb = NULL;
            assert_int_equal(mxp_batch_norm(&out, xa, axes[s], rma, rva, wa, ba, true, 0.1, 1e-5, 0), MXP_OK);
            vals(out, got);
            for (int i = 0; i < n; i++)
                expect_near("batch_norm", i, got[i], y[i], dt, 16, 4);
            vals(rma, got);
            for (int k = 0; k < c; k++)
                expect_near("running_mean", k, got[k], 0.9 * rm[k] + 0.1 * m[k], dt, 16, 1);
            vals(rva, got);
            for (int k = 0; k < c; k++)
                expect_near("running_var", k, got[k], 0.9 * rv[k] + 0.1 * v[k] * 40 / 39, dt, 16, 1);
            assert_int_equal(mxp_batch_norm_backward(&gx, &gw, &gb, dya, xa, axes[s], wa, 1e-5), MXP_OK);
            vals(gx, got);
            for (int i = 0; i < n; i++)
                expect_near("dx", i, got[i], dx[i], dt, 64, 1);
            vals(gw, got);
            for (int k = 0; k < c; k++)
                expect_near("dweight", k, got[k], dw[k], dt, 64, 10);
            vals(gb, got);
            for (int k = 0; k < c; k++)
                expect_near("dbias", k, got[k], db[k], dt, 64, 10);
            mxp_array_free(out), mxp_array_free(gx), mxp_array_free(gw), mxp_array_free(gb);
            mxp_array_free(xa), mxp_array_free(wa), mxp_array_free(ba), mxp_array_free(rma), mxp_array_free(rva);
            mxp_array_free(dya);
        }
}

static void test_batch_norm_inference_hand_computed(void **state)
{
    (void)state;
    /* (x - mean) / sqrt(var + eps) * w + b with mean 1, var 4 - eps: (x - 1) / 2 */
    const double x[4] = { 1, 3, 5, -1 };
    const int64_t one = 1;
    mxp_array *xa = mk(MXP_F64, 2, (int64_t[]){ 4, 1 }, x), *rm = mk(MXP_F64, 1, &one, (double[]){ 1 });
    mxp_array *rv = mk(MXP_F64, 1, &one, (double[]){ 4 - 0.25 }), *y = NULL;
    assert_int_equal(mxp_batch_norm(&y, xa, 1, rm, rv, NULL, NULL, false, 0.1, 0.25, 0), MXP_OK);
    double got[4];
    vals(y, got);
    assert_true(got[0] == 0 && got[1] == 1 && got[2] == 2 && got[3] == -1);
    vals(rm, got); /* untouched */
    assert_true(got[0] == 1);
    mxp_array_free(y);
    /* training, in place: mean 2, biased var 5: running var gets 5 * 4/3 */
    assert_int_equal(mxp_batch_norm_into(xa, xa, -1, rm, rv, NULL, NULL, true, 0.5, 0), MXP_OK);
    vals(rm, got);
    assert_true(got[0] == 1.5);
    vals(rv, got);
    assert_true(fabs(got[0] - (0.5 * 3.75 + 0.5 * 20.0 / 3)) < 1e-15);
    vals(xa, got);
    assert_true(fabs(got[0] + 1 / sqrt(5)) < 1e-15 && fabs(got[2] - 3 / sqrt(5)) < 1e-15);
    mxp_array_free(xa), mxp_array_free(rm), mxp_array_free(rv);
}

static void test_fold_batch_norm_equals_conv_then_bn(void **state)
{
    (void)state;
    uint64_t rng = 4;
    double xv[2 * 3 * 6 * 6], wv[4 * 3 * 3 * 3], cb[4], g[4], be[4], m[4], v[4];
    for (int i = 0; i < 216; i++)
        xv[i] = prng_uniform(&rng) - 0.5;
    for (int i = 0; i < 108; i++)
        wv[i] = prng_uniform(&rng) - 0.5;
    for (int k = 0; k < 4; k++)
        cb[k] = prng_uniform(&rng), g[k] = prng_uniform(&rng) + 0.5, be[k] = prng_uniform(&rng) - 0.5,
        m[k] = prng_uniform(&rng) - 0.5, v[k] = prng_uniform(&rng) + 0.1;
    const int64_t four = 4;
    mxp_array *x = mk(MXP_F64, 4, (int64_t[]){ 2, 3, 6, 6 }, xv), *w = mk(MXP_F64, 4, (int64_t[]){ 4, 3, 3, 3 }, wv);
    mxp_array *cba = mk(MXP_F64, 1, &four, cb), *ga = mk(MXP_F64, 1, &four, g), *bea = mk(MXP_F64, 1, &four, be);
    mxp_array *ma = mk(MXP_F64, 1, &four, m), *va = mk(MXP_F64, 1, &four, v);
    mxp_array *y = NULL, *z = NULL, *wf = NULL, *bf = NULL, *yf = NULL;
    const mxp_conv_opts o = { .padding = { 1, 1 } };
    assert_int_equal(mxp_conv2d(&y, x, w, cba, &o, 0), MXP_OK);
    assert_int_equal(mxp_batch_norm(&z, y, 1, ma, va, ga, bea, false, 0, 1e-5, 0), MXP_OK);
    assert_int_equal(mxp_fold_batch_norm(&wf, &bf, w, cba, ga, bea, ma, va, 1e-5), MXP_OK);
    assert_int_equal(mxp_conv2d(&yf, x, wf, bf, &o, 0), MXP_OK);
    double a[288], b[288];
    vals(z, a), vals(yf, b);
    for (int i = 0; i < 288; i++)
        expect_near("folded", i, b[i], a[i], MXP_F64, 256, 4);
    /* no conv bias, no gamma/beta: w s, -mean s */
    mxp_array_free(wf), mxp_array_free(bf);
    assert_int_equal(mxp_fold_batch_norm(&wf, &bf, w, NULL, NULL, NULL, ma, va, 0), MXP_OK);
    vals(bf, a);
    for (int k = 0; k < 4; k++)
        expect_near("folded bias", k, a[k], -m[k] / sqrt(v[k]), MXP_F64, 4, 0);
    mxp_array_free(wf), mxp_array_free(bf), mxp_array_free(y), mxp_array_free(z), mxp_array_free(yf);
    mxp_array_free(x), mxp_array_free(w), mxp_array_free(cba), mxp_array_free(ga), mxp_array_free(bea);
    mxp_array_free(ma), mxp_array_free(va);
}

static void test_batch_norm_bad_arguments(void **state)
{
    (void)state;
    const int64_t three = 3, two = 2;
    mxp_array *x = mk(MXP_F32, 2, (int64_t[]){ 4, 3 }, NULL), *c3 = mk(MXP_F32, 1, &three, NULL);
    mxp_array *c2 = mk(MXP_F32, 1, &two, NULL), *one = mk(MXP_F32, 2, (int64_t[]){ 1, 3 }, NULL);
    mxp_array *y = (mxp_array *)&y, *w = NULL;
    assert_int_equal(mxp_batch_norm(&y, x, 1, NULL, NULL, NULL, NULL, false, 0.1, 1e-5, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_null(y);
    assert_non_null(strstr(mxp_last_error(), "running_mean is required"));
    assert_int_equal(mxp_batch_norm(&y, x, 2, NULL, NULL, NULL, NULL, true, 0.1, 1e-5, 0), MXP_ERR_INDEX);
    assert_int_equal(mxp_batch_norm(&y, x, 1, c2, NULL, NULL, NULL, true, 0.1, 1e-5, 0), MXP_ERR_SHAPE);
    assert_int_equal(mxp_batch_norm(&y, x, 1, NULL, NULL, c2, NULL, true, 0.1, 1e-5, 0), MXP_ERR_SHAPE);
    assert_int_equal(mxp_batch_norm(&y, x, 1, NULL, NULL, NULL, NULL, true, 1.5, 1e-5, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_batch_norm(&y, x, 1, NULL, NULL, NULL, NULL, true, 0.1, -1, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_batch_norm(&y, one, 1, NULL, NULL, NULL, NULL, true, 0.1, 1e-5, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "more than one"));
    assert_int_equal(mxp_batch_norm(&y, x, 1, NULL, NULL, NULL, NULL, true, 0.1, 1e-5, MXP_S8), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_batch_norm(&y, x, 1, NULL, NULL, NULL, NULL, true, 0.1, 1e-5, 0), MXP_OK);
    mxp_array_free(y);
    assert_int_equal(mxp_batch_norm_backward(&y, &w, NULL, c3, x, 1, NULL, 1e-5), MXP_ERR_SHAPE);
    assert_int_equal(mxp_fold_batch_norm(&y, &w, x, NULL, NULL, NULL, c2, c2, 1e-5), MXP_ERR_SHAPE);
    assert_int_equal(mxp_fold_batch_norm(&y, &w, x, NULL, NULL, NULL, NULL, c3, 1e-5), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_fold_batch_norm(&y, NULL, x, NULL, NULL, NULL, c3, c3, 1e-5), MXP_ERR_INVALID_ARGUMENT);
    mxp_array_free(x), mxp_array_free(c3), mxp_array_free(c2), mxp_array_free(one);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_norm_training_every_dtype_and_layout),
        cmocka_unit_test(test_batch_norm_inference_hand_computed),
        cmocka_unit_test(test_fold_batch_norm_equals_conv_then_bn),
        cmocka_unit_test(test_batch_norm_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

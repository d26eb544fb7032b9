/* mxp_conv2d on uint8/int8 x and int8 weights (ONNX's ConvInteger and
 * QLinearConv): the int32 sums exactly, requantized uint8/int8 outputs
 * with per-channel and per-tensor scales, an int32 bias and zero points,
 * dequantized float outputs, both layouts, groups, padding (the zero
 * point), strides, dilation; and bad arguments. */
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

typedef struct qcfg {
    int64_t n, c, h, w, o, kh, kw, s, p, d, groups;
} qcfg;

static int64_t osz(int64_t size, int64_t k, int64_t s, int64_t p, int64_t d)
{
    return (size + 2 * p - d * (k - 1) - 1) / s + 1;
}

/* The exact sums (NCHW order of the output) of codes x, w. */
static void ref_acc(const qcfg *k, bool nhwc, const int32_t *x, const int32_t *w, int32_t xz, int32_t wz,
                    int64_t *acc)
{
    const int64_t oh = osz(k->h, k->kh, k->s, k->p, k->d), ow = osz(k->w, k->kw, k->s, k->p, k->d);
    const int64_t cg = k->c / k->groups, og = k->o / k->groups;
    for (int64_t n = 0; n < k->n; n++)
        for (int64_t o = 0; o < k->o; o++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    int64_t s = 0;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t p = 0; p < k->kh; p++)
                            for (int64_t q = 0; q < k->kw; q++) {
                                const int64_t ih = i * k->s - k->p + p * k->d, iw = j * k->s - k->p + q * k->d;
                                const int64_t ch = o / og * cg + c;
                                const int32_t xv = ih < 0 || ih >= k->h || iw < 0 || iw >= k->w ? xz
                                                   : nhwc ? x[((n * k->h + ih) * k->w + iw) * k->c + ch]
                                                          : x[((n * k->c + ch) * k->h + ih) * k->w + iw];
                                const int32_t wv = nhwc ? w[((o * k->kh + p) * k->kw + q) * cg + c]
                                                        : w[((o * cg + c) * k->kh + p) * k->kw + q];
                                s += (int64_t)(xv - xz) * (wv - wz);
                            }
                    acc[nhwc ? ((n * oh + i) * ow + j) * k->o + o : ((n * k->o + o) * oh + i) * ow + j] = s;
                }
}

static mxp_array *codes(mxp_dtype dt, int ndim, const int64_t *shape, int32_t *v, int64_t n, uint64_t *rng)
{
    const int lo = dt == MXP_U8 ? 0 : -128;
    double *d = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
        v[i] = lo + (int32_t)(prng_uniform(rng) * 256), d[i] = v[i];
    mxp_array *a = mk(dt, ndim, shape, d);
    free(d);
    return a;
}

static const qcfg qcfgs[] = {
    /* n  c  h  w  o kh kw s  p  d  g */
    { 2, 4, 5, 6, 3, 1, 1, 1, 0, 1, 1 },
    { 1, 3, 7, 6, 5, 3, 3, 1, 1, 1, 1 },
    { 2, 6, 9, 8, 4, 3, 2, 2, 1, 1, 2 },
    { 1, 2, 9, 9, 3, 3, 3, 1, 2, 2, 1 },
    { 1, 5, 6, 6, 5, 3, 3, 1, 1, 1, 5 },
    { 1, 16, 12, 12, 8, 3, 3, 1, 1, 1, 1 },
};

static void check_q(const qcfg *k, bool nhwc, mxp_dtype xt, mxp_dtype yt, bool per_channel, bool bias, uint64_t *rng)
{
    const int64_t cg = k->c / k->groups;
    const int64_t oh = osz(k->h, k->kh, k->s, k->p, k->d), ow = osz(k->w, k->kw, k->s, k->p, k->d);
    const int64_t nx = k->n * k->c * k->h * k->w, nw = k->o * cg * k->kh * k->kw, ny = k->n * k->o * oh * ow;
    int32_t *x = malloc((size_t)nx * 4), *w = malloc((size_t)nw * 4), b[16];
    int64_t *acc = malloc((size_t)ny * 8);
    double *got = malloc((size_t)ny * 8), bd[16];
    float ws[16];
    const int64_t xs[4] = { k->n, nhwc ? k->h : k->c, nhwc ? k->w : k->h, nhwc ? k->c : k->w };
    const int64_t wsh[4] = { k->o, nhwc ? k->kh : cg, nhwc ? k->kw : k->kh, nhwc ? cg : k->kw };
    mxp_array *xa = codes(xt, 4, xs, x, nx, rng), *wa = codes(MXP_S8, 4, wsh, w, nw, rng);
    for (int64_t o = 0; o < k->o; o++) {
        b[o] = (int32_t)(prng_uniform(rng) * 2000) - 1000, bd[o] = b[o];
        ws[o] = (float)(0.001 + prng_uniform(rng) * 0.01);
    }
    mxp_array *ba = mk(MXP_S32, 1, &k->o, bd), *y = NULL;
    const int32_t xz = xt == MXP_U8 ? 131 : -3, wz = 5;
    const int32_t yz = yt == MXP_U8 ? 120 : yt == MXP_S8 ? -7 : 0;
    const bool ints = yt == MXP_S32;
    const mxp_conv_opts o = { .layout = nhwc ? MXP_NHWC : MXP_NCHW, .stride = { k->s, k->s }, .padding = { k->p, k->p },
                              .dilation = { k->d, k->d }, .groups = k->groups, .x_zero_point = xz,
                              .w_zero_point = wz, .y_zero_point = yz, .x_scale = ints ? 0 : 0.05,
                              .y_scale = ints ? 0 : 0.7, .w_scales = ints ? NULL : ws,
                              .n_w_scales = ints ? 0 : per_channel ? (size_t)k->o : 1 };
    assert_int_equal(mxp_conv2d(&y, xa, wa, bias && !ints ? ba : NULL, &o, yt), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), yt);
    ref_acc(k, nhwc, x, w, xz, wz, acc);
    vals(y, got);
    for (int64_t i = 0; i < ny; i++) {
        const int64_t oc = nhwc ? i % k->o : i / (oh * ow) % k->o;
        if (ints) {
            if (got[i] != (double)acc[i])
                fail_msg("int32 y[%lld] = %.0f, want %lld", (long long)i, got[i], (long long)acc[i]);
            continue;
        }
        const double sc = 0.05 * (double)ws[per_channel ? oc : 0];
        const long double t = (long double)sc * ((long double)acc[i] + (bias ? b[oc] : 0));
        if (yt == MXP_F32) {
            if (!(fabs(got[i] - (double)t) <= 1e-6 * fabs((double)t) + 1e-30))
                fail_msg("dequantized y[%lld] = %.9g, want %.9Lg", (long long)i, got[i], t);
            continue;
        }
        const long double q = t / 0.7L, r = nearbyintl(q) + yz;
        const double lo = yt == MXP_U8 ? 0 : -128, hi = yt == MXP_U8 ? 255 : 127;
        const double want = r < lo ? lo : r > hi ? hi : (double)r;
        const bool tie = fabsl(q - floorl(q) - 0.5L) < 1e-9L; /* either neighbour */
        if (got[i] != want && !(tie && fabs(got[i] - want) == 1))
            fail_msg("%s %s requantized y[%lld] = %.0f, want %.0f (%.9Lg)", mxp_dtype_name(xt), nhwc ? "NHWC" : "NCHW",
                     (long long)i, got[i], want, q);
    }
    mxp_array_free(y), mxp_array_free(xa), mxp_array_free(wa), mxp_array_free(ba);
    free(x), free(w), free(acc), free(got);
}

static void test_qconv_matches_exact_sums(void **state)
{
    (void)state;
    uint64_t rng = 31;
    const mxp_dtype ys[4] = { MXP_S32, MXP_U8, MXP_S8, MXP_F32 };
    for (size_t i = 0; i < sizeof qcfgs / sizeof qcfgs[0]; i++)
        for (int nhwc = 0; nhwc < 2; nhwc++)
            for (int xt = 0; xt < 2; xt++)
                for (int y = 0; y < 4; y++)
                    check_q(&qcfgs[i], nhwc, xt ? MXP_S8 : MXP_U8, ys[y], (i + (size_t)y) % 2 == 0, y % 2 == 1, &rng);
}

static void test_qconv_hand_computed(void **state)
{
    (void)state;
    /* x (uint8, zero point 10) = 11..19, w (int8, zero point 0) = [[1, 0], [0, 1]]:
     * acc = (x[i][j] - 10) + (x[i+1][j+1] - 10) = 6, 8, 12, 14; padding 1 adds
     * windows whose outside elements count as 10 (i.e. 0) */
    const double x[9] = { 11, 12, 13, 14, 15, 16, 17, 18, 19 }, w[4] = { 1, 0, 0, 1 };
    mxp_array *xa = mk(MXP_U8, 4, (int64_t[]){ 1, 1, 3, 3 }, x), *wa = mk(MXP_S8, 4, (int64_t[]){ 1, 1, 2, 2 }, w);
    mxp_array *y = NULL;
    double got[16];
    const mxp_conv_opts o = { .x_zero_point = 10 };
    assert_int_equal(mxp_conv2d(&y, xa, wa, NULL, &o, 0), MXP_OK); /* int32 by default */
    assert_int_equal(mxp_array_dtype(y), MXP_S32);
    vals(y, got);
    assert_true(got[0] == 6 && got[1] == 8 && got[2] == 12 && got[3] == 14);
    mxp_array_free(y);
    const mxp_conv_opts op = { .padding = { 1, 1 }, .stride = { 2, 2 }, .x_zero_point = 10 };
    assert_int_equal(mxp_conv2d(&y, xa, wa, NULL, &op, 0), MXP_OK);
    vals(y, got);
    assert_true(got[0] == 1 && got[1] == 3 && got[2] == 7 && got[3] == 14);
    mxp_array_free(y);
    /* requantized: 1 * 0.5 / 2 * acc + 100: 1.5 -> 2 (even), 2, 3, 3.5 -> 4, + 100 */
    const float half = 0.5f;
    const mxp_conv_opts oq = { .x_zero_point = 10, .x_scale = 1, .w_scales = &half, .n_w_scales = 1, .y_scale = 2,
                               .y_zero_point = 100 };
    assert_int_equal(mxp_conv2d(&y, xa, wa, NULL, &oq, MXP_U8), MXP_OK);
    vals(y, got);
    assert_true(got[0] == 102 && got[1] == 102 && got[2] == 103 && got[3] == 104);
    mxp_array_free(y);
    mxp_array_free(xa), mxp_array_free(wa);
}

static void test_qconv_bad_arguments(void **state)
{
    (void)state;
    mxp_array *x = mk(MXP_U8, 4, (int64_t[]){ 1, 4, 5, 5 }, NULL), *w = mk(MXP_S8, 4, (int64_t[]){ 2, 4, 3, 3 }, NULL);
    mxp_array *wf = mk(MXP_F32, 4, (int64_t[]){ 2, 4, 3, 3 }, NULL), *wu = mk(MXP_U8, 4, (int64_t[]){ 2, 4, 3, 3 }, NULL);
    mxp_array *bf = mk(MXP_F32, 1, (int64_t[]){ 2 }, NULL), *bi = mk(MXP_S32, 1, (int64_t[]){ 2 }, NULL);
    mxp_array *y = (mxp_array *)&y;
    const float s3[3] = { 1, 1, 1 };
    assert_int_equal(mxp_conv2d(&y, x, wf, NULL, NULL, 0), MXP_ERR_UNSUPPORTED);
    assert_null(y);
    assert_non_null(strstr(mxp_last_error(), "quantized"));
    assert_int_equal(mxp_conv2d(&y, x, wu, NULL, NULL, 0), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_conv2d(&y, x, w, bf, NULL, MXP_U8), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_conv2d(&y, x, w, bi, NULL, 0), MXP_ERR_UNSUPPORTED); /* int32 out with a bias */
    assert_int_equal(mxp_conv2d(&y, x, w, NULL, &(mxp_conv_opts){ .x_zero_point = 256 }, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_conv2d(&y, x, w, NULL, &(mxp_conv_opts){ .w_zero_point = -129 }, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_conv2d(&y, x, w, NULL, &(mxp_conv_opts){ .y_zero_point = 300 }, MXP_U8),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_conv2d(&y, x, w, NULL, &(mxp_conv_opts){ .w_scales = s3, .n_w_scales = 3 }, MXP_U8),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_conv2d(&y, x, w, NULL, &(mxp_conv_opts){ .y_scale = -1 }, MXP_S8), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_conv2d(&y, x, w, NULL, NULL, MXP_S16), MXP_ERR_UNSUPPORTED);
    mxp_array *dx = NULL, *dy = mk(MXP_F32, 4, (int64_t[]){ 1, 2, 3, 3 }, NULL);
    assert_int_equal(mxp_conv2d_backward(&dx, NULL, NULL, dy, x, w, NULL), MXP_ERR_UNSUPPORTED);
    mxp_array_free(dy);
    mxp_array_free(x), mxp_array_free(w), mxp_array_free(wf), mxp_array_free(wu), mxp_array_free(bf);
    mxp_array_free(bi);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qconv_hand_computed),
        cmocka_unit_test(test_qconv_matches_exact_sums),
        cmocka_unit_test(test_qconv_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

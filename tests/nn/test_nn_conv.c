/* mxp_conv2d and mxp_conv1d: hand-computed outputs, then a float64 direct
 * loop for random shapes in both layouts (strides, padding, dilation,
 * groups, depthwise, 1x1, the 7x7 stride 2 stem, odd sizes, several im2col
 * chunks) in every float dtype, the fused epilogue, out arrays, and bad
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

typedef struct cfg {
    int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups;
} cfg;

static int64_t out_size(int64_t size, int64_t k, int64_t s, int64_t p, int64_t d)
{
    return (size + 2 * p - d * (k - 1) - 1) / s + 1;
}

static double act_ref(mxp_activation a, double t)
{
    switch (a) {
    case MXP_ACT_RELU: return t > 0 ? t : 0;
    case MXP_ACT_SILU: return t / (1 + exp(-t));
    case MXP_ACT_GELU: return 0.5 * t * (1 + erf(t / sqrt(2)));
    default: return t;
    }
}

/* x, w in C order of their layout; y likewise (NCHW or NHWC). */
static void ref_conv(const cfg *k, bool nhwc, const double *x, const double *w, const double *b, mxp_activation act,
                     double *y, double *sumabs)
{
    const int64_t oh = out_size(k->h, k->kh, k->sh, k->ph, k->dh), ow = out_size(k->w, k->kw, k->sw, k->pw, k->dw);
    const int64_t cg = k->c / k->groups, og = k->o / k->groups;
    for (int64_t n = 0; n < k->n; n++)
        for (int64_t o = 0; o < k->o; o++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    long double s = b ? b[o] : 0, a = 0;
                    const int64_t grp = o / og;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t p = 0; p < k->kh; p++)
                            for (int64_t q = 0; q < k->kw; q++) {
                                const int64_t ih = i * k->sh - k->ph + p * k->dh, iw = j * k->sw - k->pw + q * k->dw;
                                if (ih < 0 || ih >= k->h || iw < 0 || iw >= k->w)
                                    continue;
                                const int64_t ch = grp * cg + c;
                                const double xv = nhwc ? x[((n * k->h + ih) * k->w + iw) * k->c + ch]
                                                       : x[((n * k->c + ch) * k->h + ih) * k->w + iw];
                                const double wv = nhwc ? w[((o * k->kh + p) * k->kw + q) * cg + c]
                                                       : w[((o * cg + c) * k->kh + p) * k->kw + q];
                                s += (long double)xv * wv;
                                a += fabsl((long double)xv * wv);
                            }
                    const int64_t at = nhwc ? ((n * oh + i) * ow + j) * k->o + o : ((n * k->o + o) * oh + i) * ow + j;
                    y[at] = act_ref(act, (double)s);
                    sumabs[at] = (double)a + (b ? fabs(b[o]) : 0);
                }
}

static void fill(double *v, int64_t n, mxp_dtype dt, uint64_t *rng)
{
    for (int64_t i = 0; i < n; i++)
        v[i] = rounded((prng_uniform(rng) - 0.5) * 4, dt);
}

/* Bits of precision of dt's significand, and its smallest subnormal. */
static int precision(mxp_dtype dt, double *tiny)
{
    switch (dt) {
    case MXP_F64: *tiny = 0x1p-1074; return 53;
    case MXP_F32: *tiny = 0x1p-149; return 24;
    case MXP_F16: *tiny = 0x1p-24; return 11;
    case MXP_BF16: *tiny = 0x1p-133; return 8;
    case MXP_E4M3: *tiny = 0x1p-9; return 4;
    default: *tiny = 0x1p-16; return 3;
    }
}

/* One configuration in one layout and dtype against ref_conv: the
 * accumulation (float32: 2^-24 per term of |x w|, times K), then one
 * rounding into dt. */
static void check_cfg(const cfg *k, bool nhwc, mxp_dtype dt, bool bias, mxp_activation act, uint64_t *rng)
{
    const int64_t cg = k->c / k->groups;
    const int64_t oh = out_size(k->h, k->kh, k->sh, k->ph, k->dh), ow = out_size(k->w, k->kw, k->sw, k->pw, k->dw);
    const int64_t nx = k->n * k->c * k->h * k->w, nw = k->o * cg * k->kh * k->kw, ny = k->n * k->o * oh * ow;
    double *x = malloc((size_t)nx * 8), *w = malloc((size_t)nw * 8), *b = malloc((size_t)k->o * 8);
    double *want = malloc((size_t)ny * 8), *sa = malloc((size_t)ny * 8), *got = malloc((size_t)ny * 8);
    fill(x, nx, dt, rng);
    fill(w, nw, dt, rng);
    fill(b, k->o, dt, rng);
    const int64_t xs[4] = { k->n, nhwc ? k->h : k->c, nhwc ? k->w : k->h, nhwc ? k->c : k->w };
    const int64_t ws[4] = { k->o, nhwc ? k->kh : cg, nhwc ? k->kw : k->kh, nhwc ? cg : k->kw };
    mxp_array *xa = mk(dt, 4, xs, x), *wa = mk(dt, 4, ws, w), *ba = mk(dt, 1, &k->o, b), *y = NULL;
    const mxp_conv_opts o = { .layout = nhwc ? MXP_NHWC : MXP_NCHW, .stride = { k->sh, k->sw },
                              .padding = { k->ph, k->pw }, .dilation = { k->dh, k->dw }, .groups = k->groups,
                              .activation = act };
    assert_int_equal(mxp_conv2d(&y, xa, wa, bias ? ba : NULL, &o, 0), MXP_OK);
    const int64_t *s = mxp_array_shape(y);
    assert_true(s[0] == k->n && s[nhwc ? 3 : 1] == k->o && s[nhwc ? 1 : 2] == oh && s[nhwc ? 2 : 3] == ow);
    ref_conv(k, nhwc, x, w, bias ? b : NULL, act, want, sa);
    vals(y, got);
    const int64_t kk = cg * k->kh * k->kw + 1;
    const double acc = dt == MXP_F64 ? 0x1p-52 : 0x1p-23;
    for (int64_t i = 0; i < ny; i++) {
        double tiny;
        const int p = precision(dt, &tiny);
        const double tol = 2 * acc * (double)kk * sa[i] + ldexp(fabs(want[i]), -p) + tiny;
        if (!(fabs(got[i] - want[i]) <= tol))
            fail_msg("%s %s c%lld o%lld %lldx%lld s%lld p%lld d%lld g%lld: y[%lld] = %.9g, want %.9g",
                     mxp_dtype_name(dt), nhwc ? "NHWC" : "NCHW", (long long)k->c, (long long)k->o, (long long)k->kh,
                     (long long)k->kw, (long long)k->sh, (long long)k->ph, (long long)k->dh, (long long)k->groups,
                     (long long)i, got[i], want[i]);
    }
    mxp_array_free(y);
    mxp_array_free(xa);
    mxp_array_free(wa);
    mxp_array_free(ba);
    free(x), free(w), free(b), free(want), free(sa), free(got);
}

static const cfg cfgs[] = {
    /* n  c  h   w   o  kh kw sh sw ph pw dh dw g */
    { 2, 4, 5, 6, 3, 1, 1, 1, 1, 0, 0, 1, 1, 1 },    /* 1x1: the GEMM on x itself */
    { 1, 4, 5, 5, 6, 1, 1, 1, 1, 0, 0, 1, 1, 2 },    /* 1x1 in two groups */
    { 1, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1 },    /* 3x3 same */
    { 2, 3, 9, 7, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1 },    /* stride 2, odd sizes */
    { 1, 2, 9, 9, 3, 3, 3, 1, 1, 2, 2, 2, 2, 1 },    /* dilation 2 */
    { 1, 6, 6, 5, 4, 3, 2, 1, 1, 1, 0, 1, 1, 2 },    /* groups, a 3x2 kernel */
    { 2, 5, 7, 8, 5, 3, 3, 1, 1, 1, 1, 1, 1, 5 },    /* depthwise 3x3 */
    { 1, 4, 9, 9, 4, 3, 3, 2, 2, 1, 1, 2, 1, 4 },    /* depthwise, stride 2, dilated rows */
    { 1, 3, 19, 17, 8, 7, 7, 2, 2, 3, 3, 1, 1, 1 },  /* the ResNet stem */
    { 1, 3, 8, 6, 2, 5, 3, 2, 1, 2, 0, 1, 1, 1 },    /* 5x3, strides (2, 1), padding (2, 0) */
    { 1, 1, 1, 7, 2, 1, 3, 1, 2, 0, 1, 1, 1, 1 },    /* one row (conv1d) */
    { 1, 4, 6, 6, 8, 3, 3, 1, 1, 1, 1, 1, 1, 4 },    /* groups == C, two outputs per channel */
};

static void test_conv2d_matches_direct_loop_every_dtype(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_F64, MXP_F32, MXP_BF16, MXP_F16, MXP_E4M3, MXP_E5M2 };
    uint64_t rng = 26;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++)
            for (int nhwc = 0; nhwc < 2; nhwc++)
                check_cfg(&cfgs[i], nhwc, types[t], (i + t) % 2 == 0, (mxp_activation)((i + nhwc) % 3 == 1),
                          &rng);
}

static void test_conv2d_epilogue_and_chunks(void **state)
{
    (void)state;
    uint64_t rng = 7;
    /* 2 x 64 x 20 x 20, 3x3 into 16: 576 float32 per pixel row, 800
     * pixels: more than one 1 MiB panel */
    const cfg big = { 2, 64, 20, 20, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1 };
    const mxp_activation acts[] = { MXP_ACT_NONE, MXP_ACT_RELU, MXP_ACT_GELU, MXP_ACT_SILU };
    for (int nhwc = 0; nhwc < 2; nhwc++)
        for (int a = 0; a < 4; a++)
            check_cfg(&big, nhwc, a % 2 ? MXP_F32 : MXP_F64, true, acts[a], &rng);
    /* NCHW through the NHWC product, its output transposed a tile of
     * 256 KB at a time (float32: 1024 pixels of 64 channels, bfloat16
     * 2048): 2500 pixels an image, two images */
    const cfg tiles = { 2, 3, 50, 50, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1 };
    check_cfg(&tiles, false, MXP_F32, true, MXP_ACT_RELU, &rng);
    check_cfg(&tiles, false, MXP_BF16, false, MXP_ACT_NONE, &rng);
}

static void test_conv2d_hand_computed(void **state)
{
    (void)state;
    /* x = 1..9 (3x3), w = [[1, 0], [0, 1]]: y[i][j] = x[i][j] + x[i+1][j+1] */
    const double x[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, w[4] = { 1, 0, 0, 1 }, b[1] = { 0.5 };
    mxp_array *xa = mk(MXP_F32, 4, (int64_t[]){ 1, 1, 3, 3 }, x), *wa = mk(MXP_F32, 4, (int64_t[]){ 1, 1, 2, 2 }, w);
    mxp_array *ba = mk(MXP_F32, 1, (int64_t[]){ 1 }, b), *y = NULL;
    double got[16];
    assert_int_equal(mxp_conv2d(&y, xa, wa, ba, NULL, 0), MXP_OK);
    vals(y, got);
    assert_true(got[0] == 6.5 && got[1] == 8.5 && got[2] == 12.5 && got[3] == 14.5);
    mxp_array_free(y);
    /* padding 1, stride 2: windows at rows/cols -1 and 1: y = [[0+1, 0+3], [0+7, 5+9]] */
    const mxp_conv_opts o = { .stride = { 2, 2 }, .padding = { 1, 1 } };
    assert_int_equal(mxp_conv2d(&y, xa, wa, NULL, &o, MXP_F64), MXP_OK);
    vals(y, got);
    assert_true(got[0] == 1 && got[1] == 3 && got[2] == 7 && got[3] == 14);
    mxp_array_free(y);
    /* clamp after relu, into a strided out (a temporary) */
    mxp_array *big = mk(MXP_F64, 4, (int64_t[]){ 1, 1, 2, 4 }, NULL), *view = NULL;
    mxp_slice sl[4] = { { 0, 1, 1 }, { 0, 1, 1 }, { 0, 2, 1 }, { 0, 4, 2 } };
    assert_int_equal(mxp_array_slice(&view, big, 4, sl), MXP_OK);
    const mxp_conv_opts oc = { .activation = MXP_ACT_RELU, .clamp = true, .clamp_lo = 7, .clamp_hi = 13 };
    assert_int_equal(mxp_conv2d_into(view, xa, wa, NULL, &oc), MXP_OK);
    vals(big, got);
    assert_true(got[0] == 7 && got[2] == 8 && got[4] == 12 && got[6] == 13);
    mxp_array_free(view);
    mxp_array_free(big);
    mxp_array_free(xa);
    mxp_array_free(wa);
    mxp_array_free(ba);
}

static void test_conv1d_is_conv2d_of_one_row(void **state)
{
    (void)state;
    const double x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, w[3] = { 1, -1, 2 };
    mxp_array *xa = mk(MXP_F64, 3, (int64_t[]){ 1, 1, 8 }, x), *wa = mk(MXP_F64, 3, (int64_t[]){ 1, 1, 3 }, w);
    mxp_array *y = NULL;
    const mxp_conv_opts o = { .stride = { 5, 2 }, .padding = { 9, 1 } }; /* [0] ignored */
    assert_int_equal(mxp_conv1d(&y, xa, wa, NULL, &o, 0), MXP_OK);
    assert_int_equal(mxp_array_ndim(y), 3);
    assert_int_equal(mxp_array_shape(y)[2], 4);
    double got[4];
    vals(y, got);
    /* windows at -1, 1, 3, 5: (0 - 1 + 4), (2 - 3 + 8), (4 - 5 + 12), (6 - 7 + 16) */
    assert_true(got[0] == 3 && got[1] == 7 && got[2] == 11 && got[3] == 15);
    mxp_array_free(y);
    mxp_array_free(xa);
    mxp_array_free(wa);
}

/* NHWC float16 x (float16 or float32 weights) gives the bits of float32 x
 * and weights holding the same values (the GEMM's float32 configuration
 * either way: src/nn/conv.c widens NHWC float16 once; NCHW float32 takes
 * another order, through NHWC), strides, an odd channel count, float32
 * and float16 outputs with relu. */
static void test_conv2d_float16_is_float32_of_its_values(void **state)
{
    (void)state;
    const int64_t shapes[][4] = { { 3, 7, 6, 5 }, { 2, 9, 9, 16 }, { 1, 5, 4, 130 } };
    const int nhwc = 1;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int wf16 = 0; wf16 < 2; wf16++)
            for (int v = 0; v < 2; v++) {
                    const int64_t *xs = shapes[si], c = xs[3], o = c + 2;
                    const int64_t xshape[4] = { xs[0], nhwc ? xs[1] : c, nhwc ? xs[2] : xs[1], nhwc ? c : xs[2] };
                    const int64_t wshape[4] = { o, nhwc ? 3 : c, 3, nhwc ? c : 3 };
                    mxp_array *x32 = NULL, *w32 = NULL, *x16 = NULL, *w16 = NULL, *tmp = NULL, *b = NULL;
                    assert_int_equal(mxp_array_random_normal(&tmp, MXP_F32, 4, xshape, 0, 2, 7 + si), MXP_OK);
                    assert_int_equal(mxp_array_astype(&x16, tmp, MXP_F16, NULL), MXP_OK);
                    assert_int_equal(mxp_array_astype(&x32, x16, MXP_F32, NULL), MXP_OK);
                    mxp_array_free(tmp), tmp = NULL;
                    assert_int_equal(mxp_array_random_normal(&tmp, MXP_F32, 4, wshape, 0, 0.3, 9 + si), MXP_OK);
                    assert_int_equal(mxp_array_astype(&w16, tmp, wf16 ? MXP_F16 : MXP_F32, NULL), MXP_OK);
                    assert_int_equal(mxp_array_astype(&w32, w16, MXP_F32, NULL), MXP_OK);
                    assert_int_equal(mxp_array_random_normal(&b, MXP_F32, 1, &o, 0, 1, 3), MXP_OK);
                    /* direct: float16 x has no Winograd path to compare with */
                    const mxp_conv_opts opt = { .layout = nhwc ? MXP_NHWC : MXP_NCHW, .stride = { 1 + v, 1 + v },
                                                .padding = { 1, 1 }, .activation = v ? MXP_ACT_RELU : MXP_ACT_NONE,
                                                .algorithm = MXP_CONV_DIRECT };
                    const mxp_dtype yt = v ? MXP_F16 : MXP_F32;
                    mxp_array *y16 = NULL, *y32 = NULL;
                    assert_int_equal(mxp_conv2d(&y16, x16, w16, b, &opt, yt), MXP_OK);
                    assert_int_equal(mxp_conv2d(&y32, x32, w32, b, &opt, yt), MXP_OK);
                    const size_t bytes = (size_t)mxp_array_size(y16) * mxp_dtype_itemsize(yt);
                    assert_int_equal(mxp_array_size(y16), mxp_array_size(y32));
                    if (memcmp(mxp_array_data(y16), mxp_array_data(y32), bytes))
                        fail_msg("shape %zu, weights %s, %s, variant %d: float16 x differs from float32 x", si,
                                 wf16 ? "float16" : "float32", nhwc ? "NHWC" : "NCHW", v);
                    mxp_array *all[8] = { x32, w32, x16, w16, tmp, b, y16, y32 };
                    for (int k = 0; k < 8; k++)
                        mxp_array_free(all[k]);
                }
}

/* Element (r, t) of group grp's NHWC im2col matrix: pixel r's (p, q, c)
 * value t, 0 in the padding. */
static float panel_value(const cfg *k, const float *xv, int64_t r, int64_t t, int64_t oh, int64_t ow, int64_t grp)
{
    const int64_t cg = k->c / k->groups;
    const int64_t n = r / (oh * ow), i = r / ow % oh, j = r % ow;
    const int64_t p = t / (k->kw * cg), q = t / cg % k->kw, ch = t % cg;
    const int64_t ih = i * k->sh - k->ph + p * k->dh, iw = j * k->sw - k->pw + q * k->dw;
    const bool in = ih >= 0 && ih < k->h && iw >= 0 && iw < k->w;
    return in ? xv[((n * k->h + ih) * k->w + iw) * k->c + grp * cg + ch] : 0.0f;
}

/* NHWC float32, bit for bit: with segments of at least 16 values (a
 * kernel row's KW C with one group and no dilation across, else a tap's
 * channels) at a level with taps kernels (avx2 and up:
 * src/nn/conv-taps.c) each output is one
 * chain of fused multiply-adds over its K values in (p, q, c) order, then
 * the epilogue in float64 rounded once -- the same bits at every such
 * level; otherwise the GEMM of its im2col matrix, whatever way the
 * convolution makes the panel (chunks of pixels, or block by block inside
 * the GEMM, whose KC steps may end inside a tap: 96 and 40 channels, 363
 * values a pixel; from x or its padded copy), the sums being mxp_gemm's on
 * the whole matrix; with one thread and two. */
static void test_conv2d_nhwc_is_gemm_of_im2col(void **state)
{
    (void)state;
    static const cfg shapes[] = {
        /* n  c   h   w   o  kh  kw sh sw ph pw dh dw g */
        { 2, 96, 7, 6, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1 },     /* K = 864: taps split by KC */
        { 1, 3, 23, 21, 9, 11, 11, 2, 2, 5, 5, 1, 1, 1 },   /* K = 363, three channels */
        { 1, 80, 9, 9, 12, 3, 3, 1, 1, 1, 1, 2, 2, 2 },     /* two groups of 40, dilated */
        { 3, 64, 10, 10, 50, 3, 3, 1, 1, 1, 1, 1, 1, 1 },   /* K = 576, rows past two MC blocks */
        { 1, 3, 40, 40, 16, 7, 7, 2, 2, 3, 3, 1, 1, 1 },    /* an RGB stem */
        { 2, 32, 9, 9, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1 },     /* x padded (a small image), rows of 384 bytes tap by tap */
        { 1, 8, 9, 7, 8, 3, 3, 2, 1, 0, 0, 1, 1, 1 },       /* no padding: window rows as runs */
        { 2, 16, 30, 29, 20, 3, 3, 2, 1, 2, 1, 2, 1, 1 },   /* taps: 435 pixels an image, chunks end mid-row */
        { 1, 24, 40, 37, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1 },   /* taps: 1480 pixels, a partial last tile */
        { 2, 32, 12, 11, 40, 3, 3, 1, 1, 0, 0, 1, 1, 1 },   /* taps: no padding, x read in place */
        { 1, 256, 5, 4, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1 },   /* 2.4 MB of weights: taps at AVX-512 only */
    };
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int threads = 1; threads <= 2; threads++) {
            const cfg *k = &shapes[si];
            const int64_t cg = k->c / k->groups, og = k->o / k->groups, kk = k->kh * k->kw * cg;
            const int64_t oh = out_size(k->h, k->kh, k->sh, k->ph, k->dh), ow = out_size(k->w, k->kw, k->sw, k->pw, k->dw);
            const int64_t m = k->n * oh * ow, xshape[4] = { k->n, k->h, k->w, k->c };
            const int64_t wshape[4] = { k->o, k->kh, k->kw, cg };
            mxp_array *x = NULL, *w = NULL, *b = NULL, *y = NULL;
            assert_int_equal(mxp_array_random_normal(&x, MXP_F32, 4, xshape, 0, 1, 40 + si), MXP_OK);
            assert_int_equal(mxp_array_random_normal(&w, MXP_F32, 4, wshape, 0, 0.2, 50 + si), MXP_OK);
            assert_int_equal(mxp_array_random_normal(&b, MXP_F32, 1, &k->o, 0, 1, 60 + si), MXP_OK);
            const mxp_conv_opts opt = { .layout = MXP_NHWC, .stride = { k->sh, k->sw }, .padding = { k->ph, k->pw },
                                        .dilation = { k->dh, k->dw }, .groups = k->groups,
                                        .activation = si % 2 ? MXP_ACT_RELU : MXP_ACT_NONE,
                                        .algorithm = MXP_CONV_DIRECT }; /* Winograd: test_nn_winograd.c */
            assert_int_equal(mxp_set_num_threads(threads), MXP_OK);
            assert_int_equal(mxp_conv2d(&y, x, w, b, &opt, 0), MXP_OK);
            const float *xv = mxp_array_data(x), *wv = mxp_array_data(w), *bv = mxp_array_data(b);
            float *panel = malloc((size_t)(m * kk) * sizeof *panel), *want = malloc((size_t)(m * k->o) * 4);
            for (int64_t grp = 0; grp < k->groups; grp++) {
                for (int64_t r = 0; r < m; r++) /* the im2col matrix of group grp: (p, q, c) per pixel */
                    for (int64_t t = 0; t < kk; t++)
                        panel[r * kk + t] = panel_value(k, xv, r, t, oh, ow, grp);
                const mxp_gemm_opts go = { .bias = bv + grp * og, .bias_dtype = MXP_F32,
                                           .bias_kind = MXP_BIAS_PER_COL, .activation = opt.activation };
                assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_TRANS, (size_t)m, (size_t)og, (size_t)kk, 1, panel,
                                          MXP_F32, (size_t)kk, wv + grp * og * kk, MXP_F32, (size_t)kk, 0,
                                          want + grp * og, MXP_F32, (size_t)k->o, &go),
                                 MXP_OK);
            }
            const int64_t seg = k->groups == 1 && k->dw == 1 ? k->kw * cg : cg; /* a kernel row, or a tap */
            /* weights past 1 MiB: the taps path only with the AVX-512 8 x 48 tile (up to 4 MiB) */
            const bool big = og * kk * 4 > (1 << 20);
            const mxp_isa isa = mxp_isa_current();
            const bool taps = isa >= MXP_ISA_AVX2 && seg >= 16 && (!big || isa >= MXP_ISA_AVX512);
            for (int64_t r = 0; taps && r < m; r++) /* the chain over K, then bias and relu in float64 */
                for (int64_t oc = 0; oc < k->o; oc++) {
                    const int64_t grp = oc / og;
                    float s = 0;
                    for (int64_t t = 0; t < kk; t++)
                        s = fmaf(panel_value(k, xv, r, t, oh, ow, grp), wv[oc * kk + t], s);
                    double v = (double)s + (double)bv[oc];
                    want[r * k->o + oc] = (float)(opt.activation == MXP_ACT_RELU && !(v > 0) ? (v < 0 ? 0 : v) : v);
                }
            if (memcmp(mxp_array_data(y), want, (size_t)(m * k->o) * 4))
                fail_msg("shape %zu, %d thread(s): the convolution differs from %s", si, threads,
                         taps ? "the chain of fused multiply-adds over its taps" : "the GEMM of its im2col matrix");
            if (k->groups == 1) { /* NCHW with one group goes through NHWC (x transposed a band at a time by the
                                     taps path): the same bits, transposed */
                const int64_t xc[4] = { k->n, k->c, k->h, k->w }, wc[4] = { k->o, k->c, k->kh, k->kw };
                mxp_array *xn = NULL, *wn = NULL, *yn = NULL;
                assert_int_equal(mxp_array_empty(&xn, MXP_F32, 4, xc), MXP_OK);
                assert_int_equal(mxp_array_empty(&wn, MXP_F32, 4, wc), MXP_OK);
                float *xd = mxp_array_data(xn), *wd = mxp_array_data(wn);
                for (int64_t n = 0; n < k->n; n++)
                    for (int64_t i = 0; i < k->h * k->w; i++)
                        for (int64_t ch = 0; ch < k->c; ch++)
                            xd[(n * k->c + ch) * k->h * k->w + i] = xv[(n * k->h * k->w + i) * k->c + ch];
                for (int64_t oc = 0; oc < k->o; oc++)
                    for (int64_t t = 0; t < k->kh * k->kw; t++)
                        for (int64_t ch = 0; ch < k->c; ch++)
                            wd[(oc * k->c + ch) * k->kh * k->kw + t] = wv[(oc * k->kh * k->kw + t) * k->c + ch];
                mxp_conv_opts on = opt;
                on.layout = MXP_NCHW;
                assert_int_equal(mxp_conv2d(&yn, xn, wn, b, &on, 0), MXP_OK);
                const float *yv = mxp_array_data(y), *ynv = mxp_array_data(yn);
                for (int64_t r = 0; r < m; r++)
                    for (int64_t oc = 0; oc < k->o; oc++)
                        if (memcmp(&ynv[(r / (oh * ow) * k->o + oc) * oh * ow + r % (oh * ow)], &yv[r * k->o + oc], 4))
                            fail_msg("shape %zu, %d thread(s): NCHW y[%lld][%lld] differs from NHWC's", si, threads,
                                     (long long)(r / (oh * ow)), (long long)oc);
                mxp_array_free(xn), mxp_array_free(wn), mxp_array_free(yn);
            }
            free(panel), free(want);
            mxp_array *all[4] = { x, w, b, y };
            for (int a = 0; a < 4; a++)
                mxp_array_free(all[a]);
        }
    assert_int_equal(mxp_set_num_threads(0), MXP_OK);
}

/* NHWC bfloat16 with K <= 1024 (one KC block of the bfloat16 GEMM), bit
 * for bit the GEMM of its im2col matrix into bfloat16 or float32 y, bias
 * and relu or not, with one thread and two: at the AMX level through the
 * taps kernel (its 32-value chunks in the A-in-place kernel's order; the
 * rows of a tile loaded where they lie, or copied where a run of pixels
 * crosses an image row), at the others through the panel.  Kernel rows
 * of 96 and 192 values, taps of 32 (two dilated groups), chunks of
 * pixels across image rows. */
static void test_conv2d_bfloat16_nhwc_is_gemm_of_im2col(void **state)
{
    (void)state;
    static const cfg shapes[] = {
        /* n  c   h   w   o  kh  kw sh sw ph pw dh dw g */
        { 2, 32, 9, 13, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1 },   /* K = 288 */
        { 1, 64, 20, 21, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1 },  /* K = 576, stride 2 */
        { 1, 64, 12, 12, 16, 3, 3, 1, 1, 2, 2, 2, 2, 2 },  /* groups of 32, dilated: taps of 32 */
        { 1, 32, 33, 35, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1 },  /* 1155 pixels */
    };
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int v = 0; v < 4; v++) {
            const cfg *k = &shapes[si];
            const int threads = 1 + v % 2;
            const mxp_dtype yt = v < 2 ? MXP_BF16 : MXP_F32;
            const int64_t cg = k->c / k->groups, og = k->o / k->groups, kk = k->kh * k->kw * cg;
            const int64_t oh = out_size(k->h, k->kh, k->sh, k->ph, k->dh), ow = out_size(k->w, k->kw, k->sw, k->pw, k->dw);
            const int64_t m = k->n * oh * ow, xshape[4] = { k->n, k->h, k->w, k->c };
            const int64_t wshape[4] = { k->o, k->kh, k->kw, cg };
            mxp_array *x = NULL, *w = NULL, *b = NULL, *y = NULL, *x32 = NULL, *w32 = NULL;
            assert_int_equal(mxp_array_random_normal(&x, MXP_BF16, 4, xshape, 0, 1, 70 + si), MXP_OK);
            assert_int_equal(mxp_array_random_normal(&w, MXP_BF16, 4, wshape, 0, 0.2, 80 + si), MXP_OK);
            assert_int_equal(mxp_array_random_normal(&b, MXP_F32, 1, &k->o, 0, 1, 90 + si), MXP_OK);
            assert_int_equal(mxp_array_astype(&x32, x, MXP_F32, NULL), MXP_OK);
            assert_int_equal(mxp_array_astype(&w32, w, MXP_F32, NULL), MXP_OK);
            const mxp_conv_opts opt = { .layout = MXP_NHWC, .stride = { k->sh, k->sw }, .padding = { k->ph, k->pw },
                                        .dilation = { k->dh, k->dw }, .groups = k->groups,
                                        .activation = v % 2 ? MXP_ACT_RELU : MXP_ACT_NONE };
            assert_int_equal(mxp_set_num_threads(threads), MXP_OK);
            assert_int_equal(mxp_conv2d(&y, x, w, v % 2 ? b : NULL, &opt, yt), MXP_OK);
            const float *xv = mxp_array_data(x32), *bv = mxp_array_data(b);
            const uint16_t *wv = mxp_array_data(w);
            const size_t ys = mxp_dtype_itemsize(yt);
            float *p32 = malloc((size_t)(m * kk) * sizeof *p32);
            uint16_t *panel = malloc((size_t)(m * kk) * sizeof *panel);
            unsigned char *want = malloc((size_t)(m * k->o) * ys);
            assert_true(p32 && panel && want);
            for (int64_t grp = 0; grp < k->groups; grp++) {
                for (int64_t r = 0; r < m; r++)
                    for (int64_t t = 0; t < kk; t++)
                        p32[r * kk + t] = panel_value(k, xv, r, t, oh, ow, grp);
                assert_int_equal(mxp_convert(panel, MXP_BF16, p32, MXP_F32, (size_t)(m * kk), NULL), MXP_OK);
                const mxp_gemm_opts go = { .bias = v % 2 ? bv + grp * og : NULL, .bias_dtype = MXP_F32,
                                           .bias_kind = v % 2 ? MXP_BIAS_PER_COL : 0, .activation = opt.activation };
                assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_TRANS, (size_t)m, (size_t)og, (size_t)kk, 1, panel,
                                          MXP_BF16, (size_t)kk, wv + grp * og * kk, MXP_BF16, (size_t)kk, 0,
                                          want + (size_t)(grp * og) * ys, yt, (size_t)k->o, &go),
                                 MXP_OK);
            }
            if (memcmp(mxp_array_data(y), want, (size_t)(m * k->o) * ys))
                fail_msg("shape %zu, variant %d: the bfloat16 convolution differs from the GEMM of its im2col matrix",
                         si, v);
            free(p32), free(panel), free(want);
            mxp_array *all[6] = { x, w, b, y, x32, w32 };
            for (int a = 0; a < 6; a++)
                mxp_array_free(all[a]);
        }
    assert_int_equal(mxp_set_num_threads(0), MXP_OK);
}

/* bfloat16 (and float8 x widened into bfloat16) with values the bfloat16
 * kernels flush (subnormal inputs, products below float32's normal range):
 * exact all the same, in both layouts (the NHWC panel is made inside the
 * GEMM only when x and the weights hold none). */
static void test_conv2d_bfloat16_tiny_values_exact(void **state)
{
    (void)state;
    /* (x's value, x's dtype, the weight's value): one nonzero each, meeting at the centre tap */
    static const struct { double x; mxp_dtype xt; double w; } cases[] = {
        { 0x1p-70, MXP_BF16, 0x1p-70 },  /* a product of 2^-140 */
        { 1.0, MXP_BF16, 0x1p-130 },     /* a subnormal weight */
        { 0x1p-130, MXP_BF16, 1.0 },     /* a subnormal x */
        { 1.0, MXP_E4M3, 0x1p-130 },     /* float8 x, a subnormal bfloat16 weight */
        { 0.5, MXP_BF16, 3.0 },          /* none: the same place, ordinary values */
    };
    /* 32 channels: NHWC kernel rows of 96 values, whole AMX chunks, which the taps path takes for clean
       bfloat16 (src/nn/conv-taps.c) -- these must stay off it */
    enum { C = 32 };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int nhwc = 0; nhwc < 2; nhwc++) {
            const int64_t xs[4] = { 1, nhwc ? 5 : C, 5, nhwc ? C : 5 }, ws[4] = { 4, nhwc ? 3 : C, 3, nhwc ? C : 3 };
            double x[25 * C] = { 0 }, w[36 * C] = { 0 }, got[100];
            x[nhwc ? (2 * 5 + 2) * C + 3 : (3 * 5 + 2) * 5 + 2] = cases[ci].x; /* (h 2, w 2, c 3) */
            w[nhwc ? ((1 * 3 + 1) * 3 + 1) * C + 3 : ((1 * C + 3) * 3 + 1) * 3 + 1] = cases[ci].w; /* (o 1, c 3, 1, 1) */
            mxp_array *xa = mk(cases[ci].xt, 4, xs, x), *wa = mk(MXP_BF16, 4, ws, w), *y = NULL;
            const mxp_conv_opts o = { .layout = nhwc ? MXP_NHWC : MXP_NCHW, .padding = { 1, 1 } };
            assert_int_equal(mxp_conv2d(&y, xa, wa, NULL, &o, MXP_F32), MXP_OK);
            vals(y, got);
            const int at = nhwc ? (2 * 5 + 2) * 4 + 1 : (1 * 5 + 2) * 5 + 2; /* (o 1, h 2, w 2) */
            for (int i = 0; i < 100; i++) {
                const double want = i == at ? cases[ci].x * cases[ci].w : 0.0;
                if (got[i] != want)
                    fail_msg("case %zu %s: y[%d] = %a, want %a", ci, nhwc ? "NHWC" : "NCHW", i, got[i], want);
            }
            mxp_array_free(xa), mxp_array_free(wa), mxp_array_free(y);
        }
}

/* Float32 depthwise convolutions, bit for bit: each output is the float32
 * products of the taps inside the image, added in (p, q) order from +0
 * (then, with a bias, widened, the bias added in float64, rounded once),
 * in both layouts.  x holds -0, NaN, inf and subnormals; a channel with an
 * infinite weight and one with a NaN weight take the NCHW path that sums
 * only the taps inside the image, the others the padded whole plane
 * (src/nn/dwconv.c), whose padded taps must change no bit. */
static void test_conv2d_depthwise_float32_bits(void **state)
{
    (void)state;
    static const cfg shapes[] = {
        /* n  c  h   w   o  kh kw sh sw ph pw dh dw g */
        { 2, 5, 9, 11, 5, 3, 3, 1, 1, 1, 1, 1, 1, 5 },    /* 3x3 same */
        { 1, 4, 7, 20, 4, 3, 3, 1, 1, 0, 0, 1, 1, 4 },    /* no padding: the plane read in place */
        { 1, 3, 10, 9, 3, 5, 3, 1, 1, 2, 1, 1, 1, 3 },    /* 5x3, padding (2, 1) */
        { 1, 4, 11, 70, 4, 3, 3, 1, 1, 2, 2, 2, 2, 4 },   /* dilated, rows past 64 columns */
        { 1, 3, 6, 5, 3, 3, 3, 1, 1, 2, 2, 1, 1, 3 },     /* padding wider than the window reaches */
        { 1, 3, 5, 6, 3, 3, 3, 1, 1, 9, 9, 1, 1, 3 },     /* padding of 9: zero columns wider than 16 */
        { 1, 4, 9, 9, 4, 3, 3, 2, 1, 1, 1, 1, 1, 4 },     /* row stride 2: the rows one at a time */
    };
    uint64_t rng = 61;
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++)
        for (int nhwc = 0; nhwc < 2; nhwc++)
            for (int bias = 0; bias < 2; bias++) {
                const cfg *k = &shapes[t];
                const int64_t oh = out_size(k->h, k->kh, k->sh, k->ph, k->dh);
                const int64_t ow = out_size(k->w, k->kw, k->sw, k->pw, k->dw);
                const int64_t nx = k->n * k->c * k->h * k->w, nw = k->c * k->kh * k->kw, ny = k->n * k->c * oh * ow;
                float *x = malloc((size_t)nx * 4), *w = malloc((size_t)nw * 4), *want = malloc((size_t)ny * 4);
                double *b = malloc((size_t)k->c * 8);
                for (int64_t i = 0; i < nx; i++) { /* C order of NCHW */
                    const uint64_t u = prng_next(&rng) % 64;
                    x[i] = u == 0 ? -0.0f : u == 1 ? NAN : u == 2 ? INFINITY : u == 3 ? 0x1p-140f
                                                                          : (float)(prng_uniform(&rng) * 4 - 2);
                }
                for (int64_t i = 0; i < nw; i++) /* [c][p][q] */
                    w[i] = (float)(prng_uniform(&rng) * 2 - 1);
                w[1 * k->kh * k->kw] = INFINITY; /* channel 1: the taps inside only */
                w[2 * k->kh * k->kw + k->kw] = NAN;
                for (int64_t c = 0; c < k->c; c++)
                    b[c] = (double)(float)(prng_uniform(&rng) - 0.5);
                for (int64_t n = 0; n < k->n; n++)
                    for (int64_t c = 0; c < k->c; c++)
                        for (int64_t i = 0; i < oh; i++)
                            for (int64_t j = 0; j < ow; j++) {
                                float a = 0.0f;
                                for (int64_t p = 0; p < k->kh; p++)
                                    for (int64_t q = 0; q < k->kw; q++) {
                                        const int64_t ih = i * k->sh - k->ph + p * k->dh;
                                        const int64_t iw = j * k->sw - k->pw + q * k->dw;
                                        if (ih < 0 || ih >= k->h || iw < 0 || iw >= k->w)
                                            continue;
                                        const float pr = x[((n * k->c + c) * k->h + ih) * k->w + iw] *
                                                         w[(c * k->kh + p) * k->kw + q];
                                        a += pr;
                                    }
                                want[((n * k->c + c) * oh + i) * ow + j] = bias ? (float)((double)a + b[c]) : a;
                            }
                /* the arrays in the layout's order */
                const int64_t xs[4] = { k->n, nhwc ? k->h : k->c, nhwc ? k->w : k->h, nhwc ? k->c : k->w };
                const int64_t ws[4] = { k->c, nhwc ? k->kh : 1, nhwc ? k->kw : k->kh, nhwc ? 1 : k->kw };
                mxp_array *xa = NULL, *wa = NULL, *ba = mk(MXP_F32, 1, &k->c, b), *y = NULL;
                assert_int_equal(mxp_array_empty(&xa, MXP_F32, 4, xs), MXP_OK);
                assert_int_equal(mxp_array_empty(&wa, MXP_F32, 4, ws), MXP_OK);
                float *xd = mxp_array_data(xa);
                for (int64_t n = 0; n < k->n; n++)
                    for (int64_t c = 0; c < k->c; c++)
                        for (int64_t i = 0; i < k->h * k->w; i++)
                            xd[nhwc ? (n * k->h * k->w + i) * k->c + c : (n * k->c + c) * k->h * k->w + i] =
                                x[(n * k->c + c) * k->h * k->w + i];
                memcpy(mxp_array_data(wa), w, (size_t)nw * 4); /* [c][p][q][1] and [c][1][p][q]: the same order */
                const mxp_conv_opts o = { .layout = nhwc ? MXP_NHWC : MXP_NCHW, .stride = { k->sh, k->sw },
                                          .padding = { k->ph, k->pw }, .dilation = { k->dh, k->dw },
                                          .groups = k->c };
                assert_int_equal(mxp_conv2d(&y, xa, wa, bias ? ba : NULL, &o, MXP_F32), MXP_OK);
                const float *yd = mxp_array_data(y);
                for (int64_t n = 0; n < k->n; n++)
                    for (int64_t c = 0; c < k->c; c++)
                        for (int64_t i = 0; i < oh * ow; i++) {
                            const float g = yd[nhwc ? (n * oh * ow + i) * k->c + c : (n * k->c + c) * oh * ow + i];
                            const float e = want[(n * k->c + c) * oh * ow + i];
                            if (memcmp(&g, &e, 4) && !(isnan(g) && isnan(e)))
                                fail_msg("shape %zu %s bias %d: n%lld c%lld pixel %lld: got %a, want %a", t,
                                         nhwc ? "NHWC" : "NCHW", bias, (long long)n, (long long)c, (long long)i,
                                         (double)g, (double)e);
                        }
                mxp_array_free(y);
                mxp_array_free(xa);
                mxp_array_free(wa);
                mxp_array_free(ba);
                free(x);
                free(w);
                free(want);
                free(b);
            }
}

static void test_conv2d_bad_arguments(void **state)
{
    (void)state;
    mxp_array *x = mk(MXP_F32, 4, (int64_t[]){ 1, 4, 5, 5 }, NULL), *w = mk(MXP_F32, 4, (int64_t[]){ 2, 4, 3, 3 }, NULL);
    mxp_array *w2 = mk(MXP_F32, 4, (int64_t[]){ 2, 2, 3, 3 }, NULL), *wbig = mk(MXP_F32, 4, (int64_t[]){ 2, 4, 9, 3 }, NULL);
    mxp_array *xi = mk(MXP_S32, 4, (int64_t[]){ 1, 4, 5, 5 }, NULL), *b3 = mk(MXP_F32, 1, (int64_t[]){ 3 }, NULL);
    mxp_array *y = (mxp_array *)&y;
    assert_int_equal(mxp_conv2d(&y, x, w2, NULL, NULL, 0), MXP_ERR_SHAPE); /* channels */
    assert_null(y);
    assert_non_null(strstr(mxp_last_error(), "input channels per group"));
    assert_int_equal(mxp_conv2d(&y, x, w, NULL, &(mxp_conv_opts){ .groups = 3 }, 0), MXP_ERR_SHAPE);
    assert_non_null(strstr(mxp_last_error(), "groups"));
    assert_int_equal(mxp_conv2d(&y, x, w2, NULL, &(mxp_conv_opts){ .groups = 2 }, 0), MXP_OK);
    mxp_array_free(y);
    assert_int_equal(mxp_conv2d(&y, x, wbig, NULL, NULL, 0), MXP_ERR_SHAPE); /* kernel > padded input */
    assert_non_null(strstr(mxp_last_error(), "padded input"));
    assert_int_equal(mxp_conv2d(&y, x, wbig, NULL, &(mxp_conv_opts){ .padding = { 2, 0 } }, 0), MXP_OK);
    mxp_array_free(y);
    assert_int_equal(mxp_conv2d(&y, x, w, NULL, &(mxp_conv_opts){ .stride = { -1, 1 } }, 0),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_conv2d(&y, x, w, NULL, &(mxp_conv_opts){ .padding = { 0, -2 } }, 0),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_conv2d(&y, x, w, NULL, &(mxp_conv_opts){ .dilation = { INT64_MAX, 1 } }, 0),
                     MXP_ERR_SIZE_OVERFLOW);
    assert_int_equal(mxp_conv2d(&y, x, w, NULL, &(mxp_conv_opts){ .padding = { INT64_MAX / 2, 0 } }, 0),
                     MXP_ERR_SIZE_OVERFLOW);
    assert_int_equal(mxp_conv2d(&y, x, w, NULL, &(mxp_conv_opts){ .layout = 7 }, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_conv2d(&y, x, w, NULL, &(mxp_conv_opts){ .activation = 99 }, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_conv2d(&y, x, w, NULL, &(mxp_conv_opts){ .clamp = true, .clamp_lo = 1 }, 0),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_conv2d(&y, x, w, b3, NULL, 0), MXP_ERR_SHAPE); /* bias of 3 for 2 outputs */
    assert_int_equal(mxp_conv2d(&y, xi, w, NULL, NULL, 0), MXP_ERR_UNSUPPORTED); /* int32 x */
    assert_int_equal(mxp_conv2d(&y, x, w, NULL, NULL, MXP_S8), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_conv2d(&y, x, b3, NULL, NULL, 0), MXP_ERR_SHAPE); /* 1-d weight */
    assert_int_equal(mxp_conv2d(&y, NULL, w, NULL, NULL, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_conv2d(NULL, x, w, NULL, NULL, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_conv2d_into(w, x, w, NULL, NULL), MXP_ERR_SHAPE); /* out of the wrong shape */
    /* an empty batch is fine */
    mxp_array *e = mk(MXP_F32, 4, (int64_t[]){ 0, 4, 5, 5 }, NULL);
    assert_int_equal(mxp_conv2d(&y, e, w, NULL, NULL, 0), MXP_OK);
    assert_int_equal(mxp_array_size(y), 0);
    mxp_array_free(y);
    mxp_array_free(e);
    mxp_array_free(x), mxp_array_free(w), mxp_array_free(w2), mxp_array_free(wbig), mxp_array_free(xi);
    mxp_array_free(b3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv2d_hand_computed),
        cmocka_unit_test(test_conv2d_matches_direct_loop_every_dtype),
        cmocka_unit_test(test_conv2d_epilogue_and_chunks),
        cmocka_unit_test(test_conv1d_is_conv2d_of_one_row),
        cmocka_unit_test(test_conv2d_float16_is_float32_of_its_values),
        cmocka_unit_test(test_conv2d_nhwc_is_gemm_of_im2col),
        cmocka_unit_test(test_conv2d_bfloat16_nhwc_is_gemm_of_im2col),
        cmocka_unit_test(test_conv2d_bfloat16_tiny_values_exact),
        cmocka_unit_test(test_conv2d_depthwise_float32_bits),
        cmocka_unit_test(test_conv2d_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

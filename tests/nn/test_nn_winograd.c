/* Winograd F(2x2, 3x3) convolutions (src/nn/conv-winograd.c,
 * src/kernels/f32-winograd/): every row of f32-winograd-list.inc that the
 * machine runs gives its twin's bits; the twin's transforms against
 * values worked out here; mxp_conv2d with MXP_CONV_WINOGRAD gives the
 * bits of the same algorithm put together here from the twin and
 * mxp_gemm (tiles, padding, chunks, epilogue, NCHW), the same bits with
 * one and two threads and in both layouts, and lies within its error
 * bound of the float64 convolution; MXP_CONV_AUTO takes it where it pays;
 * the refusals.  At every ISA level (MXP_ISA). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/fpenv.h"
#include "mxp.h"
#include "nn/conv-internal.h"
#include "support/kernel_list.h"
#include "support/prng.h"

static const kl_listed wino_listed[] = {
#define MXP_F32_WINO(isa, tile, fn, twin) { #fn, isa },
#include "kernels/f32-winograd-list.inc"
#undef MXP_F32_WINO
};

static void test_table_is_the_list(void **state)
{
    (void)state;
    size_t n;
    const mxp_kernel *k = nn_f32_wino_kernels(&n);
    kl_expect_table(k, n, wino_listed, sizeof wino_listed / sizeof wino_listed[0]);
    for (int isa = 0; isa < MXP_ISA_COUNT; isa++)
        assert_non_null(nn_f32_wino_kernel((mxp_isa)isa));
}

static float value(size_t i, uint64_t *rng)
{
    const double u = prng_uniform(rng) - 0.5;
    return i % 61 == 5 ? -0.0f : i % 53 == 7 ? INFINITY : i % 47 == 3 ? 1e-40f : i % 43 == 1 ? NAN
                                                                                              : (float)(u * 1e3);
}

enum { LANES = 41, SRC = 16 * LANES * 5 + 64, DST = 16 * LANES * 3 + 64 };

/* Every kernel against its twin: each transform on 1 to 41 lanes, the
 * output's four shapes of edge tile, the floats around untouched. */
static void test_every_kernel_gives_its_twins_bits(void **state)
{
    (void)state;
    size_t nk, cases = 0;
    const mxp_kernel *ks = nn_f32_wino_kernels(&nk);
    static float src[SRC], d0[DST], d1[DST];
    uint64_t rng = 5;
    const mxp_fpenv env = mxp_fpenv_enter();
    for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], mxp_isa_supported()))
            continue;
        mxp_f32_wino_ukernel *k = (mxp_f32_wino_ukernel *)ks[r].fn, *twin = (mxp_f32_wino_ukernel *)ks[r].twin;
        for (int kind = MXP_WINO_W; kind <= MXP_WINO_OUT; kind++)
            for (size_t n = 1; n <= LANES; n++)
                for (int shape = 0; shape < (kind == MXP_WINO_OUT ? 4 : 1); shape++) {
                    for (size_t t = 0; t < SRC; t++)
                        src[t] = value(t + cases, &rng);
                    memset(d0, 0x5a, sizeof d0);
                    memset(d1, 0x5a, sizeof d1);
                    /* lanes n + 3 apart (IN: pixels n + 2, rows 4 (n + 2) + 3) */
                    const size_t ld = kind == MXP_WINO_IN ? 4 * (n + 2) + 3 : n + 3;
                    mxp_f32_wino_params p = { kind, src + 1, ld, n + 2, d0 + 2, 2 * n + 5, n + 1, n,
                                              1 + (shape & 1), 1 + (shape >> 1) };
                    k(&p);
                    p.dst = d1 + 2;
                    twin(&p);
                    if (memcmp(d0, d1, sizeof d0))
                        fail_msg("%s: transform %d on %zu lanes (shape %d) differs from %s", ks[r].name, kind, n,
                                 shape, ks[r].twin_name);
                    cases++;
                }
    }
    mxp_fpenv_leave(env);
    assert_true(cases > 100);
}

/* The twin's transforms against values worked out here: G g G^T of a
 * filter, B^T d B of a patch, A^T m A of a product, one lane. */
static void test_twin_values(void **state)
{
    (void)state;
    const float g[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }; /* rows p, columns q */
    float u[16];
    mxp_f32_wino_params p = { MXP_WINO_W, g, 1, 0, u, 1, 0, 1, 0, 0 };
    mxp_f32_wino__scalar(&p);
    /* G g: rows g0, (g0+g1+g2)/2, (g0-g1+g2)/2, g2 of the columns; then the same along each row */
    const float want_u[16] = { 1, 3, 1, 3, 6, 11.25f, 3.75f, 9, 2, 3.75f, 1.25f, 3, 7, 12, 4, 9 };
    assert_memory_equal(u, want_u, sizeof u);
    float d[16], v[16];
    for (int t = 0; t < 16; t++)
        d[t] = (float)(t * t % 7) - 2; /* d[r][s] at 4 r + s */
    p = (mxp_f32_wino_params){ MXP_WINO_IN, d, 4, 1, v, 1, 0, 1, 0, 0 };
    mxp_f32_wino__scalar(&p);
    static const int bt[4][4] = { { 1, 0, -1, 0 }, { 0, 1, 1, 0 }, { 0, -1, 1, 0 }, { 0, 1, 0, -1 } };
    for (int i = 0; i < 4; i++)
        for (int jj = 0; jj < 4; jj++) {
            float want = 0;
            for (int r = 0; r < 4; r++)
                for (int s = 0; s < 4; s++)
                    want += (float)(bt[i][r] * bt[jj][s]) * d[4 * r + s];
            assert_true(v[4 * i + jj] == want);
        }
    float m[16], y[4] = { -1, -1, -1, -1 };
    for (int t = 0; t < 16; t++)
        m[t] = (float)(t + 1);
    p = (mxp_f32_wino_params){ MXP_WINO_OUT, m, 1, 0, y, 2, 1, 1, 2, 2 };
    mxp_f32_wino__scalar(&p);
    static const int at[2][4] = { { 1, 1, 1, 0 }, { 0, 1, -1, -1 } };
    for (int i = 0; i < 2; i++)
        for (int jj = 0; jj < 2; jj++) {
            float want = 0;
            for (int r = 0; r < 4; r++)
                for (int s = 0; s < 4; s++)
                    want += (float)(at[i][r] * at[jj][s]) * m[4 * r + s];
            assert_true(y[2 * i + jj] == want);
        }
    p.rows = 1, p.cols = 1, y[1] = y[2] = y[3] = -1;
    mxp_f32_wino__scalar(&p);
    assert_true(y[1] == -1 && y[2] == -1 && y[3] == -1); /* an edge tile writes its outputs only */
}

typedef struct shape {
    int64_t n, c, h, w, o, ph, pw;
} shape;

static const shape shapes[] = {
    { 1, 16, 8, 8, 16, 1, 1 },   /* even: every tile whole */
    { 2, 19, 7, 9, 21, 1, 1 },   /* odd sizes: edge tiles of one row, one column, one output */
    { 1, 33, 5, 6, 17, 0, 0 },   /* no padding: 3 x 4 outputs */
    { 3, 16, 6, 5, 40, 2, 1 },   /* padding 2 above and below */
    { 2, 16, 100, 90, 16, 1, 1 }, /* 4500 tiles: more than one chunk of the 8 MiB of V and M */
    { 1, 1, 3, 3, 1, 0, 0 },     /* one channel, one output */
};

static mxp_array *rnd(int nd, const int64_t *s, double sd, uint64_t seed)
{
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_random_normal(&a, MXP_F32, nd, s, 0, sd, seed), MXP_OK);
    return a;
}

/* The algorithm put together here: the padded image, each tile's patch
 * through the twin, 16 mxp_gemm products over all tiles at once, the
 * outputs through the twin, the epilogue (float64 bias and relu, rounded
 * once) -- NHWC x and OHWI weights. */
static float *emulate(const shape *k, const float *x, const float *w, const float *b)
{
    const int64_t oh = k->h + 2 * k->ph - 2, ow = k->w + 2 * k->pw - 2, th = (oh + 1) / 2, tw = (ow + 1) / 2;
    const int64_t hp = 2 * th + 2, wp = 2 * tw + 2, tiles = k->n * th * tw, c = k->c, o = k->o;
    float *xp = calloc((size_t)(k->n * hp * wp * c), sizeof(float)), *u = malloc((size_t)(16 * c * o) * 4);
    float *v = malloc((size_t)(16 * tiles * c) * 4), *m = malloc((size_t)(16 * tiles * o) * 4);
    float *y = malloc((size_t)(k->n * oh * ow * o) * 4), *g = malloc((size_t)(9 * c) * 4);
    for (int64_t n = 0; n < k->n; n++)
        for (int64_t i = 0; i < k->h; i++)
            memcpy(xp + ((n * hp + i + k->ph) * wp + k->pw) * c, x + (n * k->h + i) * k->w * c,
                   (size_t)(k->w * c) * 4);
    for (int64_t oc = 0; oc < o; oc++) { /* U[k][c][o]: one filter a call, as one lane */
        for (int64_t ch = 0; ch < c; ch++)
            for (int t = 0; t < 9; t++)
                g[t * c + ch] = w[(oc * 9 + t) * c + ch];
        for (int64_t ch = 0; ch < c; ch++) {
            const mxp_f32_wino_params p = { MXP_WINO_W, g + ch, (size_t)c, 0, u + ch * o + oc, (size_t)(c * o), 0, 1,
                                            0, 0 };
            mxp_f32_wino__scalar(&p);
        }
    }
    for (int64_t t = 0; t < tiles; t++) {
        const int64_t n = t / (th * tw), i = t % (th * tw) / tw, jj = t % tw;
        const mxp_f32_wino_params p = { MXP_WINO_IN, xp + ((n * hp + 2 * i) * wp + 2 * jj) * c, (size_t)(wp * c),
                                        (size_t)c, v + t * c, (size_t)(tiles * c), 0, (size_t)c, 0, 0 };
        mxp_f32_wino__scalar(&p);
    }
    for (int q = 0; q < 16; q++)
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, (size_t)tiles, (size_t)o, (size_t)c, 1.0,
                                  v + q * tiles * c, MXP_F32, (size_t)c, u + q * c * o, MXP_F32, (size_t)o, 0.0,
                                  m + q * tiles * o, MXP_F32, (size_t)o, NULL),
                         MXP_OK);
    for (int64_t t = 0; t < tiles; t++) {
        const int64_t n = t / (th * tw), i = t % (th * tw) / tw, jj = t % tw;
        const mxp_f32_wino_params p = { MXP_WINO_OUT, m + t * o, (size_t)(tiles * o), 0,
                                        y + ((n * oh + 2 * i) * ow + 2 * jj) * o, (size_t)(ow * o), (size_t)o,
                                        (size_t)o, oh - 2 * i < 2 ? 1 : 2, ow - 2 * jj < 2 ? 1 : 2 };
        mxp_f32_wino__scalar(&p);
    }
    for (int64_t px = 0; px < k->n * oh * ow; px++)
        for (int64_t oc = 0; oc < o; oc++) {
            const double s = (double)y[px * o + oc] + (double)b[oc];
            y[px * o + oc] = (float)(s > 0 ? s : 0);
        }
    free(xp), free(u), free(v), free(m), free(g);
    return y;
}

/* x NHWC to NCHW, or a [n][oc][...] output back, (elements: planes x rows) */
static void to_planes(float *dst, const float *src, int64_t n, int64_t pix, int64_t c)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = 0; p < pix; p++)
            for (int64_t ch = 0; ch < c; ch++)
                dst[(i * c + ch) * pix + p] = src[(i * pix + p) * c + ch];
}

/* mxp_conv2d's Winograd: the emulation's bits (NHWC), those bits
 * transposed for NCHW x and OIHW weights, with one and two threads. */
static void test_conv_is_the_algorithm(void **state)
{
    (void)state;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const shape *k = &shapes[si];
        const int64_t oh = k->h + 2 * k->ph - 2, ow = k->w + 2 * k->pw - 2;
        const int64_t xs[4] = { k->n, k->h, k->w, k->c }, ws[4] = { k->o, 3, 3, k->c };
        mxp_array *x = rnd(4, xs, 1, 10 + si), *w = rnd(4, ws, 0.2, 20 + si), *b = rnd(1, &k->o, 1, 30 + si);
        float *want = emulate(k, mxp_array_data(x), mxp_array_data(w), mxp_array_data(b));
        const size_t ny = (size_t)(k->n * oh * ow * k->o);
        float *xt = malloc((size_t)mxp_array_size(x) * 4), *wt = malloc((size_t)mxp_array_size(w) * 4);
        float *want_t = malloc(ny * 4);
        to_planes(xt, mxp_array_data(x), k->n, k->h * k->w, k->c);
        to_planes(wt, mxp_array_data(w), k->o, 9, k->c);
        to_planes(want_t, want, k->n, oh * ow, k->o);
        const int64_t xs2[4] = { k->n, k->c, k->h, k->w }, ws2[4] = { k->o, k->c, 3, 3 };
        mxp_array *x2 = NULL, *w2 = NULL;
        assert_int_equal(mxp_array_wrap(&x2, xt, MXP_F32, 4, xs2, NULL, false, NULL, NULL), MXP_OK);
        assert_int_equal(mxp_array_wrap(&w2, wt, MXP_F32, 4, ws2, NULL, false, NULL, NULL), MXP_OK);
        for (int threads = 1; threads <= 2; threads++)
            for (int nchw = 0; nchw < 2; nchw++) {
                const mxp_conv_opts opt = { .layout = nchw ? MXP_NCHW : MXP_NHWC, .padding = { k->ph, k->pw },
                                            .activation = MXP_ACT_RELU, .algorithm = MXP_CONV_WINOGRAD };
                mxp_array *y = NULL;
                assert_int_equal(mxp_set_num_threads(threads), MXP_OK);
                assert_int_equal(mxp_conv2d(&y, nchw ? x2 : x, nchw ? w2 : w, b, &opt, 0), MXP_OK);
                if (memcmp(mxp_array_data(y), nchw ? want_t : want, ny * 4))
                    fail_msg("shape %zu, %s, %d thread(s): differs from the algorithm put together here", si,
                             nchw ? "NCHW" : "NHWC", threads);
                mxp_array_free(y);
            }
        assert_int_equal(mxp_set_num_threads(0), MXP_OK);
        mxp_array *all[5] = { x, w, b, x2, w2 };
        for (int i = 0; i < 5; i++)
            mxp_array_free(all[i]);
        free(want), free(want_t), free(xt), free(wt);
    }
}

/* Within its bound of the float64 convolution (long double sums): the
 * transforms' and the GEMMs' roundings, |y - exact| <= 2^-17 sum |x w|
 * (about 20 times what these shapes reach); a wrong tap is off by
 * whole products.  No activation: the sums themselves. */
static void test_conv_is_near_float64(void **state)
{
    (void)state;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const shape *k = &shapes[si];
        const int64_t oh = k->h + 2 * k->ph - 2, ow = k->w + 2 * k->pw - 2;
        const int64_t xs[4] = { k->n, k->h, k->w, k->c }, ws[4] = { k->o, 3, 3, k->c };
        mxp_array *x = rnd(4, xs, 1, 40 + si), *w = rnd(4, ws, 0.2, 50 + si), *y = NULL;
        const mxp_conv_opts opt = { .layout = MXP_NHWC, .padding = { k->ph, k->pw },
                                    .algorithm = MXP_CONV_WINOGRAD };
        assert_int_equal(mxp_conv2d(&y, x, w, NULL, &opt, 0), MXP_OK);
        const float *xv = mxp_array_data(x), *wv = mxp_array_data(w), *yv = mxp_array_data(y);
        double worst = 0;
        for (int64_t n = 0; n < k->n; n++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t jj = 0; jj < ow; jj++)
                    for (int64_t oc = 0; oc < k->o; oc++) {
                        long double s = 0, a = 0;
                        for (int64_t p = 0; p < 3; p++)
                            for (int64_t q = 0; q < 3; q++) {
                                const int64_t ih = i + p - k->ph, iw = jj + q - k->pw;
                                if (ih < 0 || ih >= k->h || iw < 0 || iw >= k->w)
                                    continue;
                                for (int64_t ch = 0; ch < k->c; ch++) {
                                    const long double pr = (long double)xv[((n * k->h + ih) * k->w + iw) * k->c + ch] *
                                                           wv[((oc * 3 + p) * 3 + q) * k->c + ch];
                                    s += pr;
                                    a += fabsl(pr);
                                }
                            }
                        const double err = (double)fabsl((long double)yv[((n * oh + i) * ow + jj) * k->o + oc] - s);
                        if (err > ldexp((double)a, -17) + 1e-30)
                            fail_msg("shape %zu, output (%lld, %lld, %lld, %lld): %.9g against %.9Lg (sum |x w| %.3Lg)",
                                     si, (long long)n, (long long)i, (long long)jj, (long long)oc,
                                     yv[((n * oh + i) * ow + jj) * k->o + oc], s, a);
                        worst = a > 0 && err / (double)a > worst ? err / (double)a : worst;
                    }
        assert_true(worst < ldexp(1, -17));
        mxp_array_free(x), mxp_array_free(w), mxp_array_free(y);
    }
}

/* MXP_CONV_AUTO: Winograd's bits where it pays (16 channels in and out
 * or more, 48 tiles or more covering the outputs closely, 4096 channel
 * pairs or 256 tiles, from the avx2 level up), the direct path's
 * elsewhere. */
static void test_auto_takes_winograd_where_it_pays(void **state)
{
    (void)state;
    static const struct {
        shape k;
        int pays;
    } cases[] = {
        { { 1, 64, 14, 14, 64, 1, 1 }, 1 },  /* 49 tiles, 4096 pairs */
        { { 1, 16, 32, 32, 16, 1, 1 }, 1 },  /* 256 tiles */
        { { 1, 63, 14, 14, 64, 1, 1 }, 0 },  /* 4032 pairs, 49 tiles */
        { { 1, 15, 32, 32, 16, 1, 1 }, 0 },  /* 15 input channels */
        { { 1, 64, 14, 14, 15, 1, 1 }, 0 },  /* 15 output channels */
        { { 1, 64, 12, 14, 64, 1, 1 }, 0 },  /* 42 tiles */
        { { 4, 64, 7, 7, 64, 1, 1 }, 0 },    /* 7 x 7 outputs: 16 tiles of 4 for 49 */
    };
    const bool simd = mxp_isa_current() >= MXP_ISA_AVX2;
    for (size_t si = 0; si < sizeof cases / sizeof cases[0]; si++) {
        const shape *k = &cases[si].k;
        const int64_t xs[4] = { k->n, k->h, k->w, k->c }, ws[4] = { k->o, 3, 3, k->c };
        mxp_array *x = rnd(4, xs, 1, 70 + si), *w = rnd(4, ws, 0.2, 80 + si), *y[3] = { NULL, NULL, NULL };
        for (int a = 0; a < 3; a++) {
            const mxp_conv_opts opt = { .layout = MXP_NHWC, .padding = { k->ph, k->pw },
                                        .algorithm = (mxp_conv_algorithm)a };
            assert_int_equal(mxp_conv2d(&y[a], x, w, NULL, &opt, 0), MXP_OK);
        }
        const size_t bytes = (size_t)mxp_array_size(y[0]) * 4;
        const bool wino = simd && cases[si].pays;
        assert_memory_equal(mxp_array_data(y[0]), mxp_array_data(y[wino ? MXP_CONV_WINOGRAD : MXP_CONV_DIRECT]),
                            bytes);
        assert_true(memcmp(mxp_array_data(y[MXP_CONV_DIRECT]), mxp_array_data(y[MXP_CONV_WINOGRAD]), bytes) != 0);
        for (int a = 0; a < 3; a++)
            mxp_array_free(y[a]);
        mxp_array_free(x), mxp_array_free(w);
    }
}

/* MXP_CONV_WINOGRAD where it does not apply, and an algorithm that is
 * none: refused, out untouched. */
static void test_refusals(void **state)
{
    (void)state;
    const int64_t xs[4] = { 1, 16, 8, 8 }, ws[4] = { 16, 16, 3, 3 }, ws5[4] = { 16, 16, 5, 5 }, ys[4] = { 1, 16, 8, 8 };
    mxp_array *x = rnd(4, xs, 1, 1), *w = rnd(4, ws, 1, 2), *w5 = rnd(4, ws5, 1, 3), *y = NULL, *x64 = NULL;
    assert_int_equal(mxp_array_astype(&x64, x, MXP_F64, NULL), MXP_OK);
    assert_int_equal(mxp_array_full(&y, MXP_F32, 4, ys, 7.0, NULL), MXP_OK);
    const mxp_conv_opts stride2 = { .padding = { 1, 1 }, .stride = { 2, 2 }, .algorithm = MXP_CONV_WINOGRAD };
    const mxp_conv_opts pad1 = { .padding = { 1, 1 }, .algorithm = MXP_CONV_WINOGRAD };
    const mxp_conv_opts pad2 = { .padding = { 2, 2 }, .algorithm = MXP_CONV_WINOGRAD };
    const mxp_conv_opts dil = { .padding = { 2, 2 }, .dilation = { 2, 2 }, .algorithm = MXP_CONV_WINOGRAD };
    const mxp_conv_opts grp = { .padding = { 1, 1 }, .groups = 2, .algorithm = MXP_CONV_WINOGRAD };
    mxp_array *wg = NULL;
    const int64_t wgs[4] = { 16, 8, 3, 3 };
    wg = rnd(4, wgs, 1, 4);
    mxp_array *y4 = NULL;
    const int64_t y4s[4] = { 1, 16, 4, 4 };
    assert_int_equal(mxp_array_full(&y4, MXP_F32, 4, y4s, 7.0, NULL), MXP_OK);
    assert_int_equal(mxp_conv2d_into(y4, x, w, NULL, &stride2), MXP_ERR_UNSUPPORTED);
    assert_non_null(strstr(mxp_last_error(), "MXP_CONV_WINOGRAD"));
    assert_int_equal(mxp_conv2d_into(y, x, w5, NULL, &pad2), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_conv2d_into(y, x, w, NULL, &dil), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_conv2d_into(y, x, wg, NULL, &grp), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_conv2d_into(y, x64, w, NULL, &pad1), MXP_ERR_UNSUPPORTED);
    mxp_array *y16 = NULL;
    assert_int_equal(mxp_conv2d(&y16, x, w, NULL, &pad1, MXP_F16), MXP_ERR_UNSUPPORTED);
    assert_null(y16);
    const mxp_conv_opts bad = { .padding = { 1, 1 }, .algorithm = (mxp_conv_algorithm)3 };
    assert_int_equal(mxp_conv2d_into(y, x, w, NULL, &bad), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "algorithm 3"));
    const float *yv = mxp_array_data(y), *y4v = mxp_array_data(y4);
    for (int64_t i = 0; i < mxp_array_size(y); i++)
        assert_true(yv[i] == 7.0f);
    for (int64_t i = 0; i < mxp_array_size(y4); i++)
        assert_true(y4v[i] == 7.0f);
    mxp_array *all[8] = { x, w, w5, y, x64, wg, y4, NULL };
    for (int i = 0; i < 8; i++)
        mxp_array_free(all[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_is_the_list),
        cmocka_unit_test(test_every_kernel_gives_its_twins_bits),
        cmocka_unit_test(test_twin_values),
        cmocka_unit_test(test_conv_is_the_algorithm),
        cmocka_unit_test(test_conv_is_near_float64),
        cmocka_unit_test(test_auto_takes_winograd_where_it_pays),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

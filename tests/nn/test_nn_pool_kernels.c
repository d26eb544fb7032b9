/* Every row of src/kernels/f32-pool-list.inc that the machine runs gives
 * its twin's bits: max and sums (with and without divisors), windows 1 to
 * 12 wide (the wide path above 8) and 1 to 4 tall with rows missing,
 * strides 1 to 3, padding, 1 to 33 channels, unaligned starts, NaNs with
 * payloads, infinities, zeros of both signs, subnormals; float32 pooling
 * gives the bits of the float64 path; and the dispatch table is the list.
 * The plane kernels (f32-pool-plane-list.inc) likewise: each its twin's
 * bits on random planes and windows, max and sums (plain values, which
 * take max's fast path, and NaNs, zeros of both signs, infinities, which
 * take the exact one), the max twin the row kernels' bits (the sum twin
 * is the row twin a row). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "nn/conv-internal.h"
#include "support/kernel_list.h"
#include "support/prng.h"

static const kl_listed pool_listed[] = {
#define MXP_F32_POOL(isa, tile, fn, twin) { #fn, isa },
#include "kernels/f32-pool-list.inc"
#undef MXP_F32_POOL
};

static void test_table_is_the_list(void **state)
{
    (void)state;
    size_t n;
    const mxp_kernel *k = nn_f32_pool_kernels(&n);
    kl_expect_table(k, n, pool_listed, sizeof pool_listed / sizeof pool_listed[0]);
    for (int isa = 0; isa < MXP_ISA_COUNT; isa++)
        assert_non_null(nn_f32_pool_kernel((mxp_isa)isa));
}

enum { MAXW = 40, MAXC = 33, MAXKH = 4, ROW = MAXW * MAXC + 8, ACC = MAXW * MAXC + 8 };

static float special(size_t i, uint64_t *rng, int zeros)
{
    const double u = prng_uniform(rng) - 0.5;
    uint32_t nan = 0x7fc00000u | (uint32_t)(i * 2654435761u & 0x3fffffu), snan = 0xff800001u | (uint32_t)(i & 0xffff);
    float f, sf;
    memcpy(&f, &nan, 4);
    memcpy(&sf, &snan, 4); /* signaling: pooling into float32 quiets it */
    if (zeros) /* mostly zeros of both signs: the maximum's first zero */
        return i % 3 == 0 ? -0.0f : i % 7 == 1 ? (float)u : 0.0f;
    return i % 97 == 5 ? INFINITY : i % 89 == 7 ? f : i % 101 == 9 ? sf : i % 83 == 3 ? 1e-40f
           : i % 79 == 2 ? -INFINITY : (float)(u * 8);
}

/* The same bytes, except that for sums a NaN element matches any NaN
 * (which payload an addition passes on is the compiler's choice of
 * operand order): the n doubles at byte `at`. */
static bool same_bits(int kind, const double *a, const double *b, size_t size, size_t at, size_t n)
{
    if (kind == MXP_POOL_MAX || !memcmp(a, b, size))
        return !memcmp(a, b, size);
    if (memcmp(a, b, at) || memcmp((const char *)a + at + n * 8, (const char *)b + at + n * 8, size - at - n * 8))
        return false;
    for (size_t t = 0; t < n; t++) {
        double x, y;
        memcpy(&x, (const char *)a + at + t * 8, 8);
        memcpy(&y, (const char *)b + at + t * 8, 8);
        if (memcmp(&x, &y, 8) && !(isnan(x) && isnan(y)))
            return false;
    }
    return true;
}

static void test_every_kernel_gives_its_twins_bits(void **state)
{
    (void)state;
    size_t nk;
    const mxp_kernel *ks = nn_f32_pool_kernels(&nk);
    const mxp_isa top = mxp_isa_current();
    float *rowbuf = malloc(MAXKH * ROW * sizeof(float));
    double *a0 = malloc(2 * ACC * sizeof(double)), *a1 = malloc(ACC * sizeof(double)), div[MAXW];
    float *f0 = malloc(ACC * sizeof(float)), *f1 = malloc(ACC * sizeof(float));
    uint64_t rng = 91;
    const size_t chs[] = { 1, 1, 1, 2, 3, 7, 8, 9, 16, 17, 33 };
    size_t cases = 0;
    for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], top))
            continue;
        mxp_f32_pool_ukernel *k = (mxp_f32_pool_ukernel *)ks[r].fn, *twin = (mxp_f32_pool_ukernel *)ks[r].twin;
        for (int trial = 0; trial < 3000; trial++) {
            const size_t kw = 1 + prng_next(&rng) % 12, kh = 1 + prng_next(&rng) % MAXKH;
            const size_t s = 1 + prng_next(&rng) % 3, pw = prng_next(&rng) % (kw / 2 + 1);
            const size_t w = kw + prng_next(&rng) % (MAXW - kw + 1), ch = chs[prng_next(&rng) % 11];
            const size_t ow = (w + 2 * pw - kw) / s + 1;
            if (ow > MAXW)
                continue;
            const int kind = (int)(prng_next(&rng) % 2), zeros = trial % 5 == 0;
            const size_t off = prng_next(&rng) % 3;
            const float *rows[MAXKH];
            for (size_t p = 0; p < kh; p++) {
                float *x = rowbuf + p * ROW + off;
                for (size_t t = 0; t < w * ch; t++)
                    x[t] = special(t + p * 31, &rng, zeros);
                rows[p] = prng_next(&rng) % 6 == 0 ? NULL : x;
            }
            for (size_t j = 0; j < ow; j++)
                div[j] = (double)(1 + prng_next(&rng) % 9);
            mxp_f32_pool_params prm = { rows, kh, kw, w, ow, ch, s, pw, kind,
                                        kind == MXP_POOL_SUM && trial % 2 ? div : NULL, trial % 3 == 0, NULL };
            for (size_t t = 0; t < ACC; t++)
                a0[t] = a1[t] = (double)t;
            const size_t at = off * (kind == MXP_POOL_MAX ? 4 : 8); /* acc aligned to its element */
            k((char *)a0 + at, &prm);
            twin((char *)a1 + at, &prm);
            if (kind == MXP_POOL_SUM) { /* the float32 results: the twin's doubles rounded */
                for (size_t t = 0; t < ACC; t++)
                    f0[t] = f1[t] = (float)t;
                double *scratch = a0 + ACC; /* the kernel's doubles: scratch */
                prm.out32 = f0 + off;
                k(scratch + off, &prm);
                prm.out32 = f1 + off;
                twin(scratch + off, &prm);
                for (size_t t = 0; t < ACC; t++) {
                    const float want = t >= off && t < off + ow * ch ? (float)a1[t] : (float)t;
                    if (memcmp(&f0[t], &want, 4) && !(isnan(f0[t]) && isnan(want)))
                        fail_msg("%s: kind %d, kh %zu, kw %zu, w %zu, s %zu, pw %zu, ch %zu, off %zu, div %d: "
                                 "float32 result %zu is %a, the twin's double %a rounds to %a", ks[r].name, kind, kh,
                                 kw, w, s, pw, ch, off, prm.div != NULL, t, f0[t], a1[t], want);
                    if (memcmp(&f1[t], &want, 4) && !(isnan(f1[t]) && isnan(want)))
                        fail_msg("%s: float32 result %zu %a, not %a", ks[r].twin_name, t, f1[t], want);
                }
                prm.out32 = NULL;
            }
            if (!same_bits(kind, a0, a1, ACC * sizeof(double), at, ow * ch)) {
                size_t t = 0;
                while (t < ACC && !memcmp(&a0[t], &a1[t], sizeof(double)))
                    t++;
                fail_msg("%s: kind %d, kh %zu, kw %zu, w %zu, s %zu, pw %zu, ch %zu, off %zu, div %d: double %zu "
                         "(%a, %a) differs from %s", ks[r].name, kind, kh, kw, w, s, pw, ch, off, prm.div != NULL,
                         t, a0[t], a1[t], ks[r].twin_name);
            }
            cases++;
        }
    }
    assert_true(cases > 1000);
    free(rowbuf), free(a0), free(a1), free(f0), free(f1);
}

/* The twin against a direct loop written here: a window's elements in
 * (p, q) order, the divisor. */
static void test_twin_is_the_direct_loop(void **state)
{
    (void)state;
    const float x0[] = { 1, -2, NAN, 4, 0.5f, -0.0f, 3, 7 }, x1[] = { 2, 2, 2, -1, 9, 0.0f, -3, 1 };
    const float *rows[2] = { x0, x1 };
    float m[4];
    /* 2 x 3 windows, stride 2, padding 1 on 8 columns: columns -1..1, 1..3, 3..5, 5..7 */
    mxp_f32_pool_params prm = { rows, 2, 3, 8, 4, 1, 2, 1, MXP_POOL_MAX, NULL, 0, NULL };
    mxp_f32_pool__scalar(m, &prm);
    assert_true(isnan(m[0]) == 0 && m[0] == 2.0f);
    assert_true(isnan(m[1]));
    assert_true(m[2] == 9.0f);
    assert_true(m[3] == 7.0f);
    /* a signaling NaN maximum: kept, or made quiet (bit 22) where asked */
    const uint32_t snan_bits = 0x7f800005u;
    float x2[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    memcpy(&x2[2], &snan_bits, 4);
    const float *rows2[2] = { x2, NULL };
    prm.rows = rows2;
    for (int quiet = 0; quiet < 2; quiet++) {
        prm.quiet = quiet;
        mxp_f32_pool__scalar(m, &prm);
        uint32_t b;
        memcpy(&b, &m[1], 4);
        assert_int_equal(b, quiet ? 0x7fc00005u : snan_bits);
    }
    prm.rows = rows, prm.quiet = 0;
    double sums[4], div[4] = { 4, 6, 6, 6 };
    prm.kind = MXP_POOL_SUM;
    prm.div = div;
    mxp_f32_pool__scalar(sums, &prm);
    assert_true(sums[0] == (1.0 - 2 + 2 + 2) / 4);
    assert_true(isnan(sums[1]));
    assert_true(sums[2] == (4.0 + 0.5 - 0.0 - 1 + 9 + 0) / 6);
    assert_true(sums[3] == (-0.0 + 3 + 7 + 0 - 3 + 1) / 6);
    /* the same as float32, each rounded once (12.5 / 6 and 8 / 6 are not floats) */
    float f[4];
    prm.out32 = f;
    mxp_f32_pool__scalar(sums, &prm);
    assert_true(f[0] == 0.75f);
    assert_true(isnan(f[1]));
    assert_true(f[2] == (float)(12.5 / 6) && (double)f[2] != 12.5 / 6);
    assert_true(f[3] == (float)(8.0 / 6) && (double)f[3] != 8.0 / 6);
}

/* The divisors computed as products (nn_window_divisors) are
 * nn_window_bounds's at every output: windows 1 to 5, strides 1 to 3,
 * padding up to half the window, outputs reaching past the padded input
 * (ceil_mode's last windows), both divisor rules; and three written out. */
static void test_window_divisors_are_the_bounds(void **state)
{
    (void)state;
    double div[64 * 64];
    size_t cases = 0;
    for (int64_t k = 1; k <= 5; k++)
        for (int64_t s = 1; s <= 3; s++)
            for (int64_t pad = 0; pad <= k / 2; pad++)
                for (int64_t n = k; n <= 11; n += 3)
                    for (int extra = 0; extra < 2; extra++)
                        for (int excl = 0; excl < 2; excl++) {
                            nn_window win;
                            memset(&win, 0, sizeof win);
                            win.kind = NN_WIN_AVG;
                            win.exclude_pad = excl;
                            win.g.h = n, win.g.w = n + 2, win.g.kh = k, win.g.kw = k > 1 ? k - 1 : 1;
                            win.g.sh = s, win.g.sw = s == 1 ? 2 : s - 1, win.g.ph = pad, win.g.pw = win.g.kw / 2;
                            win.g.oh = (win.g.h + 2 * win.g.ph - win.g.kh) / win.g.sh + 1 + extra;
                            win.g.ow = (win.g.w + 2 * win.g.pw - win.g.kw) / win.g.sw + 1 + extra;
                            nn_window_divisors(&win, div);
                            for (int64_t i = 0; i < win.g.oh; i++)
                                for (int64_t j = 0; j < win.g.ow; j++) {
                                    int64_t h0, h1, w0, w1;
                                    double d;
                                    nn_window_bounds(&win, i, j, &h0, &h1, &w0, &w1, &d);
                                    if (div[i * win.g.ow + j] != d)
                                        fail_msg("k %lld s %lld pad %lld n %lld excl %d: (%lld, %lld) %g, bounds %g",
                                                 (long long)k, (long long)s, (long long)pad, (long long)n, excl,
                                                 (long long)i, (long long)j, div[i * win.g.ow + j], d);
                                    cases++;
                                }
                        }
    assert_true(cases > 10000);
    /* 3x3, stride 2, padding 1 on 4x4, the output 3x3 (ceil mode): counting
       the padding, the last windows clipped to the padded input (rows and
       columns -1 .. 4: the last window two wide); without it,
       the elements */
    nn_window win;
    memset(&win, 0, sizeof win);
    win.kind = NN_WIN_AVG;
    win.g.h = win.g.w = 4, win.g.kh = win.g.kw = 3, win.g.sh = win.g.sw = 2, win.g.ph = win.g.pw = 1;
    win.g.oh = win.g.ow = 3;
    const double padded[9] = { 9, 9, 6, 9, 9, 6, 6, 6, 4 }, inside[9] = { 4, 6, 2, 6, 9, 3, 2, 3, 1 };
    for (int excl = 0; excl < 2; excl++) {
        win.exclude_pad = excl;
        nn_window_divisors(&win, div);
        for (int t = 0; t < 9; t++)
            assert_true(div[t] == (excl ? inside : padded)[t]);
    }
}

/* Float32 pooling (the row kernels) against float64 input rounded into
 * float32 (the generic path): the same bits, both layouts, at this level. */
static void test_f32_pooling_is_the_float64_paths(void **state)
{
    (void)state;
    /* global averages: blocks of 8 planes, partial blocks, planes of fewer than 8 values */
    const int64_t shapes[][4] = { { 2, 3, 11, 13 }, { 1, 17, 9, 8 }, { 3, 1, 56, 56 }, { 1, 40, 7, 30 }, { 5, 3, 1, 5 } };
    const struct { int64_t k[2], s[2], p[2]; bool ceil, excl; } wins[] = {
        { { 3, 3 }, { 2, 2 }, { 1, 1 }, false, false }, { { 2, 2 }, { 2, 2 }, { 0, 0 }, false, false },
        { { 3, 3 }, { 1, 1 }, { 1, 1 }, true, true },   { { 1, 10 }, { 1, 3 }, { 0, 5 }, true, false },
        { { 0, 0 }, { 0, 0 }, { 0, 0 }, false, false } };
    uint64_t rng = 5;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int layout = 0; layout < 2; layout++)
            for (size_t wi = 0; wi < sizeof wins / sizeof wins[0]; wi++)
                for (int max = 0; max < 2; max++) {
                    mxp_array *x = NULL, *x64 = NULL, *y = NULL, *y64 = NULL;
                    assert_int_equal(mxp_array_empty(&x, MXP_F32, 4, shapes[si]), MXP_OK);
                    float *xd = (float *)(void *)x->data;
                    for (int64_t t = 0; t < mxp_array_size(x); t++)
                        xd[t] = special((size_t)t, &rng, si == 1);
                    assert_int_equal(mxp_array_empty(&x64, MXP_F64, 4, shapes[si]), MXP_OK);
                    for (int64_t t = 0; t < mxp_array_size(x); t++) /* the hardware's widening: payloads kept */
                        ((double *)(void *)x64->data)[t] = (double)xd[t];
                    mxp_pool_opts o = { .kernel = { wins[wi].k[0], wins[wi].k[1] },
                                        .stride = { wins[wi].s[0], wins[wi].s[1] },
                                        .padding = { wins[wi].p[0], wins[wi].p[1] },
                                        .ceil_mode = wins[wi].ceil, .exclude_pad = wins[wi].excl,
                                        .layout = layout ? MXP_NHWC : MXP_NCHW };
                    mxp_status s1 = max ? mxp_max_pool2d(&y, x, &o, MXP_F32) : mxp_avg_pool2d(&y, x, &o, MXP_F32);
                    mxp_status s2 = max ? mxp_max_pool2d(&y64, x64, &o, MXP_F32)
                                        : mxp_avg_pool2d(&y64, x64, &o, MXP_F32);
                    assert_int_equal(s1, s2);
                    if (s1 == MXP_OK) {
                        assert_int_equal(mxp_array_size(y), mxp_array_size(y64));
                        const uint32_t *b1 = (const uint32_t *)(const void *)y->data;
                        const uint32_t *b2 = (const uint32_t *)(const void *)y64->data;
                        for (int64_t t = 0; t < mxp_array_size(y); t++)
                            if (b1[t] != b2[t] && (max || !((b1[t] & 0x7fffffffu) > 0x7f800000u &&
                                                             (b2[t] & 0x7fffffffu) > 0x7f800000u)))
                                fail_msg("shape %zu, layout %d, window %zu, max %d: element %lld is 0x%08x from "
                                         "float32, 0x%08x from float64", si, layout, wi, max, (long long)t, b1[t],
                                         b2[t]);
                    }
                    mxp_array_free(x), mxp_array_free(x64), mxp_array_free(y), mxp_array_free(y64);
                }
}

/* ---- max pooling a plane at a time ----------------------------------------- */

static const kl_listed plane_listed[] = {
#define MXP_F32_POOL_PLANE(isa, tile, fn, twin) { #fn, isa },
#include "kernels/f32-pool-plane-list.inc"
#undef MXP_F32_POOL_PLANE
};

static void test_plane_table_is_the_list(void **state)
{
    (void)state;
    size_t n;
    const mxp_kernel *k = nn_f32_pool_plane_kernels(&n);
    kl_expect_table(k, n, plane_listed, sizeof plane_listed / sizeof plane_listed[0]);
    for (int isa = 0; isa < MXP_ISA_COUNT; isa++)
        assert_non_null(nn_f32_pool_plane_kernel((mxp_isa)isa));
}

enum { PH = 40, PW = 100, PY = 64 * 64, PGUARD = 8 };

/* Divisors 1 to 9 for the sums' outputs (a few shared, a few powers of two). */
static double plane_divs[PY];

/* A random plane's geometry (max; the caller may make it a sum): windows up to 6 tall (sometimes 16) and 8
 * wide, strides 1-3 down and 1-2 across, padding up to half the window,
 * planes up to PH x PW (ceil mode's last windows now and then); false
 * where the output would be empty or too large. */
static bool plane_geometry(mxp_f32_pool_plane_params *p, uint64_t *rng)
{
    p->kind = MXP_POOL_MAX, p->div = NULL, p->recip = 0;
    p->kh = prng_next(rng) % 9 == 0 ? MXP_POOL_PLANE_KH : 1 + prng_next(rng) % 6;
    p->kw = 1 + prng_next(rng) % MXP_POOL_WIDE;
    p->sh = 1 + prng_next(rng) % 3, p->sw = 1 + prng_next(rng) % 2;
    p->ph = prng_next(rng) % (p->kh / 2 + 1), p->pw = prng_next(rng) % (p->kw / 2 + 1);
    p->h = p->kh + prng_next(rng) % (PH - p->kh + 1);
    p->w = p->kw + prng_next(rng) % (PW - p->kw + 1);
    if (p->h + 2 * p->ph < p->kh || p->w + 2 * p->pw < p->kw)
        return false;
    p->oh = (p->h + 2 * p->ph - p->kh) / p->sh + 1;
    p->ow = (p->w + 2 * p->pw - p->kw) / p->sw + 1;
    if (prng_next(rng) % 4 == 0 && p->oh * p->sh < p->h + p->ph) /* ceil mode: a last window reaching past */
        p->oh++;
    if (prng_next(rng) % 4 == 0 && p->ow * p->sw < p->w + p->pw)
        p->ow++;
    return p->oh * p->ow <= PY;
}

/* Plane values: plain (the fast fold), or with zeros of both signs, or
 * with NaNs (payloads, signaling ones), infinities, subnormals, or
 * (kind 3) +-2^60 among values near 1, whose float64 sums depend on the
 * order of the additions ((2^60 + a) - 2^60 = 0, (2^60 - 2^60) + a = a). */
static void plane_fill(float *x, size_t n, int kind, uint64_t *rng)
{
    const size_t from = prng_next(rng) % 1000;
    for (size_t t = 0; t < n; t++)
        x[t] = kind == 0   ? (float)(prng_uniform(rng) * 100 - 50)
               : kind == 3 ? (prng_next(rng) % 3 ? (float)(prng_uniform(rng) - 0.5)
                                                 : prng_next(rng) % 2 ? 0x1p60f : -0x1p60f)
                           : special(from + t, rng, kind == 1);
}

static void test_every_plane_kernel_gives_its_twins_bits(void **state)
{
    (void)state;
    size_t nk;
    const mxp_kernel *ks = nn_f32_pool_plane_kernels(&nk);
    const mxp_isa top = mxp_isa_current();
    float *xb = malloc((PH * PW + 4) * sizeof(float)), *y0 = malloc((PY + PGUARD + 4) * sizeof(float));
    float *y1 = malloc((PY + PGUARD + 4) * sizeof(float));
    uint64_t rng = 2024;
    size_t cases = 0;
    for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], top))
            continue;
        mxp_f32_pool_plane_ukernel *k = (mxp_f32_pool_plane_ukernel *)ks[r].fn;
        mxp_f32_pool_plane_ukernel *twin = (mxp_f32_pool_plane_ukernel *)ks[r].twin;
        for (int trial = 0; trial < 4000; trial++) {
            mxp_f32_pool_plane_params p;
            if (!plane_geometry(&p, &rng))
                continue;
            const bool resnet = trial % 10 == 0; /* 3x3, stride 2, padding 1 (the kernels' written-out rows), one NaN */
            if (resnet) {
                p.kh = p.kw = 3, p.sh = p.sw = 2, p.ph = p.pw = 1;
                p.h = 3 + prng_next(&rng) % (PH - 2), p.w = 3 + prng_next(&rng) % (PW - 2);
                p.oh = (p.h - 1) / 2 + 1, p.ow = (p.w - 1) / 2 + 1;
            }
            const size_t xo = prng_next(&rng) % 4, yo = prng_next(&rng) % 4, ny = p.oh * p.ow;
            const int kind = resnet ? 0 : trial % 5 == 4 ? 0 : trial % 5; /* plain, zeros, specials, spread, plain */
            if (trial % 3 == 2) { /* sums: divisors 1 to 9, or one power of two (recip) */
                p.kind = MXP_POOL_SUM, p.div = plane_divs;
                const double one = (double)(1u << prng_next(&rng) % 4);
                for (size_t t = 0; t < ny; t++)
                    plane_divs[t] = trial % 2 ? one : (double)(1 + prng_next(&rng) % 9);
                p.recip = mxp_pool_plane_recip(plane_divs, ny);
                if (trial % 2 && p.recip != 1 / one)
                    fail_msg("recip %g of divisors all %g", p.recip, one);
            }
            plane_fill(xb + xo, p.h * p.w, kind, &rng);
            if (kind == 0 && (resnet || trial % 8 == 0)) /* one NaN somewhere in a plain plane */
                xb[xo + prng_next(&rng) % (p.h * p.w)] = NAN;
            for (size_t t = 0; t < ny + PGUARD + 4; t++)
                y0[t] = y1[t] = (float)t;
            const size_t scratch = mxp_pool_plane_scratch(p.kh, p.w, p.ow) * sizeof(float); /* exactly */
            float *h0 = malloc(scratch), *h1 = malloc(scratch);
            p.x = xb + xo;
            p.y = y0 + yo, p.hbuf = h0;
            k(&p);
            p.y = y1 + yo, p.hbuf = h1;
            twin(&p);
            free(h0), free(h1);
            for (size_t t = 0; t < ny + PGUARD + 4; t++) /* a sum's NaN payload: the operand order's */
                if (memcmp(&y0[t], &y1[t], 4) && !(p.kind == MXP_POOL_SUM && isnan(y0[t]) && isnan(y1[t])))
                    fail_msg("%s: %s, %zux%zu plane, window %zux%zu, strides %zu %zu, padding %zu %zu, out "
                             "%zux%zu, fill %d: float %zu is %a, %s's %a", ks[r].name,
                             p.kind == MXP_POOL_MAX ? "max" : "sum", p.h, p.w, p.kh, p.kw, p.sh, p.sw, p.ph, p.pw,
                             p.oh, p.ow, kind, t, y0[t], ks[r].twin_name, y1[t]);
            cases++;
        }
    }
    assert_true(cases > 3000);
    free(xb), free(y0), free(y1);
}

/* The twin against the row kernels' twin (quiet set, one channel), row by
 * row: the pooling's bits; and a plane written out. */
static void test_plane_twin_is_the_rows(void **state)
{
    (void)state;
    float *xb = malloc(PH * PW * sizeof(float)), *y = malloc(PY * sizeof(float)), row[PW + 8];
    float *hb = malloc(mxp_pool_plane_scratch(MXP_POOL_PLANE_KH, PW, PW + 8) * sizeof(float));
    uint64_t rng = 77;
    size_t cases = 0;
    for (int trial = 0; trial < 1500; trial++) {
        mxp_f32_pool_plane_params p;
        if (!plane_geometry(&p, &rng))
            continue;
        plane_fill(xb, p.h * p.w, trial % 3, &rng);
        p.x = xb, p.y = y, p.hbuf = hb;
        mxp_f32_pool_plane__scalar(&p);
        for (size_t i = 0; i < p.oh; i++) {
            const float *rows[MXP_POOL_PLANE_KH];
            for (size_t q = 0; q < p.kh; q++) {
                const ptrdiff_t ih = (ptrdiff_t)(i * p.sh + q) - (ptrdiff_t)p.ph;
                rows[q] = ih >= 0 && ih < (ptrdiff_t)p.h ? xb + (size_t)ih * p.w : NULL;
            }
            const mxp_f32_pool_params rp = { rows, p.kh, p.kw, p.w, p.ow, 1, p.sw, p.pw, MXP_POOL_MAX, NULL, 1,
                                             NULL };
            mxp_f32_pool__scalar(row, &rp);
            if (memcmp(row, y + i * p.ow, p.ow * sizeof(float)))
                fail_msg("%zux%zu plane, window %zux%zu, strides %zu %zu, padding %zu %zu: output row %zu differs",
                         p.h, p.w, p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, i);
        }
        cases++;
    }
    assert_true(cases > 1000);
    /* written out, at every kernel the machine runs: 3x3 windows, stride
       2, padding 1 on 3 x 4 (rows -1..1 and 1..3, columns -1..1 and
       1..3): the signaling NaN made quiet, the maximum of the windows
       that hold it; then 2x2 windows of zeros: the first zero's sign */
    const uint32_t snan = 0x7f800007u;
    float x[12] = { 1, 5, -0.0f, 0.0f, 2, 0, 3, 0, 4, 0, 8, -1 }, z[4] = { -0.0f, 0.0f, 0.0f, -0.0f };
    memcpy(&x[9], &snan, 4);
    size_t nk;
    const mxp_kernel *ks = nn_f32_pool_plane_kernels(&nk);
    for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], mxp_isa_current()))
            continue;
        mxp_f32_pool_plane_ukernel *k = (mxp_f32_pool_plane_ukernel *)ks[r].fn;
        float out[4];
        uint32_t b[4];
        const mxp_f32_pool_plane_params p = { MXP_POOL_MAX, x, 3, 4, out, 2, 2, 3, 3, 2, 2, 1, 1, NULL, 0, hb };
        k(&p);
        memcpy(b, out, sizeof b);
        assert_true(out[0] == 5.0f && out[1] == 5.0f);
        assert_int_equal(b[2], 0x7fc00007u);
        assert_int_equal(b[3], 0x7fc00007u);
        const mxp_f32_pool_plane_params pz = { MXP_POOL_MAX, z, 2, 2, out, 1, 1, 2, 2, 2, 2, 0, 0, NULL, 0, hb };
        k(&pz);
        memcpy(b, out, 4);
        assert_int_equal(b[0], 0x80000000u);
    }
    /* the common divisor's reciprocal: only one power of two throughout */
    const double d4[3] = { 4, 4, 4 }, d3[3] = { 3, 3, 3 }, dm[3] = { 4, 4, 2 }, dh[2] = { 0.5, 0.5 };
    assert_true(mxp_pool_plane_recip(d4, 3) == 0.25);
    assert_true(mxp_pool_plane_recip(d3, 3) == 0);
    assert_true(mxp_pool_plane_recip(dm, 3) == 0);
    assert_true(mxp_pool_plane_recip(dh, 2) == 0);
    assert_true(mxp_pool_plane_recip(d4, 0) == 0);
    free(xb), free(y), free(hb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_is_the_list),
        cmocka_unit_test(test_every_kernel_gives_its_twins_bits),
        cmocka_unit_test(test_twin_is_the_direct_loop),
        cmocka_unit_test(test_window_divisors_are_the_bounds),
        cmocka_unit_test(test_f32_pooling_is_the_float64_paths),
        cmocka_unit_test(test_plane_table_is_the_list),
        cmocka_unit_test(test_every_plane_kernel_gives_its_twins_bits),
        cmocka_unit_test(test_plane_twin_is_the_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

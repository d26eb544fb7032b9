/* Every row of the float32 quantization lists (src/kernels/f32-quant-list.inc,
 * f32-minmax-list.inc) this machine runs, twins included: the quantization
 * kernels against an MPFR oracle (the quotient x / scale to 200 bits,
 * rounded to an integer, nearest even) byte for byte -- exact ties, one ulp
 * either side of ties, NaN, +-inf, signed zeros, subnormals, huge values,
 * scales at and beyond the SIMD kernels' range, int8/uint8/int4/uint4
 * ranges, every length and offset around the vector widths -- and the
 * min/max kernels against their twins.  Then mxp_quantize's fast paths (per
 * tensor, per channel, groups; float32/float16/bfloat16 input) at every ISA
 * level and thread count against the same oracle. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <mpfr.h>

#include "mxp.h"
#include "quant/quant-internal.h"
#include "support/kernel_check.h"

enum { MAXROWS = 16 };

/* The rows of one kind (MXP_QUANT_TAG_*) of a list (minmax: f32-minmax,
 * else f32-quant) this machine runs; how many. */
static size_t rows_of(bool minmax, uint32_t kind, const mxp_kernel **out)
{
    size_t n, k = 0;
    const mxp_kernel *rows = mxp_quant_kernels(minmax, &n);
    for (size_t i = 0; i < n; i++)
        if (rows[i].tags == kind && mxp_kernel_runs(&rows[i], mxp_isa_supported()) && k < MAXROWS)
            out[k++] = &rows[i];
    assert_true(k >= 1); /* the twin at least */
    return k;
}

/* The oracle: clamp(rint_even(x / scale) + zp, qmin, qmax), NaN -> zp. */
static uint8_t oracle(float x, float scale, int32_t zp, int32_t qmin, int32_t qmax)
{
    if (isnan(x))
        return (uint8_t)(zp & 0xff);
    long q;
    if (isinf(x)) {
        q = x > 0 ? qmax : qmin;
    } else {
        mpfr_t t, s;
        mpfr_inits2(200, t, s, (mpfr_ptr)0);
        mpfr_set_flt(t, x, MPFR_RNDN);
        mpfr_set_flt(s, scale, MPFR_RNDN);
        mpfr_div(t, t, s, MPFR_RNDN);
        mpfr_rint(t, t, MPFR_RNDN); /* ties to even */
        if (mpfr_cmp_si(t, 100000) > 0)
            q = 100000;
        else if (mpfr_cmp_si(t, -100000) < 0)
            q = -100000;
        else
            q = mpfr_get_si(t, MPFR_RNDN);
        mpfr_clears(t, s, (mpfr_ptr)0);
        q += zp;
        q = q < qmin ? qmin : q > qmax ? qmax : q;
    }
    return (uint8_t)(q & 0xff);
}

typedef struct qrange {
    int32_t zp, qmin, qmax;
} qrange;

static const qrange ranges[] = {
    { 0, -128, 127 },  /* int8 symmetric */
    { -37, -128, 127 }, /* int8 asymmetric */
    { 128, 0, 255 },   /* uint8 symmetric */
    { 3, 0, 255 },     /* uint8 asymmetric */
    { 255, 0, 255 },   /* zero point at the top */
    { 0, -8, 7 },      /* int4 */
    { 8, 0, 15 },      /* uint4 */
};

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint32_t next_u32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* Inputs for a scale: ties (k + 1/2) * scale when exact, their float
 * neighbours, random values of every magnitude around the code range,
 * specials. */
static size_t fill_inputs(float *x, size_t cap, float scale)
{
    size_t n = 0;
    for (int k = -300; k <= 300 && n + 3 <= cap; k++) {
        const float tie = (float)(((double)k + 0.5) * (double)scale);
        if ((double)tie / (double)scale == (double)k + 0.5) { /* exactly a tie */
            x[n++] = tie;
            x[n++] = nextafterf(tie, INFINITY);
            x[n++] = nextafterf(tie, -INFINITY);
        } else {
            x[n++] = tie;
        }
    }
    const float specials[] = { NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, FLT_MIN, -FLT_MIN, 1e-45f,
                               -1e-45f, FLT_MAX, -FLT_MAX, 1.0f, -1.0f, 0.5f, -0.5f, 1.5f, 2.5f };
    for (size_t i = 0; i < sizeof specials / sizeof specials[0] && n < cap; i++)
        x[n++] = specials[i];
    while (n < cap) {
        const uint32_t u = next_u32();
        const double mag = ldexp(1.0, (int)(u % 24) - 14) * (double)scale * 16.0;
        x[n++] = (float)((((double)next_u32() / 4294967296.0) * 2.0 - 1.0) * mag);
        if (u % 97 == 0 && n < cap) /* random bit patterns too */
            memcpy(&x[n++], &u, sizeof u);
    }
    /* shuffle so that the specials land in every lane position */
    for (size_t i = n - 1; i > 0; i--) {
        const size_t j = next_u32() % (i + 1);
        const float t = x[i];
        x[i] = x[j];
        x[j] = t;
    }
    return n;
}

static void test_kernels_vs_oracle(void **state)
{
    (void)state;
    const float scales[] = { 1.0f, 0.375f, 0.1f, 1.0f / 127.0f, 3.0517578e-05f, 0.0123456f, 7.0f, 1e6f,
                             0x1p-100f, 0x1.000002p-100f, 0x1.fffffep-101f, 0x1p100f, 0x1.000002p100f,
                             FLT_MIN, FLT_MAX, 1e-30f };
    enum { N = 4096 };
    const mxp_kernel *ks[MAXROWS];
    const size_t nk = rows_of(false, MXP_QUANT_TAG_ONE, ks);
    float *x = malloc(N * sizeof *x);
    uint8_t *want = malloc(N), *got = malloc(N + 64);
    assert_non_null(x);
    assert_non_null(want);
    assert_non_null(got);
    long checked = 0;
    for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++) {
        const size_t n = fill_inputs(x, N, scales[si]);
        for (size_t ri = 0; ri < sizeof ranges / sizeof ranges[0]; ri++) {
            const qrange R = ranges[ri];
            for (size_t i = 0; i < n; i++)
                want[i] = oracle(x[i], scales[si], R.zp, R.qmin, R.qmax);
            for (size_t k = 0; k < nk; k++) {
                memset(got, 0xa5, N + 64);
                ((mxp_f32_quant_ukernel *)ks[k]->fn)(got, x, n, scales[si], R.zp, R.qmin, R.qmax);
                for (size_t i = 0; i < n; i++) {
                    if (got[i] != want[i])
                        fail_msg("%s: scale %a zp %d [%d, %d]: x[%zu] = %a gives %u, want %u", ks[k]->name,
                                 (double)scales[si], R.zp, R.qmin, R.qmax, i, (double)x[i], got[i], want[i]);
                }
                for (size_t i = n; i < N + 64; i++)
                    assert_int_equal(got[i], 0xa5); /* nothing written past the end */
                checked += (long)n;
            }
        }
    }
    assert_true(checked > 100000);
    free(x);
    free(want);
    free(got);
}

/* Lengths 0..200 at offsets 0..3: the vector loops, their tails and the
 * per-vector fallback, with a tie planted at a moving position. */
static void test_kernels_lengths_offsets(void **state)
{
    (void)state;
    enum { N = 260 };
    const mxp_kernel *ks[MAXROWS];
    const size_t nk = rows_of(false, MXP_QUANT_TAG_ONE, ks);
    float x[N];
    uint8_t want[N], got[N + 8];
    const float scale = 0.25f;
    for (size_t len = 0; len <= 200; len++)
        for (size_t off = 0; off < 4; off++) {
            for (size_t i = 0; i < N; i++)
                x[i] = (float)((int)(next_u32() % 2001) - 1000) * 0.03125f;
            if (len)
                x[off + (len * 7) % len] = 2.625f; /* 10.5: a tie, -> 10 */
            for (size_t i = 0; i < len; i++)
                want[i] = oracle(x[off + i], scale, 3, -128, 127);
            for (size_t k = 0; k < nk; k++) {
                memset(got, 0x5a, sizeof got);
                ((mxp_f32_quant_ukernel *)ks[k]->fn)(got + off, x + off, len, scale, 3, -128, 127);
                for (size_t i = 0; i < off; i++)
                    assert_int_equal(got[i], 0x5a);
                assert_memory_equal(got + off, want, len);
                for (size_t i = off + len; i < sizeof got; i++)
                    assert_int_equal(got[i], 0x5a);
            }
        }
}

/* One pair per element: every row of the per-column kind against the MPFR
 * oracle, long rows and every length to 70 at offsets 0..3 (nothing
 * written outside). */
static void test_cols_kernels_vs_oracle(void **state)
{
    (void)state;
    enum { N = 1500 };
    const mxp_kernel *ks[MAXROWS];
    const size_t nk = rows_of(false, MXP_QUANT_TAG_COLS, ks);
    float *x = malloc(N * sizeof *x), *sc = malloc(N * sizeof *sc), *rinv = malloc(N * sizeof *rinv);
    int32_t *zp = malloc(N * sizeof *zp);
    uint8_t *got = malloc(N + 16);
    assert_non_null(x);
    assert_non_null(sc);
    assert_non_null(rinv);
    assert_non_null(zp);
    assert_non_null(got);
    const float scales[] = { 1.0f, 0.375f, 0.1f, 1.0f / 127.0f, 0.0123456f, 7.0f, 0x1p-100f, 0x1p100f };
    for (int trial = 0; trial < 8; trial++) {
        const qrange R = ranges[trial % (sizeof ranges / sizeof ranges[0])];
        fill_inputs(x, N, scales[trial]);
        for (size_t i = 0; i < N; i++) {
            sc[i] = scales[(i * 7 + (size_t)trial) % 8];
            rinv[i] = 1.0f / sc[i];
            zp[i] = R.qmin + (int32_t)(next_u32() % (uint32_t)(R.qmax - R.qmin + 1));
            if (next_u32() % 3 == 0) /* a tie of this element's scale */
                x[i] = (float)(((double)(int)(next_u32() % 41) - 20.5) * (double)sc[i]);
        }
        for (size_t k = 0; k < nk; k++) {
            mxp_f32_quant_cols_ukernel *fn = (mxp_f32_quant_cols_ukernel *)ks[k]->fn;
            for (size_t len = 0; len <= N; len = len < 70 ? len + 1 : len < N - 7 ? N - 7 : len + 7) {
                const size_t off = len <= 70 ? len % 4 : 0;
                memset(got, 0xa5, N + 16);
                fn(got + off, x + off, len, rinv + off, sc + off, zp + off, R.qmin, R.qmax);
                for (size_t i = 0; i < len; i++) {
                    const uint8_t w = oracle(x[off + i], sc[off + i], zp[off + i], R.qmin, R.qmax);
                    if (got[off + i] != w)
                        fail_msg("%s: x %a scale %a zp %d gives %u, want %u", ks[k]->name, (double)x[off + i],
                                 (double)sc[off + i], zp[off + i], got[off + i], w);
                }
                for (size_t i = 0; i < off; i++)
                    assert_int_equal(got[i], 0xa5);
                for (size_t i = off + len; i < N + 16; i++)
                    assert_int_equal(got[i], 0xa5);
            }
        }
    }
    free(x);
    free(sc);
    free(rinv);
    free(zp);
    free(got);
}

/* The min/max kernels against the finite values' min and max (and their
 * twins: the same values), random lengths to 300 at offsets 0..3, NaN and
 * infinities among them, none finite at all, earlier values kept. */
static void test_minmax_kernels(void **state)
{
    (void)state;
    enum { N = 304 };
    const mxp_kernel *ks[MAXROWS];
    const size_t nk = rows_of(true, MXP_QUANT_TAG_ONE, ks);
    float x[N];
    for (int trial = 0; trial < 400; trial++) {
        const size_t len = trial < 71 ? (size_t)trial : next_u32() % (N - 4), off = (size_t)trial % 4;
        for (size_t i = 0; i < len; i++) {
            const uint32_t u = next_u32();
            x[off + i] = u % 7 == 0 ? NAN : u % 11 == 0 ? (u & 1 ? INFINITY : -INFINITY)
                                                        : (float)((double)(int32_t)next_u32() * 1e-6);
        }
        if (trial % 10 == 0) /* no finite value at all */
            for (size_t i = 0; i < len; i++)
                x[off + i] = i & 1 ? NAN : INFINITY;
        float wlo = INFINITY, whi = -INFINITY;
        for (size_t i = 0; i < len; i++)
            if (isfinite(x[off + i])) {
                wlo = fminf(wlo, x[off + i]);
                whi = fmaxf(whi, x[off + i]);
            }
        for (size_t k = 0; k < nk; k++) {
            mxp_f32_minmax_ukernel *fn = (mxp_f32_minmax_ukernel *)ks[k]->fn;
            float lo = INFINITY, hi = -INFINITY;
            fn(x + off, len, &lo, &hi);
            assert_true(lo == wlo);
            assert_true(hi == whi);
            lo = -5e9f, hi = 5e9f; /* folded into earlier values */
            fn(x + off, len, &lo, &hi);
            assert_true(lo == -5e9f && hi == 5e9f);
        }
    }
}

/* The per-column min/max kernels against their twin, bit for bit: rows of
 * every length to 70 and 1000, at offsets 0..3, folded three times into the
 * same ranges (NaN, infinities and signed zeros among the values). */
static void test_minmax_cols_kernels(void **state)
{
    (void)state;
    enum { N = 1004 };
    const mxp_kernel *ks[MAXROWS];
    const size_t nk = rows_of(true, MXP_QUANT_TAG_COLS, ks);
    static float x[3][N], lo[2][N], hi[2][N];
    for (size_t len = 0; len <= 1000; len = len < 70 ? len + 1 : len + 930) { /* 0..70, 1000 */
        const size_t off = len % 4;
        for (int r = 0; r < 3; r++)
            for (size_t i = 0; i < N; i++) {
                const uint32_t u = next_u32();
                x[r][i] = u % 13 == 0 ? NAN : u % 17 == 0 ? (u & 1 ? INFINITY : -INFINITY)
                        : u % 19 == 0 ? (u & 2 ? 0.0f : -0.0f) : (float)((double)(int32_t)next_u32() * 1e-7);
            }
        for (size_t k = 0; k < nk; k++) {
            for (int t = 0; t < 2; t++) /* t = 0: the twin, 1: the row */
                for (size_t i = 0; i < N; i++)
                    lo[t][i] = INFINITY, hi[t][i] = -INFINITY;
            mxp_f32_minmax_cols_ukernel *twin = (mxp_f32_minmax_cols_ukernel *)ks[k]->twin;
            mxp_f32_minmax_cols_ukernel *fn = (mxp_f32_minmax_cols_ukernel *)ks[k]->fn;
            for (int r = 0; r < 3; r++) {
                twin(x[r] + off, len, lo[0] + off, hi[0] + off);
                fn(x[r] + off, len, lo[1] + off, hi[1] + off);
            }
            if (memcmp(lo[0], lo[1], sizeof lo[0]) || memcmp(hi[0], hi[1], sizeof hi[0]))
                fail_msg("%s: length %zu offset %zu: ranges differ from %s's", ks[k]->name, len, off,
                         ks[k]->twin_name);
        }
    }
}

/* Per-channel ranges along a leading axis (each channel contiguous runs:
 * the one-range kernel on every run) equal the generic path's (a float64
 * copy of the same values), non-finite values skipped, at every ISA level. */
static void test_calibrate_leading_axis_runs(void **state)
{
    (void)state;
    const int64_t shape[3] = { 6, 5, 24 };
    const mxp_dtype dts[] = { MXP_F32, MXP_BF16 };
    for (size_t di = 0; di < 2; di++) {
        mxp_array *x = NULL, *xd = NULL;
        assert_int_equal(mxp_array_random_normal(&x, MXP_F32, 3, shape, 0.25, 3.0, 11), MXP_OK);
        float *v = mxp_array_data(x);
        v[7] = NAN, v[130] = INFINITY, v[131] = -INFINITY;
        for (int i = 0; i < 24; i++) /* channel (axis 0) 2 all non-finite in its first run, finite later */
            v[2 * 120 + i] = i % 2 ? NAN : -INFINITY;
        if (dts[di] != MXP_F32) {
            mxp_array *b = NULL;
            assert_int_equal(mxp_array_astype(&b, x, dts[di], NULL), MXP_OK);
            mxp_array_free(x);
            x = b;
        }
        assert_int_equal(mxp_array_astype(&xd, x, MXP_F64, NULL), MXP_OK);
        for (int axis = 0; axis <= 1; axis++)
            for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
                mxp_set_isa((mxp_isa)isa);
                mxp_qparams a, b;
                assert_int_equal(mxp_calibrate_minmax(x, MXP_U8, false, axis, 0, &a), MXP_OK);
                assert_int_equal(mxp_calibrate_minmax(xd, MXP_U8, false, axis, 0, &b), MXP_OK);
                assert_int_equal(a.count, shape[axis]);
                assert_int_equal(b.count, shape[axis]);
                for (int64_t k = 0; k < a.count; k++)
                    if (a.scales[k] != b.scales[k] || a.zero_points[k] != b.zero_points[k])
                        fail_msg("%s axis %d isa %d channel %lld: scale %a zp %d, the generic path's %a %d",
                                 mxp_dtype_name(dts[di]), axis, isa, (long long)k, a.scales[k], (int)a.zero_points[k],
                                 b.scales[k], (int)b.zero_points[k]);
                mxp_qparams_free(&a);
                mxp_qparams_free(&b);
            }
        mxp_array_free(x);
        mxp_array_free(xd);
    }
    mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1));
}

/* mxp_quantize at every ISA level and 1 or 2 threads against the reference:
 * per tensor (float32, float16, bfloat16), per channel on axis 0, groups of
 * 32 along the last axis; large enough to be split across threads. */
static void test_quantize_fast_paths(void **state)
{
    (void)state;
    const int64_t shape[2] = { 64, 9024 }; /* 577536 elements: split across threads */
    const mxp_dtype dts[] = { MXP_F32, MXP_F16, MXP_BF16 };
    for (size_t di = 0; di < 3; di++) {
        mxp_array *x = NULL, *xf = NULL;
        assert_int_equal(mxp_array_random_normal(&x, dts[di], 2, shape, 0.0, 2.0, 7), MXP_OK);
        assert_int_equal(mxp_array_astype(&xf, x, MXP_F32, NULL), MXP_OK);
        const float *v = mxp_array_data(xf);
        const int64_t size = mxp_array_size(x);
        for (int layout = 0; layout < 4; layout++) { /* tensor, axis 0, groups on axis 1, axis 1 */
            mxp_qparams qp;
            memset(&qp, 0, sizeof qp);
            const int axis = layout == 0 ? -1 : layout == 1 ? 0 : 1;
            const int64_t group = layout == 2 ? 32 : 0;
            assert_int_equal(mxp_calibrate_minmax(x, layout % 2 ? MXP_U8 : MXP_S8, layout % 2 == 0, axis, group, &qp),
                             MXP_OK);
            /* expected: the reference kernel element by element (itself checked
             * against MPFR above) */
            uint8_t *want = malloc((size_t)size);
            assert_non_null(want);
            const int32_t lo = qp.qtype == MXP_S8 ? -128 : 0, hi = qp.qtype == MXP_S8 ? 127 : 255;
            for (int64_t e = 0; e < size; e++) {
                const int64_t k = layout == 0 ? 0 : layout == 1 ? e / shape[1] : layout == 2 ? e / 32 : e % shape[1];
                mxp_f32_quant__scalar(want + e, v + e, 1, qp.scales[k], qp.zero_points[k], lo, hi);
            }
            for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++)
                for (int threads = 1; threads <= 2; threads++) {
                    mxp_set_isa((mxp_isa)isa);
                    mxp_set_num_threads(threads);
                    mxp_array *q = NULL;
                    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
                    const uint8_t *c = mxp_array_data(q);
                    for (int64_t e = 0; e < size; e++)
                        if (c[e] != want[e])
                            fail_msg("dtype %s layout %d isa %d threads %d: element %lld (%a) gives %u, want %u",
                                     mxp_dtype_name(dts[di]), layout, isa, threads, (long long)e, (double)v[e],
                                     c[e], want[e]);
                    mxp_array_free(q);
                }
            free(want);
            mxp_qparams_free(&qp);
        }
        mxp_array_free(x);
        mxp_array_free(xf);
    }
    mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1));
    mxp_set_num_threads(0);
}

/* The SIMD calibration (per tensor, min/max kernels) equals the general
 * per-channel path's result for one channel holding everything. */
static void test_calibrate_fast_equals_general(void **state)
{
    (void)state;
    int64_t shape[2] = { 1, 100003 };
    mxp_array *x = NULL;
    assert_int_equal(mxp_array_random_normal(&x, MXP_F32, 2, shape, 0.5, 3.0, 11), MXP_OK);
    float *v = mxp_array_data(x);
    v[17] = NAN;
    v[99] = INFINITY;
    v[5000] = -INFINITY;
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        mxp_set_isa((mxp_isa)isa);
        for (int sym = 0; sym < 2; sym++) {
            mxp_qparams a, b;
            assert_int_equal(mxp_calibrate_minmax(x, MXP_U8, sym, -1, 0, &a), MXP_OK);
            assert_int_equal(mxp_calibrate_minmax(x, MXP_U8, sym, 0, 0, &b), MXP_OK); /* general path */
            assert_true(a.scales[0] == b.scales[0]);
            assert_int_equal(a.zero_points[0], b.zero_points[0]);
            mxp_qparams_free(&a);
            mxp_qparams_free(&b);
        }
    }
    /* per channel on the last axis: the SIMD column ranges against the
     * general path (the same data in Fortran order) */
    int64_t shape2[2] = { 333, 47 };
    mxp_array *y = NULL, *yf = NULL;
    assert_int_equal(mxp_array_random_normal(&y, MXP_BF16, 2, shape2, -0.25, 2.0, 12), MXP_OK);
    assert_int_equal(mxp_array_ascontiguous(&yf, y, 'F'), MXP_OK);
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        mxp_set_isa((mxp_isa)isa);
        for (int sym = 0; sym < 2; sym++) {
            mxp_qparams a, b;
            assert_int_equal(mxp_calibrate_minmax(y, MXP_S8, sym, 1, 0, &a), MXP_OK);
            assert_int_equal(mxp_calibrate_minmax(yf, MXP_S8, sym, 1, 0, &b), MXP_OK);
            assert_int_equal(a.count, 47);
            for (int64_t k = 0; k < 47; k++) {
                assert_true(a.scales[k] == b.scales[k]);
                assert_int_equal(a.zero_points[k], b.zero_points[k]);
            }
            mxp_qparams_free(&a);
            mxp_qparams_free(&b);
        }
    }
    mxp_array_free(y);
    mxp_array_free(yf);
    mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1));
    mxp_array_free(x);
}

/* mxp_quantize_into gives mxp_quantize's codes for the fast path, a
 * transposed (non-contiguous) output, int4, float8, stochastic rounding and
 * an output sharing x's memory; bad outputs get clear errors. */
static void expect_into_equals(const mxp_array *x, const mxp_qparams *qp, const mxp_convert_opts *opts, bool transposed)
{
    mxp_array *want = NULL, *out = NULL, *view = NULL;
    assert_int_equal(mxp_quantize(&want, x, qp, opts), MXP_OK);
    const size_t bytes = (size_t)mxp_array_size(want) * mxp_array_itemsize(want);
    if (!transposed) {
        assert_int_equal(mxp_array_empty(&out, mxp_array_dtype(want), mxp_array_ndim(x), mxp_array_shape(x)), MXP_OK);
        memset(mxp_array_data(out), 0x77, bytes);
        assert_int_equal(mxp_quantize_into(out, x, qp, opts), MXP_OK);
        assert_memory_equal(mxp_array_data(out), mxp_array_data(want), bytes);
    } else { /* out = the transpose of a C array of the reversed shape */
        const int64_t rev[2] = { mxp_array_shape(x)[1], mxp_array_shape(x)[0] };
        assert_int_equal(mxp_array_empty(&out, mxp_array_dtype(want), 2, rev), MXP_OK);
        assert_int_equal(mxp_array_transpose(&view, out, NULL), MXP_OK);
        assert_int_equal(mxp_quantize_into(view, x, qp, opts), MXP_OK);
        mxp_array *c = NULL;
        assert_int_equal(mxp_array_ascontiguous(&c, view, 'C'), MXP_OK);
        assert_memory_equal(mxp_array_data(c), mxp_array_data(want), bytes);
        mxp_array_free(c);
    }
    mxp_array_free(view);
    mxp_array_free(out);
    mxp_array_free(want);
}

static void test_quantize_into(void **state)
{
    (void)state;
    const int64_t shape[2] = { 37, 129 };
    mxp_array *x = NULL;
    assert_int_equal(mxp_array_random_normal(&x, MXP_F32, 2, shape, 0.0, 1.0, 3), MXP_OK);
    const mxp_dtype qtypes[] = { MXP_S8, MXP_U8, MXP_QINT4, MXP_QUINT4, MXP_E4M3 };
    for (size_t k = 0; k < sizeof qtypes / sizeof qtypes[0]; k++) {
        mxp_qparams qp;
        assert_int_equal(mxp_calibrate_minmax(x, qtypes[k], true, -1, 0, &qp), MXP_OK);
        const mxp_convert_opts sr = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 5 };
        for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
            mxp_set_isa((mxp_isa)isa);
            expect_into_equals(x, &qp, NULL, false);
            expect_into_equals(x, &qp, NULL, true);
            expect_into_equals(x, &qp, &sr, false);
        }
        mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1));
        mxp_qparams_free(&qp);
    }
    /* out shares x's memory: the int8 codes over the first bytes of x's floats */
    mxp_qparams qp;
    assert_int_equal(mxp_calibrate_minmax(x, MXP_S8, true, -1, 0, &qp), MXP_OK);
    mxp_array *want = NULL, *alias = NULL, *xc = NULL;
    assert_int_equal(mxp_quantize(&want, x, &qp, NULL), MXP_OK);
    assert_int_equal(mxp_array_astype(&xc, x, MXP_F32, NULL), MXP_OK); /* a copy to overwrite */
    assert_int_equal(mxp_array_wrap(&alias, mxp_array_data(xc), MXP_S8, 2, shape, NULL, true, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_quantize_into(alias, xc, &qp, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(alias), mxp_array_data(want), (size_t)mxp_array_size(want));
    mxp_array_free(alias);
    mxp_array_free(xc);
    /* bad outputs: nothing written */
    mxp_array *bad = NULL;
    assert_int_equal(mxp_quantize_into(NULL, x, &qp, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_array_zeros(&bad, MXP_U8, 2, shape), MXP_OK);
    assert_int_equal(mxp_quantize_into(bad, x, &qp, NULL), MXP_ERR_INVALID_DTYPE);
    assert_non_null(strstr(mxp_last_error(), "int8"));
    mxp_array_free(bad);
    const int64_t other[2] = { 37, 128 };
    assert_int_equal(mxp_array_zeros(&bad, MXP_S8, 2, other), MXP_OK);
    assert_int_equal(mxp_quantize_into(bad, x, &qp, NULL), MXP_ERR_SHAPE);
    mxp_array_free(bad);
    int8_t buf[37 * 129];
    memset(buf, 0, sizeof buf);
    assert_int_equal(mxp_array_wrap(&bad, buf, MXP_S8, 2, shape, NULL, false, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_quantize_into(bad, x, &qp, NULL), MXP_ERR_READONLY);
    for (size_t i = 0; i < sizeof buf; i++)
        assert_int_equal(buf[i], 0);
    mxp_array_free(bad);
    mxp_array_free(want);
    mxp_qparams_free(&qp);
    mxp_array_free(x);
}

/* Dequantization, fake quantization in every rounding mode and the MX
 * blocks give the same bytes at every ISA level (the scalar level is the
 * reference twin); a float64 dequantization equals (q - zp) * scale
 * computed here. */
static void test_every_isa_level_same_bytes(void **state)
{
    (void)state;
    const int64_t shape[2] = { 48, 160 };
    mxp_array *x = NULL;
    assert_int_equal(mxp_array_random_normal(&x, MXP_F32, 2, shape, 0.1, 1.5, 21), MXP_OK);
    const mxp_dtype qtypes[] = { MXP_S8, MXP_U8, MXP_QINT4, MXP_QUINT4, MXP_E4M3, MXP_E5M2 };
    const mxp_dtype outs[] = { MXP_F64, MXP_F32, MXP_BF16, MXP_F16 };
    const mxp_rounding modes[] = { MXP_ROUND_NEAREST_EVEN, MXP_ROUND_UP, MXP_ROUND_STOCHASTIC };
    for (size_t qi = 0; qi < sizeof qtypes / sizeof qtypes[0]; qi++)
        for (int layout = 0; layout < 3; layout++) {
            const bool fp8 = qtypes[qi] == MXP_E4M3 || qtypes[qi] == MXP_E5M2;
            mxp_qparams qp;
            assert_int_equal(mxp_calibrate_minmax(x, qtypes[qi], fp8 || layout != 1, layout == 0 ? -1 : layout == 1 ? 0 : 1,
                                                  layout == 2 ? 32 : 0, &qp),
                             MXP_OK);
            for (size_t mi = 0; mi < 3; mi++) {
                const mxp_convert_opts co = { .rounding = modes[mi], .seed = 9 };
                unsigned char *want[5] = { NULL };
                size_t bytes[5] = { 0 };
                for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
                    mxp_set_isa((mxp_isa)isa);
                    mxp_array *q = NULL, *fq = NULL;
                    assert_int_equal(mxp_quantize(&q, x, &qp, &co), MXP_OK);
                    assert_int_equal(mxp_fake_quantize(&fq, x, &qp, &co), MXP_OK);
                    const mxp_array *res[5] = { q, fq, NULL, NULL, NULL };
                    mxp_array *dq[3] = { NULL };
                    for (int o = 0; o < 3; o++) {
                        assert_int_equal(mxp_dequantize(&dq[o], q, &qp, outs[o + (mi % 2)]), MXP_OK);
                        res[2 + o] = dq[o];
                    }
                    for (int r = 0; r < 5; r++) {
                        const size_t b = (size_t)mxp_array_size(res[r]) * mxp_array_itemsize(res[r]);
                        if (isa == 0) {
                            want[r] = malloc(b);
                            assert_non_null(want[r]);
                            memcpy(want[r], mxp_array_data(res[r]), b);
                            bytes[r] = b;
                        } else {
                            assert_int_equal(b, bytes[r]);
                            if (memcmp(want[r], mxp_array_data(res[r]), b) != 0)
                                fail_msg("%s layout %d mode %s: result %d differs at ISA level %s",
                                         mxp_qtype_name(qtypes[qi]), layout, mxp_rounding_name(modes[mi]), r,
                                         mxp_isa_name((mxp_isa)isa));
                        }
                    }
                    if (isa == 0 && mi % 2 == 0) { /* float64 dequantization: (q - zp) * scale, exact */
                        mxp_array *qd = NULL;
                        assert_int_equal(mxp_array_astype(&qd, q, MXP_F64, NULL), MXP_OK);
                        const double *qv = mxp_array_data(qd), *dv = mxp_array_data(dq[0]);
                        for (int64_t e = 0; e < mxp_array_size(q); e++) {
                            const int64_t k = layout == 0 ? 0 : layout == 1 ? e / shape[1] : e / 32;
                            const double w = (qv[e] - (double)qp.zero_points[k]) * (double)qp.scales[k];
                            if (!(dv[e] == w || (w != w && dv[e] != dv[e])))
                                fail_msg("%s: dequantized %.17g, want %.17g", mxp_qtype_name(qtypes[qi]), dv[e], w);
                        }
                        mxp_array_free(qd);
                    }
                    for (int o = 0; o < 3; o++)
                        mxp_array_free(dq[o]);
                    mxp_array_free(q);
                    mxp_array_free(fq);
                }
                for (int r = 0; r < 5; r++)
                    free(want[r]);
            }
            mxp_qparams_free(&qp);
        }
    /* MX blocks */
    enum { N = 32 * 40 + 7 };
    float src[N], back[N];
    const float *xv = mxp_array_data(x);
    for (int i = 0; i < N; i++)
        src[i] = xv[i] * (i % 97 == 0 ? 1000.0f : 1.0f);
    const mxp_mx_format fmts[] = { MXP_MXFP8_E4M3, MXP_MXFP8_E5M2, MXP_MXFP4_E2M1, MXP_MXINT8 };
    for (size_t f = 0; f < 4; f++)
        for (size_t mi = 0; mi < 3; mi++) {
            const mxp_convert_opts co = { .rounding = modes[mi], .seed = 4 };
            const size_t nb = mxp_mx_bytes(fmts[f], N);
            unsigned char *enc0 = malloc(nb), *enc = malloc(nb);
            float *dec0 = malloc(sizeof back);
            assert_non_null(enc0);
            assert_non_null(enc);
            assert_non_null(dec0);
            for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
                mxp_set_isa((mxp_isa)isa);
                assert_int_equal(mxp_mx_quantize(isa ? enc : enc0, fmts[f], src, N, &co), MXP_OK);
                assert_int_equal(mxp_mx_dequantize(isa ? back : dec0, isa ? enc : enc0, fmts[f], N), MXP_OK);
                if (isa) {
                    assert_memory_equal(enc, enc0, nb);
                    assert_memory_equal(back, dec0, sizeof back);
                }
            }
            free(enc0);
            free(enc);
            free(dec0);
        }
    mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1));
    mxp_array_free(x);
}

/* The dispatch tables are the lists (src/kernels/f32-quant-list.inc,
 * f32-minmax-list.inc, expanded here), row for row. */
#define NAME(isa, tile, fn, twin) #fn,
static const char *const quant_list[] = {
#define MXP_F32_QUANT NAME
#define MXP_F32_QUANT_COLS NAME
#include "kernels/f32-quant-list.inc"
#undef MXP_F32_QUANT
#undef MXP_F32_QUANT_COLS
    NULL,
};
static const char *const minmax_list[] = {
#define MXP_F32_MINMAX NAME
#define MXP_F32_MINMAX_COLS NAME
#include "kernels/f32-minmax-list.inc"
#undef MXP_F32_MINMAX
#undef MXP_F32_MINMAX_COLS
    NULL,
};
#undef NAME

static void test_tables_are_the_lists(void **state)
{
    (void)state;
    size_t n;
    const mxp_kernel *rows = mxp_quant_kernels(false, &n);
    assert_true(kc_table_is_list(rows, n, quant_list));
    rows = mxp_quant_kernels(true, &n);
    assert_true(kc_table_is_list(rows, n, minmax_list));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_are_the_lists),
        cmocka_unit_test(test_kernels_vs_oracle),
        cmocka_unit_test(test_kernels_lengths_offsets),
        cmocka_unit_test(test_cols_kernels_vs_oracle),
        cmocka_unit_test(test_minmax_kernels),
        cmocka_unit_test(test_minmax_cols_kernels),
        cmocka_unit_test(test_calibrate_leading_axis_runs),
        cmocka_unit_test(test_quantize_fast_paths),
        cmocka_unit_test(test_calibrate_fast_equals_general),
        cmocka_unit_test(test_quantize_into),
        cmocka_unit_test(test_every_isa_level_same_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

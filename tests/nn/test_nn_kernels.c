/* Every row of src/kernels/f32-norm-list.inc and bf16-norm-list.inc that
 * the machine runs gives its twin's bits: rows of every length to 70 and longer ones, unaligned
 * starts, with and without weight and bias, layer and RMS norm and L2
 * normalization, special
 * values (NaN, inf, huge, tiny, constant rows), in place; the dispatch
 * table is the list; and the layer's generic path (a strided input) gives
 * the kernels' bits. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <xmmintrin.h>

#include "core/fpenv.h"
#include "kernels/norm-kernels.h"
#include "mxp.h"
#include "nn/nn-internal.h"
#include "nn/nn_util.h"
#include "support/kernel_list.h"
#include "support/prng.h"

static const kl_listed f32_listed[] = {
#define MXP_F32_NORM(isa, tile, fn, twin) { #fn, isa },
#include "kernels/f32-norm-list.inc"
#undef MXP_F32_NORM
};
static const kl_listed bf16_listed[] = {
#define MXP_BF16_NORM(isa, tile, fn, twin) { #fn, isa },
#include "kernels/bf16-norm-list.inc"
#undef MXP_BF16_NORM
};

static void test_tables_are_the_lists(void **state)
{
    (void)state;
    size_t n;
    const mxp_kernel *k = nn_f32_norm_kernels(&n);
    kl_expect_table(k, n, f32_listed, sizeof f32_listed / sizeof f32_listed[0]);
    k = nn_bf16_norm_kernels(&n);
    kl_expect_table(k, n, bf16_listed, sizeof bf16_listed / sizeof bf16_listed[0]);
    for (int isa = 0; isa < MXP_ISA_COUNT; isa++) {
        assert_non_null(nn_f32_norm_kernel((mxp_isa)isa));
        assert_non_null(nn_bf16_norm_kernel((mxp_isa)isa));
    }
}

/* Rows of kind 0-5: moderate values, huge, constant, subnormal (4: with a
 * NaN and an infinity), and 5: moderate with every third a subnormal and
 * every seventh a zero of either sign (an L2 row's quotients then
 * subnormal and zero in the same vectors as normal ones). */
static void fill(float *x, size_t n, uint64_t *rng, int kind)
{
    for (size_t i = 0; i < n; i++) {
        const double u = prng_uniform(rng) - 0.3;
        x[i] = kind == 0 ? (float)(u * 6) : kind == 1 ? (float)(u * 3e38) : kind == 2 ? 2.5f : (float)(u * 1e-40);
        if (kind == 5)
            x[i] = i % 7 == 3 ? (i % 2 ? -0.0f : 0.0f) : i % 3 == 1 ? (float)(u * 1e-39) : (float)(u * 6);
    }
    if (kind == 4 && n > 2) {
        x[n / 2] = NAN;
        x[1] = INFINITY;
    }
}

/* Runs kernel fn or its twin on rows of float32 (bf16 0) or, the
 * bfloat16 kernels, of bfloat16 (bf16 1: the float32 values rounded to
 * it) or float32 (bf16 2). */
static void call(const mxp_kernel *k, bool twin, int bf16, void *y, const void *x, size_t n, const double *w,
                 const double *b, int rms)
{
    mxp_kernel_any f = twin ? k->twin : k->fn;
    static float w32[2048], b32[2048]; /* the bfloat16 rows' float32 weights */
    for (size_t i = 0; bf16 && i < n; i++) {
        w32[i] = w ? (float)w[i] : 0;
        b32[i] = b ? (float)b[i] : 0;
    }
    const mxp_narrow_src src = { x, bf16 == 2, NULL };
    uint16_t *yh = y;
    if (bf16)
        ((mxp_bf16_norm_ukernel *)f)(&yh, &src, 1, n, w ? w32 : NULL, b ? b32 : NULL, 1e-5, rms);
    else {
        float *yr = y;
        const float *xr = x;
        static double wide[MXP_NORM_ROWS * 2048];
        ((mxp_f32_norm_ukernel *)f)(&yr, &xr, 1, n, w, b, 1e-5, rms, n <= 2048 ? wide : NULL);
    }
}

/* Float32 rows interleaved: 1 to MXP_NORM_ROWS rows of different kinds
 * (NaN, infinities, huge and tiny values among them), each row's bits
 * those of the twin on that row alone; the last row in place, nothing
 * past a row written; with MXP_NORM_STREAM too (streaming stores: the
 * output rows start 64, 16 and 32 bytes past a line, so that some are
 * written by them and some not at each level). */
static void test_interleaved_rows_are_each_rows_bits(void **state)
{
    (void)state;
    enum { MAXN = 700, R = MXP_NORM_ROWS };
    static float x[R][MAXN + 8], want[R][MAXN + 8];
    static _Alignas(64) float got[R][MAXN + 8];
    static double w[MAXN], b[MAXN], scratch[R * MAXN];
    uint64_t rng = prng_seed(41);
    for (int i = 0; i < MAXN; i++) {
        w[i] = prng_uniform(&rng) + 0.5;
        b[i] = prng_uniform(&rng) - 0.5;
    }
    const mxp_fpenv env = mxp_fpenv_enter();
    size_t nk, checked = 0;
    const mxp_kernel *ks = nn_f32_norm_kernels(&nk);
    for (size_t k = 0; k < nk; k++) {
        if (!mxp_kernel_runs(&ks[k], mxp_isa_supported()))
            continue;
        mxp_f32_norm_ukernel *fn = (mxp_f32_norm_ukernel *)ks[k].fn, *twin = (mxp_f32_norm_ukernel *)ks[k].twin;
        for (size_t n = 1; n <= MAXN; n = n < 40 ? n + 1 : n * 2 + 7)
            for (size_t rows = 1; rows <= R; rows++)
                for (int variant = 0; variant < 48; variant++) {
                    const double *wv = variant & 1 ? w : NULL, *bv = variant & 2 ? b : NULL;
                    const int mode = variant % 12 / 4, stream = variant >= 24 ? MXP_NORM_STREAM : 0;
                    double *wide = variant % 24 >= 12 ? scratch : NULL; /* rows widened once, or at each pass */
                    memset(scratch, 0xa5, sizeof scratch);
                    float *yk[R];
                    const float *xk[R];
                    for (size_t r = 0; r < rows; r++) {
                        fill(x[r], n, &rng, (int)((r + (size_t)variant) % 6));
                        float *yw = want[r];
                        const float *xr = x[r];
                        twin(&yw, &xr, 1, n, wv, bv, 1e-5, mode, NULL); /* the row alone */
                        memset(got[r], 0x5a, sizeof got[r]);
                        xk[r] = x[r];
                        yk[r] = got[r];
                    }
                    memcpy(got[rows - 1], x[rows - 1], n * sizeof(float)); /* the last row in place */
                    xk[rows - 1] = got[rows - 1];
                    fn(yk, xk, rows, n, wv, bv, 1e-5, mode | stream, wide);
                    _mm_sfence();
                    for (size_t r = 0; r < rows; r++) {
                        const unsigned char *tail = (const unsigned char *)(got[r] + n);
                        bool clean = true;
                        for (size_t t = 0; t < 8 * sizeof(float); t++)
                            clean &= tail[t] == 0x5a;
                        if (memcmp(got[r], want[r], n * sizeof(float)) || !clean)
                            fail_msg("%s: %zu rows of %zu, variant %d: row %zu differs from its twin alone", ks[k].name,
                                     rows, n, variant, r);
                    }
                    checked++;
                }
    }
    mxp_fpenv_leave(env);
    assert_true(checked > 1000);
}

static void test_rows_match_their_twin(void **state)
{
    (void)state;
    enum { MAXN = 1100 };
    static float x[MAXN + 8], y1[MAXN + 8], y2[MAXN + 8];
    static uint16_t hx[MAXN + 8];
    static double w[MAXN + 8], b[MAXN + 8];
    uint64_t rng = prng_seed(26);
    for (int i = 0; i < MAXN + 8; i++) {
        w[i] = prng_uniform(&rng) + 0.5;
        b[i] = prng_uniform(&rng) - 0.5;
    }
    const mxp_fpenv env = mxp_fpenv_enter();
    for (int bf16 = 0; bf16 < 3; bf16++) { /* float32; bfloat16 out of bfloat16, of float32 */
      size_t nk;
      const mxp_kernel *ks = bf16 ? nn_bf16_norm_kernels(&nk) : nn_f32_norm_kernels(&nk);
      const size_t size = bf16 == 1 ? 2 : 4, ysize = bf16 ? 2 : 4;
      for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], mxp_isa_supported()))
            continue;
        for (size_t n = 1; n <= MAXN; n = n < 70 ? n + 1 : n * 2 + 3)
            for (int kind = 0; kind < 6; kind++)
                for (int variant = 0; variant < 12; variant++) {
                    const size_t off = (size_t)variant % 3;
                    const double *wv = variant & 1 ? w + off : NULL, *bv = variant & 2 ? b : NULL;
                    const int rms = variant / 4; /* MXP_NORM_LAYER, _RMS, _L2 (w and b unused) */
                    fill(x + off, n, &rng, kind);
                    if (bf16 == 1)
                        mxp_convert(hx, MXP_BF16, x, MXP_F32, MAXN + 8, NULL);
                    const char *in = bf16 == 1 ? (const char *)hx : (const char *)x;
                    char *o1 = (char *)y1, *o2 = (char *)y2;
                    memset(y1, 0x5a, sizeof y1);
                    memset(y2, 0x5a, sizeof y2);
                    call(&ks[r], true, bf16, o1 + off * ysize, in + off * size, n, wv, bv, rms);
                    call(&ks[r], false, bf16, o2 + off * ysize, in + off * size, n, wv, bv, rms);
                    if (memcmp(y1, y2, sizeof y1))
                        fail_msg("%s: n %zu kind %d variant %d input %d differs from its twin", ks[r].name, n, kind,
                                 variant, bf16);
                    if (size != ysize)
                        continue;
                    memcpy(y2, in, (MAXN + 8) * size); /* in place */
                    call(&ks[r], false, bf16, o2 + off * size, o2 + off * size, n, wv, bv, rms);
                    if (memcmp(o1 + off * size, o2 + off * size, n * size))
                        fail_msg("%s: n %zu in place differs", ks[r].name, n);
                }
      }
    }
    mxp_fpenv_leave(env);
}

/* Bfloat16 rows together: 1 to MXP_NORM_ROWS rows of different kinds
 * (NaN, infinities, squares that overflow or underflow float32: the exact
 * sums; a mean far from zero: the second pass) out of bfloat16 and of
 * float32, each row's bits those of the twin on that row alone; nothing
 * past a row written. */
static void test_bf16_rows_together_are_each_rows_bits(void **state)
{
    (void)state;
    enum { MAXN = 700, R = MXP_NORM_ROWS };
    static float x[R][MAXN + 8], w[MAXN], b[MAXN];
    static uint16_t hx[R][MAXN + 8], want[R][MAXN + 16], got[R][MAXN + 16];
    uint64_t rng = prng_seed(43);
    for (int i = 0; i < MAXN; i++) {
        w[i] = (float)(prng_uniform(&rng) + 0.5);
        b[i] = (float)(prng_uniform(&rng) - 0.5);
    }
    const mxp_fpenv env = mxp_fpenv_enter();
    size_t nk, checked = 0, second = 0;
    const mxp_kernel *ks = nn_bf16_norm_kernels(&nk);
    for (size_t k = 0; k < nk; k++) {
        if (!mxp_kernel_runs(&ks[k], mxp_isa_supported()))
            continue;
        mxp_bf16_norm_ukernel *fn = (mxp_bf16_norm_ukernel *)ks[k].fn, *twin = (mxp_bf16_norm_ukernel *)ks[k].twin;
        for (size_t n = 1; n <= MAXN; n = n < 40 ? n + 1 : n * 2 + 7)
            for (size_t rows = 1; rows <= R; rows++)
                for (int variant = 0; variant < 24; variant++) {
                    const float *wv = variant & 1 ? w : NULL, *bv = variant & 2 ? b : NULL;
                    const int mode = variant % 12 / 4, xf32 = variant >= 12;
                    uint16_t *yk[R];
                    mxp_narrow_src xk[R];
                    for (size_t r = 0; r < rows; r++) {
                        const int kind = (int)((r + (size_t)variant) % 6);
                        fill(x[r], n, &rng, kind % 6);
                        for (size_t i = 0; kind == 5 && i < n; i++) /* a mean 16 spreads from zero */
                            x[r][i] = 100.0f + (float)(prng_uniform(&rng) * 12);
                        mxp_convert(hx[r], MXP_BF16, x[r], MXP_F32, n, NULL);
                        xk[r] = (mxp_narrow_src){ xf32 ? (const void *)x[r] : (const void *)hx[r], xf32, NULL };
                        uint16_t *yw = want[r];
                        twin(&yw, &xk[r], 1, n, wv, bv, 1e-5, mode); /* the row alone */
                        memset(got[r], 0x5a, sizeof got[r]);
                        yk[r] = got[r];
                        second += kind == 5 && mode == 0;
                    }
                    fn(yk, xk, rows, n, wv, bv, 1e-5, mode);
                    expect_rows_as_alone(ks[k].name, rows, n, variant, got[0], want[0], MAXN + 16);
                    checked++;
                }
    }
    mxp_fpenv_leave(env);
    assert_true(checked > 1000 && second > 100);
}

/* L2 normalization rounds a / d to float64 and then to float32; the
 * vector kernels multiply by 1 / d where that gives the same bits
 * (norm-avx512.h).  Here a / d lies within a few float64 ulps of a
 * float32 tie, so that a * (1 / d) rounds to 0x1.bd4b12p-1 against the
 * quotient's 0x1.bd4b14p-1 (a pair found by search): every kernel gives
 * the quotient's bits, wherever the pair lies in a vector or the tail. */
static void test_l2_quotient_near_a_float32_tie(void **state)
{
    (void)state;
    static const float a = 0x1.9df58cp+2f, b = 0x1.d5d6b2p+1f;
    const double d = sqrt((double)a * a + (double)b * b);
    assert_true((float)((double)a / d) == 0x1.bd4b14p-1f);
    assert_true((float)((double)a * (1 / d)) == 0x1.bd4b12p-1f); /* the multiply alone would be wrong */
    float x[40], y1[40], y2[40];
    size_t nk;
    const mxp_kernel *ks = nn_f32_norm_kernels(&nk);
    const mxp_fpenv env = mxp_fpenv_enter();
    for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], mxp_isa_supported()))
            continue;
        for (size_t n = 2; n <= 40; n++)
            for (size_t pos = 0; pos + 1 < n; pos++) {
                memset(x, 0, sizeof x);
                x[pos] = a, x[pos + 1] = b;
                call(&ks[r], false, 0, y1, x, n, NULL, NULL, MXP_NORM_L2);
                call(&ks[r], true, 0, y2, x, n, NULL, NULL, MXP_NORM_L2);
                if (y1[pos] != 0x1.bd4b14p-1f || memcmp(y1, y2, n * sizeof y1[0]))
                    fail_msg("%s: n %zu, the pair at %zu: y = %a, want 0x1.bd4b14p-1 (the twin's bits)", ks[r].name,
                             n, pos, (double)y1[pos]);
            }
    }
    mxp_fpenv_leave(env);
}

/* A quotient on a tie of float32's subnormal grid: x = (a, b, 0 ...), b =
 * m 2^40, a = m o 2^-110 (o odd), so d = b and a / d = o 2^-150 exactly --
 * nearest even rounds it to o - 1 or o + 1 times 2^-150, while for these
 * (m, o), found by search, a * (1 / b) rounds to the float64 next to the
 * tie, and then to the other side.  Float32 keeps fewer than 23 bits of a
 * subnormal: the vector kernels' bit test must send these to the division. */
static void test_l2_quotient_on_a_subnormal_tie(void **state)
{
    (void)state;
    static const int pairs[][2] = { { 49, 3 }, { 75, 29 }, { 77, 29 }, { 91, 13 } };
    float x[16], y[16];
    size_t nk;
    const mxp_kernel *ks = nn_f32_norm_kernels(&nk);
    const mxp_fpenv env = mxp_fpenv_enter();
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        const float a = ldexpf((float)(pairs[p][0] * pairs[p][1]), -110), b = ldexpf((float)pairs[p][0], 40);
        const double d = sqrt((double)a * a + (double)b * b);
        assert_true(d == b && (double)a / d == ldexp(pairs[p][1], -150));
        const float want = (float)((double)a / d);
        assert_true((float)((double)a * (1 / d)) != want); /* the multiply alone would be wrong */
        for (size_t r = 0; r < nk; r++) {
            if (!mxp_kernel_runs(&ks[r], mxp_isa_supported()))
                continue;
            for (size_t pos = 0; pos < 15; pos++) {
                memset(x, 0, sizeof x);
                x[pos] = a;
                x[(pos + 1) % 16] = b;
                call(&ks[r], false, 0, y, x, 16, NULL, NULL, MXP_NORM_L2);
                if (y[pos] != want)
                    fail_msg("%s: (%d, %d) at %zu: y = %a, the quotient's float32 %a", ks[r].name, pairs[p][0],
                             pairs[p][1], pos, (double)y[pos], (double)want);
            }
        }
    }
    mxp_fpenv_leave(env);
}

/* Dense rows (the row kernels: float32 ones with the widened scratch up to
 * MXP_NORM_WIDE_MAX elements a row, re-widening beyond) against strided
 * ones (the generic path): the same bits, rows of 389 and on both sides of
 * the scratch's limit. */
static void test_generic_path_gives_the_kernel_bits(void **state)
{
    (void)state;
    enum { R = 7 };
    const int64_t lengths[3] = { 389, MXP_NORM_WIDE_MAX, MXP_NORM_WIDE_MAX + 5 };
    for (int li = 0; li < 3; li++) {
        const int64_t D = lengths[li];
        uint64_t rng = 3;
        float *wide = malloc((size_t)(R * D * 2) * sizeof(float));
        assert_non_null(wide);
        for (int64_t i = 0; i < R * D * 2; i++)
            wide[i] = (float)((prng_uniform(&rng) - 0.5) * 10);
        mxp_array *base = NULL, *strided = NULL, *dense = NULL, *w = NULL, *y1 = NULL, *y2 = NULL;
        assert_int_equal(mxp_array_wrap(&base, wide, MXP_F32, 2, (int64_t[]){ R, 2 * D }, NULL, false, NULL, NULL),
                         MXP_OK);
        const mxp_slice every_other[2] = { MXP_SLICE_ALL, { 0, MXP_SLICE_NONE, 2 } };
        assert_int_equal(mxp_array_slice(&strided, base, 2, every_other), MXP_OK);
        assert_int_equal(mxp_array_ascontiguous(&dense, strided, 'C'), MXP_OK);
        assert_int_equal(mxp_array_random_normal(&w, MXP_F32, 1, (int64_t[]){ D }, 1, 0.2, 9), MXP_OK);
        for (int k = 0; k < 6; k++) { /* float32 and bfloat16 (in and out), layer and RMS norm, L2 normalization */
            const int rms = k % 3;
            const mxp_dtype dt = k < 3 ? MXP_F32 : MXP_BF16;
            mxp_array *s = NULL, *d = NULL;
            assert_int_equal(mxp_array_astype(&d, dense, dt, NULL), MXP_OK);
            if (dt == MXP_F32) {
                s = strided;
            } else { /* a strided bfloat16 view: every other column of a wider copy */
                mxp_array *wide2 = NULL;
                assert_int_equal(mxp_array_astype(&wide2, base, dt, NULL), MXP_OK);
                assert_int_equal(mxp_array_slice(&s, wide2, 2, every_other), MXP_OK);
                mxp_array_free(wide2);
            }
            assert_int_equal(rms == 2 ? mxp_l2_normalize(&y1, s, 1, 1e-12, 0)
                             : rms     ? mxp_rms_norm(&y1, s, 1, w, 1e-6, 0)
                                       : mxp_layer_norm(&y1, s, 1, w, w, 1e-5, 0),
                             MXP_OK);
            assert_int_equal(rms == 2 ? mxp_l2_normalize(&y2, d, 1, 1e-12, 0)
                             : rms     ? mxp_rms_norm(&y2, d, 1, w, 1e-6, 0)
                                       : mxp_layer_norm(&y2, d, 1, w, w, 1e-5, 0),
                             MXP_OK);
            assert_int_equal(mxp_array_dtype(y1), dt);
            assert_memory_equal(mxp_array_data(y1), mxp_array_data(y2), (size_t)(R * D) * mxp_dtype_itemsize(dt));
            mxp_array_free(y1);
            mxp_array_free(y2);
            if (s != strided)
                mxp_array_free(s);
            mxp_array_free(d);
        }
        mxp_array_free(w);
        mxp_array_free(dense);
        mxp_array_free(strided);
        mxp_array_free(base);
        free(wide);
    }
}

/* Every bfloat16 kernel against long double: layer norm, RMS norm and L2
 * normalization of rows of several lengths, spreads and offsets (one whose
 * mean dwarfs its spread: the second pass), bfloat16 and float32 in, with
 * weight and bias; each
 * element within half an ulp (bfloat16) + 2^-16 of its terms' sizes + the
 * centre's float32 rounding (kernels/bf16-narrow.h). */
static void test_bf16_rows_near_exact(void **state)
{
    (void)state;
    enum { MAXN = 700 };
    static float x[MAXN], w32[MAXN], b32[MAXN];
    static uint16_t hx[MAXN], y[MAXN];
    uint64_t rng = prng_seed(34);
    for (int i = 0; i < MAXN; i++) {
        w32[i] = (float)(prng_uniform(&rng) + 0.5);
        b32[i] = (float)(prng_uniform(&rng) - 0.5);
    }
    size_t nk;
    const mxp_kernel *ks = nn_bf16_norm_kernels(&nk);
    for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], mxp_isa_supported()))
            continue;
        for (size_t n = 1; n <= MAXN; n = n * 3 + 1)
            for (int kind = 0; kind < 8; kind++) { /* 4 .. 7: float32 in (every bit of x) */
                const int xf32 = kind >= 4, k4 = kind % 4;
                for (size_t i = 0; i < n; i++)
                    x[i] = k4 == 2   ? (i == n / 2 ? 1.0078125f + (float)xf32 * 0x1p-20f : 1.0f)
                           : k4 == 3 ? (float)(1000 + prng_uniform(&rng) * (xf32 ? 0.5 : 64)) /* one pass cancels */
                                     : (float)((prng_uniform(&rng) - 0.3) * (k4 == 0 ? 4 : 3e4));
                mxp_convert(hx, MXP_BF16, x, MXP_F32, n, NULL);
                long double s1 = 0, s2 = 0;
                for (size_t i = 0; i < n; i++) {
                    uint32_t u = (uint32_t)hx[i] << 16;
                    if (!xf32)
                        memcpy(&x[i], &u, 4);
                    s1 += x[i];
                    s2 += (long double)x[i] * x[i];
                }
                for (int mode = 0; mode < 3; mode++) {
                    const long double mean = mode ? 0 : s1 / n;
                    long double v = 0;
                    for (size_t i = 0; i < n; i++)
                        v += (x[i] - mean) * (x[i] - mean);
                    const long double rs = mode == 2 ? 1 / fmaxl(sqrtl(s2), 1e-12L) : 1 / sqrtl(v / n + 1e-5L);
                    const int affine = mode < 2;
                    const mxp_narrow_src src = { xf32 ? (const void *)x : (const void *)hx, xf32, NULL };
                    uint16_t *yr = y;
                    ((mxp_bf16_norm_ukernel *)ks[r].fn)(&yr, &src, 1, n, affine ? w32 : NULL, affine ? b32 : NULL,
                                                        mode == 2 ? 1e-12 : 1e-5, mode);
                    for (size_t i = 0; i < n; i++) {
                        const long double h = (x[i] - mean) * rs, wi = affine ? w32[i] : 1, bi = affine ? b32[i] : 0;
                        const long double want = h * wi + bi;
                        uint32_t u = (uint32_t)y[i] << 16;
                        float g;
                        memcpy(&g, &u, 4);
                        int ex;
                        frexpl(g != 0 ? (long double)g : want, &ex);
                        const long double tol = ldexpl(1.0L, ex - 9) + 0x1p-16L * (fabsl(h * wi) + fabsl(bi)) +
                                                0x1p-22L * fabsl(mean) * rs * fabsl(wi);
                        if (!(fabsl((long double)g - want) <= tol))
                            fail_msg("%s: n %zu kind %d mode %d element %zu is %a, want %La", ks[r].name, n, kind,
                                     mode, i, (double)g, want);
                    }
                }
            }
    }
}

/* The next call's rows, prefetched by the float32 kernels: the step from
 * each row to the same row of the next call where the rows lie evenly
 * spaced, else none (a prefetch of an arbitrary address would only waste
 * the memory's time). */
static void test_next_rows_prefetched_only_where_rows_are_even(void **state)
{
    (void)state;
    static float buf[1024];
    const float *const even[4] = { buf, buf + 100, buf + 200, buf + 300 };
    const float *const uneven[4] = { buf, buf + 100, buf + 225, buf + 300 };
    const float *const down[3] = { buf + 1000, buf + 750, buf + 500 };
    assert_int_equal(mxp_norm_rows_ahead(even, 4), 1600);
    assert_int_equal(mxp_norm_rows_ahead(even, 3), 1200);
    assert_int_equal(mxp_norm_rows_ahead(even, 2), 800);
    assert_int_equal(mxp_norm_rows_ahead(even, 1), 0); /* no step to go by */
    assert_int_equal(mxp_norm_rows_ahead(uneven, 4), 0);
    assert_int_equal(mxp_norm_rows_ahead(uneven, 2), 800); /* the first two are even */
    assert_int_equal(mxp_norm_rows_ahead(down, 3), -3000);  /* rows walked backwards (a negative stride) */
    /* an address past the array only: prefetches never read (the sanitizer build checks it) */
    float row[64] = { 0 };
    mxp_norm_rows_prefetch(row, sizeof row, 1 << 20);
    mxp_norm_rows_prefetch(row, sizeof row, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_are_the_lists),
        cmocka_unit_test(test_rows_match_their_twin),
        cmocka_unit_test(test_interleaved_rows_are_each_rows_bits),
        cmocka_unit_test(test_bf16_rows_together_are_each_rows_bits),
        cmocka_unit_test(test_l2_quotient_near_a_float32_tie),
        cmocka_unit_test(test_l2_quotient_on_a_subnormal_tie),
        cmocka_unit_test(test_generic_path_gives_the_kernel_bits),
        cmocka_unit_test(test_bf16_rows_near_exact),
        cmocka_unit_test(test_next_rows_prefetched_only_where_rows_are_even),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

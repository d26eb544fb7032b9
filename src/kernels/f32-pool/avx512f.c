/* Float32 pooling rows, AVX-512.  Every output vector stays in registers
 * over the window's offsets (p, q) in order, then is stored once: sixteen
 * output columns of one channel (NCHW, strides 1 and 2: one_channel_k, the
 * columns outside x masked), or sixteen channels of a pixel (NHWC, and the
 * global sum's eight lanes along a wide window); other strides by the
 * portable loop.  Max: vmaxps
 * (x > a ? x : a), then a NaN x taken; sums widened and added in float64.
 * Below them the plane kernel (one channel, a whole plane a call).
 * See pool-kernels.h. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/pool-kernels.h"
#include "kernels/stream-loop.h"

typedef struct acc16 {
    __m512 m;      /* max */
    __m512d s[2];  /* sums: channels 0-7, 8-15 */
} acc16;

static inline __mmask16 first(size_t n)
{
    return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
}

static inline void acc_init(int kind, acc16 *a)
{
    a->m = _mm512_set1_ps(kind == MXP_POOL_MAX ? -INFINITY : 0.0f); /* both set: no field left undefined */
    a->s[0] = a->s[1] = _mm512_setzero_pd();
}

static inline void acc_add(int kind, acc16 *a, __m512 x)
{
    if (kind == MXP_POOL_MAX) {
        a->m = _mm512_mask_mov_ps(_mm512_max_ps(x, a->m), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
        return;
    }
    a->s[0] = _mm512_add_pd(a->s[0], _mm512_cvtps_pd(_mm512_castps512_ps256(x)));
    a->s[1] = _mm512_add_pd(a->s[1], _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1))));
}

/* s / d, lane by lane (d >= 1): where every d is a power of two, s times
 * its reciprocal (2^-e: exact, and so the quotient's bits; no sum of
 * floats comes near float64's subnormals), else the division. */
static inline __m512d divide(__m512d s, __m512d d)
{
    const __m512i bits = _mm512_castpd_si512(d);
    if (_mm512_test_epi64_mask(bits, _mm512_set1_epi64(0x000fffffffffffffll)))
        return _mm512_div_pd(s, d);
    return _mm512_mul_pd(s, _mm512_castsi512_pd(_mm512_sub_epi64(_mm512_set1_epi64(0x7fe0000000000000ll), bits)));
}

/* Stores n lanes of a at element t of acc (output columns or channels
 * from j), or of p->out32 for sums that ask for float32: sums divided
 * first by the divisors at d (one each), or by one divisor d1. */
static inline void acc_store(const mxp_f32_pool_params *p, void *acc, size_t t, const acc16 *a, size_t n,
                             const double *d, double d1)
{
    const __mmask16 m = first(n);
    if (p->kind == MXP_POOL_MAX) {
        __m512 v = a->m;
        if (p->quiet) /* NaNs made quiet */
            v = _mm512_castsi512_ps(_mm512_mask_or_epi32(_mm512_castps_si512(v), _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                                                         _mm512_castps_si512(v), _mm512_set1_epi32(0x00400000)));
        _mm512_mask_storeu_ps((float *)acc + t, m, v);
        return;
    }
    __m512d s0 = a->s[0], s1 = a->s[1];
    if (p->div) {
        s0 = divide(s0, d ? _mm512_mask_loadu_pd(_mm512_set1_pd(1), (__mmask8)m, d) : _mm512_set1_pd(d1));
        s1 = divide(s1, d ? _mm512_mask_loadu_pd(_mm512_set1_pd(1), (__mmask8)(m >> 8), d + 8) : _mm512_set1_pd(d1));
    }
    if (p->out32) { /* vcvtpd2ps: the float64 -> float32 conversion's nearest even */
        _mm512_mask_storeu_ps(p->out32 + t, m,
                              _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(s0)), _mm512_cvtpd_ps(s1), 1));
        return;
    }
    _mm512_mask_storeu_pd((double *)acc + t, (__mmask8)m, s0);
    if (n > 8)
        _mm512_mask_storeu_pd((double *)acc + t + 8, (__mmask8)(m >> 8), s1);
}

/* The lanes [a, b) of 32 clipped to [0, 32): the columns of x among the
 * 32 from column c (x has w). */
static inline __mmask32 cols32(ptrdiff_t c, ptrdiff_t w)
{
    const ptrdiff_t a = c < 0 ? (-c < 32 ? -c : 32) : 0, b = w - c < 32 ? (w - c > 0 ? w - c : 0) : 32;
    const uint64_t m = ((1ull << b) - 1) & ~((1ull << a) - 1);
    return (__mmask32)m;
}

/* x > a || x != x ? x : a, lane by lane (the portable fold). */
static inline __m512 fold_max(__m512 a, __m512 x)
{
    return _mm512_mask_mov_ps(_mm512_max_ps(x, a), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

/* One channel (NCHW), strides 1 and 2: sixteen output columns a block,
 * each offset q's tap a vector: stride 1 a load at column q, stride 2 the
 * even (q even) or odd columns of 32 loaded at column q rounded down to
 * even; columns outside x masked to the fill (-inf for max, +0 for sums:
 * the sums' float64 additions of +0 change nothing, since a sum that
 * starts at +0 is never -0).  Sums: every tap added in (p, q) order.
 * Max: each row's taps folded first, then the rows in order: the (p, q)
 * fold's result -- the last NaN, or else the first maximum (a row's fold
 * keeps its last NaN and first maximum; the rows' fold takes the last row
 * holding a NaN, or the first holding the maximum).  block_k: one block's
 * accumulators over every row and tap (mk: each load's columns of x).
 * Max: exact (fold_max, a NaN tap taken) or fast (vmaxps alone, x > a ? x
 * : a, the same first maximum, one operation a tap instead of three; the
 * taps' sum notes a NaN, or inf - inf: *redo set, the block is folded
 * again exactly). */
MXP_INLINE void block_k(acc16 *r, const mxp_f32_pool_params *p, int kind, ptrdiff_t s, size_t kw, ptrdiff_t c0,
                        const __mmask32 *mk, int exact, int *redo)
{
    const size_t loads = s == 2 ? (kw + 1) / 2 : kw;
    const __m512 fill = _mm512_set1_ps(kind == MXP_POOL_MAX ? -INFINITY : 0.0f);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    __m512 ns = _mm512_setzero_ps();
    acc_init(kind, r);
    for (size_t pr = 0; pr < p->kh; pr++) {
        const float *x = p->rows[pr];
        if (!x)
            continue;
        __m512 h = fill;
        for (size_t t = 0; t < loads; t++) {
            const float *xt = x + c0 + (ptrdiff_t)(s == 2 ? 2 * t : t);
            __m512 tap[2];
            size_t taps = 1;
            if (s == 1) {
                tap[0] = _mm512_mask_loadu_ps(fill, (__mmask16)mk[t], xt);
            } else {
                const __m512 v0 = _mm512_mask_loadu_ps(fill, (__mmask16)mk[t], xt);
                const __m512 v1 = _mm512_mask_loadu_ps(fill, (__mmask16)(mk[t] >> 16), xt + 16);
                tap[0] = _mm512_permutex2var_ps(v0, even, v1);
                if (2 * t + 1 < kw) {
                    tap[1] = _mm512_permutex2var_ps(v0, odd, v1);
                    taps = 2;
                }
            }
            for (size_t u = 0; u < taps; u++) {
                if (kind != MXP_POOL_MAX) {
                    acc_add(kind, r, tap[u]);
                } else if (exact) {
                    h = fold_max(h, tap[u]);
                } else {
                    h = _mm512_max_ps(tap[u], h);
                    ns = _mm512_add_ps(ns, tap[u]);
                }
            }
        }
        if (kind == MXP_POOL_MAX)
            r->m = exact ? fold_max(r->m, h) : _mm512_max_ps(h, r->m);
    }
    *redo = kind == MXP_POOL_MAX && !exact && _mm512_cmp_ps_mask(ns, ns, _CMP_UNORD_Q);
}

MXP_INLINE void one_channel_k(void *acc, const mxp_f32_pool_params *p, int kind, ptrdiff_t s, size_t kw)
{
    const ptrdiff_t w = (ptrdiff_t)p->w;
    const size_t loads = s == 2 ? (kw + 1) / 2 : kw;
    for (size_t j = 0; j < p->ow; j += 16) {
        const size_t n = p->ow - j < 16 ? p->ow - j : 16;
        const ptrdiff_t c0 = (ptrdiff_t)j * s - (ptrdiff_t)p->pw;
        __mmask32 mk[MXP_POOL_WIDE]; /* each load's columns of x */
        for (size_t t = 0; t < loads; t++)
            mk[t] = cols32(c0 + (ptrdiff_t)(s == 2 ? 2 * t : t), w);
        acc16 r;
        int redo;
        block_k(&r, p, kind, s, kw, c0, mk, 0, &redo);
        if (redo)
            block_k(&r, p, kind, s, kw, c0, mk, 1, &redo);
        acc_store(p, acc, j, &r, n, p->div ? p->div + j : NULL, 0);
    }
}

static void one_channel(void *acc, const mxp_f32_pool_params *p)
{
    MXP_POOL_ONE_CHANNEL(one_channel_k, acc, p);
}

static void narrow(void *acc, const mxp_f32_pool_params *p)
{
    const size_t ch = p->ch;
    if (ch == 1 && p->s > 2) {
        mxp_f32_pool__scalar(acc, p);
        return;
    }
    if (ch == 1) {
        one_channel(acc, p);
        return;
    }
    size_t lo[MXP_POOL_WIDE], hi[MXP_POOL_WIDE];
    for (size_t q = 0; q < p->kw; q++)
        mxp_pool_columns(p, q, &lo[q], &hi[q]);
    for (size_t j = 0; j < p->ow; j++)
        for (size_t c = 0; c < ch; c += 16) {
            const size_t n = ch - c < 16 ? ch - c : 16;
            acc16 r;
            acc_init(p->kind, &r);
            for (size_t pr = 0; pr < p->kh; pr++)
                for (size_t q = 0; p->rows[pr] && q < p->kw; q++)
                    if (j >= lo[q] && j < hi[q])
                        acc_add(p->kind, &r, _mm512_maskz_loadu_ps(first(n), p->rows[pr] + (j * p->s + q - p->pw) * ch + c));
            acc_store(p, acc, j * ch + c, &r, n, NULL, p->div ? p->div[j] : 1);
        }
}

/* Wide windows: each window's columns in turn, channels sixteen at a time;
 * one channel: sixteen columns at a time for max, the portable chain for
 * sums. */
static void wide(void *acc, const mxp_f32_pool_params *p)
{
    const size_t ch = p->ch;
    if (ch == 1 && p->kind != MXP_POOL_MAX) { /* one chain: the additions' order */
        mxp_f32_pool__scalar(acc, p);
        return;
    }
    for (size_t j = 0; j < p->ow; j++) {
        size_t w0 = j * p->s, w1 = w0 + p->kw;
        w0 = w0 > p->pw ? w0 - p->pw : 0;
        w1 = w1 > p->pw ? w1 - p->pw : 0;
        w1 = w1 < p->w ? w1 : p->w;
        if (ch == 1) { /* sixteen lane maxima, NaNs noted */
            __m512 m = _mm512_set1_ps(-INFINITY);
            __mmask16 nan = 0;
            for (size_t pr = 0; pr < p->kh; pr++)
                for (size_t w = w0; p->rows[pr] && w < w1; w += 16) {
                    const __m512 v = _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), first(w1 - w), p->rows[pr] + w);
                    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
                    m = _mm512_max_ps(v, m);
                }
            mxp_pool_wide_max1(acc, p, j, w0, w1, _mm512_reduce_max_ps(m), nan != 0);
            mxp_pool_quiet(acc, p, j, j + 1);
            continue;
        }
        for (size_t c = 0; c < ch; c += 64) { /* four sixteen-channel accumulators: four chains in flight */
            acc16 r[4];
            __mmask16 k[4];
            for (size_t u = 0; u < 4; u++) {
                k[u] = c + 16 * u < ch ? first(ch - c - 16 * u) : 0;
                acc_init(p->kind, &r[u]);
            }
            for (size_t pr = 0; pr < p->kh; pr++)
                for (size_t w = w0; p->rows[pr] && w < w1; w++)
                    for (size_t u = 0; u < 4; u++)
                        if (k[u])
                            acc_add(p->kind, &r[u], _mm512_maskz_loadu_ps(k[u], p->rows[pr] + w * ch + c + 16 * u));
            for (size_t u = 0; u < 4 && k[u]; u++)
                acc_store(p, acc, j * ch + c + 16 * u, &r[u], ch - c - 16 * u, NULL,
                          p->div ? p->div[j] : 1);
        }
    }
}

void mxp_f32_pool__avx512f(void *acc, const mxp_f32_pool_params *p)
{
    if (p->kw > MXP_POOL_WIDE)
        wide(acc, p);
    else
        narrow(acc, p);
}

/* ---- pooling a plane at a time (pool-kernels.h) --------------------------- */

/* Block c0's load masks (each load t's columns of x: 32 from c0 + 2 t for
 * stride 2, 16 from c0 + t for stride 1). */
static inline void plane_masks(__mmask32 *mk, ptrdiff_t c0, ptrdiff_t s, size_t loads, ptrdiff_t w)
{
    for (size_t t = 0; t < loads; t++)
        mk[t] = cols32(c0 + s * (ptrdiff_t)t, w);
}

/* The maxima of sixteen output columns from c0 (stride s) of row x, each
 * window's taps in q order, the first tap as it is (the fold from -inf
 * gives it): exact, fold_max, else vmaxps alone.  edge: the loads masked
 * by mk to the columns of x, the fill -inf elsewhere. */
MXP_INLINE __m512 plane_hblock(const float *x, ptrdiff_t c0, ptrdiff_t s, size_t kw, int edge, const __mmask32 *mk,
                               int exact)
{
    const size_t loads = s == 2 ? (kw + 1) / 2 : kw;
    const __m512 fill = _mm512_set1_ps(-INFINITY);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    __m512 h = fill;
    for (size_t t = 0; t < loads; t++) {
        const float *xt = x + c0 + (s == 2 ? 2 * (ptrdiff_t)t : (ptrdiff_t)t);
        __m512 tap[2];
        size_t taps = 1;
        tap[0] = edge ? _mm512_mask_loadu_ps(fill, (__mmask16)mk[t], xt) : _mm512_loadu_ps(xt);
        if (s == 2) {
            const __m512 v1 = edge ? _mm512_mask_loadu_ps(fill, (__mmask16)(mk[t] >> 16), xt + 16)
                                   : _mm512_loadu_ps(xt + 16);
            const __m512 v0 = tap[0];
            tap[0] = _mm512_permutex2var_ps(v0, even, v1);
            if (2 * t + 1 < kw) {
                tap[1] = _mm512_permutex2var_ps(v0, odd, v1);
                taps = 2;
            }
        }
        for (size_t u = 0; u < taps; u++)
            h = t == 0 && u == 0 ? tap[u] : exact ? fold_max(h, tap[u]) : _mm512_max_ps(tap[u], h);
    }
    return h;
}

/* The fast plane: where no value of x is a NaN or -0, every order of the
 * maxima gives the same bits (equal floats are then the same float), so
 * each output row takes its input rows' column maxima first (whole
 * vectors, rows any order), then the windows' maxima along them.
 * Returns whether x held a NaN or a -0 (each row checked as it is first
 * read, vfpclassps): then y is to be made again by plane_exact.  kh: the
 * window's height where a constant (the rows of a whole window
 * unrolled), else 0.  No software prefetch (the plane loops here and in
 * plane_sums_k): on AMD Zen 4 the prefetch of the rows eight output rows
 * ahead made a 56 x 56 max plane 337 -> 417 ns (from L3 as from L1), an
 * average plane 542 -> 560; the Intel Xeon (6/0xa7) had gained 3-4%. */

/* The maxima over rows [0, n) of x (rows of w floats) of the sixteen
 * columns from c, -inf past w; rows from knew (not read before) checked
 * for NaNs (quiet, signaling) and -0 into *bad.  Stride 2's steady rows
 * (kh 3, the last two new) written out. */
MXP_INLINE __m512 plane_colmax(const float *x, size_t w, size_t c, size_t n, size_t knew, size_t kh, __mmask16 tail,
                               __mmask16 *bad, int steady)
{
    const __m512 fill = _mm512_set1_ps(-INFINITY);
    if (c >= w)
        return fill;
    const __mmask16 lanes = c + 16 <= w ? (__mmask16)0xffff : tail;
    const float *xt = x + c;
    if (steady) {
        const __m512 x0 = _mm512_mask_loadu_ps(fill, lanes, xt), x1 = _mm512_mask_loadu_ps(fill, lanes, xt + w);
        const __m512 x2 = _mm512_mask_loadu_ps(fill, lanes, xt + 2 * w);
        *bad = _kor_mask16(*bad, _kor_mask16(_mm512_fpclass_ps_mask(x1, 0x85), _mm512_fpclass_ps_mask(x2, 0x85)));
        return _mm512_max_ps(x2, _mm512_max_ps(x1, x0));
    }
    __m512 m = fill;
    const size_t rows = kh && n == kh ? kh : n; /* a whole window's rows: a constant count */
    for (size_t k = 0; k < rows; k++) {
        const __m512 xk = _mm512_mask_loadu_ps(fill, lanes, xt + k * w);
        *bad = _kor_mask16(*bad, _mm512_mask_fpclass_ps_mask(k >= knew ? (__mmask16)0xffff : 0, xk, 0x85));
        m = _mm512_max_ps(xk, m);
    }
    return m;
}

/* The column maxima of the sixteen columns from c for output rows
 * [i, i + rows) into m: mode 0 or 1 one row (plane_colmax's steady),
 * mode 2 the steady pair of 3 x 3 stride 2 (five input rows from x, the
 * last four new, the middle one shared). */
MXP_INLINE void plane_cols(const float *x, size_t w, size_t c, size_t n, size_t knew, size_t kh, __mmask16 tail,
                           __mmask16 *bad, int mode, __m512 *m)
{
    if (mode != 2) {
        m[0] = plane_colmax(x, w, c, n, knew, kh, tail, bad, mode);
        return;
    }
    const __m512 fill = _mm512_set1_ps(-INFINITY);
    if (c >= w) {
        m[0] = m[1] = fill;
        return;
    }
    const __mmask16 lanes = c + 16 <= w ? (__mmask16)0xffff : tail;
    const float *xt = x + c;
    __m512 r[5];
    for (size_t k = 0; k < 5; k++)
        r[k] = _mm512_mask_loadu_ps(fill, lanes, xt + k * w);
    *bad = _kor_mask16(*bad, _kor_mask16(_mm512_fpclass_ps_mask(r[1], 0x85), _mm512_fpclass_ps_mask(r[2], 0x85)));
    *bad = _kor_mask16(*bad, _kor_mask16(_mm512_fpclass_ps_mask(r[3], 0x85), _mm512_fpclass_ps_mask(r[4], 0x85)));
    m[0] = _mm512_max_ps(r[2], _mm512_max_ps(r[1], r[0]));
    m[1] = _mm512_max_ps(r[4], _mm512_max_ps(r[3], r[2]));
}

/* Stride 2: the blocks of sixteen columns of output rows [i, i + rows)
 * (mode 2: two rows, else one; y their first), every window tap q
 * reading column 32 b + 2 j + q - pw: the even (q - pw even) or odd
 * column maxima of the 32 columns from 32 b, shifted by floor((q - pw) /
 * 2) lanes across the blocks before and after (e0 / o0, e2 / o2) -- all
 * in registers (a row of maxima stored and read back at other offsets
 * stalls each load on store forwarding).  pw a constant where the
 * windows are common (the taps' choices then made at compile time). */
MXP_INLINE void plane_s2_rows(const float *x, size_t w, size_t n, size_t knew, size_t kh, size_t kw, size_t pw,
                              __mmask16 tail, float *y, size_t ow, size_t nb, __mmask16 ytail, __mmask16 *bad,
                              int mode)
{
    const size_t rows = mode == 2 ? 2 : 1;
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512 e0[2], o0[2], e1[2], o1[2], a[2], b[2];
    plane_cols(x, w, 0, n, knew, kh, tail, bad, mode, a);
    plane_cols(x, w, 16, n, knew, kh, tail, bad, mode, b);
    for (size_t r = 0; r < rows; r++) {
        e0[r] = o0[r] = _mm512_set1_ps(-INFINITY);
        e1[r] = _mm512_permutex2var_ps(a[r], even, b[r]);
        o1[r] = _mm512_permutex2var_ps(a[r], odd, b[r]);
    }
    for (size_t t = 0; t < nb; t++) {
        plane_cols(x, w, 32 * t + 32, n, knew, kh, tail, bad, mode, a);
        plane_cols(x, w, 32 * t + 48, n, knew, kh, tail, bad, mode, b);
        for (size_t r = 0; r < rows; r++) {
            const __m512 e2 = _mm512_permutex2var_ps(a[r], even, b[r]), o2 = _mm512_permutex2var_ps(a[r], odd, b[r]);
            __m512 m = e1[r];
            for (size_t q = 0; q < kw; q++) {
                const ptrdiff_t d = (ptrdiff_t)q - (ptrdiff_t)pw, sh = (d - (d & 1)) / 2;
                const __m512 v0 = d & 1 ? o0[r] : e0[r], v1 = d & 1 ? o1[r] : e1[r], v2 = d & 1 ? o2 : e2;
                const __m512i ix = _mm512_add_epi32(lane, _mm512_set1_epi32((int)(sh < 0 ? 16 + sh : sh)));
                const __m512 tap = sh == 0  ? v1
                                   : sh < 0 ? _mm512_permutex2var_ps(v0, ix, v1)
                                            : _mm512_permutex2var_ps(v1, ix, v2);
                m = q == 0 ? tap : _mm512_max_ps(tap, m);
            }
            _mm512_mask_storeu_ps(y + r * ow + 16 * t, t == nb - 1 ? ytail : (__mmask16)0xffff, m);
            e0[r] = e1[r], o0[r] = o1[r], e1[r] = e2, o1[r] = o2;
        }
    }
}

MXP_INLINE int plane_fast(const mxp_f32_pool_plane_params *p, ptrdiff_t s, size_t kw, size_t kh)
{
    const size_t w = p->w, nb = (p->ow + 15) / 16;
    const __mmask16 ytail = first(p->ow - 16 * (nb - 1)), tail = first(w - (w - 1) / 16 * 16);
    const __m512 fill = _mm512_set1_ps(-INFINITY);
    float *v = mxp_pool_plane_vrow(p);
    const size_t vlen = mxp_pool_plane_vbuf(w, p->ow) - MXP_POOL_PLANE_PAD;
    if (s != 2) { /* stride 1: the row of maxima in v, padded with -inf */
        _mm512_storeu_ps(v - MXP_POOL_PLANE_PAD, fill);
        for (size_t c = w; c < vlen; c += 16)
            _mm512_mask_storeu_ps(v + c, first(vlen - c), fill);
    }
    __mmask16 bad = 0;
    size_t next = 0; /* the first input row not checked yet */
    for (size_t i = 0; i < p->oh; i++) {
        size_t r0, r1;
        mxp_pool_plane_rows(p, i, &r0, &r1);
        const float *x = p->x + r0 * w;
        const size_t n = r1 - r0, knew = next > r0 ? next - r0 : 0; /* rows from knew are new */
        next = r1 > next ? r1 : next;
        float *yi = p->y + i * p->ow;
        const int steady = kh == 3 && n == 3 && knew == 1; /* stride 2's rows of 3 x 3, the last two new */
        if (s == 2 && kw == 3 && p->pw == 1 && steady && i + 1 < p->oh && r1 + 2 <= p->h) { /* rows i, i + 1 */
            plane_s2_rows(x, w, n, knew, kh, 3, 1, tail, yi, p->ow, nb, ytail, &bad, 2);
            next = r1 + 2;
            i++;
        } else if (s == 2 && kw == 3 && p->pw == 1 && steady)
            plane_s2_rows(x, w, n, knew, kh, 3, 1, tail, yi, p->ow, nb, ytail, &bad, 1);
        else if (s == 2 && kw == 3 && p->pw == 1)
            plane_s2_rows(x, w, n, knew, kh, 3, 1, tail, yi, p->ow, nb, ytail, &bad, 0);
        else if (s == 2 && kw == 2 && p->pw == 0)
            plane_s2_rows(x, w, n, knew, kh, 2, 0, tail, yi, p->ow, nb, ytail, &bad, 0);
        else if (s == 2)
            plane_s2_rows(x, w, n, knew, kh, kw, p->pw, tail, yi, p->ow, nb, ytail, &bad, steady);
        else {
            for (size_t c = 0; c < w; c += 16)
                _mm512_mask_storeu_ps(v + c, first(w - c), plane_colmax(x, w, c, n, knew, kh, tail, &bad, steady));
            for (size_t b = 0; b < nb; b++)
                _mm512_mask_storeu_ps(yi + 16 * b, b == nb - 1 ? ytail : (__mmask16)0xffff,
                                      plane_hblock(v, (ptrdiff_t)b * 16 * s - (ptrdiff_t)p->pw, s, kw, 0, NULL, 0));
        }
    }
    return bad != 0;
}

/* The exact plane: each input row's maxima folded exactly once into the
 * ring, then each output row's rows folded in order; NaNs made quiet. */
MXP_INLINE void plane_exact(const mxp_f32_pool_plane_params *p, ptrdiff_t s, size_t kw)
{
    const ptrdiff_t w = (ptrdiff_t)p->w, pw = (ptrdiff_t)p->pw;
    const size_t loads = s == 2 ? (kw + 1) / 2 : kw, nb = (p->ow + 15) / 16;
    const ptrdiff_t reach = s == 2 ? 2 * (ptrdiff_t)loads + 30 : (ptrdiff_t)kw + 15; /* columns a block's loads span */
    const size_t rmask = mxp_pool_plane_ring_rows(p->kh) - 1, rstride = mxp_pool_plane_stride(p->ow);
    float *ring = p->hbuf;
    size_t next = 0; /* the first input row whose maxima are not made yet */
    for (size_t i = 0; i < p->oh; i++) {
        size_t r0, r1;
        mxp_pool_plane_rows(p, i, &r0, &r1);
        for (size_t r = r0 > next ? r0 : next; r < r1; r++) {
            const float *x = p->x + r * p->w;
            float *hr = ring + (r & rmask) * rstride; /* mxp_pool_plane_ring */
            for (size_t b = 0; b < nb; b++) {
                const ptrdiff_t c0 = (ptrdiff_t)b * 16 * s - pw;
                __mmask32 mk[MXP_POOL_WIDE];
                const int edge = c0 < 0 || c0 + reach > w;
                if (edge)
                    plane_masks(mk, c0, s, loads, w);
                _mm512_storeu_ps(hr + 16 * b, edge ? plane_hblock(x, c0, s, kw, 1, mk, 1)
                                                   : plane_hblock(x, c0, s, kw, 0, NULL, 1));
            }
        }
        next = r1 > next ? r1 : next;
        for (size_t b = 0; b < nb; b++) {
            __m512 m = _mm512_set1_ps(-INFINITY);
            for (size_t r = r0; r < r1; r++) {
                const __m512 v = _mm512_loadu_ps(ring + (r & rmask) * rstride + 16 * b);
                m = r == r0 ? v : fold_max(m, v);
            }
            m = _mm512_castsi512_ps(_mm512_mask_or_epi32(_mm512_castps_si512(m), _mm512_cmp_ps_mask(m, m, _CMP_UNORD_Q),
                                                         _mm512_castps_si512(m), _mm512_set1_epi32(0x00400000)));
            _mm512_mask_storeu_ps(p->y + i * p->ow + 16 * b, first(p->ow - 16 * b), m);
        }
    }
}

/* The fast plane, then, where x held a NaN or -0, the exact one. */
MXP_INLINE void plane(const mxp_f32_pool_plane_params *p, ptrdiff_t s, size_t kw, size_t kh)
{
    if (plane_fast(p, s, kw, kh))
        plane_exact(p, s, kw);
}

/* Stride 2's two taps of a load of 32 columns from xt (edge: masked by
 * mk, +0 elsewhere): tap[0] the even columns, tap[1] the odd ones, each
 * as two vectors of eight (columns 0-15, 16-31 of the load) in the lane
 * order 0 1 4 5 2 3 6 7 of vshufps within 128-bit lanes. */
MXP_INLINE void plane_taps2(const float *xt, int edge, __mmask32 mk, __m256 tap[2][2])
{
    for (int h = 0; h < 2; h++) {
        const float *xh = xt + 16 * h;
        const __mmask8 k0 = (__mmask8)(mk >> (16 * h)), k1 = (__mmask8)(mk >> (16 * h + 8));
        const __m256 a = edge ? _mm256_maskz_loadu_ps(k0, xh) : _mm256_loadu_ps(xh);
        const __m256 c = edge ? _mm256_maskz_loadu_ps(k1, xh + 8) : _mm256_loadu_ps(xh + 8);
        tap[0][h] = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(2, 0, 2, 0));
        tap[1][h] = _mm256_shuffle_ps(a, c, _MM_SHUFFLE(3, 1, 3, 1));
    }
}

/* A block's two float64 accumulators (from +0): every tap of rows
 * [0, n) of x (rows of w floats) from column c0, in (p, q) order.  The
 * sums' additions as fma(x, 1, s): the same rounding, and on Zen 4 the
 * FMA pipes, which the conversions do not use (7% on 2x2 stride 2 from
 * L2). */
MXP_INLINE void plane_block_sums(const float *x, size_t w, ptrdiff_t c0, size_t n, ptrdiff_t s, size_t kw,
                                 const __mmask32 *mk, int edge, __m512d *sum0, __m512d *sum1)
{
    const size_t loads = s == 2 ? (kw + 1) / 2 : kw;
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd(), one = _mm512_set1_pd(1);
    __asm__("" : "+v"(one)); /* kept a multiply: no folding back into an add */
    for (size_t k = 0; k < n; k++) {
        const float *xr = x + k * w + c0;
        for (size_t t = 0; t < loads; t++) {
            const float *xt = xr + (s == 2 ? 2 * (ptrdiff_t)t : (ptrdiff_t)t);
            if (s == 2) {
                __m256 tap[2][2];
                plane_taps2(xt, edge, mk[t], tap);
                const size_t taps = 2 * t + 1 < kw ? 2 : 1;
                for (size_t u = 0; u < taps; u++) {
                    s0 = _mm512_fmadd_pd(_mm512_cvtps_pd(tap[u][0]), one, s0);
                    s1 = _mm512_fmadd_pd(_mm512_cvtps_pd(tap[u][1]), one, s1);
                }
                continue;
            }
            const __m512 v = edge ? _mm512_maskz_loadu_ps((__mmask16)mk[t], xt) : _mm512_loadu_ps(xt);
            s0 = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v)), one, s0);
            s1 = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))), one,
                                 s1);
        }
    }
    *sum0 = s0;
    *sum1 = s1;
}

/* Block b of output row i from its sums s[0], s[1]: divided, rounded,
 * stored (stride 2: the lanes put back in order). */
MXP_INLINE void plane_sums_out(const mxp_f32_pool_plane_params *p, ptrdiff_t s, size_t i, size_t b, const __m512d *sums)
{
    const __mmask16 m = first(p->ow - 16 * b);
    const double *d = p->div + i * p->ow + 16 * b;
    const __m512i order = _mm512_setr_epi64(0, 1, 4, 5, 2, 3, 6, 7); /* stride 2's lanes (plane_taps2) */
    __m256 h[2];
    for (int k = 0; k < 2; k++) {
        __m512d v = sums[k];
        if (p->recip != 0) {
            v = _mm512_mul_pd(v, _mm512_set1_pd(p->recip));
        } else {
            __m512d dk = _mm512_mask_loadu_pd(_mm512_set1_pd(1), (__mmask8)(m >> (8 * k)), d + 8 * k);
            v = divide(v, s == 2 ? _mm512_permutexvar_pd(order, dk) : dk);
        }
        h[k] = _mm512_cvtpd_ps(v);
        if (s == 2) /* lanes 0 1 4 5 2 3 6 7: pairs 0 2 1 3 */
            h[k] = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(h[k]), _MM_SHUFFLE(3, 1, 2, 0)));
    }
    _mm512_mask_storeu_ps(p->y + i * p->ow + 16 * b, m, _mm512_insertf32x8(_mm512_castps256_ps512(h[0]), h[1], 1));
}

/* Sums: sixteen output columns a block, as one_channel_k's (every tap
 * of the window's rows in (p, q) order added into two float64
 * accumulators from +0, divided, rounded to float32: the same bits), the
 * edge blocks' load masks made once a plane (zero-masked loads: the fill
 * +0) and the inner blocks' loads unmasked.  kh: the window's height
 * where a constant, else 0.
 *
 * Stride 2 splits each tap's columns by vshufps within the 128-bit lanes
 * of 256-bit loads (plane_taps2), which leaves every tap's eight lanes
 * in the order 0 1 4 5 2 3 6 7 -- the same for every tap, so each
 * accumulator's lane still sums one output's taps -- and one vpermpd a
 * half puts the outputs back in order at the store (the divisors, where
 * they differ, are loaded in that order).  On AMD Zen 4 (one thread, 2x2
 * stride 2) it replaced a 512-bit vpermt2ps split with vextractf64x4 for
 * the upper halves (a 512-bit shuffle there is two 256-bit ones, and the
 * conversions share their pipes): 27.4 -> 20.9 cycles per 16 outputs in
 * a standalone loop over two rows in L1, 34.2 -> 31.7 us for 64 planes of
 * 56 x 56 in L2 here. */
MXP_INLINE void plane_sums_k(const mxp_f32_pool_plane_params *p, ptrdiff_t s, size_t kw, size_t kh)
{
    const ptrdiff_t w = (ptrdiff_t)p->w, pw = (ptrdiff_t)p->pw;
    const size_t loads = s == 2 ? (kw + 1) / 2 : kw, nb = (p->ow + 15) / 16;
    const ptrdiff_t reach = s == 2 ? 2 * (ptrdiff_t)loads + 30 : (ptrdiff_t)kw + 15; /* columns a block's loads span */
    __mmask32 mf[MXP_POOL_WIDE], ml[MXP_POOL_WIDE], mt[MXP_POOL_WIDE], all[MXP_POOL_WIDE];
    plane_masks(mf, -pw, s, loads, w);
    plane_masks(ml, (ptrdiff_t)(nb - 1) * 16 * s - pw, s, loads, w);
    for (size_t t = 0; t < loads; t++)
        all[t] = (__mmask32)0xffffffffu;
    for (size_t i = 0; i < p->oh; i++) {
        size_t r0, r1, q0 = 0, q1 = 0;
        mxp_pool_plane_rows(p, i, &r0, &r1);
        if (kh && i + 1 < p->oh)
            mxp_pool_plane_rows(p, i + 1, &q0, &q1);
        /* two output rows of whole windows at once where the window's rows
           are a constant: two blocks' chains of additions side by side
           (2x2 stride 2 on Zen 4, 64 planes of 56 x 56 in L2: 30.6 -> 29.1
           us; the rows of a constant count unrolled before, 31.7 -> 30.6) */
        const int pair = kh && r1 - r0 == kh && q1 - q0 == kh;
        const size_t n = r1 - r0;
        const float *x = p->x + r0 * p->w, *x2 = p->x + q0 * p->w;
        for (size_t b = 0; b < nb; b++) {
            const ptrdiff_t c0 = (ptrdiff_t)b * 16 * s - pw;
            const __mmask32 *mk = all;
            if (c0 < 0 || c0 + reach > w) { /* an edge block: its loads masked */
                if (b == 0) {
                    mk = mf;
                } else if (b == nb - 1) {
                    mk = ml;
                } else {
                    plane_masks(mt, c0, s, loads, w);
                    mk = mt;
                }
            }
            const int edge = mk != all;
            __m512d sums[4];
            if (pair) { /* the window's rows a constant: unrolled, straight-line blocks */
                if (edge) {
                    plane_block_sums(x, p->w, c0, kh, s, kw, mk, 1, &sums[0], &sums[1]);
                    plane_block_sums(x2, p->w, c0, kh, s, kw, mk, 1, &sums[2], &sums[3]);
                } else {
                    plane_block_sums(x, p->w, c0, kh, s, kw, mk, 0, &sums[0], &sums[1]);
                    plane_block_sums(x2, p->w, c0, kh, s, kw, mk, 0, &sums[2], &sums[3]);
                }
                plane_sums_out(p, s, i, b, sums);
                plane_sums_out(p, s, i + 1, b, sums + 2);
            } else {
                plane_block_sums(x, p->w, c0, n, s, kw, mk, edge, &sums[0], &sums[1]);
                plane_sums_out(p, s, i, b, sums);
            }
        }
        i += pair;
    }
}

static void plane_sums(const mxp_f32_pool_plane_params *p)
{
    MXP_POOL_PLANE_WINDOWS(plane_sums_k, p);
}

void mxp_f32_pool_plane__avx512f(const mxp_f32_pool_plane_params *p)
{
    if (p->kind == MXP_POOL_SUM)
        plane_sums(p);
    else
        MXP_POOL_PLANE_WINDOWS(plane, p);
}

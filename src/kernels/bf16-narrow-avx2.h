/* The AVX2 bodies of bfloat16 rows in float32 arithmetic (bf16-narrow.h),
 * as bf16-narrow-avx512.h: sixteen elements a step as two registers of
 * eight float32 lanes, the float64 sums as four registers (element i into
 * lane i mod 16), 2^k added to the exponent where the result is normal
 * (t >= -86; below, down to -104, ldexpf lane by lane: a rare branch). */
#ifndef MXP_KERNELS_BF16_NARROW_AVX2_H
#define MXP_KERNELS_BF16_NARROW_AVX2_H

#include <immintrin.h>

#include "kernels/bf16-narrow.h"
#include "kernels/maxmin-avx2.h"
#include "kernels/nexpf-avx2.h"
#include "kernels/stream-loop.h"

/* Eight elements of the row from i as float32 (mxp_narrow_x). */
static inline __m256 mxp_narrow_load_avx2(const mxp_narrow_src *x, size_t i)
{
    __m256 v;
    if (x->f32)
        v = _mm256_loadu_ps((const float *)x->x + i);
    else
        v = _mm256_castsi256_ps(_mm256_slli_epi32(
            _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)((const uint16_t *)x->x + i))), 16));
    return x->mask ? _mm256_add_ps(v, _mm256_loadu_ps(x->mask + i)) : v;
}

/* mxp_f32_to_bf16_rne on eight lanes, stored at y. */
static inline void mxp_narrow_store_avx2(uint16_t *y, __m256 v)
{
    const __m256i u = _mm256_castps_si256(v), one = _mm256_set1_epi32(1);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
    const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
    const __m256i nan = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
    const __m256i out = _mm256_blendv_epi8(r, nan, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    const __m128i p = _mm_packus_epi32(_mm256_castsi256_si128(out), _mm256_extracti128_si256(out, 1));
    _mm_storeu_si128((__m128i *)(void *)y, p);
}

/* mxp_narrow_store_avx2 of sixteen lanes (lo: the first eight): rounded
 * by integer arithmetic, packed by one vpackusdw (in-lane: a vpermq puts
 * the halves in order); a NaN among them (one test) takes the eight-lane
 * stores. */
MXP_INLINE void mxp_narrow_store16_k_avx2(uint16_t *y, __m256 lo, __m256 hi, int no_nan)
{
    const __m256 nan = _mm256_or_ps(_mm256_cmp_ps(lo, lo, _CMP_UNORD_Q), _mm256_cmp_ps(hi, hi, _CMP_UNORD_Q));
    if (!no_nan && !_mm256_testz_ps(nan, nan)) {
        mxp_narrow_store_avx2(y, lo);
        mxp_narrow_store_avx2(y + 8, hi);
        return;
    }
    const __m256i one = _mm256_set1_epi32(1), half = _mm256_set1_epi32(0x7fff);
    const __m256i a = _mm256_castps_si256(lo), b = _mm256_castps_si256(hi);
    const __m256i ra = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(a, half), _mm256_and_si256(_mm256_srli_epi32(a, 16), one)), 16);
    const __m256i rb = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(b, half), _mm256_and_si256(_mm256_srli_epi32(b, 16), one)), 16);
    const __m256i p = _mm256_packus_epi32(ra, rb); /* a0-3 b0-3 | a4-7 b4-7 */
    _mm256_storeu_si256((__m256i *)(void *)y, _mm256_permute4x64_epi64(p, _MM_SHUFFLE(3, 1, 2, 0)));
}

static inline void mxp_narrow_store16_avx2(uint16_t *y, __m256 lo, __m256 hi)
{
    mxp_narrow_store16_k_avx2(y, lo, hi, 0);
}

/* Elements i .. i + 7 (v) into the registers a[0], a[1] of four lanes. */
static inline void mxp_narrow_add_avx2(__m256d a[2], __m256 v, int sq)
{
    const __m256d p = _mm256_cvtps_pd(_mm256_castps256_ps128(v)), q = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    if (sq) {
        a[0] = _mm256_fmadd_pd(p, p, a[0]);
        a[1] = _mm256_fmadd_pd(q, q, a[1]);
    } else {
        a[0] = _mm256_add_pd(a[0], p);
        a[1] = _mm256_add_pd(a[1], q);
    }
}

static inline void mxp_narrow_lanes_avx2(double s[16], const __m256d a[4])
{
    for (int k = 0; k < 4; k++)
        _mm256_storeu_pd(s + 4 * k, a[k]);
}

/* The last n mod 16 elements (x + mask) in tl[16], the other lanes -inf
 * (as bf16-narrow-avx512.h's tail vector). */
static inline void mxp_narrow_tail_avx2(float tl[16], const mxp_narrow_src *x, size_t body, size_t n)
{
    for (size_t k = 0; k < 16; k++)
        tl[k] = k < n - body ? mxp_narrow_x(x, body + k) : -INFINITY;
}

/* The maximum pass's body, 16 elements a step (mxp_maxmin2_avx2); f32 and
 * masked constants in each copy. */
MXP_INLINE void mxp_narrow_max_body_avx2(const mxp_narrow_src *x, size_t body, int f32, int masked, __m256 *mv,
                                         __m256 *lv, __m256 *nanv)
{
    const mxp_narrow_src xs = { x->x, f32, masked ? x->mask : NULL };
    __m256 m[2] = { *mv, *mv }, l[2] = { *lv, *lv }, n[2] = { *nanv, _mm256_setzero_ps() };
    for (size_t i = 0; i < body; i += 16) { /* a line ahead every 64 bytes, as the norms' first pass */
        const char *ahead = (const char *)x->x + (f32 ? 4 : 2) * i + MXP_STREAM_PREFETCH;
        if (f32 || i % 32 == 0)
            _mm_prefetch(ahead, _MM_HINT_T0);
        mxp_maxmin2_avx2(mxp_narrow_load_avx2(&xs, i), mxp_narrow_load_avx2(&xs, i + 8), m, l, n);
    }
    *mv = _mm256_max_ps(m[0], m[1]);
    *lv = _mm256_min_ps(l[0], l[1]);
    *nanv = _mm256_or_ps(n[0], n[1]);
}

/* Softmax's passes (mxp_narrow_max_fn ...), 8 lanes a vector. */
static inline float mxp_narrow_max_avx2(const mxp_narrow_src *x, size_t n, int *nan, float *lo)
{
    const size_t body = n & ~(size_t)15;
    float tl[16], low = INFINITY;
    mxp_narrow_tail_avx2(tl, x, body, n);
    for (size_t k = 0; k < n - body; k++)
        low = tl[k] < low ? tl[k] : low;
    __m256 mv = _mm256_max_ps(_mm256_loadu_ps(tl), _mm256_loadu_ps(tl + 8)), nanv = _mm256_setzero_ps();
    __m256 lv = _mm256_set1_ps(low);
    for (int h = 0; h < 2; h++)
        nanv = _mm256_or_ps(nanv, _mm256_cmp_ps(_mm256_loadu_ps(tl + 8 * h), _mm256_loadu_ps(tl + 8 * h), _CMP_UNORD_Q));
    if (x->mask)
        mxp_narrow_max_body_avx2(x, body, x->f32, 1, &mv, &lv, &nanv);
    else if (x->f32)
        mxp_narrow_max_body_avx2(x, body, 1, 0, &mv, &lv, &nanv);
    else
        mxp_narrow_max_body_avx2(x, body, 0, 0, &mv, &lv, &nanv);
    float l8[8], m = -INFINITY;
    _mm256_storeu_ps(l8, mv);
    for (int k = 0; k < 8; k++)
        m = l8[k] > m ? l8[k] : m;
    _mm256_storeu_ps(l8, lv);
    for (int k = 0; k < 8; k++)
        low = l8[k] < low ? l8[k] : low;
    *nan = _mm256_movemask_ps(nanv) != 0;
    *lo = low; /* (a NaN row's is not used) */
    return m;
}

/* normal: every t >= MXP_NEXP_NORMAL, exp without its tests (a copy of
 * the loop each way); f32 and masked constants in each copy (the stores
 * to e made the loop reload them from x). */
MXP_INLINE double mxp_narrow_exps_k_avx2(const mxp_narrow_src *xp, size_t n, float m, float *e, int lg, int normal,
                                         int f32, int masked)
{
    const mxp_narrow_src xs = { xp->x, f32, masked ? xp->mask : NULL }, *x = &xs;
    const size_t body = n & ~(size_t)15, tail = n - body;
    const __m256 vm = _mm256_set1_ps(m);
    __m256d a[4] = { _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd() };
    for (size_t i = 0; i < body;) {
        __m256 f[2] = { _mm256_setzero_ps(), _mm256_setzero_ps() };
        for (int v = 0; v < MXP_NARROW_BLOCK && i < body; v++, i += 16)
            for (int h = 0; h < 2; h++) {
                const __m256 t = _mm256_sub_ps(mxp_narrow_load_avx2(x, i + 8 * h), vm);
                const __m256 ev = normal ? mxp_nexp_ps_normal_k_avx2(t, 1) : mxp_nexp_ps_k_avx2(t, 1);
                if (!lg)
                    _mm256_storeu_ps(e + i + 8 * h, ev);
                f[h] = _mm256_add_ps(f[h], ev);
            }
        mxp_narrow_add_avx2(a, f[0], 0);
        mxp_narrow_add_avx2(a + 2, f[1], 0);
    }
    double s[16], t = 0;
    mxp_narrow_lanes_avx2(s, a);
    if (tail) {
        float tl[16], et[16];
        mxp_narrow_tail_avx2(tl, x, body, n);
        for (int h = 0; h < 2; h++)
            _mm256_storeu_ps(et + 8 * h, mxp_nexp_ps_k_avx2(_mm256_sub_ps(_mm256_loadu_ps(tl + 8 * h), vm), 1));
        for (size_t k = 0; k < tail; k++) /* in order, as the portable code's tail */
            t += e[body + k] = et[k];
    }
    return mxp_sum16_fold(s, t);
}

/* t = x - m >= lo - m for every element (rounding is monotonic): where
 * that is at least MXP_NEXP_NORMAL, no exp needs nexpf-avx2.h's tests. */
static inline double mxp_narrow_exps_avx2(const mxp_narrow_src *x, size_t n, float m, float lo, float *e, int lg)
{
    if (lo - m < MXP_NEXP_NORMAL)
        return mxp_narrow_exps_k_avx2(x, n, m, e, lg, 0, x->f32, x->mask != NULL);
    if (x->mask)
        return mxp_narrow_exps_k_avx2(x, n, m, e, lg, 1, x->f32, 1);
    return x->f32 ? mxp_narrow_exps_k_avx2(x, n, m, e, lg, 1, 1, 0) : mxp_narrow_exps_k_avx2(x, n, m, e, lg, 1, 0, 0);
}

static inline void mxp_narrow_smout_avx2(uint16_t *y, const mxp_narrow_src *x, size_t n, float m, const float *e,
                                         double sum, int lg)
{
    const size_t body = n & ~(size_t)15, tail = n - body;
    float r, ls;
    mxp_narrow_softmax_scalars(sum, lg, &r, &ls);
    const __m256 vm = _mm256_set1_ps(m), vr = _mm256_set1_ps(r), vls = _mm256_set1_ps(ls);
    for (size_t i = 0; i < body; i += 16) {
        __m256 v[2];
        for (int h = 0; h < 2; h++)
            v[h] = lg ? _mm256_sub_ps(_mm256_sub_ps(mxp_narrow_load_avx2(x, i + 8 * h), vm), vls)
                      : _mm256_mul_ps(_mm256_loadu_ps(e + i + 8 * h), vr);
        /* no NaN here: a row with a NaN or an infinite maximum took mxp_narrow_nan_row, so m and the
           sum are finite, e in [0, 1] and x - m finite or -inf */
        mxp_narrow_store16_k_avx2(y + i, v[0], v[1], 1);
    }
    if (tail) {
        float tl[16];
        uint16_t yt[16];
        if (lg)
            mxp_narrow_tail_avx2(tl, x, body, n);
        else
            for (size_t k = 0; k < 16; k++)
                tl[k] = k < tail ? e[body + k] : 0.0f;
        for (int h = 0; h < 2; h++)
            mxp_narrow_store_avx2(yt + 8 * h, lg ? _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(tl + 8 * h), vm), vls)
                                                 : _mm256_mul_ps(_mm256_loadu_ps(tl + 8 * h), vr));
        memcpy(y + body, yt, tail * sizeof yt[0]);
    }
}

static inline void mxp_softmax_bf16_avx2(uint16_t *const *y, const mxp_narrow_src *x, size_t rows, size_t n, float *e,
                                         int lg)
{
    mxp_narrow_softmax_rows(y, x, rows, n, e, lg, mxp_narrow_max_avx2, mxp_narrow_exps_avx2, mxp_narrow_smout_avx2);
}

/* Eight elements of a norm row (no mask) from i as float32. */
MXP_INLINE __m256 mxp_narrow_load8_avx2(const void *x, int f32, size_t i)
{
    if (f32)
        return _mm256_loadu_ps((const float *)x + i);
    const __m128i h = _mm_loadu_si128((const __m128i *)(const void *)((const uint16_t *)x + i));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/* The fast sums of mxp_narrow_fsums_portable: the 32 float32 lanes four
 * registers, the float64 ones in memory (a block's sums stored or added
 * once); f32, sub (c != 0) and s1 constant in each copy
 * (MXP_NARROW_FSUMS_COPIES). */
MXP_INLINE void mxp_narrow_fsums_k_avx2(const mxp_narrow_src *x, int f32, size_t n, float c, int sub, double *s1,
                                        double *s2)
{
    double sa[32], sq[32];
    const void *xp = x->x;
    const __m256 vc = _mm256_set1_ps(c);
    size_t i = 0;
    for (int first = 1; i + 32 <= n; first = 0) {
        __m256 f[4], g[4];
        for (int k = 0; k < 4; k++)
            f[k] = g[k] = _mm256_setzero_ps();
        for (int v = 0; v < MXP_NARROW_FBLOCK && i + 32 <= n; v++, i += 32) {
            if (!sub) { /* the first pass reads the row from memory (as bf16-narrow-avx512.h) */
                const char *ahead = (const char *)xp + (f32 ? 4 : 2) * i + MXP_STREAM_PREFETCH;
                _mm_prefetch(ahead, _MM_HINT_T0);
                if (f32)
                    _mm_prefetch(ahead + 64, _MM_HINT_T0);
            }
            for (int k = 0; k < 4; k++) {
                __m256 d = mxp_narrow_load8_avx2(xp, f32, i + 8 * (size_t)k);
                if (sub)
                    d = _mm256_sub_ps(d, vc);
                if (s1)
                    f[k] = _mm256_add_ps(f[k], d);
                g[k] = _mm256_fmadd_ps(d, d, g[k]);
            }
        }
        for (int k = 0; k < 4; k++)
            for (int h = 0; h < 2; h++) {
                double *pa = sa + 8 * k + 4 * h, *pq = sq + 8 * k + 4 * h;
                const __m256d fh = _mm256_cvtps_pd(h ? _mm256_extractf128_ps(f[k], 1) : _mm256_castps256_ps128(f[k]));
                const __m256d gh = _mm256_cvtps_pd(h ? _mm256_extractf128_ps(g[k], 1) : _mm256_castps256_ps128(g[k]));
                if (s1)
                    _mm256_storeu_pd(pa, first ? fh : _mm256_add_pd(_mm256_loadu_pd(pa), fh));
                _mm256_storeu_pd(pq, first ? gh : _mm256_add_pd(_mm256_loadu_pd(pq), gh));
            }
    }
    if (i == 0) {
        memset(sa, 0, sizeof sa);
        memset(sq, 0, sizeof sq);
    }
    double ta, tq;
    mxp_narrow_ftails(x, i, n, c, &ta, &tq);
    if (s1)
        *s1 = mxp_sum32_fold(sa, ta);
    *s2 = mxp_sum32_fold(sq, tq);
}

static inline void mxp_narrow_fsums_avx2(const mxp_narrow_src *x, size_t n, float c, double *s1, double *s2)
{
    MXP_NARROW_FSUMS_COPIES(mxp_narrow_fsums_k_avx2, x, n, c, s1, s2);
}

static inline double mxp_narrow_sum_avx2(const mxp_narrow_src *x, size_t n, float c, int sq)
{
    const __m256 vc = _mm256_set1_ps(c);
    __m256d a[4] = { _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd() };
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int h = 0; h < 2; h++) {
            const __m256 v = mxp_narrow_load_avx2(x, i + 8 * h);
            mxp_narrow_add_avx2(a + 2 * h, sq ? _mm256_sub_ps(v, vc) : v, sq);
        }
    double s[16];
    mxp_narrow_lanes_avx2(s, a);
    return mxp_narrow_fold(s, x, i, n, c, sq);
}

/* A norm row's outputs, sixteen a step: h = (x - c) * r (x * r: l2), then
 * the weight and bias; f32, l2 and centre constant in each copy
 * (MXP_NARROW_ROW_COPIES). */
MXP_INLINE void mxp_narrow_norm_row_avx2(uint16_t *y, const mxp_narrow_src *x, int f32, size_t n, const float *w,
                                         const float *b, float c, float r, int l2, int centre)
{
    const void *xp = x->x;
    const __m256 vc = _mm256_set1_ps(c), vr = _mm256_set1_ps(r);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 v[2];
        for (int h = 0; h < 2; h++) {
            const size_t j = i + 8 * (size_t)h;
            const __m256 xv = mxp_narrow_load8_avx2(xp, f32, j);
            if (l2) {
                v[h] = _mm256_mul_ps(xv, vr);
                continue;
            }
            v[h] = _mm256_mul_ps(centre ? _mm256_sub_ps(xv, vc) : xv, vr); /* x - 0 is x */
            if (w && b)
                v[h] = _mm256_fmadd_ps(v[h], _mm256_loadu_ps(w + j), _mm256_loadu_ps(b + j));
            else if (w)
                v[h] = _mm256_mul_ps(v[h], _mm256_loadu_ps(w + j));
            else if (b)
                v[h] = _mm256_add_ps(v[h], _mm256_loadu_ps(b + j));
        }
        mxp_narrow_store16_avx2(y + i, v[0], v[1]);
    }
    if (l2)
        mxp_narrow_l2_out(y, x, i, n, r);
    else
        mxp_narrow_norm_out(y, x, i, n, w, b, c, r);
}

static inline void mxp_norm_bf16_avx2(uint16_t *const *y, const mxp_narrow_src *x, size_t rows, size_t n,
                                      const float *w, const float *b, double eps, int mode)
{
    float c[MXP_NARROW_ROWS], r[MXP_NARROW_ROWS];
    mxp_narrow_norm_rows_scalars(x, rows, n, eps, mode, mxp_narrow_fsums_avx2, mxp_narrow_sum_avx2, c, r);
    for (size_t k = 0; k < rows; k++) {
        const mxp_narrow_src xk = x[k]; /* a copy the stores to y cannot touch */
        MXP_NARROW_ROW_COPIES(mxp_narrow_norm_row_avx2, y[k], &xk, n, w, b, c[k], r[k], mode);
    }
}

#endif

/* The AVX-512 bodies of bfloat16 rows in float32 arithmetic (bf16-narrow.h):
 * softmax, log_softmax (bf16-softmax/avx512f.c), layer norm, RMS norm and
 * L2 normalization (bf16-norm/avx512f.c), sixteen lanes a step: the
 * float64 sums as two registers (element i into lane i mod 16), exp by
 * FMAs and vscalefps, nearest even into bfloat16 by integer arithmetic.
 * The last n mod 16 elements in the portable code. */
#ifndef MXP_KERNELS_BF16_NARROW_AVX512_H
#define MXP_KERNELS_BF16_NARROW_AVX512_H

#include <immintrin.h>

#include "kernels/bf16-narrow.h"
#include "kernels/bf16-round-avx512.h"
#include "kernels/nexpf-avx512.h"

/* Sixteen elements of the row from i as float32 (mxp_narrow_x). */
static inline __m512 mxp_narrow_load_avx512(const mxp_narrow_src *x, size_t i)
{
    __m512 v;
    if (x->f32)
        v = _mm512_loadu_ps((const float *)x->x + i);
    else
        v = _mm512_castsi512_ps(_mm512_slli_epi32(
            _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)((const uint16_t *)x->x + i))),
            16));
    return x->mask ? _mm512_add_ps(v, _mm512_loadu_ps(x->mask + i)) : v;
}

/* mxp_f32_to_bf16_rne on sixteen lanes, stored at y: by vcvtneps2bf16
 * where the file is built at the avx512bf16 level (the same bits; the
 * integer rounding is some ten operations a vector, a third of softmax's
 * output pass), else by integer arithmetic. */
static inline void mxp_narrow_store_avx512(uint16_t *y, __m512 v)
{
#ifdef __AVX512BF16__
    _mm256_storeu_si256((__m256i *)(void *)y, mxp_f32_to_bf16_rne_hw_avx512(v));
#else
    _mm256_storeu_si256((__m256i *)(void *)y, mxp_f32_to_bf16_rne_avx512(v));
#endif
}

/* The two float64 registers of sixteen sums into s[16]. */
static inline void mxp_narrow_lanes_avx512(double s[16], __m512d lo, __m512d hi)
{
    _mm512_storeu_pd(s, lo);
    _mm512_storeu_pd(s + 8, hi);
}

static inline void mxp_narrow_add_avx512(__m512d *lo, __m512d *hi, __m512 v, int sq)
{
    const __m512d a = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
    const __m512d b = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    if (sq) { /* exact squares: one rounding, as the add of the product */
        *lo = _mm512_fmadd_pd(a, a, *lo);
        *hi = _mm512_fmadd_pd(b, b, *hi);
    } else {
        *lo = _mm512_add_pd(*lo, a);
        *hi = _mm512_add_pd(*hi, b);
    }
}

/* The row's last n - i < 16 elements (x + mask as float32) in a vector of
 * their own by masked loads, the other lanes -inf: the tails below in
 * registers, the same bits as the portable code's element by element. */
static inline __m512 mxp_narrow_tail_avx512(const mxp_narrow_src *x, size_t i, size_t n)
{
    const __mmask16 k = (__mmask16)((1u << (n - i)) - 1);
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __m512 v;
    if (x->f32)
        v = _mm512_mask_loadu_ps(ninf, k, (const float *)x->x + i);
    else
        v = _mm512_mask_mov_ps(ninf, k, _mm512_castsi512_ps(_mm512_slli_epi32(
                                            _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, (const uint16_t *)x->x + i)), 16)));
    return x->mask ? _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, x->mask + i)) : v; /* -inf + 0 beyond */
}

static inline void mxp_softmax_bf16_avx512(uint16_t *y, const mxp_narrow_src *x, size_t n, float *e, int lg)
{
    const size_t body = n & ~(size_t)15, tail = n - body;
    const __m512 vt = tail ? mxp_narrow_tail_avx512(x, body, n) : _mm512_set1_ps(-INFINITY);
    __m512 mv = vt, mv1 = vt; /* two chains of vmaxps (softmax-avx512.h) */
    __mmask16 nanv = _mm512_cmp_ps_mask(vt, vt, _CMP_UNORD_Q);
    size_t j = 0;
    for (; j + 32 <= body; j += 32) {
        const __m512 v = mxp_narrow_load_avx512(x, j), v1 = mxp_narrow_load_avx512(x, j + 16);
        nanv |= _mm512_cmp_ps_mask(v, v1, _CMP_UNORD_Q);
        mv = _mm512_max_ps(v, mv);
        mv1 = _mm512_max_ps(v1, mv1);
    }
    if (j < body) {
        const __m512 v = mxp_narrow_load_avx512(x, j);
        nanv |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        mv = _mm512_max_ps(v, mv);
    }
    const float m = _mm512_reduce_max_ps(_mm512_max_ps(mv, mv1));
    if (mxp_narrow_nan_row(y, n, m, nanv != 0))
        return;
    const __m512 vm = _mm512_set1_ps(m);
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
    for (size_t i = 0; i < body;) {
        __m512 f = _mm512_setzero_ps();
        for (int v = 0; v < MXP_NARROW_BLOCK && i < body; v++, i += 16) {
            const __m512 ev = mxp_nexp_ps_avx512(_mm512_sub_ps(mxp_narrow_load_avx512(x, i), vm));
            if (!lg)
                _mm512_storeu_ps(e + i, ev);
            f = _mm512_add_ps(f, ev);
        }
        mxp_narrow_add_avx512(&lo, &hi, f, 0);
    }
    double s[16], t = 0;
    mxp_narrow_lanes_avx512(s, lo, hi);
    float et[16];
    _mm512_storeu_ps(et, mxp_nexp_ps_avx512(_mm512_sub_ps(vt, vm)));
    for (size_t k = 0; k < tail; k++) /* in order, as the portable code's tail */
        t += e[body + k] = et[k];
    float r, ls;
    mxp_narrow_softmax_scalars(mxp_sum16_fold(s, t), lg, &r, &ls);
    const __m512 vr = _mm512_set1_ps(r), vls = _mm512_set1_ps(ls);
    for (size_t i = 0; i < body; i += 16)
        mxp_narrow_store_avx512(y + i, lg ? _mm512_sub_ps(_mm512_sub_ps(mxp_narrow_load_avx512(x, i), vm), vls)
                                          : _mm512_mul_ps(_mm512_loadu_ps(e + i), vr));
    if (tail) {
        uint16_t yt[16];
        mxp_narrow_store_avx512(yt, lg ? _mm512_sub_ps(_mm512_sub_ps(vt, vm), vls)
                                       : _mm512_mul_ps(_mm512_loadu_ps(et), vr));
        memcpy(y + body, yt, tail * sizeof yt[0]);
    }
}

/* sum(x) and sum(double(x)^2) in one pass, each in mxp_narrow_sum_portable's order. */
static inline void mxp_narrow_sums_avx512(const mxp_narrow_src *x, size_t n, double *s1, double *s2)
{
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd(), lo2 = lo, hi2 = lo;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = mxp_narrow_load_avx512(x, i);
        const __m512d a = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
        const __m512d b = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
        lo = _mm512_add_pd(lo, a);
        hi = _mm512_add_pd(hi, b);
        lo2 = _mm512_fmadd_pd(a, a, lo2);
        hi2 = _mm512_fmadd_pd(b, b, hi2);
    }
    double s[16];
    mxp_narrow_lanes_avx512(s, lo, hi);
    *s1 = mxp_narrow_fold(s, x, i, n, 0.0f, 0);
    mxp_narrow_lanes_avx512(s, lo2, hi2);
    *s2 = mxp_narrow_fold(s, x, i, n, 0.0f, 1);
}

static inline double mxp_narrow_sum_avx512(const mxp_narrow_src *x, size_t n, float c, int sq)
{
    const __m512 vc = _mm512_set1_ps(c);
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = mxp_narrow_load_avx512(x, i);
        mxp_narrow_add_avx512(&lo, &hi, sq ? _mm512_sub_ps(v, vc) : v, sq);
    }
    double s[16];
    mxp_narrow_lanes_avx512(s, lo, hi);
    return mxp_narrow_fold(s, x, i, n, c, sq);
}

static inline void mxp_norm_bf16_avx512(uint16_t *y, const mxp_narrow_src *x, size_t n, const float *w, const float *b,
                                        double eps, int mode)
{
    size_t i = 0;
    if (mode == 2) {
        const float r = mxp_narrow_l2_scalar(mxp_narrow_sum_avx512(x, n, 0.0f, 1), eps);
        const __m512 vr = _mm512_set1_ps(r);
        for (; i + 16 <= n; i += 16)
            mxp_narrow_store_avx512(y + i, _mm512_mul_ps(mxp_narrow_load_avx512(x, i), vr));
        mxp_narrow_l2_out(y, x, i, n, r);
        return;
    }
    double s1 = 0, s2;
    if (mode == 1)
        s2 = mxp_narrow_sum_avx512(x, n, 0.0f, 1);
    else
        mxp_narrow_sums_avx512(x, n, &s1, &s2);
    const float c = (float)(s1 / (double)n);
    double var = mode == 1 ? s2 / (double)n : mxp_narrow_var(s1, s2, n);
    if (var != var)
        var = mxp_narrow_sum_avx512(x, n, c, 1) / (double)n;
    const float r = mxp_narrow_rstd(var, eps);
    const __m512 vc = _mm512_set1_ps(c), vr = _mm512_set1_ps(r);
    for (; i + 16 <= n; i += 16) {
        const __m512 h = _mm512_mul_ps(_mm512_sub_ps(mxp_narrow_load_avx512(x, i), vc), vr);
        __m512 v = h;
        if (w && b)
            v = _mm512_fmadd_ps(h, _mm512_loadu_ps(w + i), _mm512_loadu_ps(b + i));
        else if (w)
            v = _mm512_mul_ps(h, _mm512_loadu_ps(w + i));
        else if (b)
            v = _mm512_add_ps(h, _mm512_loadu_ps(b + i));
        mxp_narrow_store_avx512(y + i, v);
    }
    mxp_narrow_norm_out(y, x, i, n, w, b, c, r);
}

#endif

/* The AVX2 pooling kernel's (avx2.c) accumulators and loads: eight
 * output columns or channels a block, a maximum in float32 lanes and sums
 * in float64 ones, the columns of a block inside x, stride 2's taps split
 * within 128-bit lanes.  Included by avx2.c only. */
#ifndef MXP_KERNELS_F32_POOL_ACC_AVX2_H
#define MXP_KERNELS_F32_POOL_ACC_AVX2_H

#include <immintrin.h>
#include <math.h>

#include "kernels/pool-kernels.h"

typedef struct acc8 {
    __m256 m;      /* max */
    __m256d s[2];  /* sums: lanes 0-3, 4-7 */
} acc8;

static inline void acc_init(int kind, acc8 *a)
{
    a->m = _mm256_set1_ps(kind == MXP_POOL_MAX ? -INFINITY : 0.0f); /* both set: no field left undefined */
    a->s[0] = a->s[1] = _mm256_setzero_pd();
}

static inline void acc_add(int kind, acc8 *a, __m256 x)
{
    if (kind == MXP_POOL_MAX) {
        a->m = _mm256_blendv_ps(_mm256_max_ps(x, a->m), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
        return;
    }
    a->s[0] = _mm256_add_pd(a->s[0], _mm256_cvtps_pd(_mm256_castps256_ps128(x)));
    a->s[1] = _mm256_add_pd(a->s[1], _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)));
}

/* s / d, lane by lane (d >= 1): where every d is a power of two, s times
 * its reciprocal 2^-e (exact, so the quotient's bits), else the division. */
static inline __m256d divide(__m256d s, __m256d d)
{
    const __m256i bits = _mm256_castpd_si256(d);
    if (!_mm256_testz_si256(bits, _mm256_set1_epi64x(0x000fffffffffffffll)))
        return _mm256_div_pd(s, d);
    return _mm256_mul_pd(s, _mm256_castsi256_pd(_mm256_sub_epi64(_mm256_set1_epi64x(0x7fe0000000000000ll), bits)));
}

/* Stores a at dst (eight output columns or channels from j): sums divided
 * first by the divisors at d (one each), or by one divisor d1.  The
 * one-channel path (fused) also makes NaN maxima quiet, if p->quiet asks,
 * and stores sums that ask for float32 as float32 at o32 (vcvtpd2ps: the
 * conversion's nearest even), as the kernel's last steps do for the
 * other paths. */
static inline void acc_store(const mxp_f32_pool_params *p, void *dst, const acc8 *a, const double *d, double d1,
                             int fused, float *o32)
{
    if (p->kind == MXP_POOL_MAX) {
        __m256 v = a->m;
        if (fused && p->quiet)
            v = _mm256_or_ps(v, _mm256_and_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q),
                                              _mm256_castsi256_ps(_mm256_set1_epi32(0x00400000))));
        _mm256_storeu_ps(dst, v);
        return;
    }
    __m256d s0 = a->s[0], s1 = a->s[1];
    if (p->div) {
        s0 = divide(s0, d ? _mm256_loadu_pd(d) : _mm256_set1_pd(d1));
        s1 = divide(s1, d ? _mm256_loadu_pd(d + 4) : _mm256_set1_pd(d1));
    }
    if (fused && p->out32) {
        _mm_storeu_ps(o32, _mm256_cvtpd_ps(s0));
        _mm_storeu_ps(o32 + 4, _mm256_cvtpd_ps(s1));
        return;
    }
    _mm256_storeu_pd(dst, s0);
    _mm256_storeu_pd((double *)dst + 4, s1);
}

/* x > a || x != x ? x : a, lane by lane (the portable fold). */
static inline __m256 fold_max(__m256 a, __m256 x)
{
    return _mm256_blendv_ps(_mm256_max_ps(x, a), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

/* The lanes of columns c .. c + 7 that lie in x (w columns), all-ones. */
static inline __m256i cols8(ptrdiff_t c, ptrdiff_t w)
{
    ptrdiff_t a = -c, b = w - c; /* lanes [a, b) lie in x */
    a = a < 0 ? 0 : a > 8 ? 8 : a;
    b = b < 0 ? 0 : b > 8 ? 8 : b;
    const __m256i i = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)a), i),
                               _mm256_cmpgt_epi32(_mm256_set1_epi32((int)b), i));
}

/* Columns c .. c + 7 of row x; at the edges (edge set) those outside x
 * (m: cols8) are the fill, unread (masked loads do not fault, and give
 * +0 there: fm, the fill's bits outside m, or-ed in; no vblendvps, three
 * operations on Intel's recent cores). */
static inline __m256 load8(const float *x, ptrdiff_t c, int edge, __m256i m, __m256 fm)
{
    if (!edge)
        return _mm256_loadu_ps(x + c);
    return _mm256_or_ps(_mm256_maskload_ps(x + c, m), fm);
}

/* The even (odd) columns of v0, v1 within 128-bit lanes: columns 0 2 8 10
 * | 4 6 12 14 (odd: one more), output columns 0 1 4 5 | 2 3 6 7 -- the
 * order every tap of a block shares, put right once at its store
 * (unshuffle): one vpermpd a block, not one a tap. */
static inline __m256 evens(__m256 v0, __m256 v1, int odd)
{
    return odd ? _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(3, 1, 3, 1))
               : _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(2, 0, 2, 0));
}

/* A block's accumulators from evens' order back to the columns' */
static inline void unshuffle(acc8 *a)
{
    a->m = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(a->m), _MM_SHUFFLE(3, 1, 2, 0)));
    const __m256d s0 = a->s[0], s1 = a->s[1]; /* outputs 0 1 4 5, 2 3 6 7 */
    a->s[0] = _mm256_permute2f128_pd(s0, s1, 0x20);
    a->s[1] = _mm256_permute2f128_pd(s0, s1, 0x31);
}

#endif

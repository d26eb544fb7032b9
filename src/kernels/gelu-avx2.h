/* gelu(x) = x/2 erfc(-x/sqrt 2) of float32 x in float64, AVX2, without
 * erfc: the fast path's approximation y (src/kernels/f32-gelu/avx2.c) --
 * gelu-avx512f.h's method (see there) with a smaller exp table that one
 * AVX2 permute reaches: 2^(j/4), j < 4, and Taylor to degree 8 for |r| <=
 * ln2/8 (truncation < 2^-50).  Only for files built with the AVX2 flags. */
#ifndef MXP_KERNELS_GELU_AVX2_H
#define MXP_KERNELS_GELU_AVX2_H

#include <immintrin.h>

#include "kernels/gelu-tables.h"
#include "kernels/nexpf-avx2.h"

#define MXP_GELU_FAR 14.5

/* e^(-w/2) 2^-k and k 2^52 for 0 <= w <= 210.25: n = round(-w/2 4/ln2) =
 * 4 k + j; r3 = w + 2 n ln2/4 = -2 r, |r| <= ln2/8; e^(-w/2) = 2^k 2^(j/4)
 * e^r, e^r = sum (-r3/2)^i / i! to degree 8. */
static inline __m256d exp_half_neg(__m256d w, __m256i *k52)
{
    const __m256d magic = _mm256_set1_pd(0x1.8p52);
    const __m256d tn = _mm256_fmadd_pd(w, _mm256_set1_pd(-0x1.71547652b82fep+1), magic);
    const __m256d n = _mm256_sub_pd(tn, magic);
    __m256d r3 = _mm256_fmadd_pd(n, _mm256_set1_pd(0x1.62e42fefa39efp-2), w); /* ln2/2, high and low */
    r3 = _mm256_fmadd_pd(n, _mm256_set1_pd(0x1.abc9e3b39803fp-57), r3);
    static const double c[9] = { 1.0, -0.5, 1.0 / 8, -1.0 / 48, 1.0 / 384, -1.0 / 3840, 1.0 / 46080,
                                 -1.0 / 645120, 1.0 / 10321920 }; /* (-1/2)^i / i! */
    __m256d p = _mm256_set1_pd(c[8]);
    for (int i = 7; i >= 0; i--)
        p = _mm256_fmadd_pd(p, r3, _mm256_set1_pd(c[i]));
    /* 2^(j/4) from a 4-double table: float32 halves 2j and 2j + 1 */
    const __m256i tb = _mm256_castpd_si256(tn);
    const __m256i j2 = _mm256_slli_epi64(_mm256_and_si256(tb, _mm256_set1_epi64x(3)), 1);
    const __m256i idx = _mm256_or_si256(j2, _mm256_slli_epi64(_mm256_add_epi64(j2, _mm256_set1_epi64x(1)), 32));
    const __m256 tab = _mm256_castpd_ps(_mm256_setr_pd(1.0, 0x1.306fe0a31b715p+0, 0x1.6a09e667f3bcdp+0,
                                                       0x1.ae89f995ad3adp+0));
    const __m256d t = _mm256_castps_pd(_mm256_permutevar8x32_ps(tab, idx));
    *k52 = _mm256_slli_epi64(_mm256_andnot_si256(_mm256_set1_epi64x(3), tb), 50); /* (n & ~3) << 50 */
    return _mm256_mul_pd(t, p);
}

static inline __m256d poly(const double *c, int degree, __m256d a)
{
    __m256d p = _mm256_set1_pd(c[degree]);
    for (int j = degree - 1; j >= 0; j--)
        p = _mm256_fmadd_pd(p, a, _mm256_set1_pd(c[j]));
    return p;
}

static inline __m256d mxp_gelu_approx(__m256d x)
{
    const __m256d a = _mm256_min_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), x), _mm256_set1_pd(MXP_GELU_FAR));
    const __m256d near = _mm256_cmp_pd(a, _mm256_set1_pd(MXP_GELU_FAR), _CMP_LT_OQ);
    __m256i k52;
    const __m256d e = exp_half_neg(_mm256_mul_pd(a, a), &k52);
    const __m256d r = _mm256_div_pd(poly(gelu_p, MXP_GELU_NP, a), poly(gelu_q, MXP_GELU_NQ, a));
    const __m256i qb = _mm256_add_epi64(_mm256_castpd_si256(_mm256_mul_pd(e, r)), k52);
    const __m256d q = _mm256_and_pd(near, _mm256_castsi256_pd(qb));
    const __m256d neg = _mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_LT_OQ);
    return _mm256_mul_pd(x, _mm256_blendv_pd(_mm256_sub_pd(_mm256_set1_pd(1.0), q), q, neg));
}

/* ---- the float32 approximation, for bfloat16 outputs ---- */

/* gelu-avx512f.h's mxp_gelu_f32_fast on eight lanes, with a = min(|x|, 13)
 * (e^(-a^2/2) stays in nexpf's normal range, no lane by lane branch; from
 * x = 13 on y is x in float32, and for x <= -13 the exact |y| is below
 * 2^-100, a lane the check sends to the SLEEF path): within 6.65 float32
 * ulps of the exact value where |y| >= 2^-100 and x > -13. */
enum { MXP_GELU_F32_MARGIN = 12 };

static inline __m256 gelu_poly32(const float *c, int degree, __m256 a)
{
    __m256 p = _mm256_set1_ps(c[degree]);
    for (int j = degree - 1; j >= 0; j--)
        p = _mm256_fmadd_ps(p, a, _mm256_set1_ps(c[j]));
    return p;
}

static inline __m256 mxp_gelu_f32_fast(__m256 x)
{
    const __m256 a = _mm256_min_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(13.0f));
    const __m256 w = _mm256_mul_ps(a, a), l = _mm256_fmsub_ps(a, a, w);
    const __m256 e = mxp_nexp_ps_avx2(_mm256_mul_ps(w, _mm256_set1_ps(-0.5f)));
    const __m256 r = _mm256_div_ps(gelu_poly32(gelu_p32, MXP_GELU_NP32, a), gelu_poly32(gelu_q32, MXP_GELU_NQ32, a));
    const __m256 er = _mm256_mul_ps(e, r);
    const __m256 q = _mm256_fmadd_ps(er, _mm256_mul_ps(l, _mm256_set1_ps(-0.5f)), er); /* Phi(-a) */
    const __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
    return _mm256_mul_ps(x, _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), q), q, neg));
}

#endif

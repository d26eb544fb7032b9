/* nexpf.h's exp on eight float32 lanes, AVX2: 2^k added to the exponent
 * where the result is normal (t >= -86; below, down to -104, ldexpf lane
 * by lane: a rare branch). */
#ifndef MXP_KERNELS_NEXPF_AVX2_H
#define MXP_KERNELS_NEXPF_AVX2_H

#include <immintrin.h>

#include "kernels/nexpf.h"

/* The lanes' exp where every t >= MXP_NEXP_NORMAL (t >= -86: the result
 * normal), no test: the callers know it of a whole row (its minimum);
 * short5: mxp_sexpf's. */
static inline __m256 mxp_nexp_ps_normal_k_avx2(__m256 t, int short5)
{
    const __m256 magic = _mm256_set1_ps(MXP_NEXP_MAGIC);
    const __m256 s = _mm256_fmadd_ps(t, _mm256_set1_ps(MXP_NEXP_LOG2E), magic);
    const __m256 kf = _mm256_sub_ps(s, magic);
    __m256 r = _mm256_fnmadd_ps(kf, _mm256_set1_ps(MXP_NEXP_LN2_HI), t);
    r = _mm256_fnmadd_ps(kf, _mm256_set1_ps(MXP_NEXP_LN2_LO), r);
    const float *c = MXP_NEXP_COEFS(short5);
    __m256 q = _mm256_set1_ps(c[0]);
    for (int i = 1; i < MXP_NEXP_NCOEFS(short5); i++)
        q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(c[i]));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.0f));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.0f));
    /* (2^22 + k) << 23 = k << 23 modulo 2^32: 2^k exactly, the result normal */
    return _mm256_castsi256_ps(
        _mm256_add_epi32(_mm256_castps_si256(q), _mm256_slli_epi32(_mm256_castps_si256(s), 23)));
}

static inline __m256 mxp_nexp_ps_k_avx2(__m256 t, int short5)
{
    __m256 y = mxp_nexp_ps_normal_k_avx2(t, short5);
    const __m256 ge = _mm256_cmp_ps(t, _mm256_set1_ps(MXP_NEXP_ZERO), _CMP_GE_OQ);
    y = _mm256_and_ps(y, ge); /* below -104, -inf too: +0 */
    const __m256 mid = _mm256_and_ps(ge, _mm256_cmp_ps(t, _mm256_set1_ps(MXP_NEXP_NORMAL), _CMP_LT_OQ));
    if (__builtin_expect(_mm256_movemask_ps(mid) != 0, 0)) { /* [-104, -86): subnormal results possible */
        float tl[8], yl[8];
        _mm256_storeu_ps(tl, t);
        _mm256_storeu_ps(yl, y);
        for (int i = 0; i < 8; i++)
            if (tl[i] >= MXP_NEXP_ZERO && tl[i] < MXP_NEXP_NORMAL)
                yl[i] = mxp_nexpf_k(tl[i], short5);
        y = _mm256_loadu_ps(yl);
    }
    return y;
}

static inline __m256 mxp_nexp_ps_avx2(__m256 t)
{
    return mxp_nexp_ps_k_avx2(t, 0);
}

#endif

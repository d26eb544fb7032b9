/* nexpf.h's exp on sixteen float32 lanes, AVX-512. */
#ifndef MXP_KERNELS_NEXPF_AVX512_H
#define MXP_KERNELS_NEXPF_AVX512_H

#include <immintrin.h>

#include "kernels/nexpf.h"

/* short5: mxp_sexpf's */
static inline __m512 mxp_nexp_ps_k_avx512(__m512 t, int short5)
{
    const __m512 magic = _mm512_set1_ps(MXP_NEXP_MAGIC);
    const __m512 kf = _mm512_sub_ps(_mm512_fmadd_ps(t, _mm512_set1_ps(MXP_NEXP_LOG2E), magic), magic);
    __m512 r = _mm512_fnmadd_ps(kf, _mm512_set1_ps(MXP_NEXP_LN2_HI), t);
    r = _mm512_fnmadd_ps(kf, _mm512_set1_ps(MXP_NEXP_LN2_LO), r);
    const float *c = MXP_NEXP_COEFS(short5);
    __m512 q = _mm512_set1_ps(c[0]);
    for (int i = 1; i < MXP_NEXP_NCOEFS(short5); i++)
        q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(c[i]));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f));
    const __mmask16 keep = _mm512_cmp_ps_mask(t, _mm512_set1_ps(MXP_NEXP_ZERO), _CMP_GE_OQ);
    return _mm512_maskz_scalef_ps(keep, q, kf);
}

static inline __m512 mxp_nexp_ps_avx512(__m512 t)
{
    return mxp_nexp_ps_k_avx512(t, 0);
}

#endif

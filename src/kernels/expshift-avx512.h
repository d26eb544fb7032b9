/* exp(t), t <= 0, on eight float64 lanes at AVX-512 (the method and its
 * accuracy: expshift.h): the table in two registers picked by vpermt2pd,
 * 2^floor(k/16) by vscalefpd. */
#ifndef MXP_KERNELS_EXPSHIFT_AVX512_H
#define MXP_KERNELS_EXPSHIFT_AVX512_H

#include <immintrin.h>

#include "kernels/expshift.h"

typedef struct mxp_expshift_avx512 {
    __m512d t0, t1; /* T[0..7], T[8..15] */
} mxp_expshift_avx512;

static inline mxp_expshift_avx512 mxp_expshift_avx512_init(void)
{
    static const double t[16] = { MXP_EXPSHIFT_TABLE };
    return (mxp_expshift_avx512){ _mm512_loadu_pd(t), _mm512_loadu_pd(t + 8) };
}

/* T[j] (1 + p(r)) and s (k in its low bits), before the scaling. */
static inline __m512d mxp_expshift_v_avx512(const mxp_expshift_avx512 *c, __m512d t, __m512d *sp)
{
    const __m512d magic = _mm512_set1_pd(MXP_EXPSHIFT_MAGIC);
    const __m512d s = _mm512_fmadd_pd(t, _mm512_set1_pd(MXP_EXPSHIFT_16_LN2), magic);
    const __m512d kd = _mm512_sub_pd(s, magic);
    __m512d r = _mm512_fnmadd_pd(kd, _mm512_set1_pd(MXP_EXPSHIFT_L_HI), t);
    r = _mm512_fnmadd_pd(kd, _mm512_set1_pd(MXP_EXPSHIFT_L_LO), r);
    __m512d q = _mm512_fmadd_pd(_mm512_set1_pd(MXP_EXPSHIFT_C7), r, _mm512_set1_pd(MXP_EXPSHIFT_C6));
    q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(MXP_EXPSHIFT_C5));
    q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(MXP_EXPSHIFT_C4));
    q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(MXP_EXPSHIFT_C3));
    q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(MXP_EXPSHIFT_C2));
    q = _mm512_fmadd_pd(q, r, _mm512_set1_pd(1.0));
    const __m512d tj = _mm512_permutex2var_pd(c->t0, _mm512_castpd_si512(s), c->t1); /* k mod 16 */
    *sp = s;
    return _mm512_fmadd_pd(_mm512_mul_pd(tj, r), q, tj);
}

static inline __m512d mxp_expshift_pd_avx512(const mxp_expshift_avx512 *c, __m512d t)
{
    __m512d s;
    const __m512d v = mxp_expshift_v_avx512(c, t, &s);
    const __m512d kd = _mm512_sub_pd(s, _mm512_set1_pd(MXP_EXPSHIFT_MAGIC));
    const __m512d a = _mm512_roundscale_pd(_mm512_mul_pd(kd, _mm512_set1_pd(0.0625)), _MM_FROUND_TO_NEG_INF);
    const __mmask8 keep = _mm512_cmp_pd_mask(t, _mm512_set1_pd(MXP_EXPSHIFT_ZERO), _CMP_GE_OQ);
    return _mm512_maskz_scalef_pd(keep, v, a);
}

/* The lanes' exp where every t >= MXP_EXPSHIFT_NORMAL (-708: the result
 * normal), no test: 2^floor(k/16) added to the exponent as at AVX2 (the
 * same bits as vscalefpd there), for callers that know it of a whole row
 * (its minimum). */
static inline __m512d mxp_expshift_pd_normal_avx512(const mxp_expshift_avx512 *c, __m512d t)
{
    __m512d s;
    const __m512d v = mxp_expshift_v_avx512(c, t, &s);
    /* (2^51 + k - j) << 48 = floor(k/16) << 52, modulo 2^64 */
    const __m512i sc = _mm512_slli_epi64(_mm512_andnot_si512(_mm512_set1_epi64(15), _mm512_castpd_si512(s)), 48);
    return _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(v), sc));
}

#endif

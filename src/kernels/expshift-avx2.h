/* exp(t), t <= 0, on four float64 lanes at AVX2 (the method and its
 * accuracy: expshift.h): the table picked by a gather, 2^floor(k/16)
 * added to the exponent; lanes in [-746, -708) (rare) by libm's exp,
 * below +0. */
#ifndef MXP_KERNELS_EXPSHIFT_AVX2_H
#define MXP_KERNELS_EXPSHIFT_AVX2_H

#include <immintrin.h>
#include <math.h>

#include "kernels/expshift.h"

static const double mxp_expshift_table_avx2[16] = { MXP_EXPSHIFT_TABLE };

/* The lanes' exp where every t >= MXP_EXPSHIFT_NORMAL (-708: the result
 * normal), no test: the callers know it of a whole row (its minimum). */
static inline __m256d mxp_expshift_pd_normal_avx2(__m256d t)
{
    const __m256d magic = _mm256_set1_pd(MXP_EXPSHIFT_MAGIC);
    const __m256d s = _mm256_fmadd_pd(t, _mm256_set1_pd(MXP_EXPSHIFT_16_LN2), magic);
    const __m256d kd = _mm256_sub_pd(s, magic);
    __m256d r = _mm256_fnmadd_pd(kd, _mm256_set1_pd(MXP_EXPSHIFT_L_HI), t);
    r = _mm256_fnmadd_pd(kd, _mm256_set1_pd(MXP_EXPSHIFT_L_LO), r);
    __m256d q = _mm256_fmadd_pd(_mm256_set1_pd(MXP_EXPSHIFT_C7), r, _mm256_set1_pd(MXP_EXPSHIFT_C6));
    q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(MXP_EXPSHIFT_C5));
    q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(MXP_EXPSHIFT_C4));
    q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(MXP_EXPSHIFT_C3));
    q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(MXP_EXPSHIFT_C2));
    q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(1.0));
    const __m256i sb = _mm256_castpd_si256(s);
    const __m256i j = _mm256_and_si256(sb, _mm256_set1_epi64x(15));
    const __m256d tj = _mm256_i64gather_pd(mxp_expshift_table_avx2, j, 8);
    const __m256d v = _mm256_fmadd_pd(_mm256_mul_pd(tj, r), q, tj);
    /* (2^51 + k - j) << 48 = floor(k/16) << 52, modulo 2^64 */
    const __m256i sc = _mm256_slli_epi64(_mm256_andnot_si256(_mm256_set1_epi64x(15), sb), 48);
    return _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(v), sc));
}

static inline __m256d mxp_expshift_pd_avx2(__m256d t)
{
    __m256d y = mxp_expshift_pd_normal_avx2(t);
    const __m256d ge = _mm256_cmp_pd(t, _mm256_set1_pd(MXP_EXPSHIFT_ZERO), _CMP_GE_OQ);
    y = _mm256_and_pd(y, ge); /* below -746, -inf too: +0 */
    const __m256d mid = _mm256_and_pd(ge, _mm256_cmp_pd(t, _mm256_set1_pd(MXP_EXPSHIFT_NORMAL), _CMP_LT_OQ));
    if (__builtin_expect(_mm256_movemask_pd(mid) != 0, 0)) { /* [-746, -708): libm's exp */
        double tl[4], yl[4];
        _mm256_storeu_pd(tl, t);
        _mm256_storeu_pd(yl, y);
        for (int i = 0; i < 4; i++)
            if (tl[i] < MXP_EXPSHIFT_NORMAL && tl[i] >= MXP_EXPSHIFT_ZERO)
                yl[i] = exp(tl[i]);
        y = _mm256_loadu_pd(yl);
    }
    return y;
}

#endif

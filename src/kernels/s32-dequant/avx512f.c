/* Dequantization of int32 GEMM sums into float32 C, AVX-512: round(acc *
 * scale) with the mode, the product rounded to odd in float64 (the
 * reference's arithmetic, mxp_convert of that product; src/gemm/int8.c),
 * eight lanes a step. */
#include <immintrin.h>
#include <stdbool.h>

#include "kernels/requant-kernels.h"
#include "mxp/convert.h"

#define MXP_INLINE static inline __attribute__((always_inline))

/* round(acc * scale (+ c) (+ bias)) into float32, c = beta * C: the product rounded to odd in
 * float64 -- hi = acc * scale and its exact error lo = fma(acc, scale,
 * -hi); when lo != 0 the truncation toward zero (hi's bits minus 1 where
 * hi was rounded away from zero: lo and hi of opposite signs) with its
 * last bit set -- the bias (has_bias) added in float64 (nearest even), one
 * rounding with the mode.  A zero product is hi itself: IEEE's sign.  (The
 * twin's and the AVX2 kernel's arithmetic; an integer product of acc and
 * the scale's 24-bit significand, rounded to odd by a conversion and
 * scaled, took 25 operations a vector where this takes 10.) */
MXP_INLINE __m256 dequant8(__m256i acc, __m512d s, int rc, bool has_beta, __m512d c, bool has_bias, __m512d b)
{
    const __m512d a = _mm512_cvtepi32_pd(acc); /* exact */
    const __m512d hi = _mm512_mul_pd(a, s);
    const __m512d lo = _mm512_fmsub_pd(a, s, hi); /* a * s - hi, exact: no underflow for |hi| >= 2^-149 */
    const __mmask8 inexact = _mm512_cmp_pd_mask(lo, _mm512_setzero_pd(), _CMP_NEQ_OQ);
    const __mmask8 away = inexact & _mm512_movepi64_mask(_mm512_castpd_si512(_mm512_xor_pd(lo, hi)));
    __m512i t = _mm512_mask_sub_epi64(_mm512_castpd_si512(hi), away, _mm512_castpd_si512(hi), _mm512_set1_epi64(1));
    t = _mm512_mask_or_epi64(t, inexact, t, _mm512_set1_epi64(1));
    __m512d x = _mm512_castsi512_pd(t);
    if (has_beta) /* beta * C, rounded before it is added */
        x = _mm512_add_round_pd(x, c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    if (has_bias)
        x = _mm512_add_round_pd(x, b, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    switch (rc) { /* the rounding needs an immediate */
    case MXP_ROUND_UP: return _mm512_cvt_roundpd_ps(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    case MXP_ROUND_DOWN: return _mm512_cvt_roundpd_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    case MXP_ROUND_TOWARD_ZERO: return _mm512_cvt_roundpd_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    default: return _mm512_cvt_roundpd_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
}

/* A's row (NULL: none): the zero point taken off eight sums (wrapping) and
 * the scales times a_scale (float32: one rounding of the exact product) */
MXP_INLINE __m256i row_sums(__m256i a, const mxp_s32_dequant_row *row, __m256i bs)
{
    if (!row || !row->b_sums)
        return a;
    return _mm256_sub_epi32(a, _mm256_mullo_epi32(_mm256_set1_epi32(row->a_zero_point), bs));
}

MXP_INLINE __m512d row_scales(__m256 s, const mxp_s32_dequant_row *row)
{
    return _mm512_cvtps_pd(row ? _mm256_mul_ps(s, _mm256_set1_ps(row->a_scale)) : s);
}

MXP_INLINE void dequant_run(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,
                            const mxp_s32_dequant_row *row, const float *bias, double beta, int mode)
{
    const __m512d zero = _mm512_setzero_pd(), vbeta = _mm512_set1_pd(beta);
    const bool has_beta = beta != 0;
    const __m256 s1 = _mm256_set1_ps(scale[0]);
    const int32_t *bsum = row ? row->b_sums : NULL;
    size_t q = 0;
    for (; q + 8 <= len; q += 8) {
        const __m512d sv = row_scales(per_col ? _mm256_loadu_ps(scale + q) : s1, row);
        const __m256i bs = bsum ? _mm256_loadu_si256((const __m256i *)(const void *)(bsum + q)) : _mm256_setzero_si256();
        const __m256i a = row_sums(_mm256_loadu_si256((const __m256i *)(const void *)(acc + q)), row, bs);
        const __m512d b = bias ? _mm512_cvtps_pd(_mm256_loadu_ps(bias + q)) : zero;
        const __m512d c = has_beta ? _mm512_mul_round_pd(vbeta, _mm512_cvtps_pd(_mm256_loadu_ps(dst + q)),
                                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
                                   : zero;
        _mm256_storeu_ps(dst + q, dequant8(a, sv, mode, has_beta, c, bias != NULL, b));
    }
    if (q < len) { /* masked-off lanes: acc 0, scale 1 (per column), bias 0, C 0 */
        const __mmask8 k = (__mmask8)((1u << (len - q)) - 1);
        const __m512d sv = row_scales(per_col ? _mm256_mask_loadu_ps(_mm256_set1_ps(1.0f), k, scale + q) : s1, row);
        const __m256i bs = bsum ? _mm256_maskz_loadu_epi32(k, bsum + q) : _mm256_setzero_si256();
        const __m256i a = row_sums(_mm256_maskz_loadu_epi32(k, acc + q), row, bs);
        const __m512d b = bias ? _mm512_cvtps_pd(_mm256_maskz_loadu_ps(k, bias + q)) : zero;
        const __m512d c = has_beta ? _mm512_mul_round_pd(vbeta, _mm512_cvtps_pd(_mm256_maskz_loadu_ps(k, dst + q)),
                                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
                                   : zero;
        _mm256_mask_storeu_ps(dst + q, k, dequant8(a, sv, mode, has_beta, c, bias != NULL, b));
    }
}

bool mxp_s32_dequant_f32__avx512f(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,
                                  const mxp_s32_dequant_row *row, int mode)
{
    if (_mm_getcsr() & 0x8040) /* FTZ or DAZ: subnormal results would flush */
        return false;
    switch (mode) {
    case MXP_ROUND_UP: dequant_run(dst, acc, len, scale, per_col, row, NULL, 0.0, MXP_ROUND_UP); break;
    case MXP_ROUND_DOWN: dequant_run(dst, acc, len, scale, per_col, row, NULL, 0.0, MXP_ROUND_DOWN); break;
    case MXP_ROUND_TOWARD_ZERO: dequant_run(dst, acc, len, scale, per_col, row, NULL, 0.0, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_NEAREST_EVEN: dequant_run(dst, acc, len, scale, per_col, row, NULL, 0.0, MXP_ROUND_NEAREST_EVEN); break;
    default: return false; /* nearest away, stochastic: not this kernel's */
    }
    return true;
}

bool mxp_s32_dequant_bias_f32__avx512f(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,
                                       const mxp_s32_dequant_row *row, const float *bias, double beta, int mode)
{
    if (_mm_getcsr() & 0x8040) /* FTZ or DAZ: subnormal results would flush */
        return false;
    switch (mode) {
    case MXP_ROUND_UP: dequant_run(dst, acc, len, scale, per_col, row, bias, beta, MXP_ROUND_UP); break;
    case MXP_ROUND_DOWN: dequant_run(dst, acc, len, scale, per_col, row, bias, beta, MXP_ROUND_DOWN); break;
    case MXP_ROUND_TOWARD_ZERO: dequant_run(dst, acc, len, scale, per_col, row, bias, beta, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_NEAREST_EVEN: dequant_run(dst, acc, len, scale, per_col, row, bias, beta, MXP_ROUND_NEAREST_EVEN); break;
    default: return false; /* nearest away, stochastic: not this kernel's */
    }
    return true;
}

/* float32 GEMM sums plus a bias into float32 or bfloat16 C, AVX-512:
 * sixteen sums widened to two float64 vectors, the bias added (vaddpd, the
 * twin's operand order), then vcvtpd2ps (float32) or the float64 ->
 * bfloat16 rounding of the conversion kernels (float32 rounded to odd,
 * then nearest even: cvt-f64-avx512.h).  The tail by masked loads and
 * stores.  See finish-kernels.h. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/cvt-f64-avx512.h"
#include "kernels/finish-kernels.h"

/* Sixteen results from src + q (lanes under mask m). */
MXP_INLINE void finish16(void *dst, int bf16, const float *src, size_t q, const double *bias, int per_col,
                         __mmask16 m)
{
    const __m512 s = _mm512_maskz_loadu_ps(m, src + q);
    __m512d t0 = _mm512_cvtps_pd(_mm512_castps512_ps256(s));
    __m512d t1 = _mm512_cvtps_pd(_mm512_extractf32x8_ps(s, 1));
    if (bias) {
        const __m512d b0 = per_col ? _mm512_maskz_loadu_pd((__mmask8)m, bias + q) : _mm512_set1_pd(bias[0]);
        const __m512d b1 = per_col ? _mm512_maskz_loadu_pd((__mmask8)(m >> 8), bias + q + 8) : b0;
        t0 = _mm512_add_round_pd(t0, b0, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        t1 = _mm512_add_round_pd(t1, b1, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    if (bf16) {
        const __m512i v = mxp_f64_to_f32_odd16_avx512(_mm512_castpd_si512(t0), _mm512_castpd_si512(t1));
        const __m256i r = _mm512_cvtepi32_epi16(
            mxp_f32_to_bf16_avx512(v, MXP_ROUND_NEAREST_EVEN, 0, _mm512_setzero_si512()));
        _mm256_mask_storeu_epi16((uint16_t *)dst + q, m, r);
    } else {
        const __m256 lo = _mm512_cvt_roundpd_ps(t0, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m256 hi = _mm512_cvt_roundpd_ps(t1, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm512_mask_storeu_ps((float *)dst + q, m, _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1));
    }
}

void mxp_f32_finish__avx512f(void *dst, int bf16, const float *src, size_t len, const double *bias, int per_col)
{
    size_t q = 0;
    for (; q + 16 <= len; q += 16)
        finish16(dst, bf16, src, q, bias, per_col, 0xffff);
    if (q < len)
        finish16(dst, bf16, src, q, bias, per_col, (__mmask16)((1u << (len - q)) - 1));
}

/* float32 C plus a float32 bias, clamped: sixteen lanes, both masks from
 * the sum (lo first, as the twin's conditional has it), the tail masked. */
MXP_INLINE void bias16(float *dst, const float *src, const float *bias, size_t q, int clamp, __m512 lo, __m512 hi,
                       __mmask16 m)
{
    __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, src + q), _mm512_maskz_loadu_ps(m, bias + q));
    if (clamp) {
        const __mmask16 below = _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), above = _mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ);
        v = _mm512_mask_mov_ps(_mm512_mask_mov_ps(v, above, hi), below, lo);
    }
    _mm512_mask_storeu_ps(dst + q, m, v);
}

void mxp_f32_finish_bias__avx512f(float *dst, const float *src, const float *bias, size_t len, int clamp, float lo, float hi)
{
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    size_t q = 0;
    for (; q + 16 <= len; q += 16)
        bias16(dst, src, bias, q, clamp, vlo, vhi, 0xffff);
    if (q < len)
        bias16(dst, src, bias, q, clamp, vlo, vhi, (__mmask16)((1u << (len - q)) - 1));
}

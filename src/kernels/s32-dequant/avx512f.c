/* Dequantization of int32 GEMM sums into float32 C, AVX-512: round(acc *
 * scale) with the mode, the product rounded to odd in float64 (the
 * reference's arithmetic, mxp_convert of that product; src/gemm/int8.c). */
#include <immintrin.h>
#include <stdbool.h>

#include "kernels/requant-kernels.h"
#include "mxp/convert.h"

#define MXP_INLINE static inline __attribute__((always_inline))

/* p (|p| < 2^55) as a double rounded to odd: exact when it fits, else the
 * truncation with its last bit set, which keeps a later rounding to float32
 * (24 bits) correct. */
MXP_INLINE __m512d to_double_odd(__m512i p)
{
    const __m512d t = _mm512_cvt_roundepi64_pd(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask8 inexact = _mm512_cmpneq_epi64_mask(_mm512_cvttpd_epi64(t), p);
    return _mm512_castsi512_pd(
        _mm512_mask_or_epi64(_mm512_castpd_si512(t), inexact, _mm512_castpd_si512(t), _mm512_set1_epi64(1)));
}

/* round(acc * scale (+ bias)) into float32: the product exact or rounded
 * to odd in float64, the bias (has_bias) added in float64 (nearest even),
 * one rounding with the mode. */
MXP_INLINE __m256 dequant8(__m512i acc, __m512i s_bits, int rc, bool has_bias, __m512d b)
{
    /* scale = (-1)^sign * m * 2^e, m < 2^24 an integer */
    const __m512i ex = _mm512_and_si512(_mm512_srli_epi64(s_bits, 23), _mm512_set1_epi64(0xff));
    const __m512i mant = _mm512_and_si512(s_bits, _mm512_set1_epi64(0x7fffff));
    const __mmask8 normal = _mm512_test_epi64_mask(ex, ex);
    const __m512i m = _mm512_mask_or_epi64(mant, normal, mant, _mm512_set1_epi64(0x800000));
    const __m512i e = _mm512_sub_epi64(_mm512_mask_mov_epi64(_mm512_set1_epi64(1), normal, ex), _mm512_set1_epi64(150));
    const __m512i sign = _mm512_slli_epi64(_mm512_srli_epi64(s_bits, 31), 63);
    const __m512i p = _mm512_mul_epi32(acc, m); /* |acc| < 2^31, m < 2^24 */
    __m512d x = _mm512_scalef_pd(to_double_odd(p), _mm512_cvtepi64_pd(e)); /* exact: a power of two */
    /* a zero product takes IEEE's sign: (acc < 0 and m = 0) xor the scale's */
    const __mmask8 neg_zero_acc = _mm512_cmplt_epi64_mask(acc, _mm512_setzero_si512()) &
                                  _mm512_cmpeq_epi64_mask(m, _mm512_setzero_si512());
    const __m512i zsign = _mm512_maskz_mov_epi64(neg_zero_acc, _mm512_set1_epi64(INT64_MIN));
    x = _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(x), _mm512_xor_si512(sign, zsign)));
    if (has_bias)
        x = _mm512_add_round_pd(x, b, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    switch (rc) { /* the rounding needs an immediate */
    case MXP_ROUND_UP: return _mm512_cvt_roundpd_ps(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    case MXP_ROUND_DOWN: return _mm512_cvt_roundpd_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    case MXP_ROUND_TOWARD_ZERO: return _mm512_cvt_roundpd_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    default: return _mm512_cvt_roundpd_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
}

MXP_INLINE void dequant_run(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,
                            const float *bias, int mode)
{
    const __m512d zero = _mm512_setzero_pd();
    __m512i sv = _mm512_set1_epi64((int64_t)(uint32_t)_mm_cvtsi128_si32(_mm_castps_si128(_mm_set_ss(scale[0]))));
    size_t q = 0;
    for (; q + 8 <= len; q += 8) {
        if (per_col)
            sv = _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(scale + q)));
        const __m512i a = _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(acc + q)));
        const __m512d b = bias ? _mm512_cvtps_pd(_mm256_loadu_ps(bias + q)) : zero;
        _mm256_storeu_ps(dst + q, dequant8(a, sv, mode, bias != NULL, b));
    }
    if (q < len) {
        const __mmask8 k = (__mmask8)((1u << (len - q)) - 1);
        if (per_col)
            sv = _mm512_cvtepu32_epi64(_mm256_maskz_loadu_epi32(k, scale + q));
        const __m512i a = _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(k, acc + q));
        const __m512d b = bias ? _mm512_cvtps_pd(_mm256_maskz_loadu_ps(k, bias + q)) : zero;
        _mm256_mask_storeu_ps(dst + q, k, dequant8(a, sv, mode, bias != NULL, b));
    }
}

bool mxp_s32_dequant_f32__avx512f(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,
                                  int mode)
{
    if (_mm_getcsr() & 0x8040) /* FTZ or DAZ: subnormal results would flush */
        return false;
    switch (mode) {
    case MXP_ROUND_UP: dequant_run(dst, acc, len, scale, per_col, NULL, MXP_ROUND_UP); break;
    case MXP_ROUND_DOWN: dequant_run(dst, acc, len, scale, per_col, NULL, MXP_ROUND_DOWN); break;
    case MXP_ROUND_TOWARD_ZERO: dequant_run(dst, acc, len, scale, per_col, NULL, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_NEAREST_EVEN: dequant_run(dst, acc, len, scale, per_col, NULL, MXP_ROUND_NEAREST_EVEN); break;
    default: return false; /* nearest away, stochastic: not this kernel's */
    }
    return true;
}

bool mxp_s32_dequant_bias_f32__avx512f(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,
                                       const float *bias, int mode)
{
    if (_mm_getcsr() & 0x8040) /* FTZ or DAZ: subnormal results would flush */
        return false;
    switch (mode) {
    case MXP_ROUND_UP: dequant_run(dst, acc, len, scale, per_col, bias, MXP_ROUND_UP); break;
    case MXP_ROUND_DOWN: dequant_run(dst, acc, len, scale, per_col, bias, MXP_ROUND_DOWN); break;
    case MXP_ROUND_TOWARD_ZERO: dequant_run(dst, acc, len, scale, per_col, bias, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_NEAREST_EVEN: dequant_run(dst, acc, len, scale, per_col, bias, MXP_ROUND_NEAREST_EVEN); break;
    default: return false; /* nearest away, stochastic: not this kernel's */
    }
    return true;
}

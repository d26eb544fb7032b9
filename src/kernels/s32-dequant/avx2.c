/* Dequantization of int32 GEMM sums into float32 C, AVX2 + FMA: the bits
 * of the AVX-512 kernels (avx512f.c) and of the reference (mxp_convert of
 * the float64 product rounded to odd, src/gemm/int8.c), rounded to nearest
 * even only (AVX2 has no per-instruction rounding mode; the others return
 * false and take the reference).  acc * scale needs up to 55 bits: the
 * float64 product hi and its exact error lo = fma(acc, scale, -hi) give the
 * product rounded to odd -- the truncation toward zero with its last bit
 * set when lo != 0 -- whose rounding to float32 is the correct one. */
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/requant-kernels.h"
#include "mxp/convert.h"

#define MXP_INLINE static inline __attribute__((always_inline))

/* c: beta * C's values in float64, added before the bias (has_beta) */
MXP_INLINE __m128 dequant4(__m128i acc, __m256d scale, bool has_beta, __m256d c, bool has_bias, __m256d bias)
{
    const __m256d a = _mm256_cvtepi32_pd(acc); /* exact */
    const __m256d hi = _mm256_mul_pd(a, scale);
    const __m256d lo = _mm256_fmsub_pd(a, scale, hi); /* a * scale - hi, exact */
    const __m256i hb = _mm256_castpd_si256(hi);
    /* |exact| < |hi| when lo and hi differ in sign: the truncation is one
     * step below |hi| (the bits minus 1); the odd bit marks inexactness */
    const __m256i inexact = _mm256_castpd_si256(_mm256_cmp_pd(lo, _mm256_setzero_pd(), _CMP_NEQ_OQ));
    const __m256i away = _mm256_and_si256(inexact, _mm256_castpd_si256(_mm256_xor_pd(lo, hi))); /* sign bit */
    const __m256i down = _mm256_srai_epi32(_mm256_shuffle_epi32(away, 0xf5), 31); /* the 64-bit lanes' sign, all bits */
    __m256i t = _mm256_add_epi64(hb, down); /* minus 1 where rounded away */
    t = _mm256_or_si256(t, _mm256_and_si256(inexact, _mm256_set1_epi64x(1)));
    __m256d x = _mm256_castsi256_pd(t);
    if (has_beta)
        x = _mm256_add_pd(x, c);
    if (has_bias)
        x = _mm256_add_pd(x, bias);
    return _mm256_cvtpd_ps(x); /* nearest even: the library's MXCSR */
}

/* A's row (NULL: none): the zero point taken off four sums (wrapping) and
 * the scales times a_scale (float32: one rounding of the exact product) */
MXP_INLINE __m128i row_sums(__m128i a, const mxp_s32_dequant_row *row, const int32_t *b_sums)
{
    if (!row || !row->b_sums)
        return a;
    const __m128i bs = _mm_loadu_si128((const __m128i *)(const void *)b_sums);
    return _mm_sub_epi32(a, _mm_mullo_epi32(_mm_set1_epi32(row->a_zero_point), bs));
}

MXP_INLINE __m256d row_scales(__m128 s, const mxp_s32_dequant_row *row)
{
    return _mm256_cvtps_pd(row ? _mm_mul_ps(s, _mm_set1_ps(row->a_scale)) : s);
}

MXP_INLINE void dequant_run(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,
                            const mxp_s32_dequant_row *row, const float *bias, double beta)
{
    const __m128 s1 = _mm_set1_ps(scale[0]);
    const __m256d vbeta = _mm256_set1_pd(beta), zero = _mm256_setzero_pd();
    const bool has_beta = beta != 0;
    size_t q = 0;
    for (; q + 4 <= len; q += 4) {
        const __m256d s = row_scales(per_col ? _mm_loadu_ps(scale + q) : s1, row);
        const __m256d b = bias ? _mm256_cvtps_pd(_mm_loadu_ps(bias + q)) : zero;
        const __m256d c = has_beta ? _mm256_mul_pd(vbeta, _mm256_cvtps_pd(_mm_loadu_ps(dst + q))) : zero;
        const __m128i a = row_sums(_mm_loadu_si128((const __m128i *)(const void *)(acc + q)), row,
                                   row && row->b_sums ? row->b_sums + q : NULL);
        _mm_storeu_ps(dst + q, dequant4(a, s, has_beta, c, bias != NULL, b));
    }
    if (q < len) {
        int32_t a4[4] = { 0 }, bs4[4] = { 0 };
        float s4[4] = { scale[0], scale[0], scale[0], scale[0] }, b4[4] = { 0 }, c4[4] = { 0 }, out[4];
        memcpy(a4, acc + q, (len - q) * 4);
        if (row && row->b_sums)
            memcpy(bs4, row->b_sums + q, (len - q) * 4);
        if (per_col)
            memcpy(s4, scale + q, (len - q) * 4);
        if (bias)
            memcpy(b4, bias + q, (len - q) * 4);
        if (has_beta)
            memcpy(c4, dst + q, (len - q) * 4);
        const __m128i a = row_sums(_mm_loadu_si128((const __m128i *)(const void *)a4), row, bs4);
        const __m256d c = _mm256_mul_pd(vbeta, _mm256_cvtps_pd(_mm_loadu_ps(c4)));
        _mm_storeu_ps(out, dequant4(a, row_scales(_mm_loadu_ps(s4), row), has_beta, c, bias != NULL,
                                    _mm256_cvtps_pd(_mm_loadu_ps(b4))));
        memcpy(dst + q, out, (len - q) * 4);
    }
}

bool mxp_s32_dequant_f32__avx2(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,
                               const mxp_s32_dequant_row *row, int mode)
{
    if ((_mm_getcsr() & 0x8040) || mode != MXP_ROUND_NEAREST_EVEN) /* FTZ/DAZ would flush; other modes: none */
        return false;
    dequant_run(dst, acc, len, scale, per_col, row, NULL, 0.0);
    return true;
}

bool mxp_s32_dequant_bias_f32__avx2(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,
                                    const mxp_s32_dequant_row *row, const float *bias, double beta, int mode)
{
    if ((_mm_getcsr() & 0x8040) || mode != MXP_ROUND_NEAREST_EVEN)
        return false;
    dequant_run(dst, acc, len, scale, per_col, row, bias, beta);
    return true;
}

/* float32 -> bfloat16, nearest even, on sixteen lanes ("add, then shift by
 * 16", NaN as (x >> 16) | 0x40: the reference's bits, subnormals included):
 * the bfloat16 row kernels' stores (bf16-narrow-avx512.h) and the subnormal
 * lanes of mxp_f32_bf16_vcvt__avx512bf16, which vcvtneps2bf16 reads as
 * zero.  Only for files built at AVX-512BW or above. */
#ifndef MXP_KERNELS_BF16_ROUND_AVX512_H
#define MXP_KERNELS_BF16_ROUND_AVX512_H

#include <immintrin.h>

static inline __m256i mxp_f32_to_bf16_rne_avx512(__m512 v)
{
    const __m512i u = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
    return _mm512_cvtepi32_epi16(r);
}

#ifdef __AVX512BF16__
/* The same bits by AVX512_BF16's vcvtneps2bf16 (files built at the
 * avx512bf16 level): it reads float32 subnormals as zero, so those lanes
 * (exponent field 0, not zero) take the integer rounding above, behind a
 * branch real data rarely takes; its NaN, (x >> 16) | 0x40, is the
 * reference's. */
static inline __m256i mxp_f32_to_bf16_rne_hw_avx512(__m512 v)
{
    const __m512i x = _mm512_castps_si512(v);
    __m256i r = (__m256i)_mm512_cvtneps_pbh(v);
    const __mmask16 sub = _mm512_testn_epi32_mask(x, _mm512_set1_epi32(0x7f800000)) &
                          _mm512_test_epi32_mask(x, _mm512_set1_epi32(0x7fffffff));
    if (sub)
        r = _mm256_mask_blend_epi16(sub, r, mxp_f32_to_bf16_rne_avx512(v));
    return r;
}
#endif

#endif

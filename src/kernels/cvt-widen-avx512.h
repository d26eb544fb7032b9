/* 16 narrow values (bf16, f16, e4m3, e5m2, s8, u8) widened exactly to
 * float32 in registers, AVX-512F: shared by the widening kernels
 * (src/kernels/<src>-f32-vcvt/avx512f.c, their loop below) and the one-pass
 * stochastic kernels (cvt-sr-avx512.h).  No FP arithmetic whose result
 * depends on MXCSR: vcvtph2ps ignores DAZ for its float16 input and the
 * int -> float conversions are exact.  NaNs come out quiet with the
 * payload kept. */
#ifndef MXP_KERNELS_CVT_WIDEN_AVX512_H
#define MXP_KERNELS_CVT_WIDEN_AVX512_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/stream-loop.h"

/* SRC_F32: float32 itself, for callers that also take float32 (not widened here) */
typedef enum { SRC_BF16, SRC_F16, SRC_E4M3, SRC_E5M2, SRC_S8, SRC_U8, SRC_F32 } mxp_src_kind;

/* 16 source elements, zero-extended to 32-bit lanes (or to 16-bit for f16). */
MXP_INLINE __m512 mxp_widen16_avx512(const void *src, size_t i, mxp_src_kind k, __mmask16 mask)
{
    if (k == SRC_BF16 || k == SRC_F16) {
        const uint16_t *s = (const uint16_t *)src + i;
        __m256i h = mask == 0xffff ? _mm256_loadu_si256((const __m256i *)s) : _mm256_maskz_loadu_epi16(mask, s);
        if (k == SRC_F16)
            return _mm512_cvtph_ps(h);
        __m512i r = _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16);
        __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(r, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
        return _mm512_castsi512_ps(_mm512_mask_or_epi32(r, nan, r, _mm512_set1_epi32(0x00400000)));
    }
    const uint8_t *s = (const uint8_t *)src + i;
    __m128i b = mask == 0xffff ? _mm_loadu_si128((const __m128i *)s) : _mm_maskz_loadu_epi8(mask, s);
    switch (k) {
    case SRC_S8: return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b));
    case SRC_U8: return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(b));
    case SRC_E5M2: /* the top byte of a float16 */
        return _mm512_cvtph_ps(_mm256_slli_epi16(_mm256_cvtepu8_epi16(b), 8));
    default: {
        /* E4M3: s eeee mmm, sign-extended to 16 bits and shifted left by 7,
         * bit 14 cleared: the float16 of its value times 2^-8 (subnormals
         * too), widened by vcvtph2ps and scaled back by 2^8, exactly.
         * S.1111.111 is NaN: bit 14 set there makes it float16's 0x7f80,
         * the quiet NaN 0x7ff00000 with the sign.  256-bit integer steps
         * (half a 512-bit one on a Zen 4): float8_e4m3fn -> float32 into
         * GEMM panels 2x faster than the rebias, table and masks on
         * 32-bit lanes. */
        const __m256i t = _mm256_slli_epi16(_mm256_cvtepi8_epi16(b), 7);
        const __mmask16 nan = _mm256_cmpeq_epi16_mask(_mm256_and_si256(t, _mm256_set1_epi16(0x3f80)),
                                                      _mm256_set1_epi16(0x3f80));
        const __m256i h = _mm256_and_si256(t, _mm256_set1_epi16((short)0xbfff));
        const __m256i hn = _mm256_mask_blend_epi16(nan, h, _mm256_or_si256(h, _mm256_set1_epi16(0x4000)));
        return _mm512_mul_ps(_mm512_cvtph_ps(hn), _mm512_set1_ps(256.0f));
    }
    }
}

/* MXP_OVERFLOW_SATURATE: no infinity in the output, +-inf becomes +-max. */
MXP_INLINE __m512 mxp_widen_saturate_inf_avx512(__m512 x)
{
    __m512i b = _mm512_castps_si512(x);
    __mmask16 inf = _mm512_cmpeq_epi32_mask(_mm512_and_si512(b, _mm512_set1_epi32(0x7fffffff)),
                                            _mm512_set1_epi32(0x7f800000));
    return _mm512_castsi512_ps(_mm512_mask_sub_epi32(b, inf, b, _mm512_set1_epi32(1)));
}

MXP_INLINE __m512 mxp_widen_convert16_avx512(const void *src, size_t i, mxp_src_kind k, __mmask16 mask, int saturate)
{
    __m512 r = mxp_widen16_avx512(src, i, k, mask);
    return saturate && k != SRC_S8 && k != SRC_U8 && k != SRC_E4M3 ? mxp_widen_saturate_inf_avx512(r) : r;
}

MXP_INLINE void mxp_widen_loop_avx512(float *dst, const void *src, size_t n, mxp_src_kind k, int saturate)
{
    size_t i = 0;
    int stream = mxp_streams(n * (k <= SRC_F16 ? 6 : 5)) && (uintptr_t)dst % 4 == 0;
    if (stream) {
        size_t head = ((64 - (uintptr_t)dst % 64) % 64) / 4;
        if (head) {
            __mmask16 mask = (__mmask16)((1u << head) - 1);
            _mm512_mask_storeu_ps(dst, mask, mxp_widen_convert16_avx512(src, 0, k, mask, saturate));
            i = head;
        }
    }
    for (; i + 16 <= n; i += 16) {
        if (stream)
            _mm512_stream_ps(dst + i, mxp_widen_convert16_avx512(src, i, k, 0xffff, saturate));
        else
            _mm512_storeu_ps(dst + i, mxp_widen_convert16_avx512(src, i, k, 0xffff, saturate));
    }
    if (i < n) {
        __mmask16 mask = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(dst + i, mask, mxp_widen_convert16_avx512(src, i, k, mask, saturate));
    }
    if (stream)
        _mm_sfence();
}

#endif

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
        /* E4M3: s eeee mmm.  Normal: rebias 7 -> 127; subnormal m * 2^-9
         * from a table; S.1111.111 is NaN. */
        const __m512i sub_table = _mm512_setr_epi32(0, 0x3b000000, 0x3b800000, 0x3bc00000, 0x3c000000,
                                                    0x3c200000, 0x3c400000, 0x3c600000, 0, 0, 0, 0, 0, 0, 0, 0);
        __m512i x = _mm512_cvtepu8_epi32(b);
        __m512i em = _mm512_and_si512(x, _mm512_set1_epi32(0x7f));
        __m512i r = _mm512_add_epi32(_mm512_slli_epi32(em, 20), _mm512_set1_epi32(120 << 23));
        __mmask16 sub = _mm512_cmplt_epi32_mask(em, _mm512_set1_epi32(8));
        r = _mm512_mask_permutexvar_epi32(r, sub, em, sub_table);
        __mmask16 nan = _mm512_cmpeq_epi32_mask(em, _mm512_set1_epi32(0x7f));
        r = _mm512_mask_mov_epi32(r, nan, _mm512_set1_epi32(0x7ff00000));
        r = _mm512_or_si512(r, _mm512_slli_epi32(_mm512_and_si512(x, _mm512_set1_epi32(0x80)), 24));
        return _mm512_castsi512_ps(r);
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
    int stream = n * (k <= SRC_F16 ? 6 : 5) >= MXP_STREAM_BYTES && (uintptr_t)dst % 4 == 0;
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

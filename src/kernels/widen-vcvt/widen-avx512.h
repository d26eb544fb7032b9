/* 16 narrow values (bf16, f16, e4m3, e5m2, s8, u8) widened exactly to
 * float32 in registers, AVX-512F: shared by the widening kernels
 * (widen-vcvt/avx512f.c) and the one-pass stochastic kernels
 * (sr-vcvt/avx512f.c).  No FP arithmetic whose result depends on MXCSR:
 * vcvtph2ps ignores DAZ for its float16 input and the int -> float
 * conversions are exact.  NaNs come out quiet with the payload kept. */
#ifndef MXP_KERNELS_WIDEN_AVX512_H
#define MXP_KERNELS_WIDEN_AVX512_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#ifndef MXP_INLINE
#define MXP_INLINE static inline __attribute__((always_inline))
#endif

/* SRC_F32: float32 itself, for callers that also take float32 (not widened here) */
typedef enum { SRC_BF16, SRC_F16, SRC_E4M3, SRC_E5M2, SRC_S8, SRC_U8, SRC_F32 } src_kind;

/* 16 source elements, zero-extended to 32-bit lanes (or to 16-bit for f16). */
MXP_INLINE __m512 mxp_widen16_avx512(const void *src, size_t i, src_kind k, __mmask16 mask)
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

#endif

/* float16/bfloat16 add, subtract, multiply in one pass, AVX-512: 16 lanes,
 * the tail through masked loads and stores: the loops of
 * src/kernels/f16-arith/avx512f.c and bf16-arith/avx512f.c.  See
 * arith-kernels.h.  Only for files built with the AVX-512 flags. */
#ifndef MXP_KERNELS_H16_ARITH_AVX512F_H
#define MXP_KERNELS_H16_ARITH_AVX512F_H

#include <immintrin.h>

#include "kernels/arith-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

/* A NaN result as the positive quiet NaN, as every elementwise operation
 * gives it (as src/kernels/f32-canonical-nan/ writes it). */
MXP_INLINE __m512 op16(int op, __m512 x, __m512 y)
{
    const __m512 r = op == MXP_ARITH_ADD ? _mm512_add_ps(x, y) : op == MXP_ARITH_SUB ? _mm512_sub_ps(x, y)
                                                                                : _mm512_mul_ps(x, y);
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q), _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000)));
}

MXP_INLINE __m256i f16_step(int op, __m256i a, __m256i b)
{
    const __m512 r = op16(op, _mm512_cvtph_ps(a), _mm512_cvtph_ps(b));
    return _mm512_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

MXP_INLINE void f16_loop(int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(y + i), f16_step(op, _mm256_loadu_si256((const __m256i *)(a + i)),
                                                         _mm256_loadu_si256((const __m256i *)(b + i))));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm256_mask_storeu_epi16(y + i, m, f16_step(op, _mm256_maskz_loadu_epi16(m, a + i),
                                                     _mm256_maskz_loadu_epi16(m, b + i)));
    }
}

/* bfloat16: the float32 bits are the bfloat16 bits << 16; back with
 * (x + 0x7fff + lsb) >> 16, NaN: the top payload bits, quiet (as
 * mxp_f32_bf16_vcvt__avx512f / __avx2 round). */
MXP_INLINE __m512 bf16_widen(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }

MXP_INLINE __m256i bf16_step(int op, __m256i a, __m256i b)
{
    const __m512i x = _mm512_castps_si512(op16(op, bf16_widen(a), bf16_widen(b)));
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb), 16);
    const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
                                                  _mm512_set1_epi32(0x7f800000));
    r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40)));
    return _mm512_cvtepi32_epi16(r);
}

MXP_INLINE void bf16_loop(int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(y + i), bf16_step(op, _mm256_loadu_si256((const __m256i *)(a + i)),
                                                          _mm256_loadu_si256((const __m256i *)(b + i))));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm256_mask_storeu_epi16(y + i, m, bf16_step(op, _mm256_maskz_loadu_epi16(m, a + i),
                                                      _mm256_maskz_loadu_epi16(m, b + i)));
    }
}

#endif

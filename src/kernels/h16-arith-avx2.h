/* float16/bfloat16 add, subtract, multiply in one pass, AVX2 + F16C: 8
 * lanes, the tail through a zero-padded copy: the loop of
 * src/kernels/f16-arith/avx2.c and bf16-arith/avx2.c.  See arith-kernels.h.
 * Only for files built with the AVX2 flags. */
#ifndef MXP_KERNELS_H16_ARITH_AVX2_H
#define MXP_KERNELS_H16_ARITH_AVX2_H

#include <immintrin.h>
#include <string.h>

#include "kernels/arith-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

/* A NaN result as the positive quiet NaN (as src/kernels/f32-canonical-nan/ writes it). */
MXP_INLINE __m256 op8(int op, __m256 x, __m256 y)
{
    const __m256 r = op == MXP_ARITH_ADD ? _mm256_add_ps(x, y) : op == MXP_ARITH_SUB ? _mm256_sub_ps(x, y)
                                                                                : _mm256_mul_ps(x, y);
    return _mm256_blendv_ps(r, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)), _mm256_cmp_ps(r, r, _CMP_UNORD_Q));
}

MXP_INLINE __m128i f16_step(int op, __m128i a, __m128i b)
{
    return _mm256_cvtps_ph(op8(op, _mm256_cvtph_ps(a), _mm256_cvtph_ps(b)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/* bfloat16 as in avx512f.c and mxp_f32_bf16_vcvt__avx2 */
MXP_INLINE __m256 bf16_widen(__m128i h) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)); }

MXP_INLINE __m128i bf16_step(int op, __m128i a, __m128i b)
{
    const __m256i x = _mm256_castps_si256(op8(op, bf16_widen(a), bf16_widen(b)));
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb), 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)),
                                           _mm256_set1_epi32(0x7f800000));
    r = _mm256_blendv_epi8(r, _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40)), nan);
    return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0xd8));
}

MXP_INLINE void h16_loop(int bf16, int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i x = _mm_loadu_si128((const __m128i *)(a + i)), z = _mm_loadu_si128((const __m128i *)(b + i));
        _mm_storeu_si128((__m128i *)(y + i), bf16 ? bf16_step(op, x, z) : f16_step(op, x, z));
    }
    if (i < n) {
        uint16_t ta[8] = { 0 }, tb[8] = { 0 }, ty[8];
        memcpy(ta, a + i, (n - i) * 2);
        memcpy(tb, b + i, (n - i) * 2);
        const __m128i x = _mm_loadu_si128((const __m128i *)ta), z = _mm_loadu_si128((const __m128i *)tb);
        _mm_storeu_si128((__m128i *)ty, bf16 ? bf16_step(op, x, z) : f16_step(op, x, z));
        memcpy(y + i, ty, (n - i) * 2);
    }
}

#endif

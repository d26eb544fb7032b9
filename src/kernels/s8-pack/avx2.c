/* K-pair packing for the AVX2 integer GEMM (src/kernels/u8s8-gemm/avx2.c):
 * int8 B widened to int16, the two k values of a pair adjacent in a 32-bit
 * lane (vpmaddwd's operand).  The portable twin is scalar.c. */
#include <immintrin.h>
#include <string.h>

#include "kernels/pack-kernels.h"

void mxp_s8_pack_pairs_16__avx2(const int8_t *src, size_t ld, size_t pairs, size_t cols, int16_t *dst, size_t panel)
{
    for (size_t c = 0; c < cols; c += 16, dst += panel) {
        const size_t w = cols - c < 16 ? cols - c : 16;
        for (size_t q = 0; q < pairs; q++) {
            const int8_t *r0 = src + 2 * q * ld + c, *r1 = r0 + ld;
            int16_t *d = dst + 32 * q;
            __m128i x, y;
            if (w == 16) {
                x = _mm_loadu_si128((const __m128i *)(const void *)r0);
                y = _mm_loadu_si128((const __m128i *)(const void *)r1);
            } else { /* the last columns, through buffers */
                int8_t t0[16] = { 0 }, t1[16] = { 0 };
                memcpy(t0, r0, w);
                memcpy(t1, r1, w);
                x = _mm_loadu_si128((const __m128i *)(const void *)t0);
                y = _mm_loadu_si128((const __m128i *)(const void *)t1);
            }
            const __m256i lo = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(x, y)); /* columns 0 .. 7 */
            const __m256i hi = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(x, y)); /* 8 .. 15 */
            if (w == 16) {
                _mm256_storeu_si256((__m256i *)(void *)d, lo);
                _mm256_storeu_si256((__m256i *)(void *)(d + 16), hi);
            } else {
                int16_t t[32];
                _mm256_storeu_si256((__m256i *)(void *)t, lo);
                _mm256_storeu_si256((__m256i *)(void *)(t + 16), hi);
                memcpy(d, t, 4 * w);
            }
        }
    }
}

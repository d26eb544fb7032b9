/* K-pair packing of A for the AVX2 integer GEMM: six rows of uint8 (int8
 * with its top bit flipped) widened to int16, the two k values of a pair
 * adjacent in a 32-bit lane.  The portable twin is scalar.c. */
#include <immintrin.h>

#include "kernels/pack-kernels.h"

/* 16 k values at a time: each row, widened, is 8 pairs in 32-bit lanes
 * [p0 p1 p2 p3 | p4 p5 p6 p7]; in each 128-bit half a 4 x 4 transpose of
 * the lanes of rows 0-3 gives [r0 r1 r2 r3] of one pair, the interleave of
 * rows 4-5 [r4 r5] of two pairs: pair q's 24 bytes are 16 of the one and
 * 8 of the other. */
void mxp_u8_pack_pairs_6__avx2(const uint8_t *src, size_t ld, size_t k, uint8_t flip, int16_t *dst)
{
    enum { MR = 6 };
    const __m128i f = _mm_set1_epi8((char)flip);
    size_t p = 0;
    for (; p + 16 <= k; p += 16, dst += 8 * 2 * MR) {
        __m256i w[MR];
        for (int r = 0; r < MR; r++)
            w[r] = _mm256_cvtepu8_epi16(
                _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(src + (size_t)r * ld + p)), f));
        const __m256i t0 = _mm256_unpacklo_epi32(w[0], w[1]), t1 = _mm256_unpackhi_epi32(w[0], w[1]);
        const __m256i t2 = _mm256_unpacklo_epi32(w[2], w[3]), t3 = _mm256_unpackhi_epi32(w[2], w[3]);
        const __m256i q[4] = { _mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2),
                               _mm256_unpacklo_epi64(t1, t3), _mm256_unpackhi_epi64(t1, t3) };
        const __m256i u[2] = { _mm256_unpacklo_epi32(w[4], w[5]), _mm256_unpackhi_epi32(w[4], w[5]) };
        for (int h = 0; h < 2; h++) /* pairs 0-3, then 4-7 */
            for (int j = 0; j < 4; j++) {
                int16_t *d = dst + (size_t)(4 * h + j) * 2 * MR;
                const __m128i lo = h ? _mm256_extracti128_si256(q[j], 1) : _mm256_castsi256_si128(q[j]);
                const __m128i uu = h ? _mm256_extracti128_si256(u[j / 2], 1) : _mm256_castsi256_si128(u[j / 2]);
                _mm_storeu_si128((__m128i *)(void *)d, lo);
                if (j % 2)
                    _mm_storeh_pd((double *)(void *)(d + 8), _mm_castsi128_pd(uu));
                else
                    _mm_storel_epi64((__m128i *)(void *)(d + 8), uu);
            }
    }
    for (; p < k; p++)
        for (int r = 0; r < MR; r++)
            dst[(p % 16) / 2 * 2 * MR + 2 * r + p % 2] = (int16_t)(src[(size_t)r * ld + p] ^ flip);
    if (k % 2) /* the last pair's second value */
        for (int r = 0; r < MR; r++)
            dst[(k % 16) / 2 * 2 * MR + 2 * r + 1] = 0;
}

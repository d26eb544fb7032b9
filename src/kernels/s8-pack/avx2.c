/* K-pair packing for the AVX2 integer GEMM (src/kernels/s8-gemm/avx2.c):
 * bytes widened to int16, the two k values of a pair adjacent in a 32-bit
 * lane (vpmaddwd's operand).  The portable twins are the loops in
 * src/gemm/int8-pack.c. */
#include <immintrin.h>
#include <string.h>

#include "kernels/gemm-kernels.h"

void mxp_s8_s16_pack_b16__avx2(const int8_t *src, size_t ld, size_t pairs, size_t cols, int16_t *dst, size_t panel)
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

/* 16 k values at a time: each row, widened, is 8 pairs in 32-bit lanes
 * [p0 p1 p2 p3 | p4 p5 p6 p7]; in each 128-bit half a 4 x 4 transpose of
 * the lanes of rows 0-3 gives [r0 r1 r2 r3] of one pair, the interleave of
 * rows 4-5 [r4 r5] of two pairs: pair q's 24 bytes are 16 of the one and
 * 8 of the other. */
void mxp_u8_s16_pack6__avx2(const uint8_t *src, size_t ld, size_t k, uint8_t flip, int16_t *dst)
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

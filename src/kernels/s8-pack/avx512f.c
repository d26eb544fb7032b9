/* K-quad packing for the integer GEMM: four rows of int8 B interleaved so
 * that each column's four consecutive k values are adjacent (the operand
 * order of vpdpbusd).  16 columns per step with byte and word unpacks; the
 * portable twin is scalar.c. */
#include <immintrin.h>

#include "kernels/pack-kernels.h"

void mxp_s8_pack_quads__avx512f(const int8_t *r0, const int8_t *r1, const int8_t *r2, const int8_t *r3, size_t cols,
                                int8_t *dst)
{
    size_t c = 0;
    for (; c + 16 <= cols; c += 16) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(r0 + c));
        const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(r1 + c));
        const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(r2 + c));
        const __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(r3 + c));
        const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
        const __m128i xy_lo = _mm_unpacklo_epi8(x, y), xy_hi = _mm_unpackhi_epi8(x, y);
        __m128i *d = (__m128i *)(void *)(dst + 4 * c);
        _mm_storeu_si128(d, _mm_unpacklo_epi16(ab_lo, xy_lo));     /* columns c .. c+3 */
        _mm_storeu_si128(d + 1, _mm_unpackhi_epi16(ab_lo, xy_lo)); /* c+4 .. c+7 */
        _mm_storeu_si128(d + 2, _mm_unpacklo_epi16(ab_hi, xy_hi)); /* c+8 .. c+11 */
        _mm_storeu_si128(d + 3, _mm_unpackhi_epi16(ab_hi, xy_hi)); /* c+12 .. c+15 */
    }
    for (; c < cols; c++) {
        dst[4 * c] = r0[c];
        dst[4 * c + 1] = r1[c];
        dst[4 * c + 2] = r2[c];
        dst[4 * c + 3] = r3[c];
    }
}

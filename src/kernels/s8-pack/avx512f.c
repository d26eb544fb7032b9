/* K-quad packing for the integer GEMM: four rows of int8 B interleaved so
 * that each column's four consecutive k values are adjacent (the operand
 * order of vpdpbusd).  16 columns per step with byte and word unpacks; the
 * portable twin is the loop in src/gemm/int8-driver.c (pack_b). */
#include <immintrin.h>

#include "kernels/gemm-kernels.h"

void mxp_s8_interleave4__avx512f(const int8_t *r0, const int8_t *r1, const int8_t *r2, const int8_t *r3, size_t cols,
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

/* sums[l] = sum over p < len of (src[l ld + p] ^ x) as uint8, minus 128 len
 * when is_signed (x = 0x80: the int8 values' sum), modulo 2^32, for l <
 * lines: the zero-point corrections' line sums (the portable twin is
 * line_sums in src/gemm/int8-driver.c).  vpsadbw adds eight bytes into a
 * 64-bit lane. */
void mxp_s8_line_sums__avx512f(const uint8_t *src, size_t ld, size_t lines, size_t len, bool is_signed, uint8_t flip,
                               uint32_t *sums)
{
    const uint8_t x = is_signed ? 0x80 : flip;
    const __m512i vx = _mm512_set1_epi8((char)x), zero = _mm512_setzero_si512();
    for (size_t l = 0; l < lines; l++) {
        const uint8_t *row = src + l * ld;
        __m512i acc = zero;
        size_t p = 0;
        for (; p + 64 <= len; p += 64)
            acc = _mm512_add_epi64(acc, _mm512_sad_epu8(_mm512_xor_si512(_mm512_loadu_si512(row + p), vx), zero));
        if (p < len) {
            const __mmask64 m = ~0ull >> (64 - (len - p));
            /* the bytes past len stay 0: xor only the loaded ones */
            const __m512i v = _mm512_maskz_loadu_epi8(m, row + p);
            acc = _mm512_add_epi64(acc, _mm512_sad_epu8(_mm512_mask_mov_epi8(zero, m, _mm512_xor_si512(v, vx)), zero));
        }
        uint32_t s = (uint32_t)_mm512_reduce_add_epi64(acc);
        if (is_signed)
            s -= (uint32_t)(128u * (uint32_t)len);
        sums[l] = s;
    }
}

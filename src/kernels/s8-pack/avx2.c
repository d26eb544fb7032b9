/* B packing for the AVX2 integer GEMM: K-pairs (src/kernels/u8s8-gemm/avx2.c),
 * int8 B widened to int16, the two k values of a pair adjacent in a 32-bit
 * lane (vpmaddwd's operand); and K-quads of bytes (the VNNI and the
 * AVX2 vpmaddubsw kernels, u8s8-gemm/avx512vnni.c, u8s8-gemm-a7/avx2.c):
 * four rows interleaved so that each column's four consecutive k values
 * are adjacent, by byte and word unpacks, 32 columns a step, then 16 (the
 * AVX2 panels' width).  The portable twins are scalar.c. */
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

/* |b0| + |b1| of int8 bytes as uint8, saturating (255 is still past 128). */
static __m256i pair_magnitudes_256(__m256i b0, __m256i b1)
{
    return _mm256_adds_epu8(_mm256_abs_epi8(b0), _mm256_abs_epi8(b1));
}

static __m128i pair_magnitudes_128(__m128i b0, __m128i b1)
{
    return _mm_adds_epu8(_mm_abs_epi8(b0), _mm_abs_epi8(b1));
}

/* Four rows' first cols columns into one panel's K-quad at dst; the
 * largest |b0| + |b1| of their pairs kept in *widest, bytewise. */
static inline void quad_rows(const int8_t *r0, const int8_t *r1, const int8_t *r2, const int8_t *r3, size_t cols,
                             int8_t *dst, __m128i *widest_out)
{
    /* the largest |b0| + |b1|, bytewise (the loop is memory-bound: kept whether asked or not) */
    __m256i widest32 = _mm256_setzero_si256();
    size_t c = 0;
    for (; c + 32 <= cols; c += 32) {
        const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(r0 + c));
        const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(r1 + c));
        const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(r2 + c));
        const __m256i y = _mm256_loadu_si256((const __m256i *)(const void *)(r3 + c));
        widest32 = _mm256_max_epu8(widest32, _mm256_max_epu8(pair_magnitudes_256(a, b), pair_magnitudes_256(x, y)));
        /* the unpacks stay in 128-bit halves: columns c .. c+15 in the low ones, c+16 .. c+31 in the high */
        const __m256i ab_lo = _mm256_unpacklo_epi8(a, b), ab_hi = _mm256_unpackhi_epi8(a, b);
        const __m256i xy_lo = _mm256_unpacklo_epi8(x, y), xy_hi = _mm256_unpackhi_epi8(x, y);
        const __m256i q0 = _mm256_unpacklo_epi16(ab_lo, xy_lo), q1 = _mm256_unpackhi_epi16(ab_lo, xy_lo);
        const __m256i q2 = _mm256_unpacklo_epi16(ab_hi, xy_hi), q3 = _mm256_unpackhi_epi16(ab_hi, xy_hi);
        __m256i *d = (__m256i *)(void *)(dst + 4 * c);
        _mm256_storeu_si256(d, _mm256_permute2x128_si256(q0, q1, 0x20));     /* columns c .. c+7 */
        _mm256_storeu_si256(d + 1, _mm256_permute2x128_si256(q2, q3, 0x20)); /* c+8 .. c+15 */
        _mm256_storeu_si256(d + 2, _mm256_permute2x128_si256(q0, q1, 0x31)); /* c+16 .. c+23 */
        _mm256_storeu_si256(d + 3, _mm256_permute2x128_si256(q2, q3, 0x31)); /* c+24 .. c+31 */
    }
    __m128i widest = _mm_max_epu8(_mm256_castsi256_si128(widest32), _mm256_extracti128_si256(widest32, 1));
    for (; c + 16 <= cols; c += 16) {
        const __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(r0 + c));
        const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(r1 + c));
        const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(r2 + c));
        const __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(r3 + c));
        widest = _mm_max_epu8(widest, _mm_max_epu8(pair_magnitudes_128(a, b), pair_magnitudes_128(x, y)));
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
        const int m = (mxp_s8_wide_pair(r0[c], r1[c]) | mxp_s8_wide_pair(r2[c], r3[c])) ? 255 : 0;
        widest = _mm_max_epu8(widest, _mm_set1_epi8((char)m));
    }
    *widest_out = _mm_max_epu8(*widest_out, widest);
}

bool mxp_s8_pack_quads__avx2(const int8_t *src, size_t ld, size_t quads, size_t cols, size_t width, int8_t *dst,
                             size_t panel, bool check)
{
    __m128i widest = _mm_setzero_si128();
    for (size_t c0 = 0; c0 < cols; c0 += width) { /* a panel's quads together: its lines written in turn */
        const size_t w = cols - c0 < width ? cols - c0 : width;
        for (size_t q = 0; q < quads; q++) {
            const int8_t *r = src + 4 * q * ld + c0;
            quad_rows(r, r + ld, r + 2 * ld, r + 3 * ld, w, dst + c0 / width * panel + 4 * width * q, &widest);
        }
    }
    const __m128i past = _mm_subs_epu8(widest, _mm_set1_epi8((char)128));
    return check && !_mm_testz_si128(past, past);
}

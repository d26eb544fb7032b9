/* The integer GEMM's zero-point corrections need the sums of A's rows and
 * B's columns: vpsadbw adds eight bytes into a 64-bit lane.  The portable
 * twin is scalar.c. */
#include <immintrin.h>

#include "kernels/pack-kernels.h"

/* sums[l] = sum over p < len of (src[l ld + p] ^ x) as uint8, minus 128 len
 * when is_signed (x = 0x80: the int8 values' sum), modulo 2^32, for l <
 * lines. */
void mxp_s8_sum_lines__avx512f(const uint8_t *src, size_t ld, size_t lines, size_t len, bool is_signed, uint8_t flip,
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

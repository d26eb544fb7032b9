/* The integer GEMM's zero-point corrections (AVX2): as avx512f.c, vpsadbw
 * adding eight bytes into a 64-bit lane, 32 bytes a step; the bytes after
 * the last whole step as the twin adds them.  The portable twin is
 * scalar.c. */
#include <immintrin.h>

#include "kernels/pack-kernels.h"

/* sums[l] = sum over p < len of (src[l ld + p] ^ x) as uint8, minus 128 len
 * when is_signed (x = 0x80: the int8 values' sum), modulo 2^32, for l <
 * lines. */
void mxp_s8_sum_lines__avx2(const uint8_t *src, size_t ld, size_t lines, size_t len, bool is_signed, uint8_t flip,
                            uint32_t *sums)
{
    const uint8_t x = is_signed ? 0x80 : flip;
    const __m256i vx = _mm256_set1_epi8((char)x), zero = _mm256_setzero_si256();
    for (size_t l = 0; l < lines; l++) {
        const uint8_t *row = src + l * ld;
        __m256i acc = zero;
        size_t p = 0;
        for (; p + 32 <= len; p += 32) {
            const __m256i v = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(row + p)), vx);
            acc = _mm256_add_epi64(acc, _mm256_sad_epu8(v, zero));
        }
        const __m128i half = _mm_add_epi64(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
        uint32_t s = (uint32_t)(_mm_cvtsi128_si64(half) + _mm_extract_epi64(half, 1));
        for (; p < len; p++)
            s += (uint32_t)(uint8_t)(row[p] ^ x);
        if (is_signed)
            s -= (uint32_t)(128u * (uint32_t)len);
        sums[l] = s;
    }
}

/* 16-bit transposes (AVX2): as avx512f.c, in blocks of 8 lines x 8 words
 * (eight 16-byte loads widened by vpmovzxwd, the 8 x 8 transpose of the
 * 32-bit kernel, eight 16-byte stores narrowed by vpackusdw); the words left
 * over through a zeroed copy of the block, the lines left over one word at
 * a time.  The portable twin is scalar.c. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/pack-kernels.h"
#include "kernels/transpose-avx2.h"
#include "kernels/transpose-words.h"

/* Lines c .. c + 7, words q .. q + 7 (the first rem of them where rem < 8). */
static inline __attribute__((always_inline)) void block8(const unsigned char *s, size_t ld, size_t c, size_t q,
                                                         size_t rem, uint16_t *d, size_t dst_ld)
{
    __m256 r[8], o[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
        __m128i w;
        if (rem >= 8) {
            w = _mm_loadu_si128((const __m128i *)(const void *)(s + (c + (size_t)i) * ld + 2 * q));
        } else {
            uint16_t part[8] = { 0 };
            memcpy(part, s + (c + (size_t)i) * ld + 2 * q, 2 * rem);
            w = _mm_loadu_si128((const __m128i *)(const void *)part);
        }
        r[i] = _mm256_castsi256_ps(_mm256_cvtepu16_epi32(w));
    }
    mxp_transpose8_avx2(r, o);
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        if ((size_t)i < rem) {
            const __m256i v = _mm256_castps_si256(o[i]);
            _mm_storeu_si128((__m128i *)(void *)(d + (q + (size_t)i) * dst_ld + c),
                             _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
        }
}

void mxp_x16_transpose__avx2(const void *src, size_t ld, size_t lines, size_t count, void *dst, size_t dst_ld)
{
    const unsigned char *s = src;
    uint16_t *d = dst;
    const size_t whole_lines = lines / 8 * 8, whole_words = count / 8 * 8;
    for (size_t c = 0; c < whole_lines; c += 8) {
        for (size_t q = 0; q < whole_words; q += 8)
            block8(s, ld, c, q, 8, d, dst_ld);
        if (whole_words < count)
            block8(s, ld, c, whole_words, count - whole_words, d, dst_ld);
    }
    mxp_transpose_copy_words(s, ld, whole_lines, lines, 0, count, d, dst_ld, 2); /* the lines left over */
}

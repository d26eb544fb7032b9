/* The AVX2 32-bit transpose's loop (blocks of 8 lines x 8 words: eight
 * 32-byte loads, an 8 x 8 transpose, eight 32-byte stores; the words left
 * over 8 lines at a time by masked loads, the lines left over one word at a
 * time), shared by avx2.c and avx512f.c (which takes 8-15 lines so). */
#ifndef MXP_KERNELS_X32_TRANSPOSE_BLOCKS8_H
#define MXP_KERNELS_X32_TRANSPOSE_BLOCKS8_H

#include <immintrin.h>
#include <stdint.h>

#include "kernels/transpose-avx2.h"
#include "kernels/transpose-words.h"

static inline __attribute__((always_inline)) void mxp_x32_transpose_blocks8(const void *src, size_t ld, size_t lines,
                                                                             size_t count, void *dst, size_t dst_ld)
{
    const unsigned char *s = src;
    uint32_t *d = dst;
    const size_t whole_lines = lines / 8 * 8, whole_words = count / 8 * 8;
    for (size_t c = 0; c < whole_lines; c += 8) {
        for (size_t q = 0; q < whole_words; q += 8) {
            __m256 r[8], o[8];
#pragma GCC unroll 8
            for (int i = 0; i < 8; i++)
                r[i] = _mm256_loadu_ps((const float *)(const void *)(s + (c + (size_t)i) * ld + 4 * q));
            mxp_transpose8_avx2(r, o);
#pragma GCC unroll 8
            for (int i = 0; i < 8; i++)
                _mm256_storeu_ps((float *)(void *)(d + (q + (size_t)i) * dst_ld + c), o[i]);
        }
    }
    if (whole_words < count) { /* the words left over, 8 lines at a time by masked loads */
        const size_t rem = count - whole_words;
        static const int32_t ones[16] = { -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0 };
        const __m256i m = _mm256_loadu_si256((const __m256i *)(const void *)(ones + 8 - rem));
        for (size_t c = 0; c < whole_lines; c += 8) {
            __m256 r[8], o[8];
#pragma GCC unroll 8
            for (int i = 0; i < 8; i++)
                r[i] = _mm256_maskload_ps((const float *)(const void *)(s + (c + (size_t)i) * ld + 4 * whole_words), m);
            mxp_transpose8_avx2(r, o);
            for (size_t i = 0; i < rem; i++)
                _mm256_storeu_ps((float *)(void *)(d + (whole_words + i) * dst_ld + c), o[i]);
        }
    }
    mxp_transpose_copy_words(s, ld, whole_lines, lines, 0, count, d, dst_ld, 4); /* the lines left over */
}

#endif

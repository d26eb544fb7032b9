/* 16-bit transposes (AVX-512F): lines of 16-bit words (bfloat16, float16)
 * into [words][lines] order -- a convolution's NCHW planes and NHWC pixels
 * (src/nn/conv.c).  Blocks of 16 lines x 16 words: sixteen 32-byte loads
 * widened to 32-bit lanes (vpmovzxwd), the 16 x 16 transpose of the
 * 32-bit kernel, sixteen 32-byte stores narrowed back (vpmovdw); the words
 * left over by masked loads, the lines left over one word at a time.  The
 * portable twin is scalar.c. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/pack-kernels.h"
#include "kernels/transpose-avx512.h"
#include "kernels/transpose-words.h"

/* Lines c .. c + 15, words q .. q + 15 (the first rem of them where rem < 16). */
static inline __attribute__((always_inline)) void block16(const unsigned char *s, size_t ld, size_t c, size_t q,
                                                          size_t rem, uint16_t *d, size_t dst_ld)
{
    const __mmask16 m = rem >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << rem) - 1);
    __m512i r[16], o[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++)
        r[i] = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, s + (c + (size_t)i) * ld + 2 * q));
    mxp_transpose16_avx512(r, o);
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++)
        if ((size_t)i < rem)
            _mm256_storeu_si256((__m256i *)(void *)(d + (q + (size_t)i) * dst_ld + c), _mm512_cvtepi32_epi16(o[i]));
}

void mxp_x16_transpose__avx512f(const void *src, size_t ld, size_t lines, size_t count, void *dst, size_t dst_ld)
{
    const unsigned char *s = src;
    uint16_t *d = dst;
    const size_t whole_lines = lines / 16 * 16, whole_words = count / 16 * 16;
    for (size_t c = 0; c < whole_lines; c += 16) {
        for (size_t q = 0; q < whole_words; q += 16)
            block16(s, ld, c, q, 16, d, dst_ld);
        if (whole_words < count)
            block16(s, ld, c, whole_words, count - whole_words, d, dst_ld);
    }
    mxp_transpose_copy_words(s, ld, whole_lines, lines, 0, count, d, dst_ld, 2); /* the lines left over */
}

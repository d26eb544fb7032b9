/* 32-bit transposes for packing (AVX-512F): lines of 32-bit words (a
 * float32 operand, or int8 K-quads) into the [k][lines] order of a GEMM
 * panel. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/pack-kernels.h"
#include "kernels/transpose-avx512.h"
#include "kernels/x32-transpose/blocks8.h"
#include "kernels/transpose-words.h"

/* 2-7 lines into rows as wide (dst_ld == lines: interleaved, as an RGB
 * image's planes into pixels, a convolution's first layer): each 16 words
 * of the lines make `lines` output vectors, lane j of vector v word
 * (16v + j) / lines of line (16v + j) % lines, by vpermd under masks
 * (lines^2 of them for 16 lines words; one word at a time had been 4% of
 * a 7x7 stem convolution on a Zen 4). */
static void interleave(const unsigned char *s, size_t ld, size_t lines, size_t count, uint32_t *d)
{
    /* output element n = 16 v + j is word n / lines of line n % lines: the
     * quotient n ceil(2^16 / lines) >> 16 (above n / lines by less than
     * n / 2^16 < 1 / lines for n < 2^16 / lines; here n < 128), the masks
     * by compares, all in registers (built word by word in memory and
     * loaded, the tables had made this kernel 41% of a 16^3 float32
     * product, which packs two 8-row panels of A: 0.69 -> 0.53 us on a
     * Zen 4, one thread, 8^3 0.36 -> 0.28) */
    __m512i idx[8];
    __mmask16 take[8][8];
    const __m512i magic = _mm512_set1_epi32((int)((65536u + (unsigned)lines - 1) / (unsigned)lines));
    const __m512i width = _mm512_set1_epi32((int)lines);
    for (size_t v = 0; v < lines; v++) {
        const __m512i n = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                           _mm512_set1_epi32((int)(16 * v)));
        idx[v] = _mm512_srli_epi32(_mm512_mullo_epi32(n, magic), 16);
        const __m512i line = _mm512_sub_epi32(n, _mm512_mullo_epi32(idx[v], width));
        for (size_t c = 0; c < lines; c++)
            take[v][c] = _mm512_cmpeq_epi32_mask(line, _mm512_set1_epi32((int)c));
    }
    size_t q = 0;
    for (; q + 16 <= count; q += 16) {
        __m512i r[8];
        for (size_t c = 0; c < lines; c++)
            r[c] = _mm512_loadu_si512(s + c * ld + 4 * q);
        for (size_t v = 0; v < lines; v++) {
            __m512i o = _mm512_setzero_si512();
            for (size_t c = 0; c < lines; c++)
                o = _mm512_mask_permutexvar_epi32(o, take[v][c], idx[v], r[c]);
            _mm512_storeu_si512(d + q * lines + 16 * v, o);
        }
    }
    mxp_transpose_copy_words(s, ld, 0, lines, q, count, d, lines, 4);
}

/* dst[q * dst_ld + c] = word q of line c, for c < lines, q < count: the
 * 32-bit words at src + c * ld + 4q (ld in bytes, any alignment).  Blocks
 * of 16 lines x 16 words: sixteen 64-byte loads, a 16 x 16 transpose,
 * sixteen 64-byte stores; the lines and words left over one at a time.
 * Reading whole 64-byte lines keeps packing a transposed operand off the
 * L1 set conflicts that 16-64 rows 4 KiB apart cause one word at a time.
 * Fewer than 16 lines: interleave() or the AVX2 kernel's blocks of 8 --
 * 8 lines into rows of 8 too (A's panels: as many operations as
 * interleave's 64 permutes a 16 words, in 256-bit shuffles, and no
 * setup: 16^3 float32 0.36 -> 0.26 us, 2048^3 within noise, Zen 4).  The
 * portable twin is scalar.c. */
void mxp_x32_transpose__avx512f(const void *src, size_t ld, size_t lines, size_t count, void *dst, size_t dst_ld)
{
    const unsigned char *s = src;
    uint32_t *d = dst;
    if (lines >= 2 && lines <= 7 && dst_ld == lines) {
        interleave(s, ld, lines, count, d);
        return;
    }
    if (lines < 16) { /* the AVX2 kernel's blocks of 8 */
        mxp_x32_transpose_blocks8(src, ld, lines, count, dst, dst_ld);
        return;
    }
    const size_t whole_lines = lines / 16 * 16, whole_words = count / 16 * 16;
    for (size_t c = 0; c < whole_lines; c += 16) {
        for (size_t q = 0; q < whole_words; q += 16) {
            __m512i r[16], o[16];
#pragma GCC unroll 16
            for (int i = 0; i < 16; i++)
                r[i] = _mm512_loadu_si512(s + (c + (size_t)i) * ld + 4 * q);
            mxp_transpose16_avx512(r, o);
#pragma GCC unroll 16
            for (int i = 0; i < 16; i++)
                _mm512_storeu_si512(d + (q + (size_t)i) * dst_ld + c, o[i]);
        }
    }
    if (whole_words < count) { /* the words left over, 16 lines at a time by masked loads (count < 16: a
                                  convolution's OIHW weights, 9 words a line, went word by word) */
        const size_t rem = count - whole_words;
        const __mmask16 m = (__mmask16)((1u << rem) - 1);
        for (size_t c = 0; c < whole_lines; c += 16) {
            __m512i r[16], o[16];
#pragma GCC unroll 16
            for (int i = 0; i < 16; i++)
                r[i] = _mm512_maskz_loadu_epi32(m, s + (c + (size_t)i) * ld + 4 * whole_words);
            mxp_transpose16_avx512(r, o);
            for (size_t i = 0; i < rem; i++)
                _mm512_storeu_si512(d + (whole_words + i) * dst_ld + c, o[i]);
        }
    }
    mxp_transpose_copy_words(s, ld, whole_lines, lines, 0, count, d, dst_ld, 4); /* the lines left over */
}

/* 32-bit transposes for packing (AVX2): as avx512f.c, in blocks of 8 lines
 * x 8 words (eight 32-byte loads, an 8 x 8 transpose, eight 32-byte
 * stores; blocks8.h, 8 lines into rows of 8 too), 4-7 lines into
 * interleaved rows by the same transpose and overlapping stores, 2 and 3
 * by vpermd.  The portable twin is scalar.c. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/pack-kernels.h"
#include "kernels/x32-transpose/blocks8.h"

/* 2-7 lines into rows as wide as the lines (interleaved): as avx512f.c's
 * interleave(), 8 words of each line a step, vpermd and a blend per line
 * and output vector. */
static void interleave(const unsigned char *s, size_t ld, size_t lines, size_t count, uint32_t *d)
{
    /* output element n = 8 v + j is word n / lines of line n % lines, in
     * registers as avx512f.c's interleave() computes them (built word by
     * word in memory and loaded, the tables cost more than the transpose
     * of a call's few words) */
    __m256i idx[8], take[8][8];
    const __m256i magic = _mm256_set1_epi32((int)((65536u + (unsigned)lines - 1) / (unsigned)lines));
    const __m256i width = _mm256_set1_epi32((int)lines);
    for (size_t v = 0; v < lines; v++) {
        const __m256i n = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)(8 * v)));
        idx[v] = _mm256_srli_epi32(_mm256_mullo_epi32(n, magic), 16);
        const __m256i line = _mm256_sub_epi32(n, _mm256_mullo_epi32(idx[v], width));
        for (size_t c = 0; c < lines; c++)
            take[v][c] = _mm256_cmpeq_epi32(line, _mm256_set1_epi32((int)c));
    }
    size_t q = 0;
    for (; q + 8 <= count; q += 8) {
        __m256i r[8];
        for (size_t c = 0; c < lines; c++)
            r[c] = _mm256_loadu_si256((const __m256i *)(const void *)(s + c * ld + 4 * q));
        for (size_t v = 0; v < lines; v++) {
            __m256i o = _mm256_setzero_si256();
            for (size_t c = 0; c < lines; c++)
                o = _mm256_blendv_epi8(o, _mm256_permutevar8x32_epi32(r[c], idx[v]), take[v][c]);
            _mm256_storeu_si256((__m256i *)(void *)(d + q * lines + 8 * v), o);
        }
    }
    mxp_transpose_copy_words(s, ld, 0, lines, q, count, d, lines, 4);
}

/* 4-7 lines into rows as wide (an MR = 6 panel of A~): 8 words of each
 * line a step, the 8 x 8 transpose with zero rows past the lines, and
 * word q's row stored 8 lanes wide at q * lines -- its lanes past the
 * lines are the next row's place, which the next store writes; the last
 * row of the last step stores only its lines.  6 lines of float32 A at
 * 1024^3 (Zen 4, MXP_ISA=avx2): the packing 4.3% -> 2.8% of the GEMM,
 * against the scalar copy (pack.c) a word at a time. */
static void narrow(const unsigned char *s, size_t ld, size_t lines, size_t count, uint32_t *d)
{
    static const int32_t ones[16] = { -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0 };
    const __m256i last = _mm256_loadu_si256((const __m256i *)(const void *)(ones + 8 - lines));
    size_t q = 0;
    for (; q + 8 <= count; q += 8) {
        __m256 r[8], o[8];
        for (size_t c = 0; c < 8; c++)
            r[c] = c < lines ? _mm256_loadu_ps((const float *)(const void *)(s + c * ld + 4 * q)) : _mm256_setzero_ps();
        mxp_transpose8_avx2(r, o);
        float *out = (float *)(void *)(d + q * lines);
        for (size_t i = 0; i < 7; i++)
            _mm256_storeu_ps(out + i * lines, o[i]);
        if (q + 16 <= count)
            _mm256_storeu_ps(out + 7 * lines, o[7]);
        else /* nothing after it rewrites the lanes past the lines */
            _mm256_maskstore_ps(out + 7 * lines, last, o[7]);
    }
    mxp_transpose_copy_words(s, ld, 0, lines, q, count, d, lines, 4);
}

void mxp_x32_transpose__avx2(const void *src, size_t ld, size_t lines, size_t count, void *dst, size_t dst_ld)
{
    if (lines >= 4 && lines <= 7 && dst_ld == lines)
        narrow(src, ld, lines, count, dst);
    else if (lines >= 2 && lines <= 7 && dst_ld == lines)
        interleave(src, ld, lines, count, dst);
    else
        mxp_x32_transpose_blocks8(src, ld, lines, count, dst, dst_ld);
}

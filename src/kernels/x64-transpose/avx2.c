/* 64-bit transposes for packing (AVX2; the AVX-512 level runs it too):
 * float64 operands whose lines run along k -- A's rows (MR = 6 at AVX2, 8
 * at AVX-512), B's lines in x W^T.  Blocks of 4 lines x 4 words: four
 * 32-byte loads, a 4 x 4 transpose of doubles (vunpcklpd/vunpckhpd, then
 * vperm2f128), four 32-byte stores; the last 2 lines of a block by 16-byte
 * stores, a last 1 or 3 by masked stores (the rows past the lines loaded
 * as zeros), the words left over (count not a multiple of 4) one at a
 * time.  The portable twin is scalar.c; it copied a word at a time, 4.5%
 * of a float64 512^3 GEMM's time at AVX-512 (Zen 4). */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/pack-kernels.h"
#include "kernels/transpose-words.h"

/* r[i] holds words q..q+3 of line i; out[j] word q + j of lines 0-3. */
static inline __attribute__((always_inline)) void transpose4(const __m256d r[4], __m256d out[4])
{
    const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
    const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
    out[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    out[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    out[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    out[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

void mxp_x64_transpose__avx2(const void *src, size_t ld, size_t lines, size_t count, void *dst, size_t dst_ld)
{
    const unsigned char *s = src;
    double *d = dst;
    const size_t whole_lines = lines / 4 * 4, rem = lines - whole_lines, whole_words = count / 4 * 4;
    static const int64_t ones[8] = { -1, -1, -1, -1, 0, 0, 0, 0 };
    const __m256i m = _mm256_loadu_si256((const __m256i *)(const void *)(ones + 4 - rem));
    for (size_t q = 0; q < whole_words; q += 4) {
        for (size_t c = 0; c < whole_lines; c += 4) {
            __m256d r[4], o[4];
            for (size_t i = 0; i < 4; i++)
                r[i] = _mm256_loadu_pd((const double *)(const void *)(s + (c + i) * ld + 8 * q));
            transpose4(r, o);
            for (size_t j = 0; j < 4; j++)
                _mm256_storeu_pd(d + (q + j) * dst_ld + c, o[j]);
        }
        if (rem == 2) { /* lines c, c + 1: pairs of words, 16 bytes a store */
            const size_t c = whole_lines;
            const __m256d r0 = _mm256_loadu_pd((const double *)(const void *)(s + c * ld + 8 * q));
            const __m256d r1 = _mm256_loadu_pd((const double *)(const void *)(s + (c + 1) * ld + 8 * q));
            const __m256d lo = _mm256_unpacklo_pd(r0, r1), hi = _mm256_unpackhi_pd(r0, r1);
            _mm_storeu_pd(d + q * dst_ld + c, _mm256_castpd256_pd128(lo));
            _mm_storeu_pd(d + (q + 1) * dst_ld + c, _mm256_castpd256_pd128(hi));
            _mm_storeu_pd(d + (q + 2) * dst_ld + c, _mm256_extractf128_pd(lo, 1));
            _mm_storeu_pd(d + (q + 3) * dst_ld + c, _mm256_extractf128_pd(hi, 1));
        } else if (rem) { /* 1 or 3 lines: the rows past them zeros, the stores masked to the lines */
            const size_t c = whole_lines;
            __m256d r[4], o[4];
            for (size_t i = 0; i < 4; i++)
                r[i] = i < rem ? _mm256_loadu_pd((const double *)(const void *)(s + (c + i) * ld + 8 * q))
                               : _mm256_setzero_pd();
            transpose4(r, o);
            for (size_t j = 0; j < 4; j++)
                _mm256_maskstore_pd(d + (q + j) * dst_ld + c, m, o[j]);
        }
    }
    mxp_transpose_copy_words(s, ld, 0, lines, whole_words, count, d, dst_ld, 8); /* the words left over */
}

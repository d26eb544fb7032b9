/* The register transpose of the 32- and 16-bit transpose kernels at AVX2
 * (src/kernels/x32-transpose/avx2.c, x16-transpose/avx2.c): the 8 x 8
 * matrix of 32-bit words in r, out[q] holding word q of every r[i]. */
#ifndef MXP_KERNELS_TRANSPOSE_AVX2_H
#define MXP_KERNELS_TRANSPOSE_AVX2_H

#include <immintrin.h>

static inline __attribute__((always_inline)) void mxp_transpose8_avx2(const __m256 r[8], __m256 out[8])
{
    __m256 t[8], u[8];
    for (int i = 0; i < 4; i++) { /* per 128-bit lane: words of row pairs interleaved */
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; i++) { /* u[4i + j], lane L: rows 4i .. 4i+3, word 4L + j */
        u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xee);
        u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xee);
    }
    for (int j = 0; j < 4; j++) { /* rows 0-3 with rows 4-7 */
        out[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
        out[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
    }
}

#endif

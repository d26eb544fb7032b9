/* The register transposes of the 32- and 16-bit transpose kernels
 * (src/kernels/x32-transpose/avx512f.c, x16-transpose/avx512f.c). */
#ifndef MXP_KERNELS_TRANSPOSE_AVX512_H
#define MXP_KERNELS_TRANSPOSE_AVX512_H

#include <immintrin.h>

/* The 16 x 16 matrix of 32-bit words in r, transposed: out[q] holds word
 * q of every r[i], in i order. */
static inline __attribute__((always_inline)) void mxp_transpose16_avx512(const __m512i r[16], __m512i out[16])
{
    __m512i t[16], u[16];
    for (int i = 0; i < 8; i++) { /* per 128-bit lane: words of row pairs interleaved */
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) { /* u[4i + j], lane L: rows 4i .. 4i+3, word 4L + j */
        u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int i = 0; i < 2; i++) /* t[8i + j]: words j, 8+j; t[8i + 4 + j]: 4+j, 12+j (rows 8i .. 8i+7) */
        for (int j = 0; j < 4; j++) {
            t[8 * i + j] = _mm512_shuffle_i32x4(u[8 * i + j], u[8 * i + 4 + j], 0x88);
            t[8 * i + 4 + j] = _mm512_shuffle_i32x4(u[8 * i + j], u[8 * i + 4 + j], 0xdd);
        }
    for (int j = 0; j < 4; j++) { /* rows 0-7 with rows 8-15 */
        out[j] = _mm512_shuffle_i32x4(t[j], t[8 + j], 0x88);
        out[8 + j] = _mm512_shuffle_i32x4(t[j], t[8 + j], 0xdd);
        out[4 + j] = _mm512_shuffle_i32x4(t[4 + j], t[12 + j], 0x88);
        out[12 + j] = _mm512_shuffle_i32x4(t[4 + j], t[12 + j], 0xdd);
    }
}

#endif

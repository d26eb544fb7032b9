/* The portable twins of the vpmaddubsw integer GEMM kernels (avx2.c): the
 * same K-quads of bytes, A~ [kc/4][4][4] uint8 (or uint8 A where it is
 * stored, rows lda bytes apart), B~ [kc/4][16][4] int8, each int32 sum
 * getting the four products of a quad, modulo 2^32 (unsigned arithmetic).
 * They sum any uint8 A and int8 B exactly; the AVX2 kernels only A below
 * 128 or B with narrow K-pairs. */
#include <stdint.h>

#include "kernels/gemm-kernels.h"

/* Quad q of row i of A at a + i * a_row + 4q * a_quad. */
static void quad_tile(size_t mr, size_t nr, size_t kc, const uint8_t *a, size_t a_row, size_t a_quad,
                      const int8_t *b, int32_t *c, size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    enum { NR = 16 };
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            uint32_t acc = 0;
            for (size_t q = 0; q < kc / 4; q++) {
                const uint8_t *x = a + i * a_row + q * 4 * a_quad;
                const int8_t *y = b + q * 4 * NR + 4 * j;
                int32_t dot = 0; /* |4 * 255 * 128| fits */
                for (int t = 0; t < 4; t++)
                    dot += x[t] * y[t];
                acc += (uint32_t)dot;
            }
            int32_t *p = c + i * ldc + j;
            const uint32_t s = (row_off ? (uint32_t)row_off[i] + (uint32_t)col_off[j] : (uint32_t)*p) + acc;
            *p = s <= INT32_MAX ? (int32_t)s : -(int32_t)~s - 1; /* the int32 with s's bits */
        }
}

void mxp_u8s8_gemm_a7_ukernel_4x16__scalar(size_t mr, size_t nr, size_t kc, const void *pa, const void *pb, int32_t *c,
                                        size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    quad_tile(mr, nr, kc, pa, 4, 4, pb, c, ldc, row_off, col_off);
}

void mxp_u8s8_gemm_a7_ukernel_4x16_a__scalar(size_t mr, size_t nr, size_t kc, const uint8_t *a, size_t lda,
                                             const int8_t *b, int32_t *c, size_t ldc, const int32_t *row_off,
                                             const int32_t *col_off)
{
    quad_tile(mr, nr, kc, a, lda, 1, b, c, ldc, row_off, col_off);
}

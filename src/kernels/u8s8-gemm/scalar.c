/* uint8 x int8 GEMM micro-kernels, portable: the scalar level's 4 x 8 and
 * the twins of the SIMD kernels (u8s8-gemm-list.inc), one per layout.
 * K-quads of bytes ([kc/4][MR][4] of A~, [kc/4][NR][4] of B~): each int32
 * sum gets the four products of a quad, as vpdpbusd does; K-pairs of int16
 * ([kc/2][MR][2], [kc/2][NR][2]): the two products of a pair, as vpmaddwd.
 * The sums wrap modulo 2^32 (unsigned arithmetic), so every level gives
 * the same bits. */
#include <stdint.h>

#include "kernels/gemm-kernels.h"

/* The int32 with the bits of x (x - 2^32 from 2^31 on), without relying
 * on implementation-defined conversions. */
static int32_t wrap_s32(uint32_t x)
{
    return x <= INT32_MAX ? (int32_t)x : -(int32_t)~x - 1;
}

static void store(size_t i, size_t j, uint32_t acc, int32_t *c, size_t ldc, const int32_t *row_off,
                  const int32_t *col_off)
{
    int32_t *p = c + i * ldc + j;
    const uint32_t base = row_off ? (uint32_t)row_off[i] + (uint32_t)col_off[j] : (uint32_t)*p;
    *p = wrap_s32(base + acc);
}

void mxp_u8s8_gemm_ukernel_4x8__scalar(size_t mr, size_t nr, size_t kc, const void *pa, const void *pb, int32_t *c,
                                       size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    enum { MR = 4, NR = 8 };
    const uint8_t *a = pa;
    const int8_t *b = pb;
    uint32_t acc[MR][NR] = { { 0 } };
    for (size_t q = 0; q < kc; q += 4, a += 4 * MR, b += 4 * NR)
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < NR; j++) {
                int32_t dot = 0; /* |4 * 255 * 128| fits */
                for (int t = 0; t < 4; t++)
                    dot += a[4 * i + t] * b[4 * j + t];
                acc[i][j] += (uint32_t)dot;
            }
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++)
            store(i, j, acc[i][j], c, ldc, row_off, col_off);
}

#if MXP_HAVE_X86_KERNELS
/* Quad q of row i of A at a + i * a_row + q / chunk * a_chunk + q % chunk
 * * a_quad (A~ in chunks of `chunk` quads; chunk SIZE_MAX: none), of
 * column j of B~ at b + q * 4 NR + 4 j. */
static void quad_tile(size_t nr_max, size_t mr, size_t nr, size_t kc, const uint8_t *a, size_t a_row, size_t a_quad,
                      size_t chunk, size_t a_chunk, const int8_t *b, int32_t *c, size_t ldc, const int32_t *row_off,
                      const int32_t *col_off)
{
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            uint32_t acc = 0;
            for (size_t q = 0; q < kc / 4; q++) {
                const uint8_t *x = a + i * a_row + q / chunk * a_chunk + q % chunk * a_quad;
                const int8_t *y = b + q * 4 * nr_max + 4 * j;
                int32_t dot = 0; /* |4 * 255 * 128| fits */
                for (int t = 0; t < 4; t++)
                    dot += x[t] * y[t];
                acc += (uint32_t)dot;
            }
            store(i, j, acc, c, ldc, row_off, col_off);
        }
}

void mxp_u8s8_gemm_ukernel_8x48__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, int32_t *c,
                                        size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    quad_tile(48, mr, nr, kc, a, 4, 32, SIZE_MAX, 0, b, c, ldc, row_off, col_off);
}

void mxp_u8s8_gemm_ukernel_8x48_a__scalar(size_t mr, size_t nr, size_t kc, const uint8_t *a, size_t lda,
                                          const int8_t *b, int32_t *c, size_t ldc, const int32_t *row_off,
                                          const int32_t *col_off)
{
    quad_tile(48, mr, nr, kc, a, lda, 4, SIZE_MAX, 0, b, c, ldc, row_off, col_off);
}

/* The AMX kernel's (amx.c): A~ [k/64][32][64], chunks of 16 quads. */
void mxp_u8s8_gemm_ukernel_32x32__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, int32_t *c,
                                         size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    quad_tile(32, mr, nr, kc, a, 64, 4, 16, 32 * 64, b, c, ldc, row_off, col_off);
}

void mxp_u8s8_gemm_ukernel_32x32_a__scalar(size_t mr, size_t nr, size_t kc, const uint8_t *a, size_t lda,
                                           const int8_t *b, int32_t *c, size_t ldc, const int32_t *row_off,
                                           const int32_t *col_off)
{
    quad_tile(32, mr, nr, kc, a, lda, 4, SIZE_MAX, 0, b, c, ldc, row_off, col_off);
}

void mxp_u8s8_gemm_ukernel_6x16__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, int32_t *c,
                                        size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    enum { MR = 6, NR = 16 };
    const int16_t *pa = a, *pb = b;
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            uint32_t acc = 0;
            for (size_t q = 0; q < kc / 2; q++) {
                const int16_t *x = pa + q * 2 * MR + 2 * i, *y = pb + q * 2 * NR + 2 * j;
                acc += (uint32_t)(x[0] * y[0] + x[1] * y[1]); /* |2 * 255 * 128| fits */
            }
            store(i, j, acc, c, ldc, row_off, col_off);
        }
}
#endif

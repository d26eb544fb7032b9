/* uint8 x int8 GEMM micro-kernel, 4 x 8, portable: the reference twin of
 * the VNNI kernel.  Panels are K-quads, [kc/4][4][4] bytes of A~ and
 * [kc/4][8][4] of B~; each int32 sum gets the four products of a quad, as
 * vpdpbusd does, and wraps modulo 2^32 (unsigned arithmetic), so every
 * level gives the same bits. */
#include <stdint.h>

#include "kernels/gemm-kernels.h"

#define MR 4
#define NR 8

/* The int32 with the bits of x (x - 2^32 from 2^31 on), without relying
 * on implementation-defined conversions. */
static int32_t wrap_s32(uint32_t x)
{
    return x <= INT32_MAX ? (int32_t)x : -(int32_t)~x - 1;
}

void mxp_u8s8_gemm_ukernel_4x8__scalar(size_t mr, size_t nr, size_t kc, const void *pa, const void *pb, int32_t *c,
                                       size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
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
        for (size_t j = 0; j < nr; j++) {
            int32_t *p = c + i * ldc + j;
            const uint32_t base = row_off ? (uint32_t)row_off[i] + (uint32_t)col_off[j] : (uint32_t)*p;
            *p = wrap_s32(base + acc[i][j]);
        }
}

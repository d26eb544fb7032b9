/* The portable twin of the 7-bit-A integer GEMM kernel (avx2.c): the same
 * K-quads of bytes, A~ [kc/4][6][4] uint8, B~ [kc/4][16][4] int8, each
 * int32 sum getting the four products of a quad, modulo 2^32 (unsigned
 * arithmetic).  It sums any uint8 A exactly; the AVX2 kernel only A below
 * 128. */
#include <stdint.h>

#include "kernels/gemm-kernels.h"

void mxp_u8s8_gemm_a7_ukernel_6x16__scalar(size_t mr, size_t nr, size_t kc, const void *pa, const void *pb, int32_t *c,
                                        size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    enum { MR = 6, NR = 16 };
    const uint8_t *a = pa;
    const int8_t *b = pb;
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            uint32_t acc = 0;
            for (size_t q = 0; q < kc / 4; q++) {
                const uint8_t *x = a + q * 4 * MR + 4 * i;
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

/* The portable float32 micro-kernels.  mxp_f32_gemm_ukernel_4x8__scalar,
 * the scalar level's: plain multiply then add (ISO C: no contraction into
 * FMA).  The twins of the SIMD kernels (gemm-list.inc), one per shape: each
 * element's chain of fused multiply-adds in k order, then alpha * sum and
 * beta * C in one fused multiply-add, as the vector kernels compute it. */
#include <math.h>
#include <string.h>

#include "kernels/gemm-kernels.h"

#define MR 4
#define NR 8

void mxp_f32_gemm_ukernel_4x8__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                      size_t ldc, double alpha, double beta)
{
    const float *pa = a, *pb = b;
    float acc[MR][NR];
    memset(acc, 0, sizeof acc);
    for (size_t p = 0; p < kc; p++)
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < NR; j++)
                acc[i][j] += pa[p * MR + i] * pb[p * NR + j];
    float *pc = c;
    const float fa = (float)alpha, fb = (float)beta;
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            float *x = &pc[i * ldc + j];
            *x = beta == 0 ? fa * acc[i][j] : fa * acc[i][j] + fb * *x;
        }
}

#if MXP_HAVE_X86_KERNELS
/* Element (i, p) of A at a[i * a_row + p * a_k], (p, j) of B at b[p * ldb + j]. */
static void fma_tile(size_t mr, size_t nr, size_t kc, const float *a, size_t a_row, size_t a_k, const float *b,
                     size_t ldb, float *c, size_t ldc, double alpha, double beta)
{
    const float fa = (float)alpha, fb = (float)beta;
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            float s = 0;
            for (size_t p = 0; p < kc; p++)
                s = fmaf(a[i * a_row + p * a_k], b[p * ldb + j], s);
            const float x = fa * s;
            c[i * ldc + j] = beta != 0 ? fmaf(fb, c[i * ldc + j], x) : x;
        }
}

void mxp_f32_gemm_ukernel_6x32__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                       size_t ldc, double alpha, double beta)
{
    fma_tile(mr, nr, kc, a, 1, 6, b, 32, c, ldc, alpha, beta);
}

void mxp_f32_gemm_ukernel_6x32_a__scalar(size_t mr, size_t nr, size_t kc, const void *a, size_t lda, const void *b,
                                         void *c, size_t ldc, double alpha, double beta)
{
    fma_tile(mr, nr, kc, a, lda, 1, b, 32, c, ldc, alpha, beta);
}

void mxp_f32_gemm_ukernel_6x16__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                       size_t ldc, double alpha, double beta)
{
    fma_tile(mr, nr, kc, a, 1, 6, b, 16, c, ldc, alpha, beta);
}

void mxp_f32_gemm_direct_8x48__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                      void *c, size_t ldc, double alpha, double beta)
{
    fma_tile(mr, nr, kc, a, 1, 8, b, ldb, c, ldc, alpha, beta);
}

void mxp_f32_gemm_direct_6x16__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                      void *c, size_t ldc, double alpha, double beta)
{
    fma_tile(mr, nr, kc, a, 1, 6, b, ldb, c, ldc, alpha, beta);
}
#endif

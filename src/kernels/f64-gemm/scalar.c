/* The portable float64 micro-kernels (see f32-gemm/scalar.c): the scalar
 * level's 4x4, plain multiply then add; the SIMD kernels' twins, each
 * element's chain of fused multiply-adds. */
#include <math.h>
#include <string.h>

#include "kernels/gemm-kernels.h"

#define MR 4
#define NR 4

void mxp_f64_gemm_ukernel_4x4__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                      size_t ldc, double alpha, double beta)
{
    const double *pa = a, *pb = b;
    double acc[MR][NR];
    memset(acc, 0, sizeof acc);
    for (size_t p = 0; p < kc; p++)
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < NR; j++)
                acc[i][j] += pa[p * MR + i] * pb[p * NR + j];
    double *pc = c;
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            double *x = &pc[i * ldc + j];
            *x = beta == 0 ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *x;
        }
}

#if MXP_HAVE_X86_KERNELS
/* Element (i, p) of A at a[i + p * a_k], (p, j) of B at b[p * ldb + j]. */
static void fma_tile(size_t mr, size_t nr, size_t kc, const double *a, size_t a_k, const double *b, size_t ldb,
                     double *c, size_t ldc, double alpha, double beta)
{
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            double s = 0;
            for (size_t p = 0; p < kc; p++)
                s = fma(a[i + p * a_k], b[p * ldb + j], s);
            const double x = alpha * s;
            c[i * ldc + j] = beta != 0 ? fma(beta, c[i * ldc + j], x) : x;
        }
}

void mxp_f64_gemm_ukernel_6x16__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                       size_t ldc, double alpha, double beta)
{
    fma_tile(mr, nr, kc, a, 6, b, 16, c, ldc, alpha, beta);
}

void mxp_f64_gemm_ukernel_6x8__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                      size_t ldc, double alpha, double beta)
{
    fma_tile(mr, nr, kc, a, 6, b, 8, c, ldc, alpha, beta);
}

void mxp_f64_gemm_direct_8x24__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                      void *c, size_t ldc, double alpha, double beta)
{
    fma_tile(mr, nr, kc, a, 8, b, ldb, c, ldc, alpha, beta);
}
#endif

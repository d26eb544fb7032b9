/* The portable reference float64 micro-kernel, 4x4 (see f32-gemm/scalar.c). */
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

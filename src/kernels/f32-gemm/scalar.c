/* The portable reference micro-kernels: float32 4x8 and float64 4x4.  Plain
 * multiply then add (ISO C: no contraction into FMA), the twin every SIMD
 * kernel is tested against. */
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

/* float64 GEMM micro-kernel, 6 x 8, AVX2 + FMA: 12 accumulators of 4 lanes
 * held in registers (as the float32 6 x 16 kernel of src/kernels/f32-gemm/
 * avx2.c).  A whole tile is written from the registers; a partial one
 * through a 6 x 8 buffer. */
#include <immintrin.h>
#include <math.h>

#include "kernels/gemm-kernels.h"

#define MR 6

void mxp_f64_gemm_ukernel_6x8__avx2(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                    size_t ldc, double alpha, double beta)
{
    const double *pa = a, *pb = b;
    __m256d acc0[MR], acc1[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        acc0[i] = acc1[i] = _mm256_setzero_pd();
    for (size_t p = 0; p < kc; p++) {
        const __m256d b0 = _mm256_loadu_pd(pb), b1 = _mm256_loadu_pd(pb + 4);
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            const __m256d ai = _mm256_broadcast_sd(pa + i);
            acc0[i] = _mm256_fmadd_pd(ai, b0, acc0[i]);
            acc1[i] = _mm256_fmadd_pd(ai, b1, acc1[i]);
        }
        pa += MR;
        pb += 8;
    }
    const __m256d va = _mm256_set1_pd(alpha), vb = _mm256_set1_pd(beta);
    double *pc = c;
    if (mr == MR && nr == 8) {
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            double *row = pc + (size_t)i * ldc;
            __m256d x0 = _mm256_mul_pd(va, acc0[i]), x1 = _mm256_mul_pd(va, acc1[i]);
            if (beta != 0) {
                x0 = _mm256_fmadd_pd(vb, _mm256_loadu_pd(row), x0);
                x1 = _mm256_fmadd_pd(vb, _mm256_loadu_pd(row + 4), x1);
            }
            _mm256_storeu_pd(row, x0);
            _mm256_storeu_pd(row + 4, x1);
        }
        return;
    }
    double t[MR][8]; /* constant indices: the accumulators stay in registers */
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
        _mm256_storeu_pd(t[i], _mm256_mul_pd(va, acc0[i]));
        _mm256_storeu_pd(t[i] + 4, _mm256_mul_pd(va, acc1[i]));
    }
    for (size_t i = 0; i < mr; i++) {
        double *row = pc + i * ldc;
        for (size_t j = 0; j < nr; j++) /* beta * C + alpha * sum, rounded as the vector path's fma */
            row[j] = beta != 0 ? fma(beta, row[j], t[i][j]) : t[i][j];
    }
}

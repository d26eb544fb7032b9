/* float64 GEMM micro-kernel, 6 x 8, AVX2 + FMA: 12 accumulators of 4 lanes
 * held in registers (as the float32 6 x 16 kernel of src/kernels/f32-gemm/
 * avx2.c).  A whole tile is written from the registers; a partial one
 * through a 6 x 8 buffer. */
#include <immintrin.h>
#include <math.h>

#include "kernels/gemm-avx2-asm.h"
#include "kernels/gemm-kernels.h"

#define MR 6

/* The tile's sums for R rows (R >= mr; the others stay 0, never stored). */
static inline __attribute__((always_inline)) void tile_rows(int R, size_t mr, size_t nr, size_t kc, const double *pa,
                                                            const double *pb, void *c, size_t ldc, double alpha,
                                                            double beta)
{
    for (size_t i = 0; i < mr; i++) { /* C's lines arrive while the k loop runs */
        _mm_prefetch((const char *)((double *)c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)((double *)c + i * ldc + 7), _MM_HINT_T0);
    }
    __m256d acc0[MR], acc1[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        acc0[i] = acc1[i] = _mm256_setzero_pd();
#define STEP(q)                                                                              \
    do {                                                                                     \
        const __m256d b0 = _mm256_loadu_pd(pb + 8 * (q)), b1 = _mm256_loadu_pd(pb + 8 * (q) + 4); \
        _Pragma("GCC unroll 6") for (int i = 0; i < R; i++)                                  \
        {                                                                                    \
            const __m256d ai = _mm256_broadcast_sd(pa + MR * (q) + i);                       \
            acc0[i] = _mm256_fmadd_pd(ai, b0, acc0[i]);                                      \
            acc1[i] = _mm256_fmadd_pd(ai, b1, acc1[i]);                                      \
        }                                                                                    \
    } while (0)
    size_t p = 0;
#if defined(__x86_64__)
    if (R == 6 && kc >= 4) {
        /* The six-row loop in assembly, as the float32 kernel's: GCC 12
         * spilled accumulators of the intrinsics' loop (16 ymm registers
         * for 12 sums, two B and two broadcast registers).  The same chain
         * of fused multiply-adds per element as the loop below. */
        size_t turns = kc / 4;
        __asm__ volatile(MXP_AVX2_6ROW_LOOP("vmovupd", "vbroadcastsd", "vfmadd231pd", 8)
                         : MXP_AVX2_6ROW_OPERANDS(acc0, acc1)
                         :
                         : MXP_AVX2_6ROW_CLOBBERS);
        p = kc / 4 * 4;
    }
#endif
    for (; p + 4 <= kc; p += 4) { /* four k steps a turn, B~ fetched 8 steps ahead */
        _mm_prefetch((const char *)(pb + 64), _MM_HINT_T0);
        _mm_prefetch((const char *)(pb + 72), _MM_HINT_T0);
        STEP(0);
        STEP(1);
        STEP(2);
        STEP(3);
        pa += 4 * MR;
        pb += 32;
    }
    for (; p < kc; p++) {
        STEP(0);
        pa += MR;
        pb += 8;
    }
#undef STEP
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

/* An edge panel of mr < 6 rows computes 2 or 4 rows of sums, not 6. */
void mxp_f64_gemm_ukernel_6x8__avx2(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                    size_t ldc, double alpha, double beta)
{
    if (mr > 4)
        tile_rows(6, mr, nr, kc, a, b, c, ldc, alpha, beta);
    else if (mr > 2)
        tile_rows(4, mr, nr, kc, a, b, c, ldc, alpha, beta);
    else
        tile_rows(2, mr, nr, kc, a, b, c, ldc, alpha, beta);
}

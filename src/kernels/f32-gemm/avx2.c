/* float32 GEMM micro-kernel, 6 x 16, AVX2 + FMA: 12 accumulators of 8 lanes
 * held in registers.  A whole tile is written from the registers; a partial
 * one through a 6 x 16 buffer (AVX2 has no masked stores of arbitrary width
 * without maskmov's cost). */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "kernels/gemm-avx2-asm.h"
#include "kernels/gemm-kernels.h"

#define MR 6

/* The tile's sums for R rows (R >= mr; the others stay 0, never stored). */
static inline __attribute__((always_inline)) void tile_rows(int R, size_t mr, size_t nr, size_t kc, const float *pa,
                                                            const float *pb, void *c, size_t ldc, double alpha,
                                                            double beta)
{
    for (size_t i = 0; i < mr; i++) { /* C's lines arrive while the k loop runs */
        _mm_prefetch((const char *)((float *)c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)((float *)c + i * ldc + 15), _MM_HINT_T0);
    }
    __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        acc0[i] = acc1[i] = _mm256_setzero_ps();
#define STEP(q)                                                                              \
    do {                                                                                     \
        const __m256 b0 = _mm256_loadu_ps(pb + 16 * (q)), b1 = _mm256_loadu_ps(pb + 16 * (q) + 8); \
        _Pragma("GCC unroll 6") for (int i = 0; i < R; i++)                                  \
        {                                                                                    \
            const __m256 ai = _mm256_broadcast_ss(pa + MR * (q) + i);                        \
            acc0[i] = _mm256_fmadd_ps(ai, b0, acc0[i]);                                      \
            acc1[i] = _mm256_fmadd_ps(ai, b1, acc1[i]);                                      \
        }                                                                                    \
    } while (0)
    size_t p = 0;
#if defined(__x86_64__)
    if (R == 6 && kc >= 4) {
        /* The six-row loop in assembly: twelve accumulators, two B registers
         * and two broadcast registers are 16 ymm registers, and GCC 12
         * spilled two accumulators per turn of the intrinsics' loop (two
         * stores and two reloads per 48 multiply-adds).  The same chain of
         * fused multiply-adds per element as the loop below. */
        size_t turns = kc / 4;
        __asm__ volatile(MXP_AVX2_6ROW_LOOP("vmovups", "vbroadcastss", "vfmadd231ps", 4)
                         : MXP_AVX2_6ROW_OPERANDS(acc0, acc1)
                         :
                         : MXP_AVX2_6ROW_CLOBBERS);
        p = kc / 4 * 4;
    }
#endif
    for (; p + 4 <= kc; p += 4) { /* four k steps a turn, B~ fetched 8 steps ahead */
        _mm_prefetch((const char *)(pb + 128), _MM_HINT_T0);
        _mm_prefetch((const char *)(pb + 144), _MM_HINT_T0);
        STEP(0);
        STEP(1);
        STEP(2);
        STEP(3);
        pa += 4 * MR;
        pb += 64;
    }
    for (; p < kc; p++) {
        STEP(0);
        pa += MR;
        pb += 16;
    }
#undef STEP
    const __m256 va = _mm256_set1_ps((float)alpha), vb = _mm256_set1_ps((float)beta);
    float *pc = c;
    if (mr == MR && nr == 16) { /* a whole tile: constant indices, the sums stay in registers */
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            float *row = pc + (size_t)i * ldc;
            __m256 x0 = _mm256_mul_ps(va, acc0[i]), x1 = _mm256_mul_ps(va, acc1[i]);
            if (beta != 0) {
                x0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(row), x0);
                x1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(row + 8), x1);
            }
            _mm256_storeu_ps(row, x0);
            _mm256_storeu_ps(row + 8, x1);
        }
        return;
    }
    /* An edge tile: the sums go to a buffer with constant indices (indexing
     * the accumulators by the run-time mr would keep all twelve in memory,
     * stored on every k step), then its mr x nr corner into C. */
    float t[MR][16];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
        _mm256_storeu_ps(t[i], _mm256_mul_ps(va, acc0[i]));
        _mm256_storeu_ps(t[i] + 8, _mm256_mul_ps(va, acc1[i]));
    }
    const float fb = (float)beta;
    for (size_t i = 0; i < mr; i++) {
        float *row = pc + i * ldc;
        for (size_t j = 0; j < nr; j++) /* beta * C + alpha * sum, as the vector path's fma rounds */
            row[j] = beta != 0 ? fmaf(fb, row[j], t[i][j]) : t[i][j];
    }
}

/* An edge panel of mr < 6 rows computes 2 or 4 rows of sums, not 6 (M =
 * 128 ends in a panel of 2 rows); each row's sums are the same bits. */
void mxp_f32_gemm_ukernel_6x16__avx2(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                     size_t ldc, double alpha, double beta)
{
    if (mr > 4)
        tile_rows(6, mr, nr, kc, a, b, c, ldc, alpha, beta);
    else if (mr > 2)
        tile_rows(4, mr, nr, kc, a, b, c, ldc, alpha, beta);
    else
        tile_rows(2, mr, nr, kc, a, b, c, ldc, alpha, beta);
}

/* Small M: 6 x 16 with B read in place, rows ldb floats apart (no packing
 * of B for a few rows of A; A~ packed [k][6]); a partial strip's columns
 * through masked loads.  The same chain of fused multiply-adds per
 * element as the packed kernel. */
static inline __attribute__((always_inline)) void direct_rows(int R, size_t mr, size_t nr, size_t kc, const float *pa,
                                                              const float *pb, size_t ldb, float *c, size_t ldc,
                                                              double alpha, double beta)
{
    static const int32_t lanes[16] = { -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0 };
    const __m256i m0 = _mm256_loadu_si256((const __m256i *)(const void *)(lanes + 8 - (nr >= 8 ? 8 : nr)));
    const __m256i m1 = _mm256_loadu_si256((const __m256i *)(const void *)(lanes + 8 - (nr >= 16 ? 8 : nr > 8 ? nr - 8 : 0)));
    const bool whole = nr == 16;
    __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        acc0[i] = acc1[i] = _mm256_setzero_ps();
    for (size_t p = 0; p < kc; p++) {
        _mm_prefetch((const char *)(pb + 8 * ldb), _MM_HINT_T0);
        const __m256 b0 = whole ? _mm256_loadu_ps(pb) : _mm256_maskload_ps(pb, m0);
        const __m256 b1 = whole ? _mm256_loadu_ps(pb + 8) : _mm256_maskload_ps(pb + 8, m1);
#pragma GCC unroll 6
        for (int i = 0; i < R; i++) {
            const __m256 ai = _mm256_broadcast_ss(pa + i);
            acc0[i] = _mm256_fmadd_ps(ai, b0, acc0[i]);
            acc1[i] = _mm256_fmadd_ps(ai, b1, acc1[i]);
        }
        pa += MR;
        pb += ldb;
    }
    const __m256 va = _mm256_set1_ps((float)alpha), vb = _mm256_set1_ps((float)beta);
    float t[MR][16];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
        _mm256_storeu_ps(t[i], _mm256_mul_ps(va, acc0[i]));
        _mm256_storeu_ps(t[i] + 8, _mm256_mul_ps(va, acc1[i]));
    }
    const float fb = (float)beta;
    for (size_t i = 0; i < mr; i++) {
        float *row = c + i * ldc;
        if (whole) {
            __m256 x0 = _mm256_loadu_ps(t[i]), x1 = _mm256_loadu_ps(t[i] + 8);
            if (beta != 0) {
                x0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(row), x0);
                x1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(row + 8), x1);
            }
            _mm256_storeu_ps(row, x0);
            _mm256_storeu_ps(row + 8, x1);
        } else {
            for (size_t j = 0; j < nr; j++)
                row[j] = beta != 0 ? fmaf(fb, row[j], t[i][j]) : t[i][j];
        }
    }
}

void mxp_f32_gemm_direct_6x16__avx2(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                    void *c, size_t ldc, double alpha, double beta)
{
    if (mr > 4)
        direct_rows(6, mr, nr, kc, a, b, ldb, c, ldc, alpha, beta);
    else if (mr > 2)
        direct_rows(4, mr, nr, kc, a, b, ldb, c, ldc, alpha, beta);
    else
        direct_rows(2, mr, nr, kc, a, b, ldb, c, ldc, alpha, beta);
}

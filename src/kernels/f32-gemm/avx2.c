/* float32 GEMM micro-kernels, AVX2 + FMA: 6 x 16 on packed panels (the
 * tile of kernels/gemm-avx2-tile.h, 12 accumulators of 8 lanes), the same
 * with A read in place (_a), 6 x 16 with B read in place (direct), and
 * with both in place (direct _a: tiny products). */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "kernels/gemm-kernels.h"

#define MXP_TILE_T float
#define MXP_TILE_V __m256
#define MXP_TILE_V_(op) _mm256_##op##_ps
#define MXP_TILE_BROADCAST _mm256_broadcast_ss
#define MXP_TILE_FMA fmaf
#define MXP_TILE_ASM_LOOP MXP_AVX2_6ROW_LOOP("vmovups", "vbroadcastss", "vfmadd231ps", 4)
#define MXP_TILE_ASM_LOOP_A MXP_AVX2_6ROW_LOOP_A("vmovups", "vbroadcastss", "vfmadd231ps", 4)
#define MXP_TILE_ASM_LOOP_R MXP_AVX2_6ROW_LOOP_R("vmovups", "vbroadcastss", "vfmadd231ps", 4)
#include "kernels/gemm-avx2-tile.h"

#define MR 6

void mxp_f32_gemm_ukernel_6x16__avx2(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                     size_t ldc, double alpha, double beta)
{
    mxp_avx2_tile(mr, nr, kc, a, MXP_TILE_MR, 1, MXP_TILE_MR, b, c, ldc, alpha, beta);
}

/* A in place: rows lda elements apart, k contiguous. */
void mxp_f32_gemm_ukernel_6x16_a__avx2(size_t mr, size_t nr, size_t kc, const void *a, size_t lda, const void *b,
                                       void *c, size_t ldc, double alpha, double beta)
{
    mxp_avx2_tile(mr, nr, kc, a, mr, lda, 1, b, c, ldc, alpha, beta);
}

/* A's rows where they lie, k in nseg segments of seglen at rows[i] + off[s]
 * (a convolution's taps in x: src/nn/conv-taps.c). */
void mxp_f32_gemm_ukernel_6x16_taps__avx2(size_t mr, size_t nr, size_t nseg, size_t seglen, const void *const *rows,
                                          const ptrdiff_t *off, const void *b, void *c, size_t ldc, double alpha,
                                          double beta)
{
    mxp_avx2_tile_taps(mr, nr, nseg, seglen, (const float *const *)rows, off, b, c, ldc, alpha, beta);
}

/* Small M: 6 x 16 with B read in place, rows ldb floats apart (no packing
 * of B for a few rows of A); A packed [k][6] (ars 1, aks 6) or where it is
 * stored (element (i, p) at pa[i ars + p aks]); a partial strip's columns
 * through masked loads.
 * The same chain of fused multiply-adds per element as the packed kernel. */
static inline __attribute__((always_inline)) void direct_rows(int R, size_t mr, size_t nr, size_t kc, const float *pa,
                                                              size_t ars, size_t aks, const float *pb, size_t ldb,
                                                              float *c, size_t ldc, double alpha, double beta)
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
            const __m256 ai = _mm256_broadcast_ss(pa + (size_t)i * ars);
            acc0[i] = _mm256_fmadd_ps(ai, b0, acc0[i]);
            acc1[i] = _mm256_fmadd_ps(ai, b1, acc1[i]);
        }
        pa += aks;
        pb += ldb;
    }
    const __m256 va = _mm256_set1_ps((float)alpha), vb = _mm256_set1_ps((float)beta);
    float t[MR][16];
    mxp_avx2_tile_scaled(t, acc0, acc1, va);
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
    MXP_GEMM_BY_ROWS(mr, direct_rows, mr, nr, kc, a, 1, MR, b, ldb, c, ldc, alpha, beta);
}

/* Both in place: A's element (i, p) at a[i * a_row + p * a_k] (tiny
 * products, src/gemm/direct.c). */
void mxp_f32_gemm_direct_6x16_a__avx2(size_t mr, size_t nr, size_t kc, const void *a, size_t a_row, size_t a_k,
                                      const void *b, size_t ldb, void *c, size_t ldc, double alpha, double beta)
{
    MXP_GEMM_BY_ROWS(mr, direct_rows, mr, nr, kc, a, a_row, a_k, b, ldb, c, ldc, alpha, beta);
}

/* float32 GEMM micro-kernels, AVX2 + FMA: 6 x 16 on packed panels (the
 * tile of kernels/gemm-avx2-tile.h, 12 accumulators of 8 lanes), the same
 * with A read in place (_a), 6 x 16 with B read in place (direct: small
 * M, A packed [k][6]; masked loads for a partial strip), and with both in
 * place (direct _a: tiny products). */
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

void mxp_f32_gemm_direct_6x16__avx2(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                    void *c, size_t ldc, double alpha, double beta)
{
    MXP_GEMM_BY_ROWS(mr, mxp_avx2_direct_rows, mr, nr, kc, a, 1, MR, b, ldb, c, ldc, alpha, beta);
}

/* Both in place: A's element (i, p) at a[i * a_row + p * a_k] (tiny
 * products, src/gemm/direct.c). */
void mxp_f32_gemm_direct_6x16_a__avx2(size_t mr, size_t nr, size_t kc, const void *a, size_t a_row, size_t a_k,
                                      const void *b, size_t ldb, void *c, size_t ldc, double alpha, double beta)
{
    MXP_GEMM_BY_ROWS(mr, mxp_avx2_direct_rows, mr, nr, kc, a, a_row, a_k, b, ldb, c, ldc, alpha, beta);
}

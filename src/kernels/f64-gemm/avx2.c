/* float64 GEMM micro-kernels, 6 x 8, AVX2 + FMA: the tile of
 * kernels/gemm-avx2-tile.h (as the float32 6 x 16 kernel of
 * src/kernels/f32-gemm/avx2.c), 12 accumulators of 4 lanes, on packed
 * panels and with A read in place (_a); 6 x 8 with B read in place
 * (direct: small M, A packed [k][6]) and with both in place (direct _a:
 * tiny products). */
#include <immintrin.h>
#include <math.h>

#include "kernels/gemm-kernels.h"

#define MXP_TILE_T double
#define MXP_TILE_V __m256d
#define MXP_TILE_V_(op) _mm256_##op##_pd
#define MXP_TILE_BROADCAST _mm256_broadcast_sd
#define MXP_TILE_FMA fma
#define MXP_TILE_ASM_LOOP MXP_AVX2_6ROW_LOOP("vmovupd", "vbroadcastsd", "vfmadd231pd", 8)
#define MXP_TILE_ASM_LOOP_A MXP_AVX2_6ROW_LOOP_A("vmovupd", "vbroadcastsd", "vfmadd231pd", 8)
#include "kernels/gemm-avx2-tile.h"

void mxp_f64_gemm_ukernel_6x8__avx2(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                    size_t ldc, double alpha, double beta)
{
    mxp_avx2_tile(mr, nr, kc, a, MXP_TILE_MR, 1, MXP_TILE_MR, b, c, ldc, alpha, beta);
}

/* A in place: rows lda elements apart, k contiguous. */
void mxp_f64_gemm_ukernel_6x8_a__avx2(size_t mr, size_t nr, size_t kc, const void *a, size_t lda, const void *b,
                                      void *c, size_t ldc, double alpha, double beta)
{
    mxp_avx2_tile(mr, nr, kc, a, mr, lda, 1, b, c, ldc, alpha, beta);
}

#define MR 6

void mxp_f64_gemm_direct_6x8__avx2(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb, void *c,
                                   size_t ldc, double alpha, double beta)
{
    MXP_GEMM_BY_ROWS(mr, mxp_avx2_direct_rows, mr, nr, kc, a, 1, MR, b, ldb, c, ldc, alpha, beta);
}

/* Both in place: A's element (i, p) at a[i * a_row + p * a_k] (tiny
 * products, src/gemm/direct.c). */
void mxp_f64_gemm_direct_6x8_a__avx2(size_t mr, size_t nr, size_t kc, const void *a, size_t a_row, size_t a_k,
                                     const void *b, size_t ldb, void *c, size_t ldc, double alpha, double beta)
{
    MXP_GEMM_BY_ROWS(mr, mxp_avx2_direct_rows, mr, nr, kc, a, a_row, a_k, b, ldb, c, ldc, alpha, beta);
}

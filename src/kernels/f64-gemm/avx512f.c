/* float64 GEMM micro-kernels, AVX-512F, on the tiles of
 * kernels/gemm-avx512-tile.h (as the float32 ones): 8 x 24 (24
 * accumulators of 8 lanes), with B~ packed or B in place. */
#include <immintrin.h>

#include "kernels/gemm-kernels.h"

#define MXP_TILE_T double
#define MXP_TILE_V __m512d
#define MXP_TILE_V_(op) _mm512_##op##_pd
#define MXP_TILE_MASK __mmask8
#define MXP_TILE_ROWS 8
#define MXP_TILE_VECS 3
#include "kernels/gemm-avx512-tile.h"

void mxp_f64_gemm_ukernel_8x24__avx512f(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                        size_t ldc, double alpha, double beta)
{
    mxp_avx512_tile(mr, nr, kc, a, MXP_TILE_MR, 1, MXP_TILE_MR, b, c, ldc, alpha, beta);
}

void mxp_f64_gemm_direct_8x24__avx512f(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                       void *c, size_t ldc, double alpha, double beta)
{
    mxp_avx512_direct_8x3(mr, nr, kc, a, 1, 8, b, ldb, c, ldc, alpha, beta);
}

/* Both in place: A's element (i, p) at a[i * a_row + p * a_k] (tiny
 * products, src/gemm/direct.c). */
void mxp_f64_gemm_direct_8x24_a__avx512f(size_t mr, size_t nr, size_t kc, const void *a, size_t a_row, size_t a_k,
                                         const void *b, size_t ldb, void *c, size_t ldc, double alpha, double beta)
{
    mxp_avx512_direct_8x3(mr, nr, kc, a, a_row, a_k, b, ldb, c, ldc, alpha, beta);
}

/* float32 GEMM micro-kernels, AVX-512F, on the tiles of
 * kernels/gemm-avx512-tile.h: 8 x 48 (24 accumulators of 16 lanes, each k
 * step loads one 48-wide row of B~ and broadcasts 8 values of A~), with A
 * packed or in place, and 8 x 48 with B in place. */
#include <immintrin.h>

#include "kernels/gemm-kernels.h"

#define MXP_TILE_T float
#define MXP_TILE_V __m512
#define MXP_TILE_V_(op) _mm512_##op##_ps
#define MXP_TILE_MASK __mmask16
#define MXP_TILE_ROWS 8
#define MXP_TILE_VECS 3
#include "kernels/gemm-avx512-tile.h"

void mxp_f32_gemm_ukernel_8x48__avx512f(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                        size_t ldc, double alpha, double beta)
{
    mxp_avx512_tile(mr, nr, kc, a, MXP_TILE_MR, 1, MXP_TILE_MR, b, c, ldc, alpha, beta);
}

/* A in place: rows lda elements apart, k contiguous. */
void mxp_f32_gemm_ukernel_8x48_a__avx512f(size_t mr, size_t nr, size_t kc, const void *a, size_t lda, const void *b,
                                          void *c, size_t ldc, double alpha, double beta)
{
    mxp_avx512_tile(mr, nr, kc, a, mr, lda, 1, b, c, ldc, alpha, beta);
}

void mxp_f32_gemm_direct_8x48__avx512f(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                       void *c, size_t ldc, double alpha, double beta)
{
    mxp_avx512_direct_8x3(mr, nr, kc, a, 1, 8, b, ldb, c, ldc, alpha, beta);
}

/* Both in place: A's element (i, p) at a[i * a_row + p * a_k] (tiny
 * products, src/gemm/direct.c). */
void mxp_f32_gemm_direct_8x48_a__avx512f(size_t mr, size_t nr, size_t kc, const void *a, size_t a_row, size_t a_k,
                                         const void *b, size_t ldb, void *c, size_t ldc, double alpha, double beta)
{
    mxp_avx512_direct_8x3(mr, nr, kc, a, a_row, a_k, b, ldb, c, ldc, alpha, beta);
}

/* A's rows where they lie, k in nseg segments of seglen at rows[i] + off[s]
 * (a convolution's taps in x: src/nn/conv-taps.c). */
void mxp_f32_gemm_ukernel_8x48_taps__avx512f(size_t mr, size_t nr, size_t nseg, size_t seglen, const void *const *rows,
                                             const ptrdiff_t *off, const void *b, void *c, size_t ldc, double alpha,
                                             double beta)
{
    mxp_avx512_tile_taps(mr, nr, nseg, seglen, (const float *const *)rows, off, b, c, ldc, alpha, beta);
}

/* The portable float32 micro-kernels.  mxp_f32_gemm_ukernel_4x8__scalar,
 * the scalar level's: plain multiply then add (ISO C: no contraction into
 * FMA).  The twins of the SIMD kernels (gemm-list.inc), one per shape: each
 * element's chain of fused multiply-adds in k order, then alpha * sum and
 * beta * C in one fused multiply-add, as the vector kernels compute it. */
#include "kernels/gemm-kernels.h"

#define MXP_TILE_T float
#define MXP_TILE_FMA fmaf
#define MR 4
#define NR 8
#include "kernels/gemm-scalar-tile.h"

void mxp_f32_gemm_ukernel_4x8__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                      size_t ldc, double alpha, double beta)
{
    mxp_scalar_tile(mr, nr, kc, a, b, c, ldc, alpha, beta);
}

#if MXP_HAVE_X86_KERNELS
void mxp_f32_gemm_ukernel_8x48__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                       size_t ldc, double alpha, double beta)
{
    mxp_scalar_fma_tile(mr, nr, kc, a, 1, 8, b, 48, c, ldc, alpha, beta);
}

void mxp_f32_gemm_ukernel_8x48_a__scalar(size_t mr, size_t nr, size_t kc, const void *a, size_t lda, const void *b,
                                         void *c, size_t ldc, double alpha, double beta)
{
    mxp_scalar_fma_tile(mr, nr, kc, a, lda, 1, b, 48, c, ldc, alpha, beta);
}

void mxp_f32_gemm_ukernel_8x48_taps__scalar(size_t mr, size_t nr, size_t nseg, size_t seglen, const void *const *rows,
                                            const ptrdiff_t *off, const void *b, void *c, size_t ldc, double alpha,
                                            double beta)
{
    mxp_scalar_fma_taps_tile(mr, nr, nseg, seglen, rows, off, b, 48, c, ldc, alpha, beta);
}

void mxp_f32_gemm_ukernel_6x16__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                       size_t ldc, double alpha, double beta)
{
    mxp_scalar_fma_tile(mr, nr, kc, a, 1, 6, b, 16, c, ldc, alpha, beta);
}

void mxp_f32_gemm_ukernel_6x16_a__scalar(size_t mr, size_t nr, size_t kc, const void *a, size_t lda, const void *b,
                                         void *c, size_t ldc, double alpha, double beta)
{
    mxp_scalar_fma_tile(mr, nr, kc, a, lda, 1, b, 16, c, ldc, alpha, beta);
}

void mxp_f32_gemm_ukernel_6x16_taps__scalar(size_t mr, size_t nr, size_t nseg, size_t seglen, const void *const *rows,
                                            const ptrdiff_t *off, const void *b, void *c, size_t ldc, double alpha,
                                            double beta)
{
    mxp_scalar_fma_taps_tile(mr, nr, nseg, seglen, rows, off, b, 16, c, ldc, alpha, beta);
}

void mxp_f32_gemm_direct_8x48__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                      void *c, size_t ldc, double alpha, double beta)
{
    mxp_scalar_fma_tile(mr, nr, kc, a, 1, 8, b, ldb, c, ldc, alpha, beta);
}

void mxp_f32_gemm_direct_6x16__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                      void *c, size_t ldc, double alpha, double beta)
{
    mxp_scalar_fma_tile(mr, nr, kc, a, 1, 6, b, ldb, c, ldc, alpha, beta);
}

void mxp_f32_gemm_direct_8x48_a__scalar(size_t mr, size_t nr, size_t kc, const void *a, size_t a_row, size_t a_k,
                                        const void *b, size_t ldb, void *c, size_t ldc, double alpha, double beta)
{
    mxp_scalar_fma_tile(mr, nr, kc, a, a_row, a_k, b, ldb, c, ldc, alpha, beta);
}

void mxp_f32_gemm_direct_6x16_a__scalar(size_t mr, size_t nr, size_t kc, const void *a, size_t a_row, size_t a_k,
                                        const void *b, size_t ldb, void *c, size_t ldc, double alpha, double beta)
{
    mxp_scalar_fma_tile(mr, nr, kc, a, a_row, a_k, b, ldb, c, ldc, alpha, beta);
}
#endif

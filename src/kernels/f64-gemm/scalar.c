/* The portable float64 micro-kernels (see f32-gemm/scalar.c): the scalar
 * level's 4x4, plain multiply then add; the SIMD kernels' twins, each
 * element's chain of fused multiply-adds. */
#include "kernels/gemm-kernels.h"

#define MXP_TILE_T double
#define MXP_TILE_FMA fma
#define MR 4
#define NR 4
#include "kernels/gemm-scalar-tile.h"

void mxp_f64_gemm_ukernel_4x4__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                      size_t ldc, double alpha, double beta)
{
    mxp_scalar_tile(mr, nr, kc, a, b, c, ldc, alpha, beta);
}

#if MXP_HAVE_X86_KERNELS
void mxp_f64_gemm_ukernel_8x24__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                       size_t ldc, double alpha, double beta)
{
    mxp_scalar_fma_tile(mr, nr, kc, a, 1, 8, b, 24, c, ldc, alpha, beta);
}

void mxp_f64_gemm_ukernel_6x8__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                      size_t ldc, double alpha, double beta)
{
    mxp_scalar_fma_tile(mr, nr, kc, a, 1, 6, b, 8, c, ldc, alpha, beta);
}

void mxp_f64_gemm_ukernel_6x8_a__scalar(size_t mr, size_t nr, size_t kc, const void *a, size_t lda, const void *b,
                                        void *c, size_t ldc, double alpha, double beta)
{
    mxp_scalar_fma_tile(mr, nr, kc, a, lda, 1, b, 8, c, ldc, alpha, beta);
}

void mxp_f64_gemm_direct_6x8__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                     void *c, size_t ldc, double alpha, double beta)
{
    mxp_scalar_fma_tile(mr, nr, kc, a, 1, 6, b, ldb, c, ldc, alpha, beta);
}

void mxp_f64_gemm_direct_6x8_a__scalar(size_t mr, size_t nr, size_t kc, const void *a, size_t a_row, size_t a_k,
                                       const void *b, size_t ldb, void *c, size_t ldc, double alpha, double beta)
{
    mxp_scalar_fma_tile(mr, nr, kc, a, a_row, a_k, b, ldb, c, ldc, alpha, beta);
}

void mxp_f64_gemm_direct_8x24__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                      void *c, size_t ldc, double alpha, double beta)
{
    mxp_scalar_fma_tile(mr, nr, kc, a, 1, 8, b, ldb, c, ldc, alpha, beta);
}

void mxp_f64_gemm_direct_8x24_a__scalar(size_t mr, size_t nr, size_t kc, const void *a, size_t a_row, size_t a_k,
                                        const void *b, size_t ldb, void *c, size_t ldc, double alpha, double beta)
{
    mxp_scalar_fma_tile(mr, nr, kc, a, a_row, a_k, b, ldb, c, ldc, alpha, beta);
}
#endif

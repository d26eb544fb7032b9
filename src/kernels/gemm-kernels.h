/* Prototypes of the GEMM micro-kernels (see src/gemm/gemm-internal.h for
 * the contract): mxp_<acc>_gemm_ukernel_<MR>x<NR>__<isa>. */
#ifndef MXP_KERNELS_GEMM_KERNELS_H
#define MXP_KERNELS_GEMM_KERNELS_H

#include <stddef.h>

#define MXP_GEMM_UKERNEL(name) \
    void name(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c, size_t ldc, double alpha, \
              double beta);

MXP_GEMM_UKERNEL(mxp_f32_gemm_ukernel_4x8__scalar)
MXP_GEMM_UKERNEL(mxp_f64_gemm_ukernel_4x4__scalar)
MXP_GEMM_UKERNEL(mxp_f32_gemm_ukernel_6x16__avx2)
MXP_GEMM_UKERNEL(mxp_f32_gemm_ukernel_6x32__avx512f)
MXP_GEMM_UKERNEL(mxp_f64_gemm_ukernel_6x16__avx512f)
MXP_GEMM_UKERNEL(mxp_bf16_gemm_ukernel_6x32__avx512bf16)

#undef MXP_GEMM_UKERNEL
#endif

/* GEMM configurations: a micro-kernel and its tile and cache-block sizes.
 * Block sizes for a core with 32 KiB L1d, 1 MiB L2 (Zen 4): the B panel
 * KC x NR and an A panel MR x KC stay in L1, MC x KC of A in L2. */
#include "gemm/gemm-internal.h"
#include "kernels/gemm-kernels.h"

static const mxp_gemm_config configs[] = {
#if MXP_HAVE_X86_KERNELS
    { "f32_gemm_6x32__avx512f", MXP_F32, MXP_ISA_AVX512, 6, 32, 96, 256, 2048, mxp_f32_gemm_ukernel_6x32__avx512f },
    { "f32_gemm_6x16__avx2", MXP_F32, MXP_ISA_AVX2, 6, 16, 96, 256, 2048, mxp_f32_gemm_ukernel_6x16__avx2 },
    { "f64_gemm_6x16__avx512f", MXP_F64, MXP_ISA_AVX512, 6, 16, 72, 256, 1024, mxp_f64_gemm_ukernel_6x16__avx512f },
#endif
    { "f32_gemm_4x8__scalar", MXP_F32, MXP_ISA_SCALAR, 4, 8, 64, 256, 1024, mxp_f32_gemm_ukernel_4x8__scalar },
    { "f64_gemm_4x4__scalar", MXP_F64, MXP_ISA_SCALAR, 4, 4, 64, 256, 1024, mxp_f64_gemm_ukernel_4x4__scalar },
};

const mxp_gemm_config *mxp_gemm_config_for(mxp_dtype acc, mxp_isa isa)
{
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++)
        if (configs[i].acc == acc && configs[i].isa <= isa)
            return &configs[i]; /* listed most capable first */
    return NULL;
}

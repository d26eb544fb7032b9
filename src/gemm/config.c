/* GEMM configurations: a micro-kernel and its tile and cache-block sizes.
 * Block sizes for a core with 32 KiB L1d, 1 MiB L2 (Zen 4), measured there
 * (docs/gemm.md, Speed): the A block MC x KC stays in L2 (f32 144 x 512:
 * 288 KiB, bf16 96 x 1024: 192 KiB), the B micro-panel KC x NR (64 KiB)
 * streams from L2 into L1, the B block KC x NC in L3.  A deeper KC than the
 * 256 that keeps a B micro-panel in L1 won 1-4% on Zen 4 (C is read and
 * written once per KC step, and A's rows are read in longer runs).  KC sets
 * where the float partial sums are added into C, so it is part of the
 * summation order: changing it changes the last bits of float results
 * (never their dependence on the thread count). */
#include "gemm/gemm-internal.h"
#include "kernels/gemm-kernels.h"

static const mxp_gemm_config configs[] = {
#if MXP_HAVE_X86_KERNELS
    { "bf16_gemm_6x32__avx512bf16", MXP_F32, MXP_BF16, 2, MXP_ISA_AVX512BF16, 6, 32, 96, 1024, 2048,
      mxp_bf16_gemm_ukernel_6x32__avx512bf16,
      mxp_bf16_gemm_ukernel_6x32_a__avx512bf16 },
    { "f32_gemm_6x32__avx512f", MXP_F32, MXP_F32, 1, MXP_ISA_AVX512, 6, 32, 144, 512, 2048,
      mxp_f32_gemm_ukernel_6x32__avx512f, mxp_f32_gemm_ukernel_6x32_a__avx512f },
    { "f32_gemm_6x16__avx2", MXP_F32, MXP_F32, 1, MXP_ISA_AVX2, 6, 16, 144, 256, 4096, mxp_f32_gemm_ukernel_6x16__avx2, NULL },
    { "f64_gemm_6x16__avx512f", MXP_F64, MXP_F64, 1, MXP_ISA_AVX512, 6, 16, 72, 256, 1024,
      mxp_f64_gemm_ukernel_6x16__avx512f, NULL },
    { "f64_gemm_6x8__avx2", MXP_F64, MXP_F64, 1, MXP_ISA_AVX2, 6, 8, 96, 256, 2048, mxp_f64_gemm_ukernel_6x8__avx2,
      NULL },
#endif
    { "f32_gemm_4x8__scalar", MXP_F32, MXP_F32, 1, MXP_ISA_SCALAR, 4, 8, 64, 256, 1024,
      mxp_f32_gemm_ukernel_4x8__scalar, NULL },
    { "f64_gemm_4x4__scalar", MXP_F64, MXP_F64, 1, MXP_ISA_SCALAR, 4, 4, 64, 256, 1024,
      mxp_f64_gemm_ukernel_4x4__scalar, NULL },
};

/* Does this packed dtype serve inputs of type t?  The accumulator's own
 * type holds every input exactly.  bfloat16 panels take bfloat16 inputs
 * only: float8 would fit exactly too, but its conversion to bfloat16 has no
 * SIMD kernel yet, so the float32 path is faster for it. */
static bool packs(mxp_dtype packed, mxp_dtype acc, mxp_dtype t)
{
    return packed == acc || (packed == MXP_BF16 && t == MXP_BF16);
}

const mxp_gemm_config *mxp_gemm_config_for(mxp_dtype acc, mxp_dtype a_type, mxp_dtype b_type, mxp_isa isa)
{
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        const mxp_gemm_config *c = &configs[i];
        if (c->acc == acc && c->isa <= isa && packs(c->packed, acc, a_type) && packs(c->packed, acc, b_type))
            return c; /* listed most capable first */
    }
    return NULL;
}

static const mxp_gemm_direct_config direct_configs[] = {
#if MXP_HAVE_X86_KERNELS
    /* rows of B per rank update, measured at N = K = 4096: f32 16 (8 and 32 lose
     * 10-30% at M = 8..16); bf16 16 for one row panel, 64 for two (M = 16:
     * 6.5 -> 4.5 ms; 64 with one panel loses 25%) */
    { "bf16_gemm_direct_8x32__avx512bf16", MXP_F32, MXP_BF16, 2, MXP_ISA_AVX512BF16, 8, 32, 256, 16, 64, 16,
      mxp_bf16_gemm_direct_8x32__avx512bf16 },
    { "f32_gemm_direct_8x48__avx512f", MXP_F32, MXP_F32, 1, MXP_ISA_AVX512, 8, 48, 256, 16, 16, 16,
      mxp_f32_gemm_direct_8x48__avx512f },
    { "f64_gemm_direct_8x24__avx512f", MXP_F64, MXP_F64, 1, MXP_ISA_AVX512, 8, 24, 256, 16, 16, 16,
      mxp_f64_gemm_direct_8x24__avx512f },
    { "f32_gemm_direct_6x16__avx2", MXP_F32, MXP_F32, 1, MXP_ISA_AVX2, 6, 16, 256, 16, 16, 16,
      mxp_f32_gemm_direct_6x16__avx2 },
#endif
    { NULL, 0, 0, 1, MXP_ISA_SCALAR, 0, 0, 0, 1, 1, 0, NULL },
};

const mxp_gemm_direct_config *mxp_gemm_direct_config_for(mxp_dtype acc, mxp_dtype b_type, mxp_isa isa)
{
    for (size_t i = 0; direct_configs[i].name; i++) {
        const mxp_gemm_direct_config *d = &direct_configs[i];
        if (d->acc == acc && d->packed == b_type && d->isa <= isa)
            return d;
    }
    return NULL;
}

/* float16 -> uint4 (a byte per element, the value in the low bits) with
 * AVX-512F, the deterministic modes, one pass: 32 elements widened in
 * registers, converted as to int8 and clamped to [0, 15]
 * (cvt-h16-avx512.h; stochastic rounding goes through float32).  Twin:
 * the reference converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-h16-avx512.h"
#include "kernels/cvt-sr-avx512.h"

void mxp_f16_u4_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_h16_by_mode_avx512(dst, src, n, p, H16_F16, H16_TO_U4);
}

void mxp_f16_u4_vcvt__avx512f_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f32_avx512(dst, src, n, p, SR_U4, SRC_F16);
}

/* float32 -> float6_e2m3fn with AVX2: the deterministic modes by the float unit
 * (mxp_f32_to_narrow_fp_avx2), stochastic rounding by the variable-shift
 * method (cvt-f32-avx2.h); the format's special encodings by its style
 * (mxp_narrow_finish_avx2).  Twin: the reference converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx2.h"
#include "kernels/cvt-sr-avx2.h"

void mxp_f32_e2m3_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_by_mode_avx2(dst, src, n, p, (mxp_f32_target2){ { 6, 3, 1, 0, MXP_NARROW_FINITE }, 0, 0, 1 });
}

void mxp_f32_e2m3_vcvt__avx2_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f32_avx2(dst, src, n, p, SR_E2M3);
}

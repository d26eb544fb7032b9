/* float32 -> e5m2 with AVX2: the deterministic modes by the float unit
 * (mxp_f32_narrow_fp_mag_avx2, the finish once for 32 lanes: faster than
 * float16 rounded to odd by F16C and then rounded on its bits, which this
 * kernel had until 2026-12, 3.6 -> 3.25 ns per 32 elements at 4M on Zen 4),
 * stochastic rounding by add-and-shift (_sr, cvt-sr-avx2.h). */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx2.h"
#include "kernels/cvt-sr-avx2.h"

void mxp_f32_e5m2_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_by_mode_avx2(dst, src, n, p, (mxp_f32_target2){ { 8, 2, 15, 1, 0 }, 0, 0, 1 });
}

void mxp_f32_e5m2_vcvt__avx2_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f32_avx2(dst, src, n, p, SR_E5M2);
}

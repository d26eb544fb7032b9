/* float32 -> uint2 (a byte per element, the value in the low bits) with
 * AVX2: every mode by the integer method of cvt-round-avx2.h
 * (mxp_f32_to_small_int_avx2), clamped to [0, 3]: saturating, NaN -> 0,
 * as the reference converter (its twin) and the AVX-512 kernel. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx2.h"
#include "kernels/cvt-sr-avx2.h"

void mxp_f32_u2_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_by_mode_avx2(dst, src, n, p, (mxp_f32_target2){ { 0, 0, 0, 0, 0 }, 0, 3, 0 });
}

void mxp_f32_u2_vcvt__avx2_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f32_avx2(dst, src, n, p, SR_U2);
}

/* float32 -> uint2 (a byte per element, the value in the low bits) with
 * AVX-512F: every mode by the integer method of int8 (cvt-f32-avx512.h),
 * clamped to [0, 3]: saturating, NaN -> 0, as the reference converter;
 * the deterministic modes faster by vcvtps2dq after a clamp to the range
 * in float32 (_hw, mxp_f32_to_int_clamped_avx512).  Twin: the reference
 * converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx512.h"
#include "kernels/cvt-sr-avx512.h"

void mxp_f32_u2_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_by_mode_avx512(dst, src, n, p, (mxp_f32_target){ { 0, 0, 0, 0, 0 }, 0, 3 });
}

void mxp_f32_u2_vcvt__avx512f_hw(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_bytes16_avx512_by_mode(dst, src, n, p, BYTES_SMALL_INT_HW, 0, 3);
}

void mxp_f32_u2_vcvt__avx512f_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f32_avx512(dst, src, n, p, SR_U2, SRC_F32);
}

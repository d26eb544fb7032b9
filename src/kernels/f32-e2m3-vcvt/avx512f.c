/* float32 -> float6_e2m3fn with AVX-512F: every mode and both overflow policies
 * by "add, then shift" (cvt-round-avx512.h, mxp_f32_to_narrow_fast_avx512;
 * vectors holding inf or NaN by the integer method), the deterministic modes
 * faster through bfloat16 rounded to odd (_bf16), the format's special
 * encodings by its style.  Twin: the reference converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx512.h"
#include "kernels/cvt-h16-f8-avx512.h"
#include "kernels/cvt-sr-avx512.h"

void mxp_f32_e2m3_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_by_mode_avx512(dst, src, n, p, (mxp_f32_target){ { 6, 3, 1, 0, MXP_NARROW_FINITE_512 }, 0, 0 });
}

/* The deterministic modes through bfloat16 rounded to odd (cvt-h16-f8-avx512.h):
 * 32 lanes of 16 bits a step, about twice the speed of the 32-bit method. */
void mxp_f32_e2m3_vcvt__avx512f_bf16(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_bf16_odd_by_mode_avx512(dst, src, n, p, (mxp_narrow_fmt){ 6, 3, 1, 0, MXP_NARROW_FINITE_512 });
}

void mxp_f32_e2m3_vcvt__avx512f_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f32_avx512(dst, src, n, p, SR_E2M3, SRC_F32);
}

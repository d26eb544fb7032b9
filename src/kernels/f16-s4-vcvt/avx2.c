/* float16 -> int4 (a byte per element, the value in the low bits) with
 * AVX2, every mode, one pass: each 32-element block widened exactly to
 * float32 on the stack, then the float32 kernel's integer method clamped to
 * [-8, 7] (cvt-f32-avx2.h).  Twin: the reference converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx2.h"
#include "kernels/cvt-sr-avx2.h"

void mxp_f16_s4_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_src_by_mode_avx2(dst, src, n, p, (mxp_f32_target2){ { 0, 0, 0, 0, 0 }, -8, 7, 0 }, SRC32_F16);
}

void mxp_f16_s4_vcvt__avx2_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_src_avx2(dst, src, n, p, SR_S4, SRC32_F16);
}

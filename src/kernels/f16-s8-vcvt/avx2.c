/* float16 -> int8 with AVX2, every mode: 32 elements widened exactly to
 * float32 on the stack, then the float32 kernel's core (cvt-f32-avx2.h,
 * mxp_src_by_mode_avx2): one pass, no float32 array; stochastic rounding
 * faster by add-and-shift on elements widened in registers (_sr,
 * cvt-sr-avx2.h).  Twin: the reference converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx2.h"
#include "kernels/cvt-sr-avx2.h"

void mxp_f16_s8_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_src_by_mode_avx2(dst, src, n, p, (mxp_f32_target2){ { 0, 0, 0, 0, 0 }, -128, 127, 0 }, SRC32_F16);
}

void mxp_f16_s8_vcvt__avx2_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_src_avx2(dst, src, n, p, SR_S8, SRC32_F16);
}

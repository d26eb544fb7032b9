/* float32 -> uint8 with AVX-512F: every mode by the integer method
 * (cvt-f32-avx512.h); the deterministic modes faster by vcvtps2dq (_hw);
 * stochastic rounding by add-and-shift (_sr, cvt-sr-avx512.h).  Forward,
 * reading a vector before writing it: safe in place. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx512.h"
#include "kernels/cvt-sr-avx512.h"

void mxp_f32_u8_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_by_mode_avx512(dst, src, n, p, (mxp_f32_target){ { 0, 0, 0, 0, 0 }, 0, 255 });
}

void mxp_f32_u8_vcvt__avx512f_hw(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_bytes16_avx512_by_mode(dst, src, n, p, BYTES_UINT8_HW, 0, 0);
}

void mxp_f32_u8_vcvt__avx512f_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f32_avx512(dst, src, n, p, SR_U8, SRC_F32);
}

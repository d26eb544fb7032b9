/* float32 -> e5m2 with AVX-512F: every mode by the integer method
 * (cvt-f32-avx512.h); stochastic rounding by add-and-shift (_sr,
 * cvt-sr-avx512.h); the deterministic modes faster through float16
 * rounded to odd (_f16).  Forward, reading a vector before writing it:
 * safe in place. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx512.h"
#include "kernels/cvt-sr-avx512.h"

void mxp_f32_e5m2_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_by_mode_avx512(dst, src, n, p, (mxp_f32_target){ { 8, 2, 15, 1, 0 }, 0, 0 });
}

void mxp_f32_e5m2_vcvt__avx512f_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f32_avx512(dst, src, n, p, SR_E5M2, SRC_F32);
}

/* ---- float32 -> e5m2 through float16 rounded to odd ------------------------
 * float8_e5m2 is the top byte of a float16 (same exponent field and bias,
 * subnormals included).  vcvtps2ph toward zero, with the last bit set where
 * that was inexact ("round to odd"), keeps 8 more bits than e5m2 and the
 * sticky bit, so rounding that float16 by "add, then shift by 8" in any
 * deterministic mode gives the rounding of the float32.  Beyond float16's
 * range the float16 is max (odd), which overflows e5m2 as the float32 does.
 * NaNs: the float16 NaN's top byte (quiet bit and top payload bit).
 * Runs in the library's MXCSR (no DAZ), set by the loop of cvt-f32-avx512.h. */
void mxp_f32_e5m2_vcvt__avx512f_f16(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_bytes16_avx512_by_mode(dst, src, n, p, BYTES_E5M2_VIA_F16, 0, 0);
}

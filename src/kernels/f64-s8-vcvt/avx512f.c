/* float64 -> int8 with AVX-512F: the deterministic modes through float32
 * rounded to odd, then vcvtps2dq (_odd, cvt-f64-avx512.h); stochastic
 * rounding by add-and-shift (_sr, cvt-sr-avx512.h). */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f64-avx512.h"
#include "kernels/cvt-sr-avx512.h"

void mxp_f64_s8_vcvt__avx512f_odd(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f64_odd_by_mode_avx512(dst, src, n, p, ODD_S8);
}

void mxp_f64_s8_vcvt__avx512f_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f64_avx512(dst, src, n, p, SR_S8);
}

/* float16 -> float8_e3m4 with AVX-512F: the deterministic modes in one pass, on
 * the 16-bit patterns themselves (cvt-h16-avx512.h, mxp_h16_to_f8_avx512);
 * stochastic rounding by the generic path.  Twin: the reference converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-h16-avx512.h"
#include "kernels/cvt-sr-avx512.h"

void mxp_f16_e3m4_vcvt__avx512f(void *d, const void *s, size_t n, const mxp_cvt_params *p)
{
    mxp_h16_by_mode_avx512(d, s, n, p, H16_F16, H16_TO_E3M4);
}

void mxp_f16_e3m4_vcvt__avx512f_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f32_avx512(dst, src, n, p, SR_E3M4, SRC_F16);
}

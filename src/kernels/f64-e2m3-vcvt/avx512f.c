/* float64 -> float6_e2m3fn with AVX-512F, stochastic rounding: add-and-shift on
 * 64-bit lanes (cvt-sr-avx512.h); the deterministic modes go through float32
 * rounded to odd (src/convert/convert-route.c).  Twin: the reference
 * converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-sr-avx512.h"

void mxp_f64_e2m3_vcvt__avx512f_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f64_avx512(dst, src, n, p, SR_E2M3);
}

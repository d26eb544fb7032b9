/* float64 -> bfloat16 with AVX-512F: every rounding mode by the integer method,
 * rounded once from the float64 value (cvt-f64-avx512.h); the
 * deterministic modes faster through float32 rounded to odd (_odd);
 * stochastic rounding by add-and-shift (_sr, cvt-sr-avx512.h). */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f64-avx512.h"
#include "kernels/cvt-sr-avx512.h"

void mxp_f64_bf16_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f64_by_mode_avx512(dst, src, n, p, (mxp_f64_fmt){ 16, 7, 127, 1 });
}

void mxp_f64_bf16_vcvt__avx512f_odd(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f64_odd_by_mode_avx512(dst, src, n, p, ODD_BF16);
}

void mxp_f64_bf16_vcvt__avx512f_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f64_avx512(dst, src, n, p, SR_BF16);
}

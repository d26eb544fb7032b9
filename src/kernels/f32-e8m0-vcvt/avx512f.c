/* float32 -> float8_e8m0fnu with AVX-512F, every mode: the exponent field plus the
 * mode's rounding up, on float32 bits
 * (cvt-e8m0-avx512.h).  Twin: the reference converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-e8m0-avx512.h"

void mxp_f32_e8m0_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_e8m0_by_mode_avx512(dst, src, n, p, E8M0_FROM_F32);
}

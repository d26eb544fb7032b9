/* float16 -> float8_e8m0fnu with AVX2, every mode: the exponent field plus the
 * mode's rounding up, on float32 bits (the source widened exactly)
 * (cvt-e8m0-avx2.h).  Twin: the reference converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-e8m0-avx2.h"

void mxp_f16_e8m0_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_e8m0_by_mode_avx2(dst, src, n, p, E8M0_FROM_F16);
}

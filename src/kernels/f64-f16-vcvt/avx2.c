/* float64 -> float16 with AVX2: the deterministic modes through float32
 * rounded to odd, then vcvtps2ph (_odd, cvt-f64-avx2.h; nearest away from
 * the truncation with its last bit set); stochastic rounding by
 * add-and-shift from float64 (_sr, cvt-sr-avx2.h). */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f64-avx2.h"
#include "kernels/cvt-sr-avx2.h"

void mxp_f64_f16_vcvt__avx2_odd(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f64_by_mode_avx2(dst, src, n, p, F64_TO_F16);
}

void mxp_f64_f16_vcvt__avx2_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f64_avx2(dst, src, n, p, SR_F16);
}

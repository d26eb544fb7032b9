/* float16 -> float8_e5m2fnuz with AVX2, every mode: the deterministic modes in
 * 16-bit lanes (cvt-h16-f8-avx2.h), stochastic rounding by the float32
 * core on elements widened on the stack.  Twin: the reference converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-h16-f8-avx2.h"
#include "kernels/cvt-sr-avx2.h"

void mxp_f16_e5m2fnuz_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_h16_f8_by_mode_avx2(dst, src, n, p, (mxp_narrow_fmt2){ 8, 2, 16, 0, MXP_NARROW_FNUZ }, SRC32_F16);
}

void mxp_f16_e5m2fnuz_vcvt__avx2_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_src_avx2(dst, src, n, p, SR_E5M2FNUZ, SRC32_F16);
}

/* float32 -> float8_e5m2fnuz with AVX-512F: every mode and both overflow policies
 * by the integer method (cvt-f32-avx512.h, mxp_f32_to_narrow_avx512), the
 * format's special encodings by its style.  Twin: the reference converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx512.h"

void mxp_f32_e5m2fnuz_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_by_mode_avx512(dst, src, n, p, (mxp_f32_target){ { 8, 2, 16, 0, MXP_NARROW_FNUZ_512 }, 0, 0 });
}

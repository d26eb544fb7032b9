/* e4m3 -> float32 with AVX2, exact: one kernel serves every rounding
 * mode (cvt-widen-avx2.h). */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-widen-avx2.h"

void mxp_e4m3_f32_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    (void)p;
    mxp_widen_loop_avx2(dst, src, n, WIDEN2_E4M3, 0);
}

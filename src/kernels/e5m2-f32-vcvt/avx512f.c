/* e5m2 -> float32 with AVX-512F, exact: one kernel serves every rounding
 * mode (cvt-widen-avx512.h). */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-widen-avx512.h"

void mxp_e5m2_f32_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_widen_loop_avx512(dst, src, n, SRC_E5M2, p->overflow == MXP_OVERFLOW_SATURATE);
}

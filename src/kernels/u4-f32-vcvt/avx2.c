/* uint4 -> float32 with AVX2, exact: one kernel serves every rounding mode
 * (cvt-byte-widen-avx2.h). */
#include "kernels/cvt-byte-widen-avx2.h"
#include "kernels/cvt-kernels.h"

void mxp_u4_f32_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_byte_widen_avx2(dst, src, n, p, (mxp_byte_fmt){ 4, 0, 0, 0, BYTE_UINT }, BYTE_TO_F32);
}

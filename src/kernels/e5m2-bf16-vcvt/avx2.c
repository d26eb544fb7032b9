/* float8_e5m2 -> bfloat16 with AVX2, exact: one kernel serves every rounding mode
 * (cvt-byte-widen-avx2.h). */
#include "kernels/cvt-byte-widen-avx2.h"
#include "kernels/cvt-kernels.h"

void mxp_e5m2_bf16_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_byte_widen_avx2(dst, src, n, p, (mxp_byte_fmt){ 8, 5, 2, 15, BYTE_IEEE }, BYTE_TO_BF16);
}

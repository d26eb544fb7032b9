/* float8_e5m2 -> uint8 with AVX2, stochastic rounding in one pass: eight
 * elements widened exactly to float32 in registers (cvt-widen-avx2.h),
 * then add-and-shift (cvt-sr-avx2.h), as the AVX-512 kernel beside it.
 * The deterministic modes take a table lookup or two kernels
 * (src/convert/convert.c).  Twin: the reference converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-sr-avx2.h"

void mxp_e5m2_u8_vcvt__avx2_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_src_avx2(dst, src, n, p, SR_U8, SRC32_E5M2);
}

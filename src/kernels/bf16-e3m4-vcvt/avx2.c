/* bfloat16 -> float8_e3m4 with AVX2, every mode: 32 elements widened exactly to
 * float32 on the stack, then the float32 kernel's core (cvt-f32-avx2.h,
 * mxp_src_by_mode_avx2): one pass, no float32 array.  Twin: the reference
 * converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx2.h"

void mxp_bf16_e3m4_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_src_by_mode_avx2(dst, src, n, p, (mxp_f32_target2){ { 8, 4, 3, 1, 0 }, 0, 0, 1 }, SRC32_BF16);
}

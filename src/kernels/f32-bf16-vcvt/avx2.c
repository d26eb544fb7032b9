/* float32 -> bfloat16 with AVX2, every rounding mode (cvt-f32-avx2.h). */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx2.h"

/* bfloat16, every mode: "add, then shift by 16" on the bits. */
void mxp_f32_bf16_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_by_mode_avx2(dst, src, n, p, (mxp_f32_target2){ { 16, 7, 127, 1, 0 }, 0, 0, 0 });
}

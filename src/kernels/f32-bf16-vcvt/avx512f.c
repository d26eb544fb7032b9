/* float32 -> bfloat16 with AVX-512F, every rounding mode: "add, then shift
 * by 16" on the bits (cvt-f32-avx512.h). */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx512.h"

void mxp_f32_bf16_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_by_mode_avx512(dst, src, n, p, (mxp_f32_target){ { 16, 7, 127, 1, 0 }, 0, 0 });
}

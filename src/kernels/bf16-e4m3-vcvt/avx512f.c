/* bfloat16 -> e4m3 with AVX-512F: the deterministic modes in one pass
 * (cvt-h16-avx512.h); stochastic rounding in one pass, widened to float32
 * in registers, then add-and-shift (_sr, cvt-sr-avx512.h). */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-h16-avx512.h"
#include "kernels/cvt-sr-avx512.h"

void mxp_bf16_e4m3_vcvt__avx512f(void *d, const void *s, size_t n, const mxp_cvt_params *p)
{
    mxp_h16_by_mode_avx512(d, s, n, p, H16_BF16, H16_TO_E4M3);
}

void mxp_bf16_e4m3_vcvt__avx512f_sr(void *d, const void *s, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f32_avx512(d, s, n, p, SR_E4M3, SRC_BF16);
}

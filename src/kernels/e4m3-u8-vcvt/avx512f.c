/* e4m3 -> uint8 with AVX-512F, stochastic rounding in one pass: widened to
 * float32 in registers, then add-and-shift (cvt-sr-avx512.h).  The
 * deterministic modes take a table lookup or two kernels
 * (src/convert/convert.c). */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-sr-avx512.h"

void mxp_e4m3_u8_vcvt__avx512f_sr(void *d, const void *s, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f32_avx512(d, s, n, p, SR_U8, SRC_E4M3);
}

/* The float32 peak-rate loop of AVX-512: peak-template.h's 12 independent
 * accumulator chains, 16 lanes each.  See peak-kernels.h. */
#include "kernels/simd-f32-avx512.h"
#include "kernels/peak-template.h"

uint64_t mxp_f32_peak_fma__avx512f(uint64_t iters)
{
    return mxp_peak_chains(iters, MXP_SIMD_SET1(1.0000001f), MXP_SIMD_SET1(0.9999999f), 1);
}

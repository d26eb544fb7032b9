/* The float64 peak-rate loop of AVX-512: peak-template.h's 12 independent
 * accumulator chains, 8 lanes each.  See peak-kernels.h. */
#include "kernels/simd-f64-avx512.h"
#include "kernels/peak-template.h"

uint64_t mxp_f64_peak_fma__avx512f(uint64_t iters)
{
    return mxp_peak_chains(iters, MXP_SIMD_SET1(1.0000001), MXP_SIMD_SET1(0.9999999), 1);
}

/* The float32 peak loop's portable twin: peak-template.h's 12 chains of
 * multiply-adds, one lane each.  See peak-kernels.h. */
#define MXP_SIMD_T float
#include "kernels/simd-scalar.h"
#include "kernels/peak-template.h"

uint64_t mxp_f32_peak_fma__scalar(uint64_t iters)
{
    return mxp_peak_chains(iters, 1.0000001f, 0.9999999f, 1);
}

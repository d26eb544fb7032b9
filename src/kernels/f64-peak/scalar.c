/* The float64 peak loop's portable twin: peak-template.h's 12 chains of
 * multiply-adds, one lane each.  See peak-kernels.h. */
#define MXP_SIMD_T double
#include "kernels/simd-scalar.h"
#include "kernels/peak-template.h"

uint64_t mxp_f64_peak_fma__scalar(uint64_t iters)
{
    return mxp_peak_chains(iters, 1.0000001, 0.9999999, 1);
}

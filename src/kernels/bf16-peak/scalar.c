/* The bfloat16 dot-product peak loop's portable twin: peak-template.h's 12
 * float32 chains, each adding two products of bfloat16 values (exact in
 * float32) a step, as one lane of vdpbf16ps.  See peak-kernels.h. */
#define MXP_SIMD_T float
#include "kernels/simd-scalar.h"

#define MXP_PEAK_STEP(acc, x, y) ((acc) + (x) * (y) + (x) * (y))
#define MXP_PEAK_OPERAND float
#include "kernels/peak-template.h"

uint64_t mxp_bf16_peak_dot__scalar(uint64_t iters)
{
    return mxp_peak_chains(iters, 1.0f, 0x1.fep-1f, 2); /* bfloat16 0x3f80 and 0x3f7f */
}

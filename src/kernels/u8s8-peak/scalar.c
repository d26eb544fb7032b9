/* The uint8 x int8 dot-product peak loop's portable twin: peak-template.h's
 * 12 int32 chains (uint32_t: they wrap as the int32 lanes do, without
 * overflow's undefined behaviour), each adding four byte products a step,
 * as one lane of vpdpbusd.  See peak-kernels.h. */
#include <stdint.h>

#define MXP_SIMD_T uint32_t
#include "kernels/simd-scalar.h"

#define MXP_PEAK_STEP(acc, x, y) ((acc) + (uint32_t)(4 * ((x) * (y))))
#define MXP_PEAK_OPERAND int
#include "kernels/peak-template.h"

uint64_t mxp_u8s8_peak_dot__scalar(uint64_t iters)
{
    const uint8_t x = 3;
    const int8_t y = -2;
    return mxp_peak_chains(iters, x, y, 4);
}

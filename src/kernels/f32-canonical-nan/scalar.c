/* float32 NaNs as the positive quiet NaN: the reference twin, on the bits
 * (a loop the compiler vectorizes).  See canonical-nan-kernels.h. */
#include <stdint.h>

#include "kernels/canonical-nan-kernels.h"

void mxp_f32_canonical_nan__scalar(float *x, size_t n)
{
    uint32_t *u = (uint32_t *)(void *)x;
    for (size_t i = 0; i < n; i++)
        u[i] = (u[i] & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : u[i];
}

/* float64 NaNs as the positive quiet NaN: the reference twin, on the bits
 * (a loop the compiler vectorizes).  See canonical-nan-kernels.h. */
#include <stdint.h>

#include "kernels/canonical-nan-kernels.h"

void mxp_f64_canonical_nan__scalar(double *x, size_t n)
{
    uint64_t *u = (uint64_t *)(void *)x;
    for (size_t i = 0; i < n; i++)
        u[i] = (u[i] & 0x7fffffffffffffffull) > 0x7ff0000000000000ull ? 0x7ff8000000000000ull : u[i];
}

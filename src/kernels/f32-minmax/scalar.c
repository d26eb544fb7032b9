/* The finite minimum and maximum: the reference twin.  See
 * quant-kernels.h. */
#include <math.h>

#include "kernels/quant-kernels.h"

void mxp_f32_minmax__scalar(const float *x, size_t n, float *lo, float *hi)
{
    float a = *lo, b = *hi;
    for (size_t i = 0; i < n; i++) {
        const float v = x[i];
        if (fabsf(v) <= 3.40282347e38f) { /* finite */
            a = v < a ? v : a;
            b = v > b ? v : b;
        }
    }
    *lo = a;
    *hi = b;
}

void mxp_f32_minmax_cols__scalar(const float *x, size_t n, float *lo, float *hi)
{
    for (size_t i = 0; i < n; i++) {
        const float v = x[i];
        if (fabsf(v) <= 3.40282347e38f) { /* finite */
            lo[i] = v < lo[i] ? v : lo[i];
            hi[i] = v > hi[i] ? v : hi[i];
        }
    }
}

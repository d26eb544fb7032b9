/* Pairwise float32 -> float64 sums: the reference twin, mxp_pairwise_f64
 * of the elements widened to float64 (exactly), block by block.  See
 * sum-kernels.h. */
#include "kernels/pairwise-sum.h"
#include "kernels/sum-kernels.h"

double mxp_f32_sum_f64__scalar(const float *x, size_t n)
{
    if (n > 128) { /* mxp_pairwise_f64's halves */
        const size_t h = n / 2 / 8 * 8;
        return mxp_f32_sum_f64__scalar(x, h) + mxp_f32_sum_f64__scalar(x + h, n - h);
    }
    double d[128];
    for (size_t i = 0; i < n; i++)
        d[i] = x[i];
    return mxp_pairwise_f64(d, n);
}

/* Pairwise float32 -> float64 sums: the reference twin, mxp_pairwise_f64
 * of the elements widened to float64 (exactly), block by block.  See
 * sum-kernels.h. */
#include "kernels/pairwise-sum.h"
#include "kernels/sum-kernels.h"

static double widened(const float *x, size_t n) /* 8 <= n <= 128 */
{
    double d[128];
    for (size_t i = 0; i < n; i++)
        d[i] = x[i];
    return mxp_pairwise_f64(d, n);
}

#define MXP_PW_T float
#define MXP_PW_S double
#define MXP_PW_FN pairwise
#define MXP_PW_BLOCK widened
#include "kernels/pairwise-template.h"

double mxp_f32_sum_f64__scalar(const float *x, size_t n)
{
    return pairwise(x, n);
}

/* Pairwise float32 -> float64 sums: the reference twin, pairwise_f64 of
 * src/ops/reduce.c reading float32 (each element widened exactly where it
 * is added: the same additions in the same order).  See sum-kernels.h. */
#include "kernels/sum-kernels.h"

double mxp_f32_sum_f64__scalar(const float *x, size_t n)
{
    if (n < 8) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += x[i];
        return s;
    }
    if (n <= 128) {
        double r[8];
        for (int k = 0; k < 8; k++)
            r[k] = x[k];
        size_t i = 8;
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++)
                r[k] += x[i + k];
        double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            s += x[i];
        return s;
    }
    const size_t h = n / 2 / 8 * 8;
    return mxp_f32_sum_f64__scalar(x, h) + mxp_f32_sum_f64__scalar(x + h, n - h);
}

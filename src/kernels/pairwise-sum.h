/* NumPy's pairwise summation of float64, as src/ops/reduce.c sums: 8
 * running sums over blocks of up to 128 elements, halves above that (the
 * split at a multiple of 8 below n/2).  Shared by the reductions and the
 * twin of the float32 sum kernels (src/kernels/f32-sum/scalar.c). */
#ifndef MXP_KERNELS_PAIRWISE_SUM_H
#define MXP_KERNELS_PAIRWISE_SUM_H

#include <stddef.h>

static inline double mxp_pairwise_f64(const double *x, size_t n)
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
    size_t h = n / 2 / 8 * 8;
    return mxp_pairwise_f64(x, h) + mxp_pairwise_f64(x + h, n - h);
}

#endif

/* The float64 peak loop's portable twin: the same 12 chains of
 * multiply-adds, one lane each.  See peak-kernels.h. */
#include "kernels/peak-kernels.h"

uint64_t mxp_f64_peak_fma__scalar(uint64_t iters)
{
    double acc[12];
    for (int i = 0; i < 12; i++)
        acc[i] = (double)i;
    for (uint64_t it = 0; it < iters; it++)
        for (int i = 0; i < 12; i++)
            acc[i] = acc[i] * 1.0000001 + 0.9999999;
    double s = 0;
    for (int i = 0; i < 12; i++)
        s += acc[i];
    volatile double sink = s;
    (void)sink;
    return iters * 12 * 2;
}

/* The uint8 x int8 dot-product peak loop's portable twin: 12 int32 chains,
 * each adding four byte products a step, as one lane of vpdpbusd.  See
 * peak-kernels.h. */
#include "kernels/peak-kernels.h"

uint64_t mxp_u8s8_peak_dot__scalar(uint64_t iters)
{
    const uint8_t x = 3;
    const int8_t y = -2;
    uint32_t acc[12]; /* wraps as the int32 lanes do, without overflow's undefined behaviour */
    for (int i = 0; i < 12; i++)
        acc[i] = (uint32_t)i;
    for (uint64_t it = 0; it < iters; it++)
        for (int i = 0; i < 12; i++)
            acc[i] += (uint32_t)(4 * (x * y));
    uint32_t s = 0;
    for (int i = 0; i < 12; i++)
        s += acc[i];
    volatile uint32_t sink = s;
    (void)sink;
    return iters * 12 * 4 * 2;
}

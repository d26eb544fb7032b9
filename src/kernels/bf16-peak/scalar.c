/* The bfloat16 dot-product peak loop's portable twin: 12 float32 chains,
 * each adding two products of bfloat16 values (exact in float32) a step,
 * as one lane of vdpbf16ps.  See peak-kernels.h. */
#include "kernels/peak-kernels.h"

uint64_t mxp_bf16_peak_dot__scalar(uint64_t iters)
{
    const float x = 1.0f, y = 0x1.fep-1f; /* bfloat16 0x3f80 and 0x3f7f */
    float acc[12];
    for (int i = 0; i < 12; i++)
        acc[i] = (float)i;
    for (uint64_t it = 0; it < iters; it++)
        for (int i = 0; i < 12; i++)
            acc[i] = acc[i] + x * y + x * y;
    float s = 0;
    for (int i = 0; i < 12; i++)
        s += acc[i];
    volatile float sink = s;
    (void)sink;
    return iters * 12 * 2 * 2;
}

/* The twins of the float32 GEMM finish kernels, one element at a time: the
 * float32 sum widened, the bias added in float64, one rounding by the
 * cast (float32) or mxp_f64_to_bf16_rne (bfloat16); and the float32 bias
 * and clamp.  See finish-kernels.h. */
#include <stdint.h>

#include "kernels/bf16-round.h"
#include "kernels/finish-kernels.h"

#if MXP_HAVE_X86_KERNELS
void mxp_f32_finish__scalar(void *dst, int bf16, const float *src, size_t len, const double *bias, int per_col)
{
    for (size_t q = 0; q < len; q++) {
        double t = (double)src[q];
        if (bias)
            t = t + bias[per_col ? q : 0];
        if (bf16)
            ((uint16_t *)dst)[q] = mxp_f64_to_bf16_rne(t);
        else
            ((float *)dst)[q] = (float)t;
    }
}
#endif

/* On every machine: gemm.c runs it where no line of the list does. */
void mxp_f32_finish_bias__scalar(float *dst, const float *src, const float *bias, size_t len, int clamp, float lo, float hi)
{
    for (size_t q = 0; q < len; q++) {
        const float v = src[q] + bias[q];
        dst[q] = !clamp ? v : v < lo ? lo : v > hi ? hi : v; /* NaN stays */
    }
}

/* The frame of the SIMD float32 -> float64 pairwise sums
 * (src/kernels/f32-sum/avx2.c, avx512f.c): the halving of
 * kernels/pairwise-template.h around the file's vector block, which ends
 * in mxp_f32_sum_block_end.  The including file defines first
 *   static double block(const float *x, size_t n)   8 <= n <= 128
 * and returns mxp_f32_sum_pairwise(x, n) from its kernel.  Included once
 * per file. */
#ifndef MXP_KERNELS_F32_SUM_PAIRWISE_H
#define MXP_KERNELS_F32_SUM_PAIRWISE_H

#include <stddef.h>

/* A block's end: its 8 running sums v added ((0+1)+(2+3))+((4+5)+(6+7)),
 * as mxp_pairwise_f64 adds them, then x[i..n) one by one. */
static inline double mxp_f32_sum_block_end(const double v[8], const float *x, size_t i, size_t n)
{
    double s = ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
    for (; i < n; i++)
        s += x[i];
    return s;
}

static double block(const float *x, size_t n);

#define MXP_PW_T float
#define MXP_PW_S double
#define MXP_PW_FN mxp_f32_sum_pairwise
#define MXP_PW_BLOCK block
#include "kernels/pairwise-template.h"

#endif

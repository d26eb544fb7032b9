/* NumPy's pairwise summation (kernels/pairwise-template.h) of float64 and
 * of float32, as src/ops/reduce.c sums: 8 running sums over blocks of up
 * to 128 elements, halves above that (the split at a multiple of 8 below
 * n/2).  Shared by the reductions and the twin of the float32 sum kernels
 * (src/kernels/f32-sum/scalar.c).  One function per type, so that the
 * compiler vectorizes each one's 8-lane loop. */
#ifndef MXP_KERNELS_PAIRWISE_SUM_H
#define MXP_KERNELS_PAIRWISE_SUM_H

#define MXP_PW_T double
#define MXP_PW_S double
#define MXP_PW_FN mxp_pairwise_f64
#define MXP_PW_LANES mxp_pairwise_f64_block
#include "kernels/pairwise-template.h"

#define MXP_PW_T float
#define MXP_PW_S float
#define MXP_PW_FN mxp_pairwise_f32
#define MXP_PW_LANES mxp_pairwise_f32_block
#include "kernels/pairwise-template.h"

#endif

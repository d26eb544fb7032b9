/* Pairwise sums of float32 in float64 (src/kernels/f32-sum/, list
 * f32-sum-list.inc): NumPy's pairwise order as src/ops/reduce.c's
 * pairwise_f64 has it (8 running sums over blocks of up to 128 elements,
 * halves above that), each float32 widened exactly in registers -- the bits
 * of widening the block to float64 and calling pairwise_f64, without the
 * pass through memory.  The twin, mxp_f32_sum_f64__scalar, is that
 * function reading float32; test_sum_kernels compares every kernel with it
 * and test_reduce the reductions at every ISA level. */
#ifndef MXP_KERNELS_SUM_KERNELS_H
#define MXP_KERNELS_SUM_KERNELS_H

#include <stddef.h>

typedef double mxp_f32_sum_f64_ukernel(const float *x, size_t n);

#define MXP_F32_SUM(isa, tile, fn, twin) mxp_f32_sum_f64_ukernel fn;
#include "kernels/f32-sum-list.inc"
#undef MXP_F32_SUM

#endif

/* Pairwise sums of float32 in float64 (src/kernels/f32-sum/): NumPy's
 * pairwise order as src/ops/reduce.c's pairwise_f64 has it (8 running sums
 * over blocks of up to 128 elements, halves above that), each float32
 * widened exactly in registers — the bits of widening the block to float64
 * and calling pairwise_f64 (the reference twin), without the pass through
 * memory; test_reduce compares the two at every ISA level. */
#ifndef MXP_KERNELS_SUM_KERNELS_H
#define MXP_KERNELS_SUM_KERNELS_H

#include <stddef.h>

typedef double (*mxp_sum_f32_f64_fn)(const float *x, size_t n);
double mxp_sum_f32_f64__avx2(const float *x, size_t n);
double mxp_sum_f32_f64__avx512f(const float *x, size_t n);

#endif

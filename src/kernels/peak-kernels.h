/* The peak-rate loops (src/kernels/f32-peak/, f64-peak/, bf16-peak/,
 * u8s8-peak/; list peak-list.inc): in-register loops of 12 independent
 * multiply-add chains, no memory traffic, that measure the machine's peak
 * rate for one instruction (mxp_peak_gflops, src/core/peak.c: the ceiling
 * a GEMM's "% of peak" is measured against).  Each runs iters iterations
 * and returns the operations done: floating-point operations (a
 * multiply-add counts 2) or, for u8s8, integer ones.  The scalar twins do
 * the same chains one lane wide. */
#ifndef MXP_KERNELS_PEAK_KERNELS_H
#define MXP_KERNELS_PEAK_KERNELS_H

#include <stdint.h>

typedef uint64_t mxp_peak_ukernel(uint64_t iters);

#define MXP_PEAK(op, isa, ops, fn, twin) mxp_peak_ukernel fn;
#include "kernels/peak-list.inc"
#undef MXP_PEAK

#endif

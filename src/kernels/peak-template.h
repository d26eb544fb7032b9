/* The peak-rate loop of the src/kernels/<dtype>-peak/ kernels
 * (peak-kernels.h), written once over the vector names of the simd-*.h
 * header the kernel file includes first: 12 independent accumulator
 * chains, no memory traffic.  A step is MXP_PEAK_STEP(acc, x, y), by
 * default MXP_SIMD_FMADD; a file whose step is another instruction (a dot
 * product) defines MXP_PEAK_STEP and the type of its operands,
 * MXP_PEAK_OPERAND, before including this. */
#ifndef MXP_KERNELS_PEAK_TEMPLATE_H
#define MXP_KERNELS_PEAK_TEMPLATE_H

#ifndef MXP_SIMD_V
#error "include a simd-*.h before peak-template.h"
#endif
#ifndef MXP_PEAK_STEP
#define MXP_PEAK_STEP MXP_SIMD_FMADD
#define MXP_PEAK_OPERAND MXP_SIMD_V
#endif

#include <stdint.h>

#include "kernels/peak-kernels.h"

/* iters steps of the 12 chains; the operations done, macs multiply-adds a
 * lane a step counting 2 each */
static inline __attribute__((always_inline)) uint64_t mxp_peak_chains(uint64_t iters, MXP_PEAK_OPERAND x,
                                                                     MXP_PEAK_OPERAND y, int macs)
{
    MXP_SIMD_V acc[12];
#pragma GCC unroll 12
    for (int i = 0; i < 12; i++) /* distinct, or the compiler merges the chains into one */
        acc[i] = MXP_SIMD_SET1((MXP_SIMD_T)i);
    for (uint64_t it = 0; it < iters; it++) {
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++)
            acc[i] = MXP_PEAK_STEP(acc[i], x, y);
    }
    MXP_SIMD_V s = acc[0];
    for (int i = 1; i < 12; i++)
        s = MXP_SIMD_ADD(s, acc[i]);
    volatile MXP_SIMD_T sink = MXP_SIMD_REDUCE_ADD(s);
    (void)sink;
    return iters * 12 * MXP_SIMD_N * (uint64_t)macs * 2;
}

#endif

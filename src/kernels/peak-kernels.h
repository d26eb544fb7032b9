/* The peak-rate loops (src/kernels/peak/): run iters iterations, return the
 * number of floating-point (or integer) operations done. */
#ifndef MXP_KERNELS_PEAK_KERNELS_H
#define MXP_KERNELS_PEAK_KERNELS_H

#include <stdint.h>

uint64_t mxp_peak_f32_fma__avx2(uint64_t iters);
uint64_t mxp_peak_f64_fma__avx2(uint64_t iters);
uint64_t mxp_peak_f32_fma__avx512f(uint64_t iters);
uint64_t mxp_peak_f64_fma__avx512f(uint64_t iters);
uint64_t mxp_peak_bf16_dot__avx512bf16(uint64_t iters);
uint64_t mxp_peak_u8s8_dot__avx512bf16(uint64_t iters);

#endif

/* Rounding float32 GEMM sums plus a bias into C: the kernels' contract and
 * prototypes, expanded from src/kernels/f32-finish-list.inc.
 *
 *   dst[q] = round(float64(src[q]) + b)     q < len
 *
 * b = bias[q] (per_col), bias[0] (one value a row) or nothing (bias NULL);
 * the sum in float64, nearest even (float64 + float64 in that order: a NaN
 * sum keeps its payload), one rounding to nearest even into float32
 * (bf16 0: dst holds floats) or bfloat16 (bf16 1: dst holds uint16_t, the
 * bits of mxp_f64_to_bf16_rne).  The general epilogue's arithmetic for a
 * bias without an activation (src/gemm/gemm.c, finish_f32_rows), in the
 * library's floating-point environment (no FTZ/DAZ).  dst may be src (a float32
 * C that held the sums: the GEMM finishes in place). */
#ifndef MXP_KERNELS_FINISH_KERNELS_H
#define MXP_KERNELS_FINISH_KERNELS_H

#include <stddef.h>

typedef void (*mxp_f32_finish_fn)(void *dst, int bf16, const float *src, size_t len, const double *bias,
                                  int per_col);

/*   dst[q] = v < lo ? lo : v > hi ? hi : v    (clamp), else v,
 *   v = src[q] + bias[q]                       q < len
 *
 * in float32 (nearest even, the library's environment): the epilogue of a
 * float32 C with a float32-exact bias per column and float32 clamp bounds
 * (src/gemm/gemm.c, finish_f32_rows; the general epilogue's float64 sum
 * rounds to the same float32, a sum of two floats being exact there).  A
 * NaN v stays (a NaN of src's or bias's; which payload, when both are NaN,
 * is the hardware's operand order, not fixed).  dst may be src. */
typedef void (*mxp_f32_finish_bias_fn)(float *dst, const float *src, const float *bias, size_t len, int clamp, float lo,
                                float hi);
/* The bias kernels' twin, built on every machine (the list's lines only on x86). */
void mxp_f32_finish_bias__scalar(float *dst, const float *src, const float *bias, size_t len, int clamp, float lo, float hi);

#define MXP_F32_FINISH(FN, ISA, TWIN)                                                                              \
    void FN(void *dst, int bf16, const float *src, size_t len, const double *bias, int per_col);                   \
    void TWIN(void *dst, int bf16, const float *src, size_t len, const double *bias, int per_col);
#define MXP_F32_FINISH_BIAS(FN, ISA, TWIN)                                                                                \
    void FN(float *dst, const float *src, const float *bias, size_t len, int clamp, float lo, float hi);
#include "kernels/f32-finish-list.inc"
#undef MXP_F32_FINISH
#undef MXP_F32_FINISH_BIAS

#endif

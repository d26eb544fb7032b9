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

#define MXP_F32_FINISH(FN, ISA, TWIN)                                                                              \
    void FN(void *dst, int bf16, const float *src, size_t len, const double *bias, int per_col);                   \
    void TWIN(void *dst, int bf16, const float *src, size_t len, const double *bias, int per_col);
#include "kernels/f32-finish-list.inc"
#undef MXP_F32_FINISH

#endif

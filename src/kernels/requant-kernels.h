/* Requantization of int32 GEMM sums into int8/uint8 C with integer
 * arithmetic only (src/kernels/s32-requant/): a scale m * 2^-shift (m an
 * integer with |m| < 2^24, 1 <= shift <= 62) per tensor or per column,
 *   dst[q] = clamp(round(acc[q] * m / 2^shift) + zp, lo, hi)
 * rounded exactly with a deterministic mode (mxp_rounding: nearest even,
 * nearest away, toward zero, up, down), the bytes of int8 or uint8 codes.
 * m and shift: len entries (per_col) or one. */
#ifndef MXP_KERNELS_REQUANT_KERNELS_H
#define MXP_KERNELS_REQUANT_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef void (*mxp_s32_requant_fn)(uint8_t *dst, const int32_t *acc, size_t len, const int32_t *m,
                                   const int32_t *shift, int per_col, int32_t zp, int32_t lo, int32_t hi, int mode);
void mxp_s32_requant__scalar(uint8_t *dst, const int32_t *acc, size_t len, const int32_t *m, const int32_t *shift,
                             int per_col, int32_t zp, int32_t lo, int32_t hi, int mode);
void mxp_s32_requant__avx512f(uint8_t *dst, const int32_t *acc, size_t len, const int32_t *m, const int32_t *shift,
                              int per_col, int32_t zp, int32_t lo, int32_t hi, int mode);

/* float32 C: dst[q] = acc[q] * scale rounded once to float32 with mode
 * (nearest even, up, down or toward zero), exactly; a zero product has
 * IEEE's sign.  scale: finite, len entries (per_col) or one.  Returns false
 * (nothing written) when the MXCSR flushes subnormals (FTZ/DAZ); overflow
 * gives IEEE's infinity or largest finite by the mode.  The reference is
 * mxp_convert of the float64 product rounded to odd (src/gemm/int8.c). */
bool mxp_s32_dequant_f32__avx512f(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,
                                  int mode);
/* The same plus a float32 bias per column: dst[q] = round(acc[q] * scale +
 * bias[q]), the product exact (or rounded to odd) in float64, the sum in
 * float64 (nearest even), one rounding with mode: the bits of the general
 * epilogue (scale * acc, bias added in float64, mxp_convert).  bias: len
 * finite values. */
bool mxp_s32_dequant_bias_f32__avx512f(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,
                                       const float *bias, int mode);
/* The AVX2 twins (avx2.c): nearest even only (false for the other modes). */
bool mxp_s32_dequant_f32__avx2(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col, int mode);
bool mxp_s32_dequant_bias_f32__avx2(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,
                                    const float *bias, int mode);

#endif

/* Affine quantization kernels: float32 -> int8 or uint8 codes with one
 * (scale, zero point) or one per element (src/kernels/f32-quant/, list
 * f32-quant-list.inc), and the finite min/max that calibration needs
 * (src/kernels/f32-minmax/, f32-minmax-list.inc).  Every kernel gives its
 * twin's bytes (the scalar.c functions; tests/quant/test_quant_kernels.c
 * checks them and the twins against an MPFR oracle). */
#ifndef MXP_KERNELS_QUANT_KERNELS_H
#define MXP_KERNELS_QUANT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* dst[i] = clamp(round_even(x[i] / scale) + zp, qmin, qmax), the quotient
 * rounded as if computed exactly (= in float64, which is exact enough for
 * float32 operands); NaN -> zp, +-inf saturate.  dst holds the codes' bytes
 * (int8 or uint8 bit patterns).  Needs scale finite > 0 and
 * -128 <= qmin <= zp <= qmax <= 255. */
typedef void mxp_f32_quant_ukernel(uint8_t *dst, const float *x, size_t n, float scale, int32_t zp, int32_t qmin,
                                   int32_t qmax);

/* Folds the finite values of x[0..n) into *lo and *hi (min and max; NaN and
 * infinities skipped; unchanged when there is none). */
typedef void mxp_f32_minmax_ukernel(const float *x, size_t n, float *lo, float *hi);

/* One (scale, zero point) per element (per channel on the last axis, one
 * row at a time): dst[i] from x[i], scale[i], zp[i] as above; rinv[i] =
 * 1 / scale[i] in float32, every scale within [2^-100, 2^100] (the caller
 * checks). */
typedef void mxp_f32_quant_cols_ukernel(uint8_t *dst, const float *x, size_t n, const float *rinv,
                                        const float *scale, const int32_t *zp, int32_t qmin, int32_t qmax);
/* Folds the finite x[i] into lo[i], hi[i] (one row into per-column ranges). */
typedef void mxp_f32_minmax_cols_ukernel(const float *x, size_t n, float *lo, float *hi);

#define MXP_F32_QUANT(isa, tile, fn, twin) mxp_f32_quant_ukernel fn;
#define MXP_F32_QUANT_COLS(isa, tile, fn, twin) mxp_f32_quant_cols_ukernel fn;
#include "kernels/f32-quant-list.inc"
#undef MXP_F32_QUANT
#undef MXP_F32_QUANT_COLS
#define MXP_F32_MINMAX(isa, tile, fn, twin) mxp_f32_minmax_ukernel fn;
#define MXP_F32_MINMAX_COLS(isa, tile, fn, twin) mxp_f32_minmax_cols_ukernel fn;
#include "kernels/f32-minmax-list.inc"
#undef MXP_F32_MINMAX
#undef MXP_F32_MINMAX_COLS

/* The SIMD kernels estimate x / scale as x * (1 / scale) in float32 and
 * hand a vector to the reference when a lane lies within this distance of a
 * rounding boundary (x.5), is not finite, or the scale is outside
 * [2^-100, 2^100] (where 1 / scale would lose bits or underflow).  For
 * |x / scale| <= 300 (beyond it every code saturates) the estimate is within
 * 300 * 2^-22 < 2^-13 of the quotient, so unflagged lanes round exactly. */
#define MXP_QUANT_TIE_MARGIN (1.0f / 4096.0f)
#define MXP_QUANT_SCALE_MIN 0x1p-100f
#define MXP_QUANT_SCALE_MAX 0x1p+100f

#endif

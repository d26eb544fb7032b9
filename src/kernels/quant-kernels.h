/* Affine quantization kernels (src/kernels/f32-quant/): float32 -> int8 or
 * uint8 codes with one (scale, zero point), and the finite min/max that
 * calibration needs.  Every kernel gives the scalar reference's bytes. */
#ifndef MXP_KERNELS_QUANT_KERNELS_H
#define MXP_KERNELS_QUANT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* dst[i] = clamp(round_even(x[i] / scale) + zp, qmin, qmax), the quotient
 * rounded as if computed exactly (= in float64, which is exact enough for
 * float32 operands); NaN -> zp, +-inf saturate.  dst holds the codes' bytes
 * (int8 or uint8 bit patterns).  Needs scale finite > 0 and
 * -128 <= qmin <= zp <= qmax <= 255. */
typedef void (*mxp_f32_quant_fn)(uint8_t *dst, const float *x, size_t n, float scale, int32_t zp, int32_t qmin,
                                 int32_t qmax);
void mxp_f32_quant__scalar(uint8_t *dst, const float *x, size_t n, float scale, int32_t zp, int32_t qmin,
                           int32_t qmax);
void mxp_f32_quant__avx2(uint8_t *dst, const float *x, size_t n, float scale, int32_t zp, int32_t qmin,
                         int32_t qmax);
void mxp_f32_quant__avx512f(uint8_t *dst, const float *x, size_t n, float scale, int32_t zp, int32_t qmin,
                            int32_t qmax);

/* Folds the finite values of x[0..n) into *lo and *hi (min and max; NaN and
 * infinities skipped; unchanged when there is none). */
typedef void (*mxp_f32_minmax_fn)(const float *x, size_t n, float *lo, float *hi);
void mxp_f32_minmax__scalar(const float *x, size_t n, float *lo, float *hi);
void mxp_f32_minmax__avx2(const float *x, size_t n, float *lo, float *hi);
void mxp_f32_minmax__avx512f(const float *x, size_t n, float *lo, float *hi);

/* One (scale, zero point) per element (per channel on the last axis, one
 * row at a time): dst[i] from x[i], scale[i], zp[i] as above; rinv[i] =
 * 1 / scale[i] in float32, every scale within [2^-100, 2^100] (the caller
 * checks). */
void mxp_f32_quant_cols__scalar(uint8_t *dst, const float *x, size_t n, const float *rinv, const float *scale,
                                const int32_t *zp, int32_t qmin, int32_t qmax);
void mxp_f32_quant_cols__avx512f(uint8_t *dst, const float *x, size_t n, const float *rinv, const float *scale,
                                 const int32_t *zp, int32_t qmin, int32_t qmax);
/* Folds the finite x[i] into lo[i], hi[i] (one row into per-column ranges). */
void mxp_f32_minmax_cols__scalar(const float *x, size_t n, float *lo, float *hi);
void mxp_f32_minmax_cols__avx512f(const float *x, size_t n, float *lo, float *hi);

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

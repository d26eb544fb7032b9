/* Vector math through SLEEF (src/kernels/vmath/): exp, log, tanh, sin, cos
 * and the activations on contiguous arrays, one file per ISA.  Built only
 * with SLEEF (MXP_HAVE_SLEEF); the reference twin is the libm path of
 * src/ops/elementwise-math.c (mxp_ew_unary1), which the tests compare them
 * with (tests/ops/test_vmath.c).
 *
 * float32 kernels: SLEEF's float32 u10 functions (max error 1.0 ulp) for
 * the functions that are one SLEEF call (exp, log, tanh, sin, cos); the
 * activations widened to float64, computed as below and rounded to nearest
 * even once in the kernel (so only for round-to-nearest-even outputs).
 * float64 kernels: SLEEF's float64 functions (u10; erfc u15) and float64
 * arithmetic in the reference's formulas (sigmoid as 1/(1 + e^-x) or
 * e^x/(1 + e^x), gelu as 0.5 x erfc(-x/sqrt2) ...): a few float64 ulp, so
 * one rounding to float32 or narrower is within 1 ulp and in practice
 * correctly rounded. */
#ifndef MXP_KERNELS_VMATH_KERNELS_H
#define MXP_KERNELS_VMATH_KERNELS_H

#include <stddef.h>
#include <stdint.h>

enum mxp_vmath_fn {
    MXP_VMATH_EXP,
    MXP_VMATH_LOG,
    MXP_VMATH_TANH,
    MXP_VMATH_SIN,
    MXP_VMATH_COS,
    MXP_VMATH_F32_COUNT, /* the float32 kernels stop here */
    MXP_VMATH_SIGMOID = MXP_VMATH_F32_COUNT,
    MXP_VMATH_SILU,
    MXP_VMATH_GELU,      /* 0.5 x erfc(-x / sqrt 2) */
    MXP_VMATH_GELU_TANH, /* x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)) */
    MXP_VMATH_COUNT
};

/* y[i] = fn(x[i]) for i < n; y may be x.  The float32 kernels round the
 * activations to nearest even (the environment's mode: mxp's fpenv). */
void mxp_vmath_f32__avx2(int fn, float *y, const float *x, size_t n);
void mxp_vmath_f32__avx512f(int fn, float *y, const float *x, size_t n);
void mxp_vmath_f64__avx2(int fn, double *y, const double *x, size_t n);
void mxp_vmath_f64__avx512f(int fn, double *y, const double *x, size_t n);

/* exp, log, tanh, sin, cos (fn < MXP_VMATH_F32_COUNT) for a float16 output
 * rounded to nearest even: float32 results whose one rounding into float16
 * is the correctly rounded one.  Each lane is SLEEF's float32 u10 result y
 * (within 1 float32 ulp of the exact value) when every float32 within
 * MXP_VMATH_H16_MARGIN steps of y (its bit pattern +- the margin) rounds to
 * the same float16 -- the exact value lies in that interval; otherwise (a
 * few lanes in ten thousand) the float64 kernel's result rounded to float32
 * to odd, which rounds into float16 as the float64 value does (the float64
 * path's bits).  Returns how many lanes took the float64 recomputation. */
enum { MXP_VMATH_H16_MARGIN = 2 };
size_t mxp_vmath_f32_h16__avx2(int fn, float *y, const float *x, size_t n);
size_t mxp_vmath_f32_h16__avx512f(int fn, float *y, const float *x, size_t n);
/* The same for float16 input and output in one pass (no float32 arrays):
 * y[i] = fn(x[i]) rounded to nearest even, overflowing to inf. */
size_t mxp_vmath_f16__avx2(int fn, uint16_t *y, const uint16_t *x, size_t n);
size_t mxp_vmath_f16__avx512f(int fn, uint16_t *y, const uint16_t *x, size_t n);

#endif

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
/* (a NaN result is written as the positive quiet NaN 0x7fc00000, as every
 * elementwise operation gives it) */
void mxp_vmath_f32__avx2(int fn, float *y, const float *x, size_t n);
void mxp_vmath_f32__avx512f(int fn, float *y, const float *x, size_t n);
void mxp_vmath_f64__avx2(int fn, double *y, const double *x, size_t n);
void mxp_vmath_f64__avx512f(int fn, double *y, const double *x, size_t n);

/* float32 gelu rounded to nearest even through a checked fast path
 * (src/kernels/f32-gelu/): a float64 approximation y (e^(-x^2/2) times a
 * rational function, no erfc) within 2^-44 |y| of the exact value, rounded
 * where every value within 2^-42 |y| of y rounds to the same float32 -- the
 * correctly rounded one, and the bits of mxp_vmath_f32__<isa> with
 * MXP_VMATH_GELU, the SLEEF path -- and that path elsewhere (3 lanes in
 * 10^5 of N(0, 1) data; NaN, infinities and the tiny x whose x/2 is a
 * float32 tie).  Returns how many lanes took the SLEEF path.
 * mxp_vmath_f64_gelu_approx__avx512f: y alone, for the tests (its error
 * bound is the check's premise). */
size_t mxp_vmath_f32_gelu__avx2(float *y, const float *x, size_t n);
size_t mxp_vmath_f32_gelu__avx512f(float *y, const float *x, size_t n);
void mxp_vmath_f64_gelu_approx__avx2(double *y, const double *x, size_t n);
void mxp_vmath_f64_gelu_approx__avx512f(double *y, const double *x, size_t n);

/* exp, log, tanh, sin, cos (fn < MXP_VMATH_F32_COUNT), and gelu in the
 * avx512f kernels, for a float16 output rounded to nearest even: float32
 * results whose one rounding into float16 is the correctly rounded one.
 * Each lane is SLEEF's float32 u10 result y (gelu: the fast path's float64
 * approximation rounded to float32; both within 1 float32 ulp of the exact
 * value) when every float32 within
 * MXP_VMATH_H16_MARGIN steps of y (its bit pattern +- the margin) rounds to
 * the same float16 -- the exact value lies in that interval; otherwise (a
 * few lanes in ten thousand) the float64 kernel's result rounded to float32
 * to odd, which rounds into float16 as the float64 value does (the float64
 * path's bits).  Returns how many lanes took the float64 recomputation. */
enum { MXP_VMATH_H16_MARGIN = 2 };
size_t mxp_vmath_f32_h16__avx2(int fn, float *y, const float *x, size_t n);
size_t mxp_vmath_f32_h16__avx512f(int fn, float *y, const float *x, size_t n);
/* The same for a bfloat16 output (used for gelu: 16 bits discarded, the tie
 * 0x8000).  exp, log, tanh, sin, cos need no check there: their float32
 * kernels rounded again are right on all 65,536 bfloat16 inputs. */
size_t mxp_vmath_f32_bf16__avx512f(int fn, float *y, const float *x, size_t n);
/* The same for float16 input and output in one pass (no float32 arrays):
 * y[i] = fn(x[i]) rounded to nearest even, overflowing to inf. */
size_t mxp_vmath_f16__avx2(int fn, uint16_t *y, const uint16_t *x, size_t n);
size_t mxp_vmath_f16__avx512f(int fn, uint16_t *y, const uint16_t *x, size_t n);

#endif

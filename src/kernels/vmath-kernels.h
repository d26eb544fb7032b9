/* Vector math through SLEEF: exp, log, tanh, sin, cos and the activations
 * on contiguous arrays (src/kernels/f32-vmath/, f64-vmath/, f16-vmath/,
 * f32-gelu/, f64-gelu/; one list each, <dtype>-<op>-list.inc), one file per ISA,
 * their shared helpers in vmath-avx2.h, vmath-avx512f.h, gelu-avx2.h and
 * gelu-avx512f.h.  Built only with SLEEF (MXP_HAVE_SLEEF); the reference
 * twins are the libm path of src/ops/elementwise-math.c (mxp_ew_unary1)
 * as functions of these signatures (src/ops/kernel-refs.c), which the
 * tests compare them with (tests/ops/test_vmath_kernels.c, test_vmath.c).
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
    MXP_VMATH_F32_COUNT, /* the functions that are one SLEEF float32 call stop here */
    MXP_VMATH_SIGMOID = MXP_VMATH_F32_COUNT,
    MXP_VMATH_SILU,
    MXP_VMATH_GELU,      /* 0.5 x erfc(-x / sqrt 2) */
    MXP_VMATH_GELU_TANH, /* x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)) */
    MXP_VMATH_COUNT
};

/* What a row of the f32-vmath and f16-vmath lists serves (its tags): the
 * functions it computes and, for f32-vmath, the output its results are
 * meant for (MXP_VMATH_FOR_F32: the float32 results themselves). */
#define MXP_VMATH_FN(fn) (1u << (fn))
#define MXP_VMATH_FIVE ((1u << MXP_VMATH_F32_COUNT) - 1u) /* exp, log, tanh, sin, cos */
#define MXP_VMATH_FIVE_GELU (MXP_VMATH_FIVE | MXP_VMATH_FN(MXP_VMATH_GELU))
#define MXP_VMATH_ALL ((1u << MXP_VMATH_COUNT) - 1u)
#define MXP_VMATH_FOR_F32 (1u << 16)
#define MXP_VMATH_FOR_F16 (1u << 17)
#define MXP_VMATH_FOR_BF16 (1u << 18)

/* f32-vmath: y[i] = fn(x[i]) for i < n; y may be x.  Returns how many
 * lanes took the float64 recomputation (0 for the plain kernels).
 *
 * mxp_f32_vmath__<isa> (for float32): results rounded to nearest even (the
 * environment's mode: mxp's fpenv); a NaN result is written as the positive
 * quiet NaN 0x7fc00000, as every elementwise operation gives it.
 *
 * mxp_f32_vmath_to_f16__<isa>: exp, log, tanh, sin, cos (and gelu at
 * AVX-512), for a float16 output rounded to nearest even: float32 results
 * whose one rounding into float16 is the correctly rounded one.  Each lane
 * is SLEEF's float32 u10 result y (gelu: the fast path's float64
 * approximation rounded to float32; both within 1 float32 ulp of the exact
 * value) when every float32 within MXP_VMATH_H16_MARGIN steps of y (its bit
 * pattern +- the margin) rounds to the same float16 -- the exact value lies
 * in that interval; otherwise (a few lanes in ten thousand) the float64
 * kernel's result rounded to float32 to odd, which rounds into float16 as
 * the float64 value does (the float64 path's bits).
 *
 * mxp_f32_vmath_to_bf16__<isa>: the same for a bfloat16 output (16 bits
 * discarded, the tie 0x8000; gelu: a float32 approximation within 6.65
 * ulps, checked with MXP_GELU_F32_MARGIN steps).  Bfloat16 inputs of exp,
 * log, tanh, sin, cos need no check: their plain float32 results rounded
 * again are right on all 65,536 of them; float32 and float16 inputs do. */
enum { MXP_VMATH_H16_MARGIN = 2 };
typedef size_t mxp_f32_vmath_ukernel(int fn, float *y, const float *x, size_t n);

/* f64-vmath: float64 results, y may be x. */
typedef void mxp_f64_vmath_ukernel(int fn, double *y, const double *x, size_t n);

/* f16-vmath: mxp_f32_vmath_to_f16__<isa> for float16 input and output in
 * one pass (no float32 arrays): y[i] = fn(x[i]) rounded to nearest even,
 * overflowing to inf; returns the lanes recomputed. */
typedef size_t mxp_f16_vmath_ukernel(int fn, uint16_t *y, const uint16_t *x, size_t n);

/* f32-gelu: float32 gelu rounded to nearest even through a checked fast
 * path: a float64 approximation y (e^(-x^2/2) times a rational function,
 * no erfc) within 2^-44 |y| of the exact value, rounded where every value
 * within 2^-42 |y| of y rounds to the same float32 -- the correctly rounded
 * one, and the bits of mxp_f32_vmath__<isa> with MXP_VMATH_GELU, the SLEEF
 * path -- and that path elsewhere (3 lanes in 10^5 of N(0, 1) data; NaN,
 * infinities and the tiny x whose x/2 is a float32 tie).  Returns how many
 * lanes took the SLEEF path. */
typedef size_t mxp_f32_gelu_ukernel(float *y, const float *x, size_t n);

/* f64-gelu: the approximation y alone, for the tests (its error bound is
 * the check's premise). */
typedef void mxp_f64_gelu_ukernel(double *y, const double *x, size_t n);

#define MXP_F32_VMATH(isa, tags, tile, fn, twin) mxp_f32_vmath_ukernel fn;
#include "kernels/f32-vmath-list.inc"
#undef MXP_F32_VMATH
#define MXP_F64_VMATH(isa, tile, fn, twin) mxp_f64_vmath_ukernel fn;
#include "kernels/f64-vmath-list.inc"
#undef MXP_F64_VMATH
#define MXP_F16_VMATH(isa, tags, tile, fn, twin) mxp_f16_vmath_ukernel fn;
#include "kernels/f16-vmath-list.inc"
#undef MXP_F16_VMATH
#define MXP_F32_GELU(isa, tile, fn, twin) mxp_f32_gelu_ukernel fn;
#include "kernels/f32-gelu-list.inc"
#undef MXP_F32_GELU
#define MXP_F64_GELU(isa, tile, fn, twin) mxp_f64_gelu_ukernel fn;
#include "kernels/f64-gelu-list.inc"
#undef MXP_F64_GELU

#endif

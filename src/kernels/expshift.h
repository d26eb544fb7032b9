/* exp(t) for t <= 0 in float64 within a float64 ulp: the exp of softmax
 * (exp(x - max)), shared by the f64-expshift kernels (f64-expshift-list.inc)
 * and the softmax row kernels (softmax-avx2.h, softmax-avx512.h), so that
 * the operation's generic path and its row kernels give the same bits.
 * The portable twin is libm's exp.
 *
 * Method (Tang): k = round(t 16 / ln 2), r = t - k ln2/16 (two FMAs with
 * ln2/16 in two parts: |r| <= ln2/32 to a float64 rounding), then
 *
 *   exp(t) = 2^floor(k/16) * T[k mod 16] * (1 + p(r)),
 *   T[j] = 2^(j/16) rounded to float64,
 *   p(r) = r + r^2/2! + ... + r^7/7!   (Taylor: the first term left out,
 *                                       r^8/8! < 2^-58, is below 1/30 ulp)
 *
 * T (0.5 ulp), p (Horner in FMAs, below 0.1 ulp) and the product T + T p
 * (0.5 ulp) give less than 1.1 ulp; tests/nn/test_nn_softmax_kernels.c
 * measures the largest error against long double's expl over every
 * binade of [-746, 0].  The scaling by 2^floor(k/16): vscalefpd at
 * AVX-512 (subnormal results rounded from the scaled value: within an
 * ulp of the subnormal), an integer add to the exponent at AVX2 for
 * t >= -708 (libm's exp lane by lane below, a rare branch).  t < -746
 * (-inf included) gives +0, as exp does. */
#ifndef MXP_KERNELS_EXPSHIFT_H
#define MXP_KERNELS_EXPSHIFT_H

#include <stddef.h>

typedef void mxp_f64_expshift_ukernel(double *y, const double *x, size_t n, double m);

#define MXP_F64_EXPSHIFT(isa, tile, fn, twin) mxp_f64_expshift_ukernel fn;
#include "kernels/f64-expshift-list.inc"
#undef MXP_F64_EXPSHIFT

/* 2^(j/16), j = 0..15, each rounded to nearest (worked out in 60-digit
 * decimal arithmetic). */
#define MXP_EXPSHIFT_TABLE                                                                                            \
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0, 0x1.306fe0a31b715p+0,     \
        0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0, 0x1.6a09e667f3bcdp+0,                       \
        0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0, 0x1.ae89f995ad3adp+0,                       \
        0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0

#define MXP_EXPSHIFT_16_LN2 0x1.71547652b82fep+4 /* 16 / ln 2 */
#define MXP_EXPSHIFT_L_HI 0x1.62e42fefa39efp-5   /* ln 2 / 16, rounded */
#define MXP_EXPSHIFT_L_LO 0x1.abc9e3b39803fp-60  /* ln 2 / 16 minus L_HI */
#define MXP_EXPSHIFT_MAGIC 0x1.8p52              /* t 16/ln2 + this: k in the low bits */
#define MXP_EXPSHIFT_ZERO (-746.0)               /* below: +0 (exp(-746) < 2^-1075) */
#define MXP_EXPSHIFT_NORMAL (-708.0)             /* from here the result is normal */

/* 1/k! for k = 2..7 */
#define MXP_EXPSHIFT_C2 0x1.0000000000000p-1
#define MXP_EXPSHIFT_C3 0x1.5555555555555p-3
#define MXP_EXPSHIFT_C4 0x1.5555555555555p-5
#define MXP_EXPSHIFT_C5 0x1.1111111111111p-7
#define MXP_EXPSHIFT_C6 0x1.6c16c16c16c17p-10
#define MXP_EXPSHIFT_C7 0x1.a01a01a01a01ap-13

#endif

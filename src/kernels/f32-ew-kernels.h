/* float32 and float64 add, subtract, multiply and divide at full vector
 * width (src/kernels/f32-ew/).  One IEEE operation per element in the
 * library's floating-point environment, so the bits are those of the
 * portable loops in src/ops/elementwise-loops.c, which the build compiles
 * for the baseline ISA (SSE2: 16 bytes a step); every ISA level below these
 * uses them, and test_elementwise / test_ops_strided run at every level. */
#ifndef MXP_KERNELS_F32_EW_KERNELS_H
#define MXP_KERNELS_F32_EW_KERNELS_H

#include <stddef.h>

enum { MXP_ARITH_ADD, MXP_ARITH_SUB, MXP_ARITH_MUL, MXP_ARITH_DIV };

/* y[i] = a[i] op b[i], i < n; y may be a or b (the same elements). */
void mxp_f32_arith__avx2(int op, float *y, const float *a, const float *b, size_t n);
void mxp_f32_arith__avx512f(int op, float *y, const float *a, const float *b, size_t n);
void mxp_f64_arith__avx2(int op, double *y, const double *a, const double *b, size_t n);
void mxp_f64_arith__avx512f(int op, double *y, const double *a, const double *b, size_t n);

/* x[i] = the positive quiet NaN (0x7fc00000, 0x7ff8000000000000) where x[i]
 * is a NaN, i < n: every elementwise operation's NaN results, one pattern
 * at every ISA level (src/ops/strided.c, canonical_nan, is the reference). */
void mxp_f32_canonical_nan__avx2(float *x, size_t n);
void mxp_f32_canonical_nan__avx512f(float *x, size_t n);
void mxp_f64_canonical_nan__avx2(double *x, size_t n);
void mxp_f64_canonical_nan__avx512f(double *x, size_t n);

#endif

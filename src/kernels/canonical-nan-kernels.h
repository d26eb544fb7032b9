/* NaN results as one pattern (src/kernels/f32-canonical-nan/,
 * f64-canonical-nan/; lists f32-canonical-nan-list.inc,
 * f64-canonical-nan-list.inc): x[i] = the positive quiet NaN (0x7fc00000,
 * 0x7ff8000000000000) where x[i] is a NaN, i < n, every other value
 * untouched.  Every elementwise operation's NaN results go through one of
 * these, so they have one pattern at every ISA level; the twin is the
 * integer loop in scalar.c. */
#ifndef MXP_KERNELS_CANONICAL_NAN_KERNELS_H
#define MXP_KERNELS_CANONICAL_NAN_KERNELS_H

#include <stddef.h>

typedef void mxp_f32_canonical_nan_ukernel(float *x, size_t n);
typedef void mxp_f64_canonical_nan_ukernel(double *x, size_t n);

#define MXP_F32_CANONICAL_NAN(isa, tile, fn, twin) mxp_f32_canonical_nan_ukernel fn;
#include "kernels/f32-canonical-nan-list.inc"
#undef MXP_F32_CANONICAL_NAN
#define MXP_F64_CANONICAL_NAN(isa, tile, fn, twin) mxp_f64_canonical_nan_ukernel fn;
#include "kernels/f64-canonical-nan-list.inc"
#undef MXP_F64_CANONICAL_NAN

#endif

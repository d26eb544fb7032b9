/* One lane of the type MXP_SIMD_T (defined before including this) under
 * the names the operation templates use (see simd-f32-avx2.h): the
 * templates' portable twins, plain C on the baseline ISA.  MXP_SIMD_FMADD
 * is a multiply, then an add (two roundings; the baseline has no FMA), as
 * the twins have always computed it. */
#ifndef MXP_KERNELS_SIMD_SCALAR_H
#define MXP_KERNELS_SIMD_SCALAR_H

#ifdef MXP_SIMD_V
#error "a kernel file includes one simd-*.h"
#endif
#ifndef MXP_SIMD_T
#error "define MXP_SIMD_T, the lane type, before including simd-scalar.h"
#endif

#define MXP_SIMD_V MXP_SIMD_T
#define MXP_SIMD_N 1
#define MXP_SIMD_MASKED 0

#define MXP_SIMD_LOADU(p) (*(p))
#define MXP_SIMD_STOREU(p, v) (*(p) = (v))
#define MXP_SIMD_SET1(x) ((MXP_SIMD_T)(x))
#define MXP_SIMD_ADD(a, b) ((a) + (b))
#define MXP_SIMD_SUB(a, b) ((a) - (b))
#define MXP_SIMD_MUL(a, b) ((a) * (b))
#define MXP_SIMD_DIV(a, b) ((a) / (b))
#define MXP_SIMD_FMADD(a, b, c) ((a) * (b) + (c))
#define MXP_SIMD_REDUCE_ADD(v) (v)

#endif

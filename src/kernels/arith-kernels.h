/* Add, subtract, multiply and divide at full vector width, one list per
 * type (src/kernels/{f32,f64,f16,bf16}-arith-list.inc): the prototypes.
 *
 * float32 and float64 (src/kernels/f32-arith/, f64-arith/): one IEEE
 * operation per element in the library's floating-point environment, so
 * every kernel gives the bits of its twin, the plain C loop in scalar.c
 * (which the build compiles for the baseline ISA: SSE2, 16 bytes a step).
 *
 * float16 and bfloat16 (src/kernels/f16-arith/, bf16-arith/): add, subtract
 * and multiply fused into one pass: both operands widened to float32 in
 * registers, the operation in float32 (correctly rounded for 16-bit
 * operands: 24 >= 2p + 2), a NaN result made the positive quiet NaN, the
 * result rounded to nearest even into the same type as the conversion
 * kernels round it (bfloat16: the integer method, subnormals kept, NaN
 * quieted).  Their twins are the blocked path of src/ops/strided.c
 * (convert, float32 loop, convert) written as one function
 * (mxp_f16_arith_ref, src/ops/kernel-refs.c); below their level the
 * operation takes that path. */
#ifndef MXP_KERNELS_ARITH_KERNELS_H
#define MXP_KERNELS_ARITH_KERNELS_H

#include <stddef.h>
#include <stdint.h>

enum { MXP_ARITH_ADD, MXP_ARITH_SUB, MXP_ARITH_MUL, MXP_ARITH_DIV /* float32 and float64 only */ };

/* y[i] = a[i] op b[i], i < n; y may be a or b (the same elements). */
typedef void mxp_f32_arith_ukernel(int op, float *y, const float *a, const float *b, size_t n);
typedef void mxp_f64_arith_ukernel(int op, double *y, const double *a, const double *b, size_t n);
typedef void mxp_h16_arith_ukernel(int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n);

#define MXP_F32_ARITH(isa, tile, fn, twin) mxp_f32_arith_ukernel fn;
#include "kernels/f32-arith-list.inc"
#undef MXP_F32_ARITH
#define MXP_F64_ARITH(isa, tile, fn, twin) mxp_f64_arith_ukernel fn;
#include "kernels/f64-arith-list.inc"
#undef MXP_F64_ARITH
#define MXP_F16_ARITH(isa, tile, fn, twin) mxp_h16_arith_ukernel fn;
#include "kernels/f16-arith-list.inc"
#undef MXP_F16_ARITH
#define MXP_BF16_ARITH(isa, tile, fn, twin) mxp_h16_arith_ukernel fn;
#include "kernels/bf16-arith-list.inc"
#undef MXP_BF16_ARITH

#endif

/* float16 and bfloat16 add, subtract and multiply fused into one pass
 * (src/kernels/h16-ew/): both operands widened to float32 in registers, the
 * operation in float32 (correctly rounded for 16-bit operands: 24 >= 2p + 2),
 * the result rounded to nearest even into the same type as the conversion
 * kernels round it (bfloat16: the integer method, subnormals kept, NaN
 * quieted).  The reference twin is the blocked path of src/ops/strided.c
 * (convert, float32 loop, convert), which every ISA level below these uses;
 * test_ops_strided compares the two. */
#ifndef MXP_KERNELS_H16_EW_KERNELS_H
#define MXP_KERNELS_H16_EW_KERNELS_H

#include <stddef.h>
#include <stdint.h>

enum { MXP_H16_ADD, MXP_H16_SUB, MXP_H16_MUL };

/* y[i] = a[i] op b[i], i < n; y may be a or b. */
typedef void (*mxp_h16_binary_fn)(int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n);
void mxp_f16_binary__avx2(int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n);
void mxp_f16_binary__avx512f(int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n);
void mxp_bf16_binary__avx2(int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n);
void mxp_bf16_binary__avx512f(int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n);

#endif

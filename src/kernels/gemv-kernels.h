/* GEMV kernels for M = 1 GEMMs (src/kernels/gemv/). */
#ifndef MXP_KERNELS_GEMV_KERNELS_H
#define MXP_KERNELS_GEMV_KERNELS_H

#include <stddef.h>

enum { MXP_GEMV_F32 = 0, MXP_GEMV_BF16, MXP_GEMV_F16 };

/* y[0..n) = x[0..k) B, B of `kind` with rows ld_bytes apart (B stored
 * k x n, or n x k when trans_b); float32 x, y and accumulation. */
void mxp_gemv_f32acc__avx512f(int trans_b, int kind, size_t k, size_t n, const float *x, const void *b,
                              size_t ld_bytes, float *y);

#endif

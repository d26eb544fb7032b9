/* GEMV kernels for M = 1 GEMMs (src/kernels/gemv/). */
#ifndef MXP_KERNELS_GEMV_KERNELS_H
#define MXP_KERNELS_GEMV_KERNELS_H

#include <stddef.h>

enum { MXP_GEMV_F32 = 0, MXP_GEMV_BF16, MXP_GEMV_F16 };

/* y[0..n) = x[0..k) B, B of `kind` with rows ld_bytes apart (B stored
 * k x n, or n x k when trans_b); float32 x, y and accumulation. */
void mxp_gemv_f32acc__avx512f(int trans_b, int kind, size_t k, size_t n, const float *x, const void *b,
                              size_t ld_bytes, float *y);
void mxp_gemv_f32acc__avx2(int trans_b, int kind, size_t k, size_t n, const float *x, const void *b,
                           size_t ld_bytes, float *y);

/* float64: y[0..n) = x[0..k) B, B k x n (rows ldb elements apart) or n x k
 * when trans_b. */
void mxp_gemv_f64__avx512f(int trans_b, size_t k, size_t n, const double *x, const double *b, size_t ldb, double *y);
void mxp_gemv_f64__avx2(int trans_b, size_t k, size_t n, const double *x, const double *b, size_t ldb, double *y);

/* y[0..n) = x[0..k) B exactly modulo 2^32: int16 x (|x| <= 2^15 - 1, e.g.
 * uint8 or int8 minus a zero point), int8 B k x n or n x k when trans_b
 * (rows ldb bytes apart).  Without trans_b y needs room for n rounded up
 * to 32 (the extra entries are scratch). */
void mxp_gemv_s16s8__avx512f(int trans_b, size_t k, size_t n, const int16_t *x, const int8_t *b, size_t ldb,
                             int32_t *y);

#endif

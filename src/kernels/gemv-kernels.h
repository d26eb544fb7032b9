/* The GEMV kernels (M = 1 GEMMs) and their contracts, expanded from
 * src/kernels/gemv-list.inc. */
#ifndef MXP_KERNELS_GEMV_KERNELS_H
#define MXP_KERNELS_GEMV_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* B's kinds: float32, bfloat16, float16, and the OCP float8 types of
 * weight-only inference, each widened exactly in registers:
 *   MXP_GEMV_E5M2  float8_e5m2, float16's top byte;
 *   MXP_GEMV_E4M3  float8_e4m3fn read as its value times 2^-8 -- the
 *                  float16 whose bits are its own shifted left by 7, the
 *                  sign kept (subnormals included); its NaN S.1111.111 as
 *                  the default quiet NaN 0x7fc00000 of either sign -- so
 *                  the caller gives x times 2^8 (the products then those
 *                  of x and B exactly: the same bits as B's values in
 *                  float32; src/gemm/gemv.c does it where no |x| reaches
 *                  2^120). */
enum { MXP_GEMV_F32 = 0, MXP_GEMV_BF16, MXP_GEMV_F16, MXP_GEMV_E4M3, MXP_GEMV_E5M2, MXP_GEMV_KINDS };

/* y[0..n) = x[0..k) B, B of `kind` with rows ld_bytes apart (B stored
 * k x n, or n x k when trans_b); float32 x, y and accumulation. */
typedef void (*mxp_f32_gemv_fn)(int trans_b, int kind, size_t k, size_t n, const float *x, const void *b,
                                size_t ld_bytes, float *y);

/* float64: y[0..n) = x[0..k) B, B k x n (rows ldb elements apart) or n x k
 * when trans_b. */
typedef void (*mxp_f64_gemv_fn)(int trans_b, size_t k, size_t n, const double *x, const double *b, size_t ldb,
                                double *y);

/* y[0..n) = x[0..k) B exactly modulo 2^32: int16 x (|x| <= 2^15 - 1, e.g.
 * uint8 or int8 minus a zero point), int8 B k x n or n x k when trans_b
 * (rows ldb bytes apart).  Without trans_b y needs room for n rounded up
 * to 32 (the extra entries are scratch). */
typedef void (*mxp_s16s8_gemv_fn)(int trans_b, size_t k, size_t n, const int16_t *x, const int8_t *b, size_t ldb,
                                  int32_t *y);

#define MXP_F32_GEMV(FN, ISA, TWIN)                                                                                \
    void FN(int trans_b, int kind, size_t k, size_t n, const float *x, const void *b, size_t ld_bytes, float *y);  \
    void TWIN(int trans_b, int kind, size_t k, size_t n, const float *x, const void *b, size_t ld_bytes, float *y);
#define MXP_F64_GEMV(FN, ISA, TWIN)                                                                                \
    void FN(int trans_b, size_t k, size_t n, const double *x, const double *b, size_t ldb, double *y);             \
    void TWIN(int trans_b, size_t k, size_t n, const double *x, const double *b, size_t ldb, double *y);
#define MXP_S16S8_GEMV(FN, ISA, TWIN)                                                                              \
    void FN(int trans_b, size_t k, size_t n, const int16_t *x, const int8_t *b, size_t ldb, int32_t *y);           \
    void TWIN(int trans_b, size_t k, size_t n, const int16_t *x, const int8_t *b, size_t ldb, int32_t *y);
#include "kernels/gemv-list.inc"
#undef MXP_F32_GEMV
#undef MXP_F64_GEMV
#undef MXP_S16S8_GEMV

#endif

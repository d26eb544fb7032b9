/* mxp — OCP Microscaling (MX v1.0) block formats: quantize and dequantize.
 * Formats, byte layout, the scale rule, NaN policy and rounding are in
 * docs/mx.md. */
#ifndef MXP_MX_H
#define MXP_MX_H

#include "convert.h"
#include "gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Blocks of MXP_MX_BLOCK elements share one E8M0 scale X = 2^(e - 127)
 * (e = 0xFF is NaN). */
#define MXP_MX_BLOCK 32

typedef enum mxp_mx_format {
    MXP_MXFP8_E4M3 = 1, /* OCP FP8 E4M3 elements, max 448 */
    MXP_MXFP8_E5M2,     /* OCP FP8 E5M2 elements, max 57344 */
    MXP_MXFP4_E2M1,     /* FP4 E2M1: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and negatives;
                           two per byte, element 2i in the LOW nibble */
    MXP_MXINT8,         /* two's complement k * 2^-6; the encoder uses
                           k in [-127, 127], the decoder reads 0x80 as -2 */
    MXP_MXFP6_E2M3,     /* OCP FP6 E2M3 elements (max 7.5), four in three bytes:
                           element i at bits [6i, 6i + 6) of the block's
                           little-endian bit string */
    MXP_MXFP6_E3M2,     /* OCP FP6 E3M2 elements (max 28), packed as E2M3 */
    MXP_NVFP4           /* NVIDIA NVFP4: blocks of MXP_NVFP4_BLOCK E2M1 elements
                           (packed as MXFP4) with an E4M3 scale, and one float32
                           tensor scale before the first block (docs/mx.md) */
} mxp_mx_format;

/* NVFP4's block: 16 elements share an E4M3 scale. */
#define MXP_NVFP4_BLOCK 16

/* Bytes that n elements take: for each block of 32 (the last one may be
 * partial), 1 scale byte followed by 32 element bytes (16 for FP4, 24 for
 * FP6); NVFP4: 4 bytes of float32 tensor scale, then per block of 16 one
 * E4M3 scale byte and 8 element bytes.
 * 0 for n == 0, an invalid format, or a size that does not fit size_t. */
MXP_API size_t mxp_mx_bytes(mxp_mx_format f, size_t n);

/* Quantizes n floats into dst (mxp_mx_bytes(f, n) bytes) by the spec's
 * algorithm: per block, X = 2^(floor(log2(max |V_i|)) - emax_elem) clamped
 * to [2^-127, 2^127], then P_i = V_i / X rounded by opts->rounding (NULL:
 * nearest even; stochastic uses opts->seed and opts->index_offset with the
 * element's index in src) and saturated to the element format's max.
 * A block holding a NaN or an infinity gets the NaN scale 0xFF and zero
 * elements.  Padding in a partial last block is encoded as zero.
 * opts->overflow and opts->flags are ignored (always saturating).
 * n == 0 is a no-op and allows NULL pointers. */
MXP_API mxp_status mxp_mx_quantize(void *dst, mxp_mx_format f, const float *src, size_t n,
                                   const mxp_convert_opts *opts);

/* Decodes n elements: V_i = X * P_i, rounded once to float32 (every finite
 * result is exact unless it exceeds float32's range).  A NaN scale gives NaN
 * for the whole block. */
MXP_API mxp_status mxp_mx_dequantize(float *dst, const void *src, mxp_mx_format f, size_t n);

/* C = A W^T with W in an MX or NVFP4 format: a weight-only quantized linear
 * layer.  A is m x k of any float dtype (row-major, lda >= k); W is n x k as
 * mxp_mx_quantize writes the flattened rows (k a multiple of the block, 32,
 * or 16 for NVFP4, so that every row starts a block; w holds
 * mxp_mx_bytes(f, n * k) bytes); C is m x n of any float dtype (ldc >= n).
 * W is decoded exactly to float32 a panel of rows at a time (about 1 MiB;
 * all of it at once with stochastic rounding, so that C's elements draw
 * by their index in the whole call) and multiplied by mxp_gemm with opts
 * (alpha 1, beta 0: C is overwritten; the accumulator, the epilogue with a
 * per-column or per-row bias, activation and clamp, rounding into c_type): the
 * result equals mxp_gemm on A and mxp_mx_dequantize(W).  Errors:
 * MXP_ERR_INVALID_ARGUMENT (NULL pointers, a bad format, ld too small, k not
 * a multiple of the block), MXP_ERR_SIZE_OVERFLOW, and mxp_gemm's. */
MXP_API mxp_status mxp_mx_matmul(void *c, mxp_dtype c_type, size_t ldc, const void *a, mxp_dtype a_type, size_t lda,
                                 size_t m, size_t k, const void *w, mxp_mx_format f, size_t n,
                                 const mxp_gemm_opts *opts);

/* "mxfp8_e4m3", "mxfp8_e5m2", "mxfp4_e2m1", "mxint8", "mxfp6_e2m3",
 * "mxfp6_e3m2", "nvfp4", or "invalid". */
MXP_API const char *mxp_mx_format_name(mxp_mx_format f);

#ifdef __cplusplus
}
#endif
#endif

/* mxp — OCP Microscaling (MX v1.0) block formats: quantize and dequantize.
 * Formats, byte layout, the scale rule, NaN policy and rounding are in
 * docs/mx.md. */
#ifndef MXP_MX_H
#define MXP_MX_H

#include "convert.h"

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
    MXP_MXINT8          /* two's complement k * 2^-6; the encoder uses
                           k in [-127, 127], the decoder reads 0x80 as -2 */
} mxp_mx_format;

/* Bytes that n elements take: for each block of 32 (the last one may be
 * partial), 1 scale byte followed by 32 element bytes (16 for FP4).
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

/* "mxfp8_e4m3", "mxfp8_e5m2", "mxfp4_e2m1", "mxint8", or "invalid". */
MXP_API const char *mxp_mx_format_name(mxp_mx_format f);

#ifdef __cplusplus
}
#endif
#endif

/* The entry of the float32 GEMV kernels (src/kernels/f32-gemv/avx2.c,
 * avx512f.c), one text for every ISA: B's kind (float32, bfloat16,
 * float16) becomes a constant, so that each kind gets its own loops with
 * its widening inlined.  The including file defines first, always_inline,
 *   rows_kernel(k, n, x, b, ld_bytes, y, kind)   y = x B, B's rows contiguous
 * and mxp_gemv_dots (kernels/gemv-dots-template.h: y = x B, B transposed).
 * Included once per file. */
#ifndef MXP_KERNELS_GEMV_F32_KINDS_H
#define MXP_KERNELS_GEMV_F32_KINDS_H

#include "kernels/gemv-kernels.h"

static inline __attribute__((always_inline)) void mxp_f32_gemv_kind(int trans_b, int kind, size_t k, size_t n,
                                                                    const float *x, const void *b, size_t ld_bytes,
                                                                    float *y)
{
    if (trans_b)
        mxp_gemv_dots(k, n, x, b, ld_bytes, y, kind);
    else
        rows_kernel(k, n, x, b, ld_bytes, y, kind);
}

static inline __attribute__((always_inline)) void mxp_f32_gemv_by_kind(int trans_b, int kind, size_t k, size_t n,
                                                                       const float *x, const void *b,
                                                                       size_t ld_bytes, float *y)
{
    switch (kind) {
    case MXP_GEMV_BF16:
        mxp_f32_gemv_kind(trans_b, MXP_GEMV_BF16, k, n, x, b, ld_bytes, y);
        break;
    case MXP_GEMV_F16:
        mxp_f32_gemv_kind(trans_b, MXP_GEMV_F16, k, n, x, b, ld_bytes, y);
        break;
    default:
        mxp_f32_gemv_kind(trans_b, MXP_GEMV_F32, k, n, x, b, ld_bytes, y);
        break;
    }
}

#endif

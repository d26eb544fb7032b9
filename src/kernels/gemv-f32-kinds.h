/* The entry of the float32 GEMV kernels (src/kernels/f32-gemv/avx2.c,
 * avx512f.c), one text for every ISA: B's kind (float32, bfloat16,
 * float16) becomes a constant, so that each kind gets its own loops with
 * its widening inlined (float8 too).  The including file defines first, always_inline,
 *   rows_pass(R, p, n, x, b, ld_bytes, y, kind)  y += rows p .. p + R - 1 of B
 *                                                (R = 8, 4, 1) times x, one pass
 * and mxp_gemv_dots (kernels/gemv-dots-template.h: y = x B, B transposed).
 * Included once per file. */
#ifndef MXP_KERNELS_GEMV_F32_KINDS_H
#define MXP_KERNELS_GEMV_F32_KINDS_H

#include "kernels/gemv-kernels.h"

/* y = x B, B's rows contiguous: eight rows a pass (four had taken twice the
 * passes over y: AMD Zen 4, 4096^2, AVX-512 2.9-3.1 -> 2.5 ms, AVX2
 * 2.6-2.8 -> 2.2 ms), then four, then one; each y[j] the same chain of
 * fused multiply-adds in p order at every level. */
static inline __attribute__((always_inline)) void rows_kernel(size_t k, size_t n, const float *x,
                                                              const unsigned char *b, size_t ld_bytes, float *y,
                                                              int kind)
{
    for (size_t j = 0; j < n; j++)
        y[j] = 0;
    size_t p = 0;
    for (; p + 8 <= k; p += 8)
        rows_pass(8, p, n, x, b, ld_bytes, y, kind);
    for (; p + 4 <= k; p += 4)
        rows_pass(4, p, n, x, b, ld_bytes, y, kind);
    for (; p < k; p++)
        rows_pass(1, p, n, x, b, ld_bytes, y, kind);
}

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
    /* one copy of the loops per kind, the kind a constant in each */
#define MXP_GEMV_KIND_CASE(K)                                                                                      \
    case K: mxp_f32_gemv_kind(trans_b, K, k, n, x, b, ld_bytes, y); break;
    switch (kind) {
        MXP_GEMV_KIND_CASE(MXP_GEMV_BF16)
        MXP_GEMV_KIND_CASE(MXP_GEMV_F16)
        MXP_GEMV_KIND_CASE(MXP_GEMV_E4M3)
        MXP_GEMV_KIND_CASE(MXP_GEMV_E5M2)
    default: mxp_f32_gemv_kind(trans_b, MXP_GEMV_F32, k, n, x, b, ld_bytes, y); break;
    }
#undef MXP_GEMV_KIND_CASE
}

#endif

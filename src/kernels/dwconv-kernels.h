/* Float32 rows of a depthwise convolution (src/kernels/f32-dwconv/, list
 * f32-dwconv-list.inc; the operation is src/nn/dwconv.c):
 *
 *   acc[j ch + c] += x[j step + c] * w[c]      for j < n, c < ch
 *
 * the product rounded to float32, then the sum (no fused multiply-add), so
 * every kernel gives its twin's bits.  NHWC rows have ch channels a pixel
 * (step = stride * ch); NCHW rows one (ch = 1, step = the stride).
 * acc and x do not overlap. */
#ifndef MXP_KERNELS_DWCONV_KERNELS_H
#define MXP_KERNELS_DWCONV_KERNELS_H

#include <stddef.h>

typedef void mxp_f32_dwconv_ukernel(float *acc, const float *x, const float *w, size_t n, size_t ch, size_t step);

#define MXP_F32_DWCONV(isa, tile, fn, twin) mxp_f32_dwconv_ukernel fn;
#include "kernels/f32-dwconv-list.inc"
#undef MXP_F32_DWCONV

/* The portable loop, the twin's body and the kernels' tails. */
static inline void mxp_f32_dwconv_tail(float *acc, const float *x, const float *w, size_t n, size_t ch, size_t step,
                                       size_t c0)
{
    for (size_t j = 0; j < n; j++)
        for (size_t c = c0; c < ch; c++) {
            const float p = x[j * step + c] * w[c];
            acc[j * ch + c] += p;
        }
}

#endif

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

/* Whole windows of NHWC pixels, the sums in registers (list
 * f32-dwconv-taps-list.inc):
 *
 *   acc[j ch + c] = ((+0 + x_0 w_0) + x_1 w_1) + ...      for j < n, c < ch
 *
 * over the taps (r, q), r < nrows (the window's rows in order), q < kw:
 * x = rows[r][j step + q dstep + c], w = wrows[r][q ch + c]; each product
 * rounded to float32, then added.  Per element these are the additions
 * of the row kernel above called tap after tap on a zeroed row: the same
 * bits.  acc does not overlap the rows. */
typedef void mxp_f32_dwconv_taps_ukernel(float *acc, const float *const *rows, const float *const *wrows, size_t nrows,
                                         size_t kw, size_t n, size_t ch, size_t step, size_t dstep);

#define MXP_F32_DWCONV(isa, tile, fn, twin) mxp_f32_dwconv_ukernel fn;
#include "kernels/f32-dwconv-list.inc"
#undef MXP_F32_DWCONV
#define MXP_F32_DWCONV_TAPS(isa, tile, fn, twin) mxp_f32_dwconv_taps_ukernel fn;
#include "kernels/f32-dwconv-taps-list.inc"
#undef MXP_F32_DWCONV_TAPS

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

/* The portable taps loop: pixels [j0, n), channels [c0, ch). */
static inline void mxp_f32_dwconv_taps_tail(float *acc, const float *const *rows, const float *const *wrows,
                                            size_t nrows, size_t kw, size_t n, size_t ch, size_t step, size_t dstep,
                                            size_t j0, size_t c0)
{
    for (size_t j = j0; j < n; j++)
        for (size_t c = c0; c < ch; c++) {
            float a = 0.0f;
            for (size_t r = 0; r < nrows; r++)
                for (size_t q = 0; q < kw; q++) {
                    const float p = rows[r][j * step + q * dstep + c] * wrows[r][q * ch + c];
                    a += p;
                }
            acc[j * ch + c] = a;
        }
}

#endif

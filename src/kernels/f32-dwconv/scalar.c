/* Float32 depthwise-convolution rows, portable: the twin of the others.
 * See dwconv-kernels.h. */
#include "kernels/dwconv-kernels.h"

void mxp_f32_dwconv__scalar(float *acc, const float *x, const float *w, size_t n, size_t ch, size_t step)
{
    mxp_f32_dwconv_tail(acc, x, w, n, ch, step, 0);
}

void mxp_f32_dwconv_taps__scalar(float *acc, const float *const *rows, const float *const *wrows, size_t nrows,
                                 size_t kw, size_t n, size_t ch, size_t step, size_t dstep)
{
    mxp_f32_dwconv_taps_tail(acc, rows, wrows, nrows, kw, n, ch, step, dstep, 0, 0);
}

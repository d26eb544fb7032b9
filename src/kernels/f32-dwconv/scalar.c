/* Float32 depthwise-convolution rows, portable: the twin of the others.
 * See dwconv-kernels.h. */
#include "kernels/dwconv-kernels.h"

void mxp_f32_dwconv__scalar(float *acc, const float *x, const float *w, size_t n, size_t ch, size_t step)
{
    mxp_f32_dwconv_tail(acc, x, w, n, ch, step, 0);
}

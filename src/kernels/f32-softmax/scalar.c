/* Float32 softmax rows, portable (libm's exp): the twin of the others.  See
 * softmax-kernels.h. */
#include "kernels/softmax-kernels.h"

void mxp_f32_softmax__scalar(float *y, const float *x, const float *mask, size_t n, double *e, int lg)
{
    mxp_softmax_portable(y, x, mask, n, e, lg);
}

/* Float32 softmax rows, AVX2: the body in softmax-avx2.h.  See
 * softmax-kernels.h. */
#include "kernels/softmax-avx2.h"

void mxp_f32_softmax__avx2(float *y, const float *x, const float *mask, size_t n, double *e, int lg)
{
    mxp_softmax_avx2(y, x, mask, n, e, lg);
}

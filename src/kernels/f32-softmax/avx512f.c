/* Float32 softmax rows, AVX-512: the body in softmax-avx512.h.  See
 * softmax-kernels.h. */
#include "kernels/softmax-avx512.h"

void mxp_f32_softmax__avx512f(float *y, const float *x, const float *mask, size_t n, double *e, int lg)
{
    mxp_softmax_avx512(y, x, mask, n, e, lg);
}

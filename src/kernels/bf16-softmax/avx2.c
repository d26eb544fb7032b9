/* Bfloat16 softmax rows, AVX2: the body in softmax-avx2.h.  See
 * softmax-kernels.h. */
#include "kernels/softmax-avx2.h"

void mxp_bf16_softmax__avx2(uint16_t *y, const uint16_t *x, size_t n, double *e, int lg)
{
    mxp_softmax_avx2(y, x, n, e, lg, 1);
}

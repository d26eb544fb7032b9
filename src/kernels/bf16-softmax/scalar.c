/* Bfloat16 softmax rows, portable (libm's exp): the twin of the others.  See
 * softmax-kernels.h. */
#include "kernels/softmax-kernels.h"

void mxp_bf16_softmax__scalar(uint16_t *y, const uint16_t *x, size_t n, double *e, int lg)
{
    mxp_softmax_portable(y, x, n, e, lg, 1);
}

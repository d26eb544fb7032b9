/* Bfloat16 softmax rows in float32 arithmetic, portable: the twin of the others (the body in
 * bf16-narrow.h).  See bf16-narrow.h. */
#include "kernels/bf16-narrow.h"
#include "kernels/softmax-kernels.h"

void mxp_bf16_softmax__scalar(uint16_t *const *y, const mxp_narrow_src *x, size_t rows, size_t n, float *e, int lg)
{
    mxp_softmax_bf16_portable(y, x, rows, n, e, lg);
}

/* Float32 pooling rows, portable: the twin of the others.  See
 * pool-kernels.h. */
#include "kernels/pool-kernels.h"

static void run(void *acc, const mxp_f32_pool_params *p, const float *x, size_t q, size_t lo, size_t hi)
{
    mxp_pool_tail(acc, p, x, q, lo, hi, 0);
}

static void wide(void *acc, const mxp_f32_pool_params *p, const float *x, size_t j, size_t w0, size_t w1)
{
    mxp_pool_wide_tail(acc, p, x, j, w0, w1, 0);
}

void mxp_f32_pool__scalar(void *acc, const mxp_f32_pool_params *p)
{
    MXP_POOL_ROW(acc, p, run, wide);
    mxp_pool_divide(acc, p, 0, p->ow, 0);
    mxp_pool_quiet(acc, p, 0, p->ow * p->ch);
    mxp_pool_round32(acc, p, 0);
}

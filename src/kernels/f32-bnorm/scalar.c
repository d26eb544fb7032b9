/* Float32 batch-norm blocks, portable: the twin of the others.  See
 * bnorm-kernels.h. */
#include "kernels/bnorm-kernels.h"

static void one_block(const mxp_f32_bnorm_params *p)
{
    if (p->inner == 1) {
        mxp_bnorm_pixel_tail(p, 0);
        return;
    }
    for (size_t k = 0; k < p->c; k++) {
        const float *x = p->x + k * p->inner;
        if (p->pass == MXP_BNORM_NORM)
            mxp_bnorm_row_tail(p, k, 0);
        else
            p->s[k] += mxp_norm_sum_portable(x, p->inner, p->pass == MXP_BNORM_SUMSQ ? p->mean[k] : 0,
                                             p->pass == MXP_BNORM_SUMSQ);
    }
}

void mxp_f32_bnorm__scalar(const mxp_f32_bnorm_params *p)
{
    for (size_t o = 0; o < mxp_bnorm_nblocks(p); o++) {
        const mxp_f32_bnorm_params q = mxp_bnorm_block(p, o);
        one_block(&q);
    }
}

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

/* Input row r's maxima over each window's columns, in q order. */
static void row_maxima(const mxp_f32_pool_plane_params *p, size_t r)
{
    const float *x = p->x + r * p->w;
    float *hr = mxp_pool_plane_ring(p, r);
    for (size_t j = 0; j < p->ow; j++) {
        float a = -INFINITY;
        for (size_t q = 0; q < p->kw; q++) {
            const ptrdiff_t c = (ptrdiff_t)(j * p->sw + q) - (ptrdiff_t)p->pw;
            if (c >= 0 && c < (ptrdiff_t)p->w)
                a = mxp_pool_max1(a, x[c]);
        }
        hr[j] = a;
    }
}

void mxp_f32_pool_plane__scalar(const mxp_f32_pool_plane_params *p)
{
    if (p->kind == MXP_POOL_SUM) { /* the row twin a row */
        const float *rows[MXP_POOL_PLANE_KH];
        for (size_t i = 0; i < p->oh; i++) {
            const mxp_f32_pool_params rp = mxp_pool_plane_sum_row(p, i, rows);
            mxp_f32_pool__scalar(p->hbuf, &rp);
        }
        return;
    }
    size_t next = 0; /* the first input row whose maxima are not made yet */
    for (size_t i = 0; i < p->oh; i++) {
        size_t r0, r1;
        mxp_pool_plane_rows(p, i, &r0, &r1);
        for (size_t r = r0 > next ? r0 : next; r < r1; r++)
            row_maxima(p, r);
        next = r1 > next ? r1 : next;
        for (size_t j = 0; j < p->ow; j++) {
            float a = -INFINITY;
            for (size_t r = r0; r < r1; r++)
                a = mxp_pool_max1(a, mxp_pool_plane_ring(p, r)[j]);
            p->y[i * p->ow + j] = mxp_pool_quiet1(a);
        }
    }
}

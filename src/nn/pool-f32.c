/* Max and average pooling of float32 x read in place: each output row
 * from the input rows its windows cover through a row kernel
 * (src/kernels/f32-pool/): max in float32 (exact), sums in float64 in
 * window.c's order, so the bits are the generic path's.  Then the
 * average's division (nn_window_finish) in float64 and one rounding into
 * y's dtype.
 *
 * NCHW: a row of the job is a plane (n, c), one channel a pixel; pooling
 * into float32 with windows up to 16 x 8 and a column stride of 1 or 2
 * goes a plane at a time through the plane kernel (max: an output row's
 * column maxima, then the windows along them, where the plane holds no
 * NaN and no -0, else each input row's window maxima once, folded per
 * output row; sums: sixteen or eight output columns a block, the edge
 * blocks' masks made once a plane); global
 * averages sum blocks of planes as nn_sum does, through the batch norm
 * kernel (global_fn).  NHWC: a row of the job is an output row (n, i),
 * every channel of a pixel at once. */
#include <stdint.h>
#include <string.h>

#include "mxp/alloc.h"
#include "core/error.h"

#include "nn/conv-internal.h"

typedef struct pool_job {
    const nn_window *win;
    const float *x;
    char *y;
    mxp_dtype yt;
    size_t ysize;
    mxp_f32_pool_ukernel *k;
    const double *div; /* the average's divisors, oh x ow; NULL for max */
    mxp_f32_bnorm_ukernel *sums; /* global averages (NCHW): the channel sums */
    mxp_f32_pool_plane_ukernel *plane; /* NCHW into float32 with the plane kernel's windows, else NULL */
    double recip; /* the plane kernel's: 1 / the one power-of-two divisor, else 0 */
} pool_job;

/* Output row i (ow pixels of vl channels) from the rows of base (rowlen
 * floats each) into y (dense, y's dtype): the kernel's row in scratch. */
static void pool_row(const pool_job *j, const float *base, int64_t rowlen, int64_t i, int64_t vl, char *y,
                     double *scratch)
{
    const nn_geom *g = &j->win->g;
    const int64_t n = g->ow * vl;
    const float *rows[NN_POOL_MAX_KH];
    const float **rp = g->kh <= NN_POOL_MAX_KH ? rows : (const float **)(void *)(scratch + n);
    for (int64_t p = 0; p < g->kh; p++) {
        const int64_t ih = i * g->sh - g->ph + p;
        rp[p] = ih >= 0 && ih < g->h ? base + ih * rowlen : NULL;
    }
    const bool max = j->win->kind == NN_WIN_MAX;
    /* float32 maxima straight into y, NaNs quieted (the float64 path's
       bits); float32 averages rounded into y by the kernel (the
       conversion's nearest even), the sums in scratch */
    const bool direct = j->yt == MXP_F32 && !((uintptr_t)y % sizeof(float));
    const mxp_f32_pool_params prm = { rp, (size_t)g->kh, (size_t)g->kw, (size_t)g->w, (size_t)g->ow, (size_t)vl,
                                      (size_t)g->sw, (size_t)g->pw, max ? MXP_POOL_MAX : MXP_POOL_SUM,
                                      max ? NULL : j->div + i * g->ow, direct && max,
                                      direct && !max ? (float *)(void *)y : NULL };
    if (!max) { /* the averages, final in float64 */
        j->k(scratch, &prm);
        if (!direct)
            nn_store(y, j->yt, (int64_t)j->ysize, scratch, n);
        return;
    }
    if (direct) {
        j->k(y, &prm);
        return;
    }
    float *m = (float *)(void *)(scratch + n + g->kh);
    j->k(m, &prm);
    for (int64_t t = 0; t < n; t++)
        scratch[t] = m[t];
    nn_store(y, j->yt, (int64_t)j->ysize, scratch, n);
}

/* One window covering the plane, no padding: global pooling. */
static bool global(const nn_geom *g)
{
    return g->oh == 1 && g->ow == 1 && g->kh == g->h && g->kw == g->w && g->ph == 0 && g->pw == 0;
}

/* Global averages of planes row0 .. row0 + count - 1 (NCHW): their sums
 * in nn_sum's order (the eight lanes i mod 8, then the tail and
 * kernels/sum8.h's fold) by the batch norm kernel's channel sums, which
 * run up to four planes' chains at once, then the divisions. */
static void global_fn(const void *ctx, char *(*p)[NN_MAXARR], int64_t count, double *scratch, int64_t row0)
{
    (void)p;
    const pool_job *j = ctx;
    const int64_t hw = j->win->g.h * j->win->g.w;
    memset(scratch, 0, (size_t)count * sizeof(double));
    const mxp_f32_bnorm_params prm = { MXP_BNORM_SUM, NULL, j->x + row0 * hw, (size_t)count, (size_t)hw,
                                       NULL, NULL, NULL, NULL, scratch, 1, 0, 0 };
    j->sums(&prm);
    for (int64_t r = 0; r < count; r++)
        scratch[r] /= (double)hw;
    nn_store(j->y + (size_t)row0 * j->ysize, j->yt, (int64_t)j->ysize, scratch, count);
}

/* The software prefetch of the input rows PREFETCH_ROWS output rows
 * ahead: floats [from, from + count) from x (past the plane's end: the
 * next plane's, which the next call reads; a prefetch never faults).
 * Pooling 8x64x56x56 from L3 on the Intel Xeon (6/0xa7): 3-4% (max
 * 0.520 -> 0.506 ms, average 0.462 -> 0.448); 4 and 8 rows ahead the same. */
enum { PREFETCH_ROWS = 2 };
static void prefetch_rows(const float *x, int64_t from, int64_t count)
{
    const uintptr_t a = (uintptr_t)x + (uintptr_t)from * sizeof(float); /* an address, not a pointer past x */
    for (int64_t t = 0; t < count; t += 16)
        __builtin_prefetch((const void *)(a + (uintptr_t)t * sizeof(float)));
}

static void plane_fn(const void *ctx, char **p, double *scratch, int64_t r)
{
    (void)p;
    const pool_job *j = ctx;
    const nn_geom *g = &j->win->g;
    const int64_t hw = g->h * g->w, ohw = g->oh * g->ow;
    const float *x = j->x + r * hw;
    if (j->plane) {
        const mxp_f32_pool_plane_params prm = { j->win->kind == NN_WIN_MAX ? MXP_POOL_MAX : MXP_POOL_SUM, x,
                                                (size_t)g->h, (size_t)g->w,
                                                (float *)(void *)(j->y + (size_t)(r * ohw) * j->ysize), (size_t)g->oh,
                                                (size_t)g->ow, (size_t)g->kh, (size_t)g->kw, (size_t)g->sh,
                                                (size_t)g->sw, (size_t)g->ph, (size_t)g->pw, j->div, j->recip,
                                                scratch };
        j->plane(&prm);
        return;
    }
    for (int64_t i = 0; i < g->oh; i++) {
        prefetch_rows(x, (i + PREFETCH_ROWS) * g->sh * g->w, g->sh * g->w);
        pool_row(j, x, g->w, i, 1, j->y + (size_t)(r * ohw + i * g->ow) * j->ysize, scratch);
    }
}

static void image_fn(const void *ctx, char **p, double *scratch, int64_t r)
{
    (void)p;
    const pool_job *j = ctx;
    const nn_geom *g = &j->win->g;
    const int64_t len = g->ow * g->c;
    pool_row(j, j->x + r / g->oh * g->h * g->w * g->c, g->w * g->c, r % g->oh, g->c,
             j->y + (size_t)(r * len) * j->ysize, scratch);
}

mxp_status nn_pool_f32(const nn_window *win, const float *x, mxp_array *y)
{
    const nn_geom *g = &win->g;
    if (g->oh == 0 || g->ow == 0 || g->c == 0 || g->n == 0)
        return MXP_OK;
    double *div = NULL;
    if (win->kind == NN_WIN_AVG) { /* every output's divisor, once */
        div = mxp_malloc((size_t)(g->oh * g->ow) * sizeof(double));
        if (!div)
            return mxp_error(MXP_ERR_NO_MEMORY, "no memory for %lld divisors", (long long)(g->oh * g->ow));
        nn_window_divisors(win, div);
    }
    const bool plane = !g->nhwc && y->dtype == MXP_F32 &&
                       !((uintptr_t)y->data % sizeof(float)) &&
                       mxp_pool_plane_fits((size_t)g->kh, (size_t)g->kw, (size_t)g->sw);
    const pool_job j = { win, x, y->data, y->dtype, mxp_dtype_itemsize(y->dtype),
                         nn_f32_pool_kernel(mxp_isa_current()), div, nn_f32_bnorm_kernel(mxp_isa_current()),
                         plane ? nn_f32_pool_plane_kernel(mxp_isa_current()) : NULL,
                         div ? mxp_pool_plane_recip(div, (size_t)(g->oh * g->ow)) : 0 };
    nn_rows r;
    memset(&r, 0, sizeof r);
    r.nd = 1;
    r.nrows = g->nhwc ? g->n * g->oh : g->n * g->c;
    r.shape[0] = r.nrows;
    const int64_t vl = g->nhwc ? g->c : 1;
    /* the row in float64, the row pointers past NN_POOL_MAX_KH, max's float row */
    size_t scratch = (size_t)(g->ow * vl + g->kh + (g->ow * vl + 1) / 2);
    if (plane) /* the kernel's floats */
        scratch = (mxp_pool_plane_scratch((size_t)g->kh, (size_t)g->w, (size_t)g->ow) + 1) / 2;
    const int64_t work = g->nhwc ? g->ow * g->c * g->kh * g->kw : g->oh * g->ow * g->kh * g->kw + g->h * g->w;
    const mxp_status st = !g->nhwc && win->kind == NN_WIN_AVG && global(g)
                              ? nn_run_row_blocks(&r, g->h * g->w, NN_MAX_BLOCK, true, NN_MAX_BLOCK, global_fn, &j)
                              : nn_run_rows(&r, work, scratch, true, g->nhwc ? image_fn : plane_fn, &j);
    mxp_free(div);
    return st;
}

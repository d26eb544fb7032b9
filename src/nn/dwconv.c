/* Depthwise convolution of float32 inputs in float32 sums, as the GEMM
 * path sums (window.c has the float64 loop for the other dtypes): each
 * window offset (p, q) adds x * w over a run of output columns through a
 * row kernel (src/kernels/f32-dwconv/), then the epilogue runs in float64
 * on the row and one rounding stores it.  x is read in place.
 *
 * NCHW: a row of the job is a plane (n, c), its output rows in turn, one
 * channel a pixel; NHWC: an output row (n, i), every channel of a pixel
 * at once. */
#include <string.h>

#include "nn/conv-internal.h"

typedef struct dw_job {
    const nn_window *win;
    const float *x, *wk;
    char *y;
    mxp_dtype yt;
    size_t ysize;
    mxp_f32_dwconv_ukernel *k;
} dw_job;

/* Output row i of image n (NCHW: of channel ch, vl 1; NHWC: vl = c
 * channels) from the input rows at xrow(ih) = base + ih * rowlen, summed
 * in acc (ow vl floats), widened into t for the epilogue. */
static void dw_row(const dw_job *j, const float *base, int64_t rowlen, int64_t i, int64_t vl, int64_t ch, float *acc,
                   double *t)
{
    const nn_geom *g = &j->win->g;
    memset(acc, 0, (size_t)(g->ow * vl) * sizeof(float));
    for (int64_t p = 0; p < g->kh; p++) {
        const int64_t ih = i * g->sh - g->ph + p * g->dh;
        if (ih < 0 || ih >= g->h)
            continue;
        for (int64_t q = 0; q < g->kw; q++) {
            const int64_t off = q * g->dw - g->pw;
            int64_t lo, hi;
            nn_window_columns(j->win, off, &lo, &hi);
            if (hi > lo)
                j->k(acc + lo * vl, base + ih * rowlen + (lo * g->sw + off) * vl, j->wk + (p * g->kw + q) * g->c + ch,
                     (size_t)(hi - lo), (size_t)vl, (size_t)(g->sw * vl));
        }
    }
    for (int64_t v = 0; v < g->ow * vl; v++)
        t[v] = acc[v];
    nn_window_finish(j->win, t, i, vl, ch);
}

static void plane_fn(const void *ctx, char **p, double *scratch, int64_t r)
{
    (void)p;
    const dw_job *j = ctx;
    const nn_geom *g = &j->win->g;
    const int64_t ohw = g->oh * g->ow;
    float *acc = (float *)(void *)(scratch + g->ow);
    for (int64_t i = 0; i < g->oh; i++) {
        dw_row(j, j->x + r * g->h * g->w, g->w, i, 1, r % g->c, acc, scratch);
        nn_store(j->y + (size_t)(r * ohw + i * g->ow) * j->ysize, j->yt, (int64_t)j->ysize, scratch, g->ow);
    }
}

static void image_fn(const void *ctx, char **p, double *scratch, int64_t r)
{
    (void)p;
    const dw_job *j = ctx;
    const nn_geom *g = &j->win->g;
    const int64_t len = g->ow * g->c;
    dw_row(j, j->x + r / g->oh * g->h * g->w * g->c, g->w * g->c, r % g->oh, g->c, 0,
           (float *)(void *)(scratch + len), scratch);
    nn_store(j->y + (size_t)(r * len) * j->ysize, j->yt, (int64_t)j->ysize, scratch, len);
}

mxp_status nn_dwconv_f32(const nn_window *win, const float *x, const float *wk, mxp_array *y)
{
    const nn_geom *g = &win->g;
    const dw_job j = { win, x, wk, y->data, y->dtype, mxp_dtype_itemsize(y->dtype),
                       nn_f32_dwconv_kernel(mxp_isa_current()) };
    nn_rows r;
    memset(&r, 0, sizeof r);
    r.nd = 1;
    r.nrows = g->nhwc ? g->n * g->oh : g->n * g->c;
    r.shape[0] = r.nrows;
    const int64_t vl = g->nhwc ? g->c : 1;
    /* the float64 row, then the float32 sums (half as many doubles) */
    const size_t scratch = (size_t)(g->ow * vl + (g->ow * vl + 1) / 2 + 1);
    return nn_run_rows(&r, g->ow * vl * g->kh * g->kw, scratch, true, g->nhwc ? image_fn : plane_fn, &j);
}

/* The direct window loops: depthwise convolution, max and average
 * pooling.  A GEMM of K = kh*kw per channel would spend its time packing,
 * so these slide the window themselves, in float64 (every input widened
 * exactly, each result rounded once).
 *
 * NCHW: a row of the job is one (n, c) plane, widened whole, each output
 * row computed from its rows.  NHWC: a row of the job is one output row
 * (n, i), computed from the kh input rows it covers, the channels the
 * inner, contiguous axis.  Both reduce to one loop: for each window
 * offset (p, q), acc[j][v] op= x[ih][j sw + q dw - pw][v] (v < vl: the
 * vl channels at a pixel, 1 for NCHW). */
#include <math.h>
#include <string.h>

#include "core/activation.h"
#include "core/error.h"
#include "nn/conv-internal.h"

/* The output columns j whose input column j s + off lies in [0, w). */
static void columns(int64_t off, int64_t s, int64_t w, int64_t ow, int64_t *lo, int64_t *hi)
{
    int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t b = w - 1 - off < 0 ? 0 : (w - 1 - off) / s + 1;
    *lo = a < ow ? a : ow;
    *hi = b < ow ? b : ow;
    if (*hi < *lo)
        *hi = *lo;
}

/* One axis of torch's rule: the window from start (k wide) clipped to the
 * padded input (n plus pad after) counts the padding, clipped to x
 * ([*lo, *hi)) the elements. */
static int64_t axis_window(int64_t start, int64_t k, int64_t n, int64_t pad, int64_t *lo, int64_t *hi)
{
    const int64_t end = start + k < n + pad ? start + k : n + pad;
    *lo = start > 0 ? start : 0;
    *hi = end < n ? end : n;
    return end - start;
}

void nn_window_bounds(const nn_window *win, int64_t i, int64_t j, int64_t *h0, int64_t *h1, int64_t *w0,
                      int64_t *w1, double *div)
{
    const nn_geom *g = &win->g;
    const int64_t ph = axis_window(i * g->sh - g->ph, g->kh, g->h, g->ph, h0, h1);
    const int64_t pw = axis_window(j * g->sw - g->pw, g->kw, g->w, g->pw, w0, w1);
    *div = win->exclude_pad ? (double)((*h1 - *h0) * (*w1 - *w0)) : (double)(ph * pw);
}

/* The divisor of one axis's window: its padded width or its elements. */
static double axis_divisor(const nn_window *win, int64_t start, int64_t k, int64_t n, int64_t pad)
{
    int64_t lo, hi;
    const int64_t padded = axis_window(start, k, n, pad, &lo, &hi);
    return (double)(win->exclude_pad ? hi - lo : padded);
}

void nn_window_divisors(const nn_window *win, double *div)
{
    /* the rule is a product of one count a row and one a column: those of
       the columns in row 0 first, then each row from the last (row 0 read
       before it is overwritten); products of small integers, exact */
    const nn_geom *g = &win->g;
    for (int64_t j = 0; j < g->ow; j++)
        div[j] = axis_divisor(win, j * g->sw - g->pw, g->kw, g->w, g->pw);
    for (int64_t i = g->oh - 1; i >= 0; i--) {
        const double dh = axis_divisor(win, i * g->sh - g->ph, g->kh, g->h, g->ph);
        for (int64_t j = 0; j < g->ow; j++)
            div[i * g->ow + j] = dh * div[j];
    }
}

/* acc[j][v] op= xrow[j s + off][v] (times wq[v]) for the columns in x:
 * the kind chosen outside the loops, one channel (NCHW) a loop of its own. */
static void accumulate(const nn_window *win, double *acc, const double *xrow, const double *wq, int64_t off,
                       int64_t vl)
{
    const int64_t s = win->g.sw;
    int64_t lo, hi;
    columns(off, s, win->g.w, win->g.ow, &lo, &hi);
    const double *x0 = xrow + off * vl;
    if (vl == 1) {
        const double w = wq ? wq[0] : 0;
        switch (win->kind) {
        case NN_WIN_DEPTHWISE: for (int64_t j = lo; j < hi; j++) acc[j] += x0[j * s] * w; break;
        case NN_WIN_MAX: /* the first NaN stays; padding never wins */
            for (int64_t j = lo; j < hi; j++)
                acc[j] = x0[j * s] > acc[j] || x0[j * s] != x0[j * s] ? x0[j * s] : acc[j];
            break;
        default: for (int64_t j = lo; j < hi; j++) acc[j] += x0[j * s]; break;
        }
        return;
    }
    for (int64_t j = lo; j < hi; j++) {
        double *a = acc + j * vl;
        const double *x = x0 + j * s * vl;
        switch (win->kind) {
        case NN_WIN_DEPTHWISE: for (int64_t v = 0; v < vl; v++) a[v] += x[v] * wq[v]; break;
        case NN_WIN_MAX:
            for (int64_t v = 0; v < vl; v++)
                a[v] = x[v] > a[v] || x[v] != x[v] ? x[v] : a[v];
            break;
        default: for (int64_t v = 0; v < vl; v++) a[v] += x[v]; break;
        }
    }
}

void nn_window_columns(const nn_window *win, int64_t off, int64_t *lo, int64_t *hi)
{
    columns(off, win->g.sw, win->g.w, win->g.ow, lo, hi);
}

/* bias, activation, clamp (the GEMM epilogue's order), or the average's
 * division, on output row i: ow pixels of vl values (channels ch0..). */
void nn_window_finish(const nn_window *win, double *acc, int64_t i, int64_t vl, int64_t ch0)
{
    const int64_t ow = win->g.ow;
    if (win->kind == NN_WIN_AVG) {
        for (int64_t j = 0; j < ow; j++) {
            int64_t h0, h1, w0, w1;
            double div;
            nn_window_bounds(win, i, j, &h0, &h1, &w0, &w1, &div);
            for (int64_t v = 0; v < vl; v++)
                acc[j * vl + v] /= div;
        }
        return;
    }
    if (win->kind != NN_WIN_DEPTHWISE)
        return;
    const int64_t n = ow * vl;
    if (win->bias) /* a pixel's channels at a time (a division an element cost 4x the convolution) */
        for (int64_t j = 0; j < ow; j++)
            for (int64_t v = 0; v < vl; v++)
                acc[j * vl + v] += win->bias[ch0 + v];
    switch (win->act) {
    case MXP_ACT_RELU: for (int64_t t = 0; t < n; t++) acc[t] = mxp_relu(acc[t]); break;
    case MXP_ACT_GELU: for (int64_t t = 0; t < n; t++) acc[t] = mxp_gelu(acc[t]); break;
    case MXP_ACT_GELU_TANH: for (int64_t t = 0; t < n; t++) acc[t] = mxp_gelu_tanh(acc[t]); break;
    case MXP_ACT_SILU: for (int64_t t = 0; t < n; t++) acc[t] = mxp_silu(acc[t]); break;
    default: break;
    }
    if (win->clamp)
        for (int64_t t = 0; t < n; t++)
            acc[t] = acc[t] < win->lo ? win->lo : acc[t] > win->hi ? win->hi : acc[t]; /* NaN stays */
}

typedef struct win_job {
    const nn_window *win;
    const char *x;
    char *y;
    mxp_dtype xt, yt;
    size_t xsize, ysize;
} win_job;

static void init_acc(const nn_window *win, double *acc, int64_t n)
{
    const double v = win->kind == NN_WIN_MAX ? -INFINITY : 0;
    for (int64_t t = 0; t < n; t++)
        acc[t] = v;
}

/* Pooling windows wider than this are reduced a window at a time
 * (reduce_columns), narrower ones an offset q at a time (accumulate: a
 * loop over the output columns that vectorizes). */
enum { WIDE_WINDOW = 8 };

/* acc[j][v] op= x[w][v] over the columns w of window j (no dilation). */
static void reduce_columns(const nn_window *win, double *acc, const double *x, int64_t vl)
{
    const nn_geom *g = &win->g;
    for (int64_t j = 0; j < g->ow; j++) {
        int64_t w0 = j * g->sw - g->pw, w1 = w0 + g->kw;
        w0 = w0 > 0 ? w0 : 0;
        w1 = w1 < g->w ? w1 : g->w;
        double *a = acc + j * vl;
        for (int64_t w = w0; w < w1; w++) {
            const double *xv = x + w * vl;
            if (win->kind == NN_WIN_MAX)
                for (int64_t v = 0; v < vl; v++)
                    a[v] = xv[v] > a[v] || xv[v] != xv[v] ? xv[v] : a[v];
            else
                for (int64_t v = 0; v < vl; v++)
                    a[v] += xv[v];
        }
    }
}

/* Output row i of a plane or image: xrow(p) gives input row ih's values
 * (NULL outside x). */
static void out_row(const win_job *j, double *acc, int64_t i, int64_t vl, int64_t ch0,
                    const double *(*xrow)(const win_job *, int64_t, void *), void *ctx)
{
    const nn_window *win = j->win;
    const nn_geom *g = &win->g;
    init_acc(win, acc, g->ow * vl);
    for (int64_t p = 0; p < g->kh; p++) {
        const int64_t ih = i * g->sh - g->ph + p * g->dh;
        const double *x = ih >= 0 && ih < g->h ? xrow(j, ih, ctx) : NULL;
        if (x && win->kind != NN_WIN_DEPTHWISE && g->kw > WIDE_WINDOW) {
            reduce_columns(win, acc, x, vl);
            continue;
        }
        for (int64_t q = 0; x && q < g->kw; q++) {
            const double *wq = win->wk ? win->wk + (p * g->kw + q) * g->c + ch0 : NULL;
            accumulate(win, acc, x, wq, q * g->dw - g->pw, vl);
        }
    }
    nn_window_finish(win, acc, i, vl, ch0);
}

static const double *plane_row(const win_job *j, int64_t ih, void *plane)
{
    return (const double *)plane + ih * j->win->g.w;
}

/* One window covering the plane, no padding: global pooling. */
static bool global(const nn_geom *g)
{
    return g->oh == 1 && g->ow == 1 && g->kh == g->h && g->kw == g->w && g->ph == 0 && g->pw == 0;
}

/* NCHW: row r is plane (n, c) = (r / c, r % c). */
static void plane_fn(const void *ctx, char **p, double *scratch, int64_t r)
{
    (void)p;
    const win_job *j = ctx;
    const nn_geom *g = &j->win->g;
    const int64_t hw = g->h * g->w, ohw = g->oh * g->ow, ch = r % g->c;
    double *plane = scratch, *acc = scratch + hw;
    nn_load(plane, j->x + (size_t)(r * hw) * j->xsize, j->xt, (int64_t)j->xsize, hw);
    if (j->win->kind == NN_WIN_AVG && global(g)) { /* the layer's sum: eight running sums, not one chain */
        acc[0] = nn_sum(plane, hw) / (double)hw;
        nn_store(j->y + (size_t)r * j->ysize, j->yt, (int64_t)j->ysize, acc, 1);
        return;
    }
    for (int64_t i = 0; i < g->oh; i++) {
        out_row(j, acc, i, 1, ch, plane_row, plane);
        nn_store(j->y + (size_t)(r * ohw + i * g->ow) * j->ysize, j->yt, (int64_t)j->ysize, acc, g->ow);
    }
}

typedef struct image_row {
    int64_t n;
    double *buf;
} image_row;

static const double *load_row(const win_job *j, int64_t ih, void *ctx)
{
    const image_row *ir = ctx;
    const nn_geom *g = &j->win->g;
    const int64_t len = g->w * g->c;
    nn_load(ir->buf, j->x + (size_t)((ir->n * g->h + ih) * len) * j->xsize, j->xt, (int64_t)j->xsize, len);
    return ir->buf;
}

/* NHWC: row r is output row (n, i) = (r / oh, r % oh). */
static void image_fn(const void *ctx, char **p, double *scratch, int64_t r)
{
    (void)p;
    const win_job *j = ctx;
    const nn_geom *g = &j->win->g;
    const int64_t len = g->ow * g->c;
    image_row ir = { r / g->oh, scratch + len };
    out_row(j, scratch, r % g->oh, g->c, 0, load_row, &ir);
    nn_store(j->y + (size_t)(r * len) * j->ysize, j->yt, (int64_t)j->ysize, scratch, len);
}

mxp_status nn_window_run(const nn_window *win, const mxp_array *x, mxp_array *y)
{
    const nn_geom *g = &win->g;
    win_job j = { win, x->data, y->data, x->dtype, y->dtype, mxp_dtype_itemsize(x->dtype),
                  mxp_dtype_itemsize(y->dtype) };
    nn_rows r;
    memset(&r, 0, sizeof r);
    r.nd = 1;
    r.nrows = g->nhwc ? g->n * g->oh : g->n * g->c;
    r.shape[0] = r.nrows;
    if (g->oh == 0 || g->ow == 0 || g->c == 0)
        return MXP_OK;
    const int64_t work = g->nhwc ? g->ow * g->c * g->kh * g->kw : g->oh * g->ow * g->kh * g->kw + g->h * g->w;
    const size_t scratch = g->nhwc ? (size_t)((g->ow + g->w) * g->c) : (size_t)(g->h * g->w + g->ow);
    return nn_run_rows(&r, work, scratch, true, g->nhwc ? image_fn : plane_fn, &j);
}

/* Max and average pooling (window.c's loops) and their backward passes:
 * the gradient of each (n, c) plane in float64, from the plane of x
 * (max: the argmax recomputed, torch's rule) and of dy, rounded once. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/abi.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "core/profile-internal.h"
#include "nn/conv-internal.h"

/* The geometry of a pooling of x (win's kind left 0). */
static mxp_status pool_geom(const char *fn, const mxp_array *x, const mxp_pool_opts *opts, nn_window *win)
{
    const mxp_pool_opts zero = { 0 };
    const mxp_pool_opts *o = opts ? opts : &zero;
    memset(win, 0, sizeof *win);
    mxp_status st = nn_check_input(fn, "x", x);
    if (st != MXP_OK)
        return st;
    if (x->ndim != 4)
        return mxp_error(MXP_ERR_SHAPE, "%s: x must be 4-d, not %d-d", fn, x->ndim);
    if (o->layout != MXP_NCHW && o->layout != MXP_NHWC)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: layout %d is neither MXP_NCHW nor MXP_NHWC", fn,
                         (int)o->layout);
    for (int i = 0; i < 2; i++)
        if (o->kernel[i] < 0 || o->stride[i] < 0 || o->padding[i] < 0)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: kernel %lld, stride %lld, padding %lld: none may be "
                             "negative", fn, (long long)o->kernel[i], (long long)o->stride[i],
                             (long long)o->padding[i]);
    nn_geom *g = &win->g;
    int64_t d[4];
    g->nhwc = o->layout == MXP_NHWC;
    nn_geom_nchw(x, g->nhwc, d);
    g->n = d[0], g->c = g->o = g->groups = d[1], g->h = d[2], g->w = d[3];
    g->kh = o->kernel[0] ? o->kernel[0] : g->h; /* 0: the whole axis (global pooling) */
    g->kw = o->kernel[1] ? o->kernel[1] : g->w;
    g->sh = o->stride[0] ? o->stride[0] : g->kh;
    g->sw = o->stride[1] ? o->stride[1] : g->kw;
    g->ph = o->padding[0], g->pw = o->padding[1];
    g->dh = g->dw = 1;
    if (g->kh == 0 || g->kw == 0) /* a global pooling of an empty plane */
        return mxp_error(MXP_ERR_SHAPE, "%s: x's planes are %lld x %lld: no window fits", fn, (long long)g->h,
                         (long long)g->w);
    if (2 * g->ph > g->kh || 2 * g->pw > g->kw)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: padding (%lld, %lld) is more than half the kernel "
                         "(%lld, %lld)", fn, (long long)g->ph, (long long)g->pw, (long long)g->kh, (long long)g->kw);
    win->exclude_pad = o->exclude_pad;
    st = nn_window_out(fn, "row", g->h, g->kh, g->sh, g->ph, 1, o->ceil_mode, &g->oh);
    if (st == MXP_OK)
        st = nn_window_out(fn, "column", g->w, g->kw, g->sw, g->pw, 1, o->ceil_mode, &g->ow);
    return st;
}

static mxp_status pool_into(const char *fn, int kind, mxp_array *out, const mxp_array *x, const mxp_pool_opts *opts)
{
    nn_window win;
    mxp_status st = nn_check_input(fn, "out", out);
    if (st == MXP_OK)
        st = pool_geom(fn, x, opts, &win);
    if (st != MXP_OK)
        return st;
    win.kind = kind;
    int64_t shape[4];
    nn_geom_out_shape(&win.g, shape);
    st = nn_check_out_shape(fn, out, 4, shape);
    if (st == MXP_OK)
        st = nn_check_float(fn, "out", out->dtype);
    mxp_array *work = NULL, *xc = NULL;
    if (st == MXP_OK)
        st = nn_dense_out_begin(fn, out, &x, 1, &work);
    if (st == MXP_OK)
        st = mxp_array_ascontiguous(&xc, x, 'C');
    if (st == MXP_OK) {
        const mxp_fpenv env = mxp_fpenv_enter();
        /* float32 through the row kernels (the same bits), the rest widened */
        if (xc->dtype == MXP_F32 && !((uintptr_t)xc->data % sizeof(float)))
            st = nn_pool_f32(&win, (const float *)(const void *)xc->data, work);
        else
            st = nn_window_run(&win, xc, work);
        mxp_fpenv_leave(env);
    }
    mxp_array_free(xc);
    return work ? nn_out_end(out, work, st) : st;
}

static mxp_status pool_new(const char *fn, int kind, mxp_array **out, const mxp_array *x, const mxp_pool_opts *opts,
                           mxp_dtype dt)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    nn_window win;
    mxp_status st = pool_geom(fn, x, opts, &win);
    if (st == MXP_OK)
        st = nn_check_float(fn, "out", dt = nn_out_dtype(dt, x->dtype));
    int64_t shape[4];
    nn_geom_out_shape(&win.g, shape);
    mxp_array *r = NULL;
    if (st == MXP_OK)
        st = mxp_array_new_owner(&r, dt, 4, shape);
    if (st == MXP_OK)
        st = pool_into(fn, kind, r, x, opts);
    return nn_give_out(out, r, st);
}

static mxp_status max_pool2d_entry(mxp_array **out, const mxp_array *x, const mxp_pool_opts *opts, mxp_dtype out_dtype)
{
    MXP_ABI_IN_OUT(opts, pool_opts, "mxp_max_pool2d", out);
    return pool_new("mxp_max_pool2d", NN_WIN_MAX, out, x, opts, out_dtype);
}

static mxp_status max_pool2d_into_entry(mxp_array *out, const mxp_array *x, const mxp_pool_opts *opts)
{
    MXP_ABI_IN(opts, pool_opts, "mxp_max_pool2d_into");
    return pool_into("mxp_max_pool2d_into", NN_WIN_MAX, out, x, opts);
}

static mxp_status avg_pool2d_entry(mxp_array **out, const mxp_array *x, const mxp_pool_opts *opts, mxp_dtype out_dtype)
{
    MXP_ABI_IN_OUT(opts, pool_opts, "mxp_avg_pool2d", out);
    return pool_new("mxp_avg_pool2d", NN_WIN_AVG, out, x, opts, out_dtype);
}

static mxp_status avg_pool2d_into_entry(mxp_array *out, const mxp_array *x, const mxp_pool_opts *opts)
{
    MXP_ABI_IN(opts, pool_opts, "mxp_avg_pool2d_into");
    return pool_into("mxp_avg_pool2d_into", NN_WIN_AVG, out, x, opts);
}

/* ---- backward ------------------------------------------------------------- */

enum { BX, BDY, BDX };

typedef struct back_job {
    const nn_window *win;
    const mxp_array *v[3]; /* x, dy, dx viewed NCHW */
} back_job;

/* A plane (rows x cols, strides rs, cs bytes) widened into dst, or dst stored into it. */
static void load_plane(double *dst, const char *p, const mxp_array *a, int64_t rows, int64_t cols)
{
    for (int64_t i = 0; i < rows; i++)
        nn_load(dst + i * cols, p + i * a->strides[2], a->dtype, a->strides[3], cols);
}

static void plane_back(const void *ctx, char **p, double *scratch, int64_t row)
{
    (void)row;
    const back_job *j = ctx;
    const nn_window *win = j->win;
    const nn_geom *g = &win->g;
    double *x = scratch, *dx = x + g->h * g->w, *dy = dx + g->h * g->w;
    memset(dx, 0, (size_t)(g->h * g->w) * sizeof(double));
    load_plane(dy, p[BDY], j->v[BDY], g->oh, g->ow);
    if (win->kind == NN_WIN_MAX)
        load_plane(x, p[BX], j->v[BX], g->h, g->w);
    for (int64_t i = 0; i < g->oh; i++)
        for (int64_t jj = 0; jj < g->ow; jj++) {
            int64_t h0, h1, w0, w1;
            double div;
            nn_window_bounds(win, i, jj, &h0, &h1, &w0, &w1, &div);
            const double d = dy[i * g->ow + jj];
            if (win->kind == NN_WIN_AVG) {
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++)
                        dx[ih * g->w + iw] += d / div;
                continue;
            }
            int64_t at = h0 * g->w + w0; /* torch's rule: the first maximum, the last NaN */
            double m = -INFINITY;
            for (int64_t ih = h0; ih < h1; ih++)
                for (int64_t iw = w0; iw < w1; iw++) {
                    const double v = x[ih * g->w + iw];
                    if (v > m || isnan(v)) {
                        m = v;
                        at = ih * g->w + iw;
                    }
                }
            if (h1 > h0 && w1 > w0)
                dx[at] += d;
        }
    for (int64_t i = 0; i < g->h; i++)
        nn_store(p[BDX] + i * j->v[BDX]->strides[2], j->v[BDX]->dtype, j->v[BDX]->strides[3], dx + i * g->w, g->w);
}

static mxp_status pool_backward(const char *fn, int kind, mxp_array **dx, const mxp_array *dy, const mxp_array *x,
                                const mxp_pool_opts *opts)
{
    if (!dx)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: dx is NULL", fn);
    *dx = NULL;
    nn_window win;
    mxp_status st = pool_geom(fn, x, opts, &win);
    if (st == MXP_OK)
        st = nn_check_float(fn, "x", x->dtype);
    if (st == MXP_OK)
        st = nn_check_input(fn, "dy", dy);
    int64_t shape[4];
    nn_geom_out_shape(&win.g, shape);
    if (st == MXP_OK && (dy->ndim != 4 || memcmp(dy->shape, shape, sizeof shape))) {
        char want[512], got[512];
        mxp_format_shape(want, sizeof want, 4, shape);
        mxp_format_shape(got, sizeof got, dy->ndim, dy->shape);
        st = mxp_error(MXP_ERR_SHAPE, "%s: dy has shape %s, the forward's output %s", fn, got, want);
    }
    if (st != MXP_OK)
        return st;
    win.kind = kind;
    mxp_array *r = NULL, *v[3] = { NULL, NULL, NULL };
    st = mxp_array_new_owner(&r, x->dtype, 4, x->shape);
    const int nhwc[4] = { 0, 3, 1, 2 }, nchw[4] = { 0, 1, 2, 3 };
    const mxp_array *arr[3] = { x, dy, r };
    for (int k = 0; k < 3 && st == MXP_OK; k++)
        st = mxp_array_transpose(&v[k], arr[k], win.g.nhwc ? nhwc : nchw);
    if (st == MXP_OK) {
        const back_job j = { &win, { v[0], v[1], v[2] } };
        nn_rows rows;
        nn_rows_init(&rows, 2, (const mxp_array *const *)v, 3);
        const mxp_fpenv env = mxp_fpenv_enter();
        st = nn_run_rows(&rows, win.g.h * win.g.w, (size_t)(2 * win.g.h * win.g.w + win.g.oh * win.g.ow), true,
                         plane_back, &j);
        mxp_fpenv_leave(env);
    }
    for (int k = 0; k < 3; k++)
        mxp_array_free(v[k]);
    return nn_give_out(dx, r, st);
}

mxp_status mxp_max_pool2d_backward(mxp_array **dx, const mxp_array *dy, const mxp_array *x,
                                   const mxp_pool_opts *opts)
{
    MXP_ABI_IN_OUT(opts, pool_opts, "mxp_max_pool2d_backward", dx);
    return pool_backward("mxp_max_pool2d_backward", NN_WIN_MAX, dx, dy, x, opts);
}

mxp_status mxp_avg_pool2d_backward(mxp_array **dx, const mxp_array *dy, const mxp_array *x,
                                   const mxp_pool_opts *opts)
{
    MXP_ABI_IN_OUT(opts, pool_opts, "mxp_avg_pool2d_backward", dx);
    return pool_backward("mxp_avg_pool2d_backward", NN_WIN_AVG, dx, dy, x, opts);
}

/* ---- the entry points, profiled (src/core/profile-internal.h) ---------- */

mxp_status mxp_max_pool2d(mxp_array **out, const mxp_array *x, const mxp_pool_opts *opts, mxp_dtype out_dtype)
{
    MXP_PROF_RETURN_AFTER("max_pool2d", max_pool2d_entry(out, x, opts, out_dtype),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          mxp_prof_size(x));
}

mxp_status mxp_max_pool2d_into(mxp_array *out, const mxp_array *x, const mxp_pool_opts *opts)
{
    MXP_PROF_RETURN_AFTER("max_pool2d", max_pool2d_into_entry(out, x, opts),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(out),
                          mxp_prof_size(x));
}

mxp_status mxp_avg_pool2d(mxp_array **out, const mxp_array *x, const mxp_pool_opts *opts, mxp_dtype out_dtype)
{
    MXP_PROF_RETURN_AFTER("avg_pool2d", avg_pool2d_entry(out, x, opts, out_dtype),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          mxp_prof_size(x));
}

mxp_status mxp_avg_pool2d_into(mxp_array *out, const mxp_array *x, const mxp_pool_opts *opts)
{
    MXP_PROF_RETURN_AFTER("avg_pool2d", avg_pool2d_into_entry(out, x, opts),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(out),
                          mxp_prof_size(x));
}

/* Layer norm and RMS norm over the trailing axes, and their backward
 * passes.  Each group of normalized elements is one row (the trailing axes
 * merged); its statistics in float64, the mean and variance in two passes;
 * each result rounded once.  Bfloat16 out of bfloat16 or float32 in:
 * float32 arithmetic (kernels/bf16-narrow.h), dense rows four at a time,
 * strided rows gathered. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "core/fpenv.h"
#include "core/profile-internal.h"
#include "mxp/alloc.h"
#include "nn/nn-internal.h"

typedef struct norm_job {
    bool rms;
    int64_t n;          /* elements of a row */
    double eps;
    const double *w, *b; /* NULL: 1, 0 */
    const float *w32, *b32; /* the same as float32, for the bfloat16 rows */
    mxp_dtype xt, yt, dyt;
    int64_t xs, ys, dys;
    double *dw, *db;     /* backward: sums over the rows (one thread), NULL: none */
    mxp_f32_norm_ukernel *f32;   /* contiguous float32 in and out: the rows kernel, else NULL */
    mxp_bf16_norm_ukernel *bf16; /* bfloat16 out of float32 or bfloat16 in: the row kernel, else NULL */
    bool gather;                 /* bf16 on strided rows: gathered into the scratch */
    bool stream;                 /* float32 rows written by streaming stores (nn_streams) */
} norm_job;

/* The row's mean (0 for rms norm) and 1 / sqrt(var + eps), var the mean
 * square about it. */
static void stats(const norm_job *j, const double *x, double *mean, double *rstd)
{
    const double m = j->rms ? 0 : nn_sum(x, j->n) / (double)j->n;
    *mean = m;
    *rstd = 1 / sqrt(nn_sumsq(x, j->n, m) / (double)j->n + j->eps);
}

enum { X, Y, DY };

/* Dense float32 rows, MXP_NORM_ROWS at a time through the row kernel:
 * the same arithmetic in registers (kernels/norm-kernels.h). */
static void norm_rows_f32(const void *ctx, char *(*p)[NN_MAXARR], int64_t count, double *scratch, int64_t row0)
{
    (void)row0;
    const norm_job *j = ctx;
    float *y[MXP_NORM_ROWS];
    const float *x[MXP_NORM_ROWS];
    for (int64_t k = 0; k < count; k++) {
        y[k] = (float *)(void *)p[k][Y];
        x[k] = (const float *)(const void *)p[k][X];
    }
    j->f32(y, x, (size_t)count, (size_t)j->n, j->w, j->b, j->eps,
           (j->rms ? MXP_NORM_RMS : MXP_NORM_LAYER) | (j->stream ? MXP_NORM_STREAM : 0),
           mxp_norm_wide_doubles((size_t)j->n) ? scratch : NULL);
}

/* Dense bfloat16 rows (out of bfloat16 or float32), MXP_NORM_ROWS at a
 * time through the row kernel. */
static void norm_rows_bf16(const void *ctx, char *(*p)[NN_MAXARR], int64_t count, double *scratch, int64_t row0)
{
    (void)row0, (void)scratch;
    const norm_job *j = ctx;
    uint16_t *y[MXP_NORM_ROWS];
    mxp_narrow_src x[MXP_NORM_ROWS];
    nn_narrow_block(p, count, X, Y, j->xt == MXP_F32, y, x);
    j->bf16(y, x, (size_t)count, (size_t)j->n, j->w32, j->b32, j->eps, j->rms ? MXP_NORM_RMS : MXP_NORM_LAYER);
}

static void norm_row(const void *ctx, char **p, double *x, int64_t row)
{
    (void)row;
    const norm_job *j = ctx;
    if (j->bf16) {
        const int mode = j->rms ? MXP_NORM_RMS : MXP_NORM_LAYER;
        mxp_narrow_src src = { p[X], j->xt == MXP_F32, NULL };
        uint16_t *y = (uint16_t *)(void *)p[Y];
        if (j->gather) { /* x's row, then y's, in the scratch */
            if (src.f32)
                for (int64_t i = 0; i < j->n; i++)
                    memcpy((float *)(void *)x + i, p[X] + i * j->xs, sizeof(float));
            else
                nn_gather16((uint16_t *)(void *)x, p[X], j->xs, j->n);
            src.x = x;
            y = (uint16_t *)(void *)(x + j->n / 2 + 1);
        }
        j->bf16(&y, &src, 1, (size_t)j->n, j->w32, j->b32, j->eps, mode);
        if (j->gather)
            nn_scatter16(p[Y], j->ys, y, j->n);
        return;
    }
    nn_load(x, p[X], j->xt, j->xs, j->n);
    double mean, rstd;
    stats(j, x, &mean, &rstd);
    for (int64_t i = 0; i < j->n; i++) {
        const double h = (x[i] - mean) * rstd;
        x[i] = (j->w ? h * j->w[i] : h) + (j->b ? j->b[i] : 0);
    }
    nn_store(p[Y], j->yt, j->ys, x, j->n);
}

/* g = dy w; layer norm: dx = rstd (g - mean(g) - xhat mean(g xhat));
 * rms norm (mean 0): dx = rstd (g - xhat mean(g xhat)). */
static void norm_back_row(const void *ctx, char **p, double *x, int64_t row)
{
    (void)row;
    const norm_job *j = ctx;
    const int64_t n = j->n;
    double *dy = x + n;
    nn_load(x, p[X], j->xt, j->xs, n);
    nn_load(dy, p[DY], j->dyt, j->dys, n);
    double mean, rstd, mg = 0, mgx = 0;
    stats(j, x, &mean, &rstd);
    for (int64_t i = 0; i < n; i++) {
        x[i] = (x[i] - mean) * rstd; /* xhat */
        const double g = j->w ? dy[i] * j->w[i] : dy[i];
        mg += g;
        mgx += g * x[i];
        if (j->dw)
            j->dw[i] += dy[i] * x[i];
        if (j->db)
            j->db[i] += dy[i];
    }
    mg = j->rms ? 0 : mg / (double)n;
    mgx /= (double)n;
    if (!p[Y])
        return;
    for (int64_t i = 0; i < n; i++) {
        const double g = j->w ? dy[i] * j->w[i] : dy[i];
        dy[i] = rstd * (g - mg - x[i] * mgx);
    }
    nn_store(p[Y], j->yt, j->ys, dy, n);
}

/* The checks forward and backward share; *inner the elements of a row. */
static mxp_status check_norm(const char *fn, const mxp_array *x, int nnorm, const mxp_array *weight,
                             const mxp_array *bias, double eps, int64_t *inner)
{
    mxp_status st = nn_check_input(fn, "x", x);
    if (st == MXP_OK && weight)
        st = nn_check_input(fn, "weight", weight);
    if (st == MXP_OK && bias)
        st = nn_check_input(fn, "bias", bias);
    if (st == MXP_OK)
        st = nn_check_eps(fn, eps);
    if (st != MXP_OK)
        return st;
    if (nnorm < 1 || nnorm > x->ndim)
        return mxp_error(MXP_ERR_INDEX, "%s: %d normalized axes for an array of %d dimensions", fn, nnorm, x->ndim);
    const int keep = x->ndim - nnorm;
    const mxp_array *wb[2] = { weight, bias };
    for (int k = 0; k < 2; k++) {
        if (!wb[k])
            continue;
        bool same = wb[k]->ndim == nnorm;
        for (int i = 0; same && i < nnorm; i++)
            same = wb[k]->shape[i] == x->shape[keep + i];
        if (!same) {
            char sw[512], sx[512];
            mxp_format_shape(sw, sizeof sw, wb[k]->ndim, wb[k]->shape);
            mxp_format_shape(sx, sizeof sx, nnorm, x->shape + keep);
            return mxp_error(MXP_ERR_SHAPE, "%s: %s has shape %s, not the normalized shape %s", fn,
                             k ? "bias" : "weight", sw, sx);
        }
    }
    *inner = 1;
    for (int i = keep; i < x->ndim; i++)
        *inner *= x->shape[i];
    return MXP_OK;
}

/* weight and bias widened into w (2 * inner doubles, from mxp_malloc). */
static mxp_status load_params(double **w, const mxp_array *weight, const mxp_array *bias, int nnorm, int64_t inner)
{
    *w = mxp_malloc(2 * (size_t)(inner ? inner : 1) * sizeof(double));
    if (!*w)
        return mxp_error(MXP_ERR_NO_MEMORY, "no memory for the weights");
    const mxp_array *wb[2] = { weight, bias };
    mxp_status st = MXP_OK;
    for (int k = 0; k < 2 && st == MXP_OK; k++) {
        mxp_array *v = NULL;
        if (wb[k] && (st = nn_collapse_last(&v, wb[k], nnorm)) == MXP_OK)
            nn_load(*w + k * inner, v->data, v->dtype, nn_step(v), inner);
        mxp_array_free(v);
    }
    return st;
}

/* One forward norm, as the entry points take it. */
typedef struct norm_args {
    const char *fn;
    bool rms;
    const mxp_array *x, *weight, *bias;
    int nnorm;
    double eps;
} norm_args;

static mxp_status norm_into(mxp_array *out, const void *args)
{
    const norm_args *a = args;
    const char *fn = a->fn;
    const mxp_array *x = a->x, *weight = a->weight, *bias = a->bias;
    const int nnorm = a->nnorm;
    int64_t inner = 0;
    mxp_status st = nn_check_input(fn, "out", out);
    if (st == MXP_OK)
        st = check_norm(fn, x, nnorm, weight, bias, a->eps, &inner);
    if (st == MXP_OK)
        st = nn_check_out_shape(fn, out, x->ndim, x->shape);
    if (st == MXP_OK)
        st = nn_check_float(fn, "out", out->dtype);
    if (st != MXP_OK)
        return st;
    const mxp_fpenv env = mxp_fpenv_enter();
    double *w = NULL;
    float *w32 = NULL;
    mxp_array *work = NULL, *xv = NULL, *ov = NULL;
    const mxp_array *in[3] = { x, weight, bias };
    st = load_params(&w, weight, bias, nnorm, inner);
    if (st == MXP_OK)
        st = nn_out_begin(fn, out, in, 3, nnorm, &work);
    if (st == MXP_OK)
        st = nn_collapse_last(&xv, x, nnorm);
    if (st == MXP_OK)
        st = nn_collapse_last(&ov, work, nnorm);
    const bool bf16 = st == MXP_OK && inner > 0 && ov->dtype == MXP_BF16 &&
                      (xv->dtype == MXP_BF16 || xv->dtype == MXP_F32);
    if (bf16 && !(w32 = mxp_malloc(2 * (size_t)inner * sizeof(float)))) /* float32 weights for its kernel */
        st = mxp_error(MXP_ERR_NO_MEMORY, "no memory for the weights");
    for (int64_t i = 0; st == MXP_OK && bf16 && i < 2 * inner; i++)
        w32[i] = (float)w[i];
    if (st == MXP_OK) {
        const bool f32 = inner > 0 && nn_dense_rows(xv, MXP_F32) && nn_dense_rows(ov, MXP_F32);
        const norm_job j = { .rms = a->rms, .n = inner, .eps = a->eps, .w = weight ? w : NULL,
                             .b = bias ? w + inner : NULL, .w32 = weight ? w32 : NULL,
                             .b32 = bias ? w32 + inner : NULL, .xt = x->dtype, .yt = out->dtype,
                             .xs = nn_step(xv), .ys = nn_step(ov),
                             .f32 = f32 ? nn_f32_norm_kernel(mxp_isa_current()) : NULL,
                             .bf16 = bf16 ? nn_bf16_norm_kernel(mxp_isa_current()) : NULL,
                             .gather = !(nn_dense_rows(xv, xv->dtype) && nn_dense_rows(ov, MXP_BF16)),
                             .stream = nn_streams(ov, 0) };
        const mxp_array *arrs[2] = { xv, ov };
        nn_rows r;
        nn_rows_init(&r, x->ndim - nnorm, arrs, 2);
        if (f32)
            st = nn_run_row_blocks(&r, inner, mxp_norm_wide_doubles((size_t)inner), true, MXP_NORM_ROWS,
                                   norm_rows_f32, &j);
        else if (j.bf16 && !j.gather)
            st = nn_run_row_blocks(&r, inner, 0, true, MXP_NORM_ROWS, norm_rows_bf16, &j);
        else
            st = nn_run_rows(&r, inner, (size_t)inner + 4, true, norm_row, &j);
    }
    mxp_free(w32);
    mxp_free(w);
    mxp_array_free(xv);
    mxp_array_free(ov);
    st = nn_out_end(out, work, st);
    mxp_fpenv_leave(env);
    return st;
}

static mxp_status layer_norm_entry(mxp_array **out, const mxp_array *x, int nnorm, const mxp_array *weight,
                                   const mxp_array *bias, double eps, mxp_dtype out_dtype)
{
    const norm_args a = { "mxp_layer_norm", false, x, weight, bias, nnorm, eps };
    return nn_new_like(a.fn, out, x, out_dtype, norm_into, &a);
}

static mxp_status layer_norm_into_entry(mxp_array *out, const mxp_array *x, int nnorm, const mxp_array *weight,
                                        const mxp_array *bias, double eps)
{
    return norm_into(out, &(norm_args){ "mxp_layer_norm_into", false, x, weight, bias, nnorm, eps });
}

static mxp_status rms_norm_entry(mxp_array **out, const mxp_array *x, int nnorm, const mxp_array *weight, double eps,
                                 mxp_dtype out_dtype)
{
    const norm_args a = { "mxp_rms_norm", true, x, weight, NULL, nnorm, eps };
    return nn_new_like(a.fn, out, x, out_dtype, norm_into, &a);
}

static mxp_status rms_norm_into_entry(mxp_array *out, const mxp_array *x, int nnorm, const mxp_array *weight, double eps)
{
    return norm_into(out, &(norm_args){ "mxp_rms_norm_into", true, x, weight, NULL, nnorm, eps });
}

/* ---- backward ------------------------------------------------------------- */

typedef struct grads {
    mxp_array **dx, **dw, **db;
} grads;

/* The parameter gradients (the normalized shape) from their float64 sums. */
static mxp_status give_param_grad(mxp_array **g, const double *sum, mxp_dtype dt, const mxp_array *x, int nnorm)
{
    if (!g)
        return MXP_OK;
    mxp_array *r = NULL;
    mxp_status st = mxp_array_new_owner(&r, dt, nnorm, x->shape + x->ndim - nnorm);
    if (st == MXP_OK)
        nn_store(r->data, dt, (int64_t)mxp_dtype_itemsize(dt), sum, mxp_array_size(r));
    return nn_give_out(g, r, st);
}

static mxp_status back_in_env(const char *fn, bool rms, const grads *g, const mxp_array *dy, const mxp_array *x,
                              int nnorm, const mxp_array *weight, double eps, int64_t inner)
{
    const mxp_dtype pt = weight ? weight->dtype : x->dtype;
    double *w = NULL;
    mxp_array *dxa = NULL, *xv = NULL, *dyv = NULL, *dxv = NULL;
    mxp_status st = load_params(&w, weight, NULL, nnorm, inner);
    double *sums = NULL;
    if (st == MXP_OK && (g->dw || g->db)) {
        sums = mxp_malloc(2 * (size_t)(inner ? inner : 1) * sizeof(double));
        st = sums ? MXP_OK : mxp_error(MXP_ERR_NO_MEMORY, "%s: no memory for the parameter sums", fn);
        if (sums)
            memset(sums, 0, 2 * (size_t)inner * sizeof(double));
    }
    if (st == MXP_OK && g->dx)
        st = mxp_array_new_owner(&dxa, x->dtype, x->ndim, x->shape);
    if (st == MXP_OK)
        st = nn_collapse_last(&xv, x, nnorm);
    if (st == MXP_OK)
        st = nn_collapse_last(&dyv, dy, nnorm);
    if (st == MXP_OK && dxa)
        st = nn_collapse_last(&dxv, dxa, nnorm);
    if (st == MXP_OK) {
        const norm_job j = { .rms = rms, .n = inner, .eps = eps, .w = weight ? w : NULL, .xt = x->dtype,
                             .yt = x->dtype, .dyt = dy->dtype, .xs = nn_step(xv), .ys = dxv ? nn_step(dxv) : 0,
                             .dys = nn_step(dyv), .dw = g->dw ? sums : NULL, .db = g->db ? sums + inner : NULL };
        const mxp_array *arrs[3] = { xv, dxv, dyv };
        nn_rows r;
        nn_rows_init(&r, x->ndim - nnorm, arrs, 3);
        /* the parameter sums run over the rows in order: one thread */
        st = nn_run_rows(&r, inner, 2 * (size_t)inner, !sums, norm_back_row, &j);
    }
    if (st == MXP_OK)
        st = give_param_grad(g->dw, sums, pt, x, nnorm);
    if (st == MXP_OK)
        st = give_param_grad(g->db, sums ? sums + inner : NULL, pt, x, nnorm);
    if (st == MXP_OK && g->dx) {
        *g->dx = dxa;
        dxa = NULL;
    }
    mxp_free(w);
    mxp_free(sums);
    mxp_array_free(dxa);
    mxp_array_free(xv);
    mxp_array_free(dyv);
    mxp_array_free(dxv);
    return st;
}

static mxp_status norm_backward(const char *fn, bool rms, const grads *g, const mxp_array *dy, const mxp_array *x,
                                int nnorm, const mxp_array *weight, double eps)
{
    mxp_array **outs[3] = { g->dx, g->dw, g->db };
    for (int k = 0; k < 3; k++)
        if (outs[k])
            *outs[k] = NULL;
    int64_t inner = 0;
    mxp_status st = check_norm(fn, x, nnorm, weight, NULL, eps, &inner);
    if (st == MXP_OK)
        st = nn_check_input(fn, "dy", dy);
    if (st == MXP_OK)
        st = nn_check_same_shape(fn, "dy", dy, "x", x);
    if (st == MXP_OK)
        st = nn_check_float(fn, "x", x->dtype);
    if (st == MXP_OK && weight)
        st = nn_check_float(fn, "weight", weight->dtype);
    if (st != MXP_OK)
        return st;
    const mxp_fpenv env = mxp_fpenv_enter();
    st = back_in_env(fn, rms, g, dy, x, nnorm, weight, eps, inner);
    mxp_fpenv_leave(env);
    if (st != MXP_OK)
        for (int k = 0; k < 3; k++)
            if (outs[k]) {
                mxp_array_free(*outs[k]);
                *outs[k] = NULL;
            }
    return st;
}

mxp_status mxp_layer_norm_backward(mxp_array **dx, mxp_array **dweight, mxp_array **dbias, const mxp_array *dy,
                                   const mxp_array *x, int nnorm, const mxp_array *weight, double eps)
{
    const grads g = { dx, dweight, dbias };
    return norm_backward("mxp_layer_norm_backward", false, &g, dy, x, nnorm, weight, eps);
}

mxp_status mxp_rms_norm_backward(mxp_array **dx, mxp_array **dweight, const mxp_array *dy, const mxp_array *x,
                                 int nnorm, const mxp_array *weight, double eps)
{
    const grads g = { dx, dweight, NULL };
    return norm_backward("mxp_rms_norm_backward", true, &g, dy, x, nnorm, weight, eps);
}

/* ---- the entry points, profiled (src/core/profile-internal.h) ---------- */

mxp_status mxp_layer_norm(mxp_array **out, const mxp_array *x, int nnorm, const mxp_array *weight,
                          const mxp_array *bias, double eps, mxp_dtype out_dtype)
{
    MXP_PROF_RETURN_AFTER("layer_norm", layer_norm_entry(out, x, nnorm, weight, bias, eps, out_dtype),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          mxp_prof_size(x));
}

mxp_status mxp_layer_norm_into(mxp_array *out, const mxp_array *x, int nnorm, const mxp_array *weight,
                               const mxp_array *bias, double eps)
{
    MXP_PROF_RETURN_AFTER("layer_norm", layer_norm_into_entry(out, x, nnorm, weight, bias, eps),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(out),
                          mxp_prof_size(x));
}

mxp_status mxp_rms_norm(mxp_array **out, const mxp_array *x, int nnorm, const mxp_array *weight, double eps,
                        mxp_dtype out_dtype)
{
    MXP_PROF_RETURN_AFTER("rms_norm", rms_norm_entry(out, x, nnorm, weight, eps, out_dtype),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          mxp_prof_size(x));
}

mxp_status mxp_rms_norm_into(mxp_array *out, const mxp_array *x, int nnorm, const mxp_array *weight, double eps)
{
    MXP_PROF_RETURN_AFTER("rms_norm", rms_norm_into_entry(out, x, nnorm, weight, eps),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(out),
                          mxp_prof_size(x));
}

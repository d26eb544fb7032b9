/* Batch norm: statistics per channel over every other axis, in float64,
 * with torch's running averages; its backward pass; and the folding of an
 * inference batch norm into the convolution before it.
 *
 * x is viewed as [outer, C, inner] (the axes before the channel axis
 * merged, and those after it): NCHW is [N, C, H W], NHWC [N H W, C, 1].
 * Block o ([C, inner]) is widened at once; the channel sums run over the
 * blocks in order (one thread: the bits do not depend on the thread
 * count), the normalization over the thread pool. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "core/fpenv.h"
#include "core/profile-internal.h"
#include "mxp/alloc.h"
#include "nn/conv-internal.h"

/* a as [outer, C, inner] around axis: a view, or a C-ordered copy. */
static mxp_status view3(mxp_array **v, const mxp_array *a, int axis)
{
    int64_t s[3] = { 1, a->shape[axis], 1 };
    for (int i = 0; i < a->ndim; i++)
        if (i != axis)
            s[i < axis ? 0 : 2] *= a->shape[i];
    if (mxp_array_reshape(v, a, 3, s) == MXP_OK)
        return MXP_OK;
    mxp_clear_error();
    return mxp_array_reshape_copy(v, a, 3, s);
}

enum { BX, BY, BDY };

typedef struct bn_job {
    int64_t c, inner, count; /* count: values per channel */
    const mxp_array *v[3];   /* x, y (or dx), dy as [outer, C, inner]; NULL: none */
    double *mean, *rstd, *w, *b; /* C each (w, b NULL: 1, 0) */
    double *s1, *s2;             /* channel sums (the reductions) */
    mxp_f32_bnorm_ukernel *k;    /* dense float32 blocks of x (and y): the block kernel, else NULL */
} bn_job;

/* Whether a's blocks ([C, inner] of [outer, C, inner]) are dense, aligned float32. */
static bool dense_f32_blocks(const mxp_array *a)
{
    return a->dtype == MXP_F32 && !((uintptr_t)a->data % sizeof(float)) && !(a->strides[0] % (int64_t)sizeof(float)) &&
           (a->shape[2] == 1 || a->strides[2] == (int64_t)sizeof(float)) &&
           (a->shape[1] == 1 || a->strides[1] == a->shape[2] * (int64_t)sizeof(float));
}

/* Pass `pass` of block o through the kernel (src/kernels/f32-bnorm/). */
static void block_kernel(const bn_job *j, char **p, int pass)
{
    const mxp_f32_bnorm_params prm = { pass, pass == MXP_BNORM_NORM ? (float *)(void *)p[BY] : NULL,
                                       (const float *)(const void *)p[BX], (size_t)j->c, (size_t)j->inner,
                                       j->mean, j->rstd, j->w, j->b, j->s1, 1, 0, 0 };
    j->k(&prm);
}

static void load_block(double *dst, const mxp_array *v, const char *p, int64_t c, int64_t inner)
{
    if (inner == 1)
        nn_load(dst, p, v->dtype, v->strides[1], c);
    else
        for (int64_t k = 0; k < c; k++)
            nn_load(dst + k * inner, p + k * v->strides[1], v->dtype, v->strides[2], inner);
}

static void store_block(char *p, const mxp_array *v, const double *src, int64_t c, int64_t inner)
{
    if (inner == 1)
        nn_store(p, v->dtype, v->strides[1], src, c);
    else
        for (int64_t k = 0; k < c; k++)
            nn_store(p + k * v->strides[1], v->dtype, v->strides[2], src + k * inner, inner);
}

/* s1[c] += sum x (mean NULL), or s1[c] += sum (x - mean)^2. */
static void sums_fn(const void *ctx, char **p, double *x, int64_t o)
{
    (void)o;
    const bn_job *j = ctx;
    if (j->k) { /* the same bits */
        block_kernel(j, p, j->mean ? MXP_BNORM_SUMSQ : MXP_BNORM_SUM);
        return;
    }
    load_block(x, j->v[BX], p[BX], j->c, j->inner);
    for (int64_t k = 0; k < j->c; k++)
        j->s1[k] += j->inner == 1 ? (j->mean ? (x[k] - j->mean[k]) * (x[k] - j->mean[k]) : x[k])
                    : j->mean   ? nn_sumsq(x + k * j->inner, j->inner, j->mean[k])
                                : nn_sum(x + k * j->inner, j->inner);
}

static void norm_fn(const void *ctx, char **p, double *x, int64_t o)
{
    (void)o;
    const bn_job *j = ctx;
    if (j->k) {
        block_kernel(j, p, MXP_BNORM_NORM);
        return;
    }
    load_block(x, j->v[BX], p[BX], j->c, j->inner);
    for (int64_t k = 0; k < j->c; k++)
        for (int64_t i = 0; i < j->inner; i++) /* the kernels' formula, bnorm-kernels.h */
            x[k * j->inner + i] = fma(x[k * j->inner + i] - j->mean[k], j->w ? j->rstd[k] * j->w[k] : j->rstd[k],
                                      j->b ? j->b[k] : 0);
    store_block(p[BY], j->v[BY], x, j->c, j->inner);
}

/* Block o of x and of dy widened into x and the returned row after it. */
static double *load_x_dy(const bn_job *j, char **p, double *x)
{
    double *dy = x + j->c * j->inner;
    load_block(x, j->v[BX], p[BX], j->c, j->inner);
    load_block(dy, j->v[BDY], p[BDY], j->c, j->inner);
    return dy;
}

/* s1[c] += sum dy, s2[c] += sum dy xhat. */
static void back_sums_fn(const void *ctx, char **p, double *x, int64_t o)
{
    (void)o;
    const bn_job *j = ctx;
    const double *dy = load_x_dy(j, p, x);
    for (int64_t k = 0; k < j->c; k++)
        for (int64_t i = 0; i < j->inner; i++) {
            const int64_t t = k * j->inner + i;
            j->s1[k] += dy[t];
            j->s2[k] += dy[t] * (x[t] - j->mean[k]) * j->rstd[k];
        }
}

/* dx = w rstd (dy - mean(dy) - xhat mean(dy xhat)). */
static void back_dx_fn(const void *ctx, char **p, double *x, int64_t o)
{
    (void)o;
    const bn_job *j = ctx;
    const double *dy = load_x_dy(j, p, x);
    const double cnt = (double)j->count;
    for (int64_t k = 0; k < j->c; k++)
        for (int64_t i = 0; i < j->inner; i++) {
            const int64_t t = k * j->inner + i;
            const double xhat = (x[t] - j->mean[k]) * j->rstd[k];
            x[t] = (j->w ? j->w[k] : 1) * j->rstd[k] * (dy[t] - j->s1[k] / cnt - xhat * j->s2[k] / cnt);
        }
    store_block(p[BY], j->v[BY], x, j->c, j->inner);
}

static mxp_status run(const bn_job *j, nn_row_fn *fn, bool parallel, size_t per)
{
    nn_rows r;
    nn_rows_init(&r, 1, j->v, 3);
    return nn_run_rows(&r, j->c * j->inner, per * (size_t)(j->c * j->inner), parallel, fn, j);
}

/* Channels [k0, k0 + c): the means from the sums in s1. */
static void set_means(const bn_job *j, int64_t k0, int64_t c)
{
    for (int64_t k = k0; k < k0 + c; k++)
        j->mean[k] = j->s1[k] / (double)j->count;
}

/* The biased variances (into var) and 1 / sqrt(var + eps) from the sums
 * of squares in s1. */
static void set_rstd(const bn_job *j, int64_t k0, int64_t c, double eps, double *var)
{
    for (int64_t k = k0; k < k0 + c; k++) {
        var[k] = j->s1[k] / (double)j->count;
        j->rstd[k] = 1 / sqrt(var[k] + eps);
    }
}

/* The batch's mean and 1 / sqrt(var + eps) into j (s1 as scratch), var
 * the biased variance in *var. */
static mxp_status batch_stats(bn_job *j, double eps, double *var)
{
    memset(j->s1, 0, (size_t)j->c * sizeof(double));
    double *mean = j->mean;
    j->mean = NULL;
    mxp_status st = run(j, sums_fn, false, 1);
    j->mean = mean;
    set_means(j, 0, j->c);
    memset(j->s1, 0, (size_t)j->c * sizeof(double));
    if (st == MXP_OK)
        st = run(j, sums_fn, false, 1);
    set_rstd(j, 0, j->c, eps, var);
    return st;
}

/* Training on dense float32 blocks with inner > 1 (NCHW): all three passes
 * of a group of channels before the next group, so that the sums of
 * squares and the normalization read the group from the core's L2 rather
 * than the whole batch three times from memory.  A channel's sums still
 * run over the blocks in order: the bits of batch_stats + norm_fn, for
 * any thread count.  A group holds at most BN_GROUP_BYTES of x: half of
 * the smallest L2 of the tiers (Zen 3's 512 KiB), y's lines beside it. */
enum { BN_GROUP_BYTES = 256 * 1024 };

typedef struct bn_group_job {
    const bn_job *j;
    int64_t outer, group;
    double eps, *var;
} bn_group_job;

static void group_fn(const void *ctx, char **p, double *scratch, int64_t row)
{
    (void)scratch;
    const bn_group_job *g = ctx;
    const bn_job *j = g->j;
    const int64_t k0 = row * g->group, c = j->c - k0 < g->group ? j->c - k0 : g->group;
    const int64_t sx = j->v[BX]->strides[0], sy = j->v[BY]->strides[0];
    /* every block of the group's channels a call: the sums run over the
       (channel, block) rows four at a time */
    mxp_f32_bnorm_params prm = { MXP_BNORM_SUM, NULL, (const float *)(const void *)p[BX], (size_t)c,
                                 (size_t)j->inner, j->mean + k0, j->rstd + k0, j->w ? j->w + k0 : NULL,
                                 j->b ? j->b + k0 : NULL, j->s1 + k0, (size_t)g->outer,
                                 (ptrdiff_t)(sx / (int64_t)sizeof(float)), (ptrdiff_t)(sy / (int64_t)sizeof(float)) };
    for (int pass = MXP_BNORM_SUM; pass <= MXP_BNORM_NORM; pass++) {
        if (pass != MXP_BNORM_NORM)
            memset(j->s1 + k0, 0, (size_t)c * sizeof(double));
        prm.pass = pass;
        prm.y = pass == MXP_BNORM_NORM ? (float *)(void *)p[BY] : NULL;
        j->k(&prm);
        if (pass == MXP_BNORM_SUM)
            set_means(j, k0, c);
        else if (pass == MXP_BNORM_SUMSQ)
            set_rstd(j, k0, c, g->eps, g->var);
    }
}

static mxp_status train_by_groups(const bn_job *j, double eps, double *var)
{
    const int64_t outer = j->v[BX]->shape[0], per = outer * j->inner * (int64_t)sizeof(float);
    int64_t group = per < BN_GROUP_BYTES ? BN_GROUP_BYTES / per : 1;
    if (group > (j->c + 7) / 8) /* eight groups at least, for the threads */
        group = (j->c + 7) / 8;
    const bn_group_job g = { j, outer, group, eps, var };
    nn_rows r;
    memset(&r, 0, sizeof r);
    r.nd = 1;
    r.narr = 2;
    r.nrows = r.shape[0] = (j->c + group - 1) / group;
    for (int k = BX; k <= BY; k++) {
        r.base[k] = j->v[k]->data;
        r.strides[k][0] = group * j->v[k]->strides[1];
    }
    return nn_run_rows(&r, 3 * group * outer * j->inner, 1, true, group_fn, &g);
}

/* A 1-d per-channel array (NULL allowed unless required) checked. */
static mxp_status check_channel(const char *fn, const char *what, const mxp_array *a, int64_t c, bool required,
                                bool write)
{
    if (!a)
        return required ? mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is required", fn, what) : MXP_OK;
    mxp_status st = nn_check_input(fn, what, a);
    if (st == MXP_OK)
        st = nn_check_float(fn, what, a->dtype);
    if (st == MXP_OK && (a->ndim != 1 || a->shape[0] != c))
        st = mxp_error(MXP_ERR_SHAPE, "%s: %s must have shape (%lld,), one value per channel", fn, what,
                       (long long)c);
    if (st == MXP_OK && write && !(a->flags & MXP_ARRAY_WRITEABLE))
        st = mxp_error(MXP_ERR_READONLY, "%s: %s is read-only", fn, what);
    return st;
}

/* x checked, the axis made non-negative; *c its channels. */
static mxp_status check_x(const char *fn, const mxp_array *x, int *axis, int64_t *c)
{
    mxp_status st = nn_check_input(fn, "x", x);
    if (st != MXP_OK)
        return st;
    if (*axis < -x->ndim || *axis >= x->ndim)
        return mxp_error(MXP_ERR_INDEX, "%s: channel axis %d of an array of %d dimensions", fn, *axis, x->ndim);
    *axis += *axis < 0 ? x->ndim : 0;
    *c = x->shape[*axis];
    return MXP_OK;
}

static void load_param(double *dst, const mxp_array *a, int64_t c)
{
    if (a)
        nn_load(dst, a->data, a->dtype, a->ndim ? a->strides[0] : 0, c);
}

static void store_param(mxp_array *a, const double *src, int64_t c)
{
    nn_store(a->data, a->dtype, a->strides[0], src, c);
}

typedef struct bn_args {
    const char *fn;
    const mxp_array *x;
    int axis;
    mxp_array *rm, *rv;
    const mxp_array *w, *b;
    bool training;
    double momentum, eps;
} bn_args;

static mxp_status bn_compute(const bn_args *a, mxp_array *xv, mxp_array *yv, int64_t c, int64_t count)
{
    double *buf = mxp_malloc((size_t)(7 * (c ? c : 1)) * sizeof(double));
    if (!buf)
        return mxp_error(MXP_ERR_NO_MEMORY, "%s: no memory for the statistics", a->fn);
    bn_job j = { .c = c, .inner = xv->shape[2], .count = count, .v = { xv, yv, NULL }, .mean = buf,
                 .rstd = buf + c, .w = a->w ? buf + 2 * c : NULL, .b = a->b ? buf + 3 * c : NULL, .s1 = buf + 4 * c };
    double *var = buf + 5 * c, *r = buf + 6 * c;
    load_param(buf + 2 * c, a->w, c);
    load_param(buf + 3 * c, a->b, c);
    mxp_status st = MXP_OK;
    bool fused = false; /* the normalization done with the statistics */
    if (a->training) {
        j.k = dense_f32_blocks(xv) ? nn_f32_bnorm_kernel(mxp_isa_current()) : NULL;
        fused = j.k && j.inner > 1 && dense_f32_blocks(yv);
        st = fused ? train_by_groups(&j, a->eps, var) : batch_stats(&j, a->eps, var);
        const double m = a->momentum, unbias = count > 1 ? (double)count / (double)(count - 1) : NAN;
        if (st == MXP_OK && a->rm) {
            load_param(r, a->rm, c);
            for (int64_t k = 0; k < c; k++)
                r[k] = (1 - m) * r[k] + m * j.mean[k];
            store_param(a->rm, r, c);
        }
        if (st == MXP_OK && a->rv) {
            load_param(r, a->rv, c);
            for (int64_t k = 0; k < c; k++)
                r[k] = (1 - m) * r[k] + m * var[k] * unbias;
            store_param(a->rv, r, c);
        }
    } else {
        load_param(j.mean, a->rm, c);
        load_param(var, a->rv, c);
        for (int64_t k = 0; k < c; k++)
            j.rstd[k] = 1 / sqrt(var[k] + a->eps);
    }
    if (st == MXP_OK && !fused) {
        j.k = dense_f32_blocks(xv) && dense_f32_blocks(yv) ? nn_f32_bnorm_kernel(mxp_isa_current()) : NULL;
        st = run(&j, norm_fn, true, 1);
    }
    mxp_free(buf);
    return st;
}

static mxp_status bn_into(mxp_array *out, const void *args)
{
    const bn_args *a = args;
    const char *fn = a->fn;
    int axis = a->axis;
    int64_t c = 0;
    mxp_status st = nn_check_input(fn, "out", out);
    if (st == MXP_OK)
        st = check_x(fn, a->x, &axis, &c);
    if (st == MXP_OK)
        st = nn_check_eps(fn, a->eps);
    if (st == MXP_OK && !(a->momentum >= 0 && a->momentum <= 1))
        st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: momentum %g is not within [0, 1]", fn, a->momentum);
    if (st == MXP_OK)
        st = check_channel(fn, "running_mean", a->rm, c, !a->training, a->training);
    if (st == MXP_OK)
        st = check_channel(fn, "running_var", a->rv, c, !a->training, a->training);
    if (st == MXP_OK)
        st = check_channel(fn, "weight", a->w, c, false, false);
    if (st == MXP_OK)
        st = check_channel(fn, "bias", a->b, c, false, false);
    if (st == MXP_OK)
        st = nn_check_out_shape(fn, out, a->x->ndim, a->x->shape);
    if (st == MXP_OK)
        st = nn_check_float(fn, "out", out->dtype);
    const int64_t count = c ? mxp_array_size(a->x) / c : 0;
    if (st == MXP_OK && a->training && count < 2 && mxp_array_size(a->x) > 0)
        st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %lld value per channel: training needs more than one", fn,
                       (long long)count);
    if (st != MXP_OK)
        return st;
    mxp_array *work = NULL, *xv = NULL, *yv = NULL;
    const mxp_array *in[5] = { a->x, a->rm, a->rv, a->w, a->b };
    st = nn_dense_out_begin(fn, out, in, 5, &work); /* dense: its [outer, C, inner] is a view */
    if (st == MXP_OK)
        st = view3(&xv, a->x, axis);
    if (st == MXP_OK)
        st = view3(&yv, work, axis);
    if (st == MXP_OK && mxp_array_size(a->x) > 0) {
        const mxp_fpenv env = mxp_fpenv_enter();
        st = bn_compute(a, xv, yv, c, count);
        mxp_fpenv_leave(env);
    }
    mxp_array_free(xv);
    mxp_array_free(yv);
    return nn_out_end(out, work, st);
}

static mxp_status batch_norm_into_entry(mxp_array *out, const mxp_array *x, int axis, mxp_array *running_mean,
                                        mxp_array *running_var, const mxp_array *weight, const mxp_array *bias, bool training,
                                        double momentum, double eps)
{
    return bn_into(out, &(bn_args){ "mxp_batch_norm_into", x, axis, running_mean, running_var, weight, bias, training,
                                    momentum, eps });
}

static mxp_status batch_norm_entry(mxp_array **out, const mxp_array *x, int axis, mxp_array *running_mean,
                                   mxp_array *running_var, const mxp_array *weight, const mxp_array *bias, bool training,
                                   double momentum, double eps, mxp_dtype out_dtype)
{
    const bn_args a = { "mxp_batch_norm", x, axis, running_mean, running_var, weight, bias, training, momentum, eps };
    return nn_new_like(a.fn, out, x, out_dtype, bn_into, &a);
}

/* ---- backward ------------------------------------------------------------- */

static mxp_status bn_back(const char *fn, mxp_array **dx, mxp_array **dw, mxp_array **db, const mxp_array *dy,
                          const mxp_array *x, int axis, const mxp_array *weight, double eps, int64_t c)
{
    const int64_t count = c ? mxp_array_size(x) / c : 0;
    const mxp_dtype pt = weight ? weight->dtype : x->dtype;
    mxp_array *xv = NULL, *dyv = NULL, *dxa = NULL, *dxv = NULL, *ga = NULL, *gb = NULL;
    double *buf = mxp_malloc((size_t)(6 * (c ? c : 1)) * sizeof(double));
    mxp_status st = buf ? MXP_OK : mxp_error(MXP_ERR_NO_MEMORY, "%s: no memory for the statistics", fn);
    if (st == MXP_OK && dx)
        st = mxp_array_new_owner(&dxa, x->dtype, x->ndim, x->shape);
    if (st == MXP_OK && dw)
        st = mxp_array_new_owner(&ga, pt, 1, &c);
    if (st == MXP_OK && db)
        st = mxp_array_new_owner(&gb, pt, 1, &c);
    if (st == MXP_OK)
        st = view3(&xv, x, axis);
    if (st == MXP_OK)
        st = view3(&dyv, dy, axis);
    if (st == MXP_OK && dxa)
        st = view3(&dxv, dxa, axis);
    if (st == MXP_OK && count > 0) {
        bn_job j = { .c = c, .inner = xv->shape[2], .count = count, .v = { xv, NULL, NULL }, .mean = buf,
                     .rstd = buf + c, .w = weight ? buf + 2 * c : NULL, .s1 = buf + 3 * c, .s2 = buf + 4 * c };
        load_param(buf + 2 * c, weight, c);
        st = batch_stats(&j, eps, buf + 5 * c);
        memset(j.s1, 0, 2 * (size_t)c * sizeof(double));
        j.v[BDY] = dyv;
        if (st == MXP_OK)
            st = run(&j, back_sums_fn, false, 2);
        j.v[BY] = dxv;
        if (st == MXP_OK && dxv)
            st = run(&j, back_dx_fn, true, 2);
    } else if (st == MXP_OK)
        memset(buf + 3 * c, 0, 2 * (size_t)c * sizeof(double));
    if (st == MXP_OK && ga)
        store_param(ga, buf + 4 * c, c);
    if (st == MXP_OK && gb)
        store_param(gb, buf + 3 * c, c);
    mxp_free(buf);
    mxp_array_free(xv);
    mxp_array_free(dyv);
    mxp_array_free(dxv);
    if (dx)
        nn_give_out(dx, dxa, st);
    if (dw)
        nn_give_out(dw, ga, st);
    if (db)
        nn_give_out(db, gb, st);
    return st;
}

mxp_status mxp_batch_norm_backward(mxp_array **dx, mxp_array **dweight, mxp_array **dbias, const mxp_array *dy,
                                   const mxp_array *x, int axis, const mxp_array *weight, double eps)
{
    const char *fn = "mxp_batch_norm_backward";
    mxp_array **outs[3] = { dx, dweight, dbias };
    for (int k = 0; k < 3; k++)
        if (outs[k])
            *outs[k] = NULL;
    int64_t c = 0;
    mxp_status st = check_x(fn, x, &axis, &c);
    if (st == MXP_OK)
        st = nn_check_float(fn, "x", x->dtype);
    if (st == MXP_OK)
        st = nn_check_input(fn, "dy", dy);
    if (st == MXP_OK)
        st = nn_check_same_shape(fn, "dy", dy, "x", x);
    if (st == MXP_OK)
        st = check_channel(fn, "weight", weight, c, false, false);
    if (st == MXP_OK)
        st = nn_check_eps(fn, eps);
    if (st != MXP_OK)
        return st;
    const mxp_fpenv env = mxp_fpenv_enter();
    st = bn_back(fn, dx, dweight, dbias, dy, x, axis, weight, eps, c);
    mxp_fpenv_leave(env);
    return st;
}

/* ---- folding into the convolution before ------------------------------------ */

mxp_status mxp_fold_batch_norm(mxp_array **weight_out, mxp_array **bias_out, const mxp_array *weight,
                               const mxp_array *conv_bias, const mxp_array *gamma, const mxp_array *beta,
                               const mxp_array *mean, const mxp_array *var, double eps)
{
    const char *fn = "mxp_fold_batch_norm";
    if (!weight_out || !bias_out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: weight_out and bias_out must not be NULL", fn);
    *weight_out = *bias_out = NULL;
    mxp_status st = nn_check_input(fn, "weight", weight);
    if (st == MXP_OK)
        st = nn_check_float(fn, "weight", weight->dtype);
    if (st == MXP_OK && weight->ndim < 1)
        st = mxp_error(MXP_ERR_SHAPE, "%s: weight must have an output-channel axis (0-d given)", fn);
    const int64_t c = st == MXP_OK ? weight->shape[0] : 0;
    const mxp_array *ch[5] = { conv_bias, gamma, beta, mean, var };
    const char *names[5] = { "conv_bias", "gamma", "beta", "mean", "var" };
    for (int k = 0; k < 5 && st == MXP_OK; k++)
        st = check_channel(fn, names[k], ch[k], c, k >= 3, false);
    if (st == MXP_OK)
        st = nn_check_eps(fn, eps);
    if (st != MXP_OK)
        return st;
    const int64_t inner = c ? mxp_array_size(weight) / c : 0;
    mxp_array *wc = NULL, *wo = NULL, *bo = NULL;
    double *buf = mxp_malloc((size_t)(5 * c + inner + 1) * sizeof(double));
    st = buf ? MXP_OK : mxp_error(MXP_ERR_NO_MEMORY, "%s: no memory", fn);
    if (st == MXP_OK)
        st = mxp_array_ascontiguous(&wc, weight, 'C');
    if (st == MXP_OK)
        st = mxp_array_new_owner(&wo, weight->dtype, weight->ndim, weight->shape);
    if (st == MXP_OK)
        st = mxp_array_new_owner(&bo, conv_bias ? conv_bias->dtype : weight->dtype, 1, &c);
    if (st == MXP_OK) {
        const mxp_fpenv env = mxp_fpenv_enter();
        double *b = buf, *g = buf + c, *be = buf + 2 * c, *m = buf + 3 * c, *v = buf + 4 * c, *row = buf + 5 * c;
        for (int64_t k = 0; k < c; k++)
            b[k] = 0, g[k] = 1, be[k] = 0;
        load_param(b, conv_bias, c);
        load_param(g, gamma, c);
        load_param(be, beta, c);
        load_param(m, mean, c);
        load_param(v, var, c);
        const size_t ws = mxp_dtype_itemsize(weight->dtype);
        for (int64_t k = 0; k < c; k++) {
            const double s = g[k] / sqrt(v[k] + eps);
            nn_load(row, (const char *)wc->data + (size_t)(k * inner) * ws, weight->dtype, (int64_t)ws, inner);
            for (int64_t i = 0; i < inner; i++)
                row[i] *= s;
            nn_store((char *)wo->data + (size_t)(k * inner) * ws, weight->dtype, (int64_t)ws, row, inner);
            b[k] = (b[k] - m[k]) * s + be[k];
        }
        store_param(bo, b, c);
        mxp_fpenv_leave(env);
    }
    mxp_free(buf);
    mxp_array_free(wc);
    nn_give_out(weight_out, wo, st);
    return nn_give_out(bias_out, bo, st);
}

/* ---- the entry points, profiled (src/core/profile-internal.h) ---------- */

mxp_status mxp_batch_norm(mxp_array **out, const mxp_array *x, int axis, mxp_array *running_mean,
                          mxp_array *running_var, const mxp_array *weight, const mxp_array *bias, bool training,
                          double momentum, double eps, mxp_dtype out_dtype)
{
    MXP_PROF_RETURN_AFTER("batch_norm", batch_norm_entry(out, x, axis, running_mean, running_var, weight, bias, training, momentum, eps, out_dtype),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          2.0 * mxp_prof_size(x));
}

mxp_status mxp_batch_norm_into(mxp_array *out, const mxp_array *x, int axis, mxp_array *running_mean,
                               mxp_array *running_var, const mxp_array *weight, const mxp_array *bias, bool training,
                               double momentum, double eps)
{
    MXP_PROF_RETURN_AFTER("batch_norm", batch_norm_into_entry(out, x, axis, running_mean, running_var, weight, bias, training, momentum, eps),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(out),
                          2.0 * mxp_prof_size(x));
}

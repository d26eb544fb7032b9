/* The operations along one axis: softmax and log_softmax (with an
 * optional mask) and their backward passes, and L2 normalization.  Each
 * row: widened to float64; softmax subtracts the maximum (no overflow),
 * then exp and its sum in float64; each result rounded once into the
 * output.  Bfloat16 out of float32 or bfloat16 in (softmax with any
 * mask): float32 arithmetic with float64 sums (kernels/bf16-narrow.h),
 * strided rows gathered. */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/fpenv.h"
#include "core/profile-internal.h"
#include "nn/nn-internal.h"
#include "ops/kernel-config.h"

typedef struct sm_job {
    int64_t len;
    mxp_dtype xt, ot, mt; /* mt: MXP_DTYPE_INVALID without a mask */
    int64_t xs, os, ms;
    bool log;
    double eps;                   /* l2_normalize */
    mxp_f64_expshift_ukernel *vexp; /* exp(x - max) for the ISA level (scalar: libm's) */
    mxp_f32_softmax_ukernel *f32; /* unmasked dense float32 rows in and out: the row kernel */
    mxp_bf16_softmax_ukernel *bf16; /* bfloat16 out of float32 or bfloat16 in, any mask: the row kernel */
    mxp_f32_norm_ukernel *l2f32;    /* l2_normalize of dense float32 rows: the norm kernel */
    mxp_bf16_norm_ukernel *l2bf16;  /* of bfloat16 out of float32 or bfloat16 in */
    bool gather;                    /* those two on strided rows: gathered into the scratch */
    bool mask_direct;               /* their mask a dense float32 row, else gathered as float32 */
    bool stream;                    /* l2f32's rows written by streaming stores (nn_streams) */
} sm_job;

/* Arrays of a row: x (or dy), out (or dx), mask (or y). */
enum { X, OUT, MASK };

/* The mask row into float32 m: a float32 mask as it is, a bool one as
 * 0 (keep) or -inf, any other widened and rounded to float32. */
static void mask_f32(const sm_job *j, float *m, const char *mp)
{
    double d[64];
    for (int64_t i = 0; i < j->len; i += 64) {
        const int64_t k = j->len - i < 64 ? j->len - i : 64;
        if (j->mt == MXP_F32) {
            for (int64_t t = 0; t < k; t++)
                memcpy(&m[i + t], mp + (i + t) * j->ms, sizeof(float));
            continue;
        }
        nn_load(d, mp + i * j->ms, j->mt, j->ms, k);
        for (int64_t t = 0; t < k; t++)
            m[i + t] = j->mt == MXP_BOOL ? (d[t] != 0 ? 0.0f : -INFINITY) : (float)d[t];
    }
}

/* A bfloat16 row kernel on row p[X] (and p[MASK]) into p[OUT], gathered
 * when j->gather.  Scratch: e's floats, then the mask, x and y rows
 * gathered (2 len + 8 doubles at most). */
static void bf16_row(const sm_job *j, char **p, double *scratch)
{
    const int64_t n = j->len, half = n / 2 + 1;
    mxp_narrow_src src = { p[X], j->xt == MXP_F32, NULL };
    uint16_t *y = (uint16_t *)(void *)p[OUT];
    double *e = scratch, *more = scratch + half;
    if (j->mt && j->mask_direct) {
        src.mask = (const float *)(const void *)p[MASK];
    } else if (j->mt) {
        mask_f32(j, (float *)(void *)more, p[MASK]);
        src.mask = (const float *)(const void *)more;
        more += half;
    }
    if (j->gather) {
        if (src.f32) {
            float *xr = (float *)(void *)more;
            for (int64_t i = 0; i < n; i++)
                memcpy(&xr[i], p[X] + i * j->xs, sizeof xr[i]);
        } else {
            nn_gather16((uint16_t *)(void *)more, p[X], j->xs, n);
        }
        src.x = more;
        y = (uint16_t *)(void *)(more + half);
    }
    if (j->bf16)
        j->bf16(&y, &src, 1, (size_t)n, (float *)(void *)e, j->log);
    else
        j->l2bf16(&y, &src, 1, (size_t)n, NULL, NULL, j->eps, MXP_NORM_L2);
    if (j->gather)
        nn_scatter16(p[OUT], j->os, y, n);
}

static void apply_mask(const sm_job *j, double *x, double *m, const char *mp)
{
    nn_load(m, mp, j->mt, j->ms, j->len);
    if (j->mt == MXP_BOOL) {
        for (int64_t i = 0; i < j->len; i++)
            x[i] = m[i] != 0 ? x[i] : -INFINITY;
    } else {
        for (int64_t i = 0; i < j->len; i++)
            x[i] += m[i];
    }
}

/* y = exp(x - mx): the f64-expshift kernel of the ISA level (within 1.1
 * float64 ulps; libm's exp at the scalar level), the exp the row kernels
 * inline: the same bits. */
static void exp_shifted(const sm_job *j, double *y, const double *x, int64_t n, double mx)
{
    j->vexp(y, x, (size_t)n, mx);
}

/* The largest element (NaN ignored; *nan: whether there is one) over
 * eight running maxima: independent chains, and the same value in any
 * order (of +0 and -0 either may come out: x - max is the same). */
static double row_max(const double *x, int64_t n, bool *nan)
{
    double m[8] = { -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY };
    int any = 0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) {
            any |= x[i + k] != x[i + k];
            m[k] = x[i + k] > m[k] ? x[i + k] : m[k];
        }
    for (; i < n; i++) {
        any |= x[i] != x[i];
        m[0] = x[i] > m[0] ? x[i] : m[0];
    }
    for (int k = 1; k < 8; k++)
        m[0] = m[k] > m[0] ? m[k] : m[0];
    *nan = any;
    return m[0];
}

static void softmax_row(const void *ctx, char **p, double *x, int64_t row)
{
    (void)row;
    const sm_job *j = ctx;
    const int64_t n = j->len;
    if (j->f32) { /* the same bits as below (src/kernels/f32-softmax/) */
        const float *m = NULL;
        if (j->mt && j->mask_direct) {
            m = (const float *)(const void *)p[MASK];
        } else if (j->mt) { /* widened exactly into the scratch after e's n doubles */
            mask_f32(j, (float *)(void *)(x + n), p[MASK]);
            m = (const float *)(const void *)(x + n);
        }
        j->f32((float *)(void *)p[OUT], (const float *)(const void *)p[X], m, (size_t)n, x, j->log);
        return;
    }
    if (j->bf16) {
        bf16_row(j, p, x);
        return;
    }
    nn_load(x, p[X], j->xt, j->xs, n);
    if (j->mt)
        apply_mask(j, x, x + n, p[MASK]);
    bool nan;
    const double mx = row_max(x, n, &nan);
    /* every element -inf: 0/0, NaN, as torch gives; a NaN or +inf: NaN */
    if (nan || mx == -INFINITY || mx == INFINITY) {
        for (int64_t i = 0; i < n; i++)
            x[i] = NAN;
    } else if (j->log) {
        double *e = x + n;
        exp_shifted(j, e, x, n, mx);
        const double ls = log(nn_sum(e, n));
        for (int64_t i = 0; i < n; i++)
            x[i] = (x[i] - mx) - ls;
    } else {
        exp_shifted(j, x, x, n, mx);
        const double r = 1 / nn_sum(x, n);
        for (int64_t i = 0; i < n; i++)
            x[i] *= r;
    }
    nn_store(p[OUT], j->ot, j->os, x, n);
}

/* dx from dy (X), y (MASK) into OUT. */
static void softmax_back_row(const void *ctx, char **p, double *dy, int64_t row)
{
    (void)row;
    const sm_job *j = ctx;
    const int64_t n = j->len;
    double *y = dy + n;
    nn_load(dy, p[X], j->xt, j->xs, n);
    nn_load(y, p[MASK], j->mt, j->ms, n);
    if (j->log) {
        const double s = nn_sum(dy, n);
        for (int64_t i = 0; i < n; i++)
            dy[i] -= exp(y[i]) * s;
    } else {
        const double s = nn_dot(dy, y, n);
        for (int64_t i = 0; i < n; i++)
            dy[i] = y[i] * (dy[i] - s);
    }
    nn_store(p[OUT], j->ot, j->os, dy, n);
}

/* Dense float32 rows, MXP_NORM_ROWS at a time: the same bits through the
 * norm kernels (src/kernels/f32-norm/, mode MXP_NORM_L2). */
static void l2_rows_f32(const void *ctx, char *(*p)[NN_MAXARR], int64_t count, double *scratch, int64_t row0)
{
    (void)row0;
    const sm_job *j = ctx;
    float *y[MXP_NORM_ROWS];
    const float *x[MXP_NORM_ROWS];
    for (int64_t k = 0; k < count; k++) {
        y[k] = (float *)(void *)p[k][OUT];
        x[k] = (const float *)(const void *)p[k][X];
    }
    j->l2f32(y, x, (size_t)count, (size_t)j->len, NULL, NULL, j->eps, MXP_NORM_L2 | (j->stream ? MXP_NORM_STREAM : 0),
             mxp_norm_wide_doubles((size_t)j->len) ? scratch : NULL);
}

/* Dense bfloat16 rows (out of bfloat16 or float32), MXP_NORM_ROWS at a
 * time through the norm kernels (mode MXP_NORM_L2). */
static void l2_rows_bf16(const void *ctx, char *(*p)[NN_MAXARR], int64_t count, double *scratch, int64_t row0)
{
    (void)row0, (void)scratch;
    const sm_job *j = ctx;
    uint16_t *y[MXP_NORM_ROWS];
    mxp_narrow_src x[MXP_NORM_ROWS];
    nn_narrow_block(p, count, X, OUT, j->xt == MXP_F32, y, x);
    j->l2bf16(y, x, (size_t)count, (size_t)j->len, NULL, NULL, j->eps, MXP_NORM_L2);
}

/* Dense bfloat16 softmax rows (out of bfloat16 or float32, no mask or a
 * dense float32 one), MXP_NARROW_ROWS at a time through the row kernel;
 * scratch: their exps, MXP_NARROW_ROWS rows of floats. */
static void softmax_rows_bf16(const void *ctx, char *(*p)[NN_MAXARR], int64_t count, double *scratch, int64_t row0)
{
    (void)row0;
    const sm_job *j = ctx;
    uint16_t *y[MXP_NARROW_ROWS];
    mxp_narrow_src x[MXP_NARROW_ROWS];
    nn_narrow_block(p, count, X, OUT, j->xt == MXP_F32, y, x);
    for (int64_t k = 0; k < count && j->mt; k++)
        x[k].mask = (const float *)(const void *)p[k][MASK];
    j->bf16(y, x, (size_t)count, (size_t)j->len, (float *)(void *)scratch, j->log);
}

/* x / max(|x|, eps) */
static void l2_row(const void *ctx, char **p, double *x, int64_t row)
{
    (void)row;
    const sm_job *j = ctx;
    if (j->l2bf16) {
        bf16_row(j, p, x);
        return;
    }
    nn_load(x, p[X], j->xt, j->xs, j->len);
    double s = sqrt(nn_sumsq(x, j->len, 0));
    s = s > j->eps ? s : j->eps;
    for (int64_t i = 0; i < j->len; i++)
        x[i] /= s;
    nn_store(p[OUT], j->ot, j->os, x, j->len);
}

/* Runs row fn over x, out and third (all of x's shape once broadcast)
 * with axis moved last; t gives log and eps. */
static mxp_status run_along(const char *fn, nn_row_fn *row, const sm_job *t, mxp_array *out, const mxp_array *x,
                            int axis, const mxp_array *third, bool third_broadcasts)
{
    mxp_status st = mxp_normalize_axis(&axis, x->ndim, fn);
    if (st == MXP_OK)
        st = nn_check_out_shape(fn, out, x->ndim, x->shape);
    if (st == MXP_OK)
        st = nn_check_float(fn, "out", out->dtype);
    if (st != MXP_OK)
        return st;
    mxp_array *tb = NULL, *xv = NULL, *ov = NULL, *tv = NULL, *work = NULL;
    if (third && third_broadcasts)
        st = mxp_array_broadcast_to(&tb, third, x->ndim, x->shape);
    const mxp_array *in[3] = { x, third, NULL };
    if (st == MXP_OK)
        st = nn_out_begin(fn, out, in, 2, 1, &work);
    if (st == MXP_OK)
        st = nn_axis_last(&xv, x, axis);
    if (st == MXP_OK)
        st = nn_axis_last(&ov, work, axis);
    if (st == MXP_OK && third)
        st = nn_axis_last(&tv, tb ? tb : third, axis);
    if (st == MXP_OK) {
        /* forward softmax of dense float32 rows (unmasked, or with a float mask
           that float32 holds exactly: float32, float16, bfloat16; a bool mask
           drops elements, inf and NaN included, which an additive -inf would
           not) and l2_normalize of them: the float64 row kernels; both into
           bfloat16 from float32 or bfloat16 (softmax with any mask): the
           float32 ones (bf16-narrow.h) */
        const bool sm = row == softmax_row, some = (sm || row == l2_row) && x->shape[axis] > 0;
        const bool f32_mask = !tv || (sm && (tv->dtype == MXP_F32 || tv->dtype == MXP_F16 || tv->dtype == MXP_BF16));
        const bool f32 = some && f32_mask && nn_dense_rows(xv, MXP_F32) && nn_dense_rows(ov, MXP_F32);
        const bool bf16 = some && (sm || !tv) && ov->dtype == MXP_BF16 &&
                          (xv->dtype == MXP_BF16 || xv->dtype == MXP_F32);
        const mxp_isa isa = mxp_isa_current();
        const sm_job j = { x->shape[axis], x->dtype, work->dtype, tv ? tv->dtype : MXP_DTYPE_INVALID,
                           nn_step(xv), nn_step(ov), tv ? nn_step(tv) : 0, t->log, t->eps,
                           nn_f64_expshift_kernel(isa),
                           f32 && sm ? nn_f32_softmax_kernel(isa) : NULL,
                           bf16 && sm ? nn_bf16_softmax_kernel(isa) : NULL,
                           f32 && !sm ? nn_f32_norm_kernel(isa) : NULL,
                           bf16 && !sm ? nn_bf16_norm_kernel(isa) : NULL,
                           !(nn_dense_rows(xv, xv->dtype) && nn_dense_rows(ov, MXP_BF16)),
                           tv && nn_dense_rows(tv, MXP_F32), nn_streams(ov, 0) };
        const mxp_array *arrs[3] = { xv, ov, tv };
        nn_rows r;
        nn_rows_init(&r, x->ndim - 1, arrs, 3);
        if (j.l2f32)
            st = nn_run_row_blocks(&r, j.len, mxp_norm_wide_doubles((size_t)j.len), true, MXP_NORM_ROWS, l2_rows_f32,
                                   &j);
        else if (j.l2bf16 && !j.gather)
            st = nn_run_row_blocks(&r, j.len, 0, true, MXP_NORM_ROWS, l2_rows_bf16, &j);
        else if (j.bf16 && !j.gather && (!j.mt || j.mask_direct))
            st = nn_run_row_blocks(&r, j.len, MXP_NARROW_ROWS * ((size_t)j.len / 2 + 1), true, MXP_NARROW_ROWS,
                                   softmax_rows_bf16, &j);
        else
            st = nn_run_rows(&r, j.len, 2 * (size_t)j.len + 8, true, row, &j);
    }
    mxp_array_free(tb);
    mxp_array_free(xv);
    mxp_array_free(ov);
    mxp_array_free(tv);
    return nn_out_end(out, work, st);
}

/* One forward operation along an axis, as the entry points take it. */
typedef struct along_args {
    const char *fn;
    enum { SOFTMAX, LOG_SOFTMAX, L2 } kind;
    const mxp_array *x, *mask;
    int axis;
    double eps;
} along_args;

static mxp_status along_into(mxp_array *out, const void *args)
{
    const along_args *a = args;
    mxp_status st = nn_check_input(a->fn, "out", out);
    if (st == MXP_OK)
        st = nn_check_input(a->fn, "x", a->x);
    if (st == MXP_OK && a->mask)
        st = nn_check_input(a->fn, "mask", a->mask);
    if (st == MXP_OK && a->kind == L2)
        st = nn_check_eps(a->fn, a->eps);
    if (st != MXP_OK)
        return st;
    const mxp_fpenv env = mxp_fpenv_enter();
    const sm_job t = { .log = a->kind == LOG_SOFTMAX, .eps = a->eps };
    st = run_along(a->fn, a->kind == L2 ? l2_row : softmax_row, &t, out, a->x, a->axis, a->mask, true);
    mxp_fpenv_leave(env);
    return st;
}

static mxp_status softmax_entry(mxp_array **out, const mxp_array *x, int axis, const mxp_array *mask, mxp_dtype out_dtype)
{
    const along_args a = { "mxp_softmax", SOFTMAX, x, mask, axis, 0 };
    return nn_new_like(a.fn, out, x, out_dtype, along_into, &a);
}

static mxp_status softmax_into_entry(mxp_array *out, const mxp_array *x, int axis, const mxp_array *mask)
{
    return along_into(out, &(along_args){ "mxp_softmax_into", SOFTMAX, x, mask, axis, 0 });
}

static mxp_status log_softmax_entry(mxp_array **out, const mxp_array *x, int axis, const mxp_array *mask,
                                    mxp_dtype out_dtype)
{
    const along_args a = { "mxp_log_softmax", LOG_SOFTMAX, x, mask, axis, 0 };
    return nn_new_like(a.fn, out, x, out_dtype, along_into, &a);
}

static mxp_status log_softmax_into_entry(mxp_array *out, const mxp_array *x, int axis, const mxp_array *mask)
{
    return along_into(out, &(along_args){ "mxp_log_softmax_into", LOG_SOFTMAX, x, mask, axis, 0 });
}

mxp_status mxp_l2_normalize(mxp_array **out, const mxp_array *x, int axis, double eps, mxp_dtype out_dtype)
{
    const along_args a = { "mxp_l2_normalize", L2, x, NULL, axis, eps };
    return nn_new_like(a.fn, out, x, out_dtype, along_into, &a);
}

mxp_status mxp_l2_normalize_into(mxp_array *out, const mxp_array *x, int axis, double eps)
{
    return along_into(out, &(along_args){ "mxp_l2_normalize_into", L2, x, NULL, axis, eps });
}

static mxp_status backward(const char *fn, bool log, mxp_array **dx, const mxp_array *dy, const mxp_array *y,
                           int axis, mxp_dtype dt)
{
    if (!dx)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: dx is NULL", fn);
    *dx = NULL;
    mxp_status st = nn_check_input(fn, "dy", dy);
    if (st == MXP_OK)
        st = nn_check_input(fn, "y", y);
    if (st == MXP_OK)
        st = nn_check_float(fn, "y", y->dtype);
    if (st == MXP_OK)
        st = nn_check_float(fn, "dy", dy->dtype);
    if (st == MXP_OK)
        st = nn_check_same_shape(fn, "dy", dy, "y", y);
    if (st == MXP_OK)
        st = nn_check_float(fn, "dx", dt = dt ? dt : y->dtype);
    if (st != MXP_OK)
        return st;
    mxp_array *r = NULL;
    const mxp_fpenv env = mxp_fpenv_enter();
    st = mxp_array_new_owner(&r, dt, y->ndim, y->shape);
    if (st == MXP_OK)
        st = run_along(fn, softmax_back_row, &(sm_job){ .log = log }, r, dy, axis, y, false);
    mxp_fpenv_leave(env);
    return nn_give_out(dx, r, st);
}

mxp_status mxp_softmax_backward(mxp_array **dx, const mxp_array *dy, const mxp_array *y, int axis,
                                mxp_dtype out_dtype)
{
    return backward("mxp_softmax_backward", false, dx, dy, y, axis, out_dtype);
}

mxp_status mxp_log_softmax_backward(mxp_array **dx, const mxp_array *dy, const mxp_array *y, int axis,
                                    mxp_dtype out_dtype)
{
    return backward("mxp_log_softmax_backward", true, dx, dy, y, axis, out_dtype);
}

/* ---- the entry points, profiled (src/core/profile-internal.h) ---------- */

mxp_status mxp_softmax(mxp_array **out, const mxp_array *x, int axis, const mxp_array *mask, mxp_dtype out_dtype)
{
    MXP_PROF_RETURN_AFTER("softmax", softmax_entry(out, x, axis, mask, out_dtype),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          mxp_prof_size(x));
}

mxp_status mxp_softmax_into(mxp_array *out, const mxp_array *x, int axis, const mxp_array *mask)
{
    MXP_PROF_RETURN_AFTER("softmax", softmax_into_entry(out, x, axis, mask),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(out),
                          mxp_prof_size(x));
}

mxp_status mxp_log_softmax(mxp_array **out, const mxp_array *x, int axis, const mxp_array *mask,
                           mxp_dtype out_dtype)
{
    MXP_PROF_RETURN_AFTER("log_softmax", log_softmax_entry(out, x, axis, mask, out_dtype),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          mxp_prof_size(x));
}

mxp_status mxp_log_softmax_into(mxp_array *out, const mxp_array *x, int axis, const mxp_array *mask)
{
    MXP_PROF_RETURN_AFTER("log_softmax", log_softmax_into_entry(out, x, axis, mask),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(out),
                          mxp_prof_size(x));
}

/* The operations along one axis: softmax and log_softmax (with an
 * optional mask) and their backward passes, and L2 normalization.  Each
 * row: widened to float64; softmax subtracts the maximum (no overflow),
 * then exp and its sum in float64; each result rounded once into the
 * output. */
#include <math.h>

#include "core/error.h"
#include "core/fpenv.h"
#include "nn/nn-internal.h"

typedef struct sm_job {
    int64_t len;
    mxp_dtype xt, ot, mt; /* mt: MXP_DTYPE_INVALID without a mask */
    int64_t xs, os, ms;
    bool log;
    double eps; /* l2_normalize */
} sm_job;

/* Arrays of a row: x (or dy), out (or dx), mask (or y). */
enum { X, OUT, MASK };

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

static void softmax_row(const void *ctx, char **p, double *x, int64_t row)
{
    (void)row;
    const sm_job *j = ctx;
    const int64_t n = j->len;
    nn_load(x, p[X], j->xt, j->xs, n);
    if (j->mt)
        apply_mask(j, x, x + n, p[MASK]);
    double mx = -INFINITY;
    bool nan = false;
    for (int64_t i = 0; i < n; i++) {
        nan |= x[i] != x[i];
        mx = x[i] > mx ? x[i] : mx;
    }
    /* every element -inf: 0/0, NaN, as torch gives; a NaN or +inf: NaN */
    if (nan || mx == -INFINITY || mx == INFINITY) {
        for (int64_t i = 0; i < n; i++)
            x[i] = NAN;
    } else if (j->log) {
        double s = 0;
        for (int64_t i = 0; i < n; i++)
            s += exp(x[i] - mx);
        const double ls = log(s);
        for (int64_t i = 0; i < n; i++)
            x[i] = (x[i] - mx) - ls;
    } else {
        double s = 0;
        for (int64_t i = 0; i < n; i++) {
            x[i] = exp(x[i] - mx);
            s += x[i];
        }
        for (int64_t i = 0; i < n; i++)
            x[i] /= s;
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
    double s = 0;
    if (j->log) {
        for (int64_t i = 0; i < n; i++)
            s += dy[i];
        for (int64_t i = 0; i < n; i++)
            dy[i] -= exp(y[i]) * s;
    } else {
        for (int64_t i = 0; i < n; i++)
            s += dy[i] * y[i];
        for (int64_t i = 0; i < n; i++)
            dy[i] = y[i] * (dy[i] - s);
    }
    nn_store(p[OUT], j->ot, j->os, dy, n);
}

/* x / max(|x|, eps) */
static void l2_row(const void *ctx, char **p, double *x, int64_t row)
{
    (void)row;
    const sm_job *j = ctx;
    nn_load(x, p[X], j->xt, j->xs, j->len);
    double s = 0;
    for (int64_t i = 0; i < j->len; i++)
        s += x[i] * x[i];
    s = sqrt(s);
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
        const sm_job j = { x->shape[axis], x->dtype, work->dtype, tv ? tv->dtype : MXP_DTYPE_INVALID,
                           nn_step(xv), nn_step(ov), tv ? nn_step(tv) : 0, t->log, t->eps };
        const mxp_array *arrs[3] = { xv, ov, tv };
        nn_rows r;
        nn_rows_init(&r, x->ndim - 1, arrs, 3);
        st = nn_run_rows(&r, j.len, 2 * (size_t)j.len, true, row, &j);
    }
    mxp_array_free(tb);
    mxp_array_free(xv);
    mxp_array_free(ov);
    mxp_array_free(tv);
    return nn_out_end(out, work, st);
}

static mxp_status softmax_into(const char *fn, bool log, mxp_array *out, const mxp_array *x, int axis,
                               const mxp_array *mask)
{
    mxp_status st = nn_check_input(fn, "out", out);
    if (st == MXP_OK)
        st = nn_check_input(fn, "x", x);
    if (st == MXP_OK && mask)
        st = nn_check_input(fn, "mask", mask);
    if (st != MXP_OK)
        return st;
    const mxp_fpenv env = mxp_fpenv_enter();
    const sm_job t = { .log = log };
    st = run_along(fn, softmax_row, &t, out, x, axis, mask, true);
    mxp_fpenv_leave(env);
    return st;
}

static mxp_status softmax_new(const char *fn, bool log, mxp_array **out, const mxp_array *x, int axis,
                              const mxp_array *mask, mxp_dtype dt)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    mxp_status st = nn_check_input(fn, "x", x);
    if (st == MXP_OK)
        st = nn_check_float(fn, "out", dt = nn_out_dtype(dt, x->dtype));
    mxp_array *r = NULL;
    if (st == MXP_OK)
        st = mxp_array_new_owner(&r, dt, x->ndim, x->shape);
    if (st == MXP_OK)
        st = softmax_into(fn, log, r, x, axis, mask);
    return nn_give_out(out, r, st);
}

mxp_status mxp_softmax(mxp_array **out, const mxp_array *x, int axis, const mxp_array *mask, mxp_dtype out_dtype)
{
    return softmax_new("mxp_softmax", false, out, x, axis, mask, out_dtype);
}

mxp_status mxp_softmax_into(mxp_array *out, const mxp_array *x, int axis, const mxp_array *mask)
{
    return softmax_into("mxp_softmax_into", false, out, x, axis, mask);
}

mxp_status mxp_log_softmax(mxp_array **out, const mxp_array *x, int axis, const mxp_array *mask,
                           mxp_dtype out_dtype)
{
    return softmax_new("mxp_log_softmax", true, out, x, axis, mask, out_dtype);
}

mxp_status mxp_log_softmax_into(mxp_array *out, const mxp_array *x, int axis, const mxp_array *mask)
{
    return softmax_into("mxp_log_softmax_into", true, out, x, axis, mask);
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

/* ---- L2 normalization ------------------------------------------------------ */

static mxp_status l2_into(const char *fn, mxp_array *out, const mxp_array *x, int axis, double eps)
{
    mxp_status st = nn_check_input(fn, "out", out);
    if (st == MXP_OK)
        st = nn_check_input(fn, "x", x);
    if (st == MXP_OK)
        st = nn_check_eps(fn, eps);
    if (st != MXP_OK)
        return st;
    const mxp_fpenv env = mxp_fpenv_enter();
    st = run_along(fn, l2_row, &(sm_job){ .eps = eps }, out, x, axis, NULL, false);
    mxp_fpenv_leave(env);
    return st;
}

mxp_status mxp_l2_normalize_into(mxp_array *out, const mxp_array *x, int axis, double eps)
{
    return l2_into("mxp_l2_normalize_into", out, x, axis, eps);
}

mxp_status mxp_l2_normalize(mxp_array **out, const mxp_array *x, int axis, double eps, mxp_dtype out_dtype)
{
    const char *fn = "mxp_l2_normalize";
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    mxp_status st = nn_check_input(fn, "x", x);
    if (st == MXP_OK)
        st = nn_check_float(fn, "out", out_dtype = nn_out_dtype(out_dtype, x->dtype));
    mxp_array *r = NULL;
    if (st == MXP_OK)
        st = mxp_array_new_owner(&r, out_dtype, x->ndim, x->shape);
    if (st == MXP_OK)
        st = l2_into(fn, r, x, axis, eps);
    return nn_give_out(out, r, st);
}

/* Elementwise operations on arrays: NumPy broadcasting, the output array
 * made or checked, inputs that overlap it copied, and the n-d walk that
 * hands each row of the last axis to the shared 1-d loop (src/ops/strided.c)
 * with the plan src/ops/op-info.c makes. */
#include <string.h>

#include "array/array-internal.h"
#include "core/abi.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "core/profile-internal.h"
#include "ops/ops-internal.h"

typedef struct operands {
    int nin;
    const mxp_array *in[2];
    mxp_array *out;
} operands;

/* The walk over out and its inputs: rows of the last axis (one row of
 * every element when everything is C-contiguous). */
typedef struct walk {
    const operands *x;
    bool one_row;
    int64_t len;      /* elements per row */
    ptrdiff_t os, is[2];
} walk;

/* Elements [lo, hi) of out in C order (flat index i is element i of
 * stochastic rounding's stream), a row or part of one at a time. */
static void run_range(const mxp_ew_plan *p, const void *ctx, size_t lo, size_t hi)
{
    const walk *w = ctx;
    const operands *x = w->x;
    const mxp_array *out = x->out;
    const int last = out->ndim - 1;
    char *o = out->data;
    const char *in[2] = { x->in[0]->data, x->nin > 1 ? x->in[1]->data : NULL };
    int64_t idx[MXP_MAXDIMS] = { 0 };
    int64_t row = (int64_t)lo / w->len, col = (int64_t)lo % w->len;
    for (int ax = last - 1; ax >= 0 && !w->one_row; ax--) { /* the row's position */
        idx[ax] = row % out->shape[ax];
        row /= out->shape[ax];
        o += idx[ax] * out->strides[ax];
        for (int k = 0; k < x->nin; k++)
            in[k] += idx[ax] * x->in[k]->strides[ax];
    }
    for (size_t i = lo; i < hi;) {
        const size_t m = (size_t)(w->len - col) < hi - i ? (size_t)(w->len - col) : hi - i;
        const char *at[2] = { in[0] + col * w->is[0], in[1] ? in[1] + col * w->is[1] : NULL };
        mxp_ew_run_1d(p, m, o + col * w->os, w->os, at, w->is, (uint64_t)i);
        i += m;
        col = 0;
        for (int ax = last - 1; ax >= 0 && !w->one_row; ax--) {
            o += out->strides[ax];
            for (int k = 0; k < x->nin; k++)
                in[k] += x->in[k]->strides[ax];
            if (++idx[ax] < out->shape[ax])
                break;
            o -= out->strides[ax] * out->shape[ax];
            for (int k = 0; k < x->nin; k++)
                in[k] -= x->in[k]->strides[ax] * x->in[k]->shape[ax];
            idx[ax] = 0;
        }
    }
}

/* Runs the plan over every element of out, large arrays in shares over the
 * thread pool (mxp_ew_parallel). */
static void run(const mxp_ew_plan *p, const operands *x)
{
    const mxp_array *out = x->out;
    const int64_t n = mxp_array_size(out);
    if (n == 0)
        return;
    bool flat = out->flags & MXP_ARRAY_C_CONTIGUOUS;
    for (int k = 0; k < x->nin; k++)
        flat = flat && (x->in[k]->flags & MXP_ARRAY_C_CONTIGUOUS);
    const int last = out->ndim - 1;
    walk w = { x, flat || out->ndim == 0, 0, 0, { 0, 0 } };
    w.len = w.one_row ? n : out->shape[last];
    w.os = w.one_row ? (ptrdiff_t)mxp_dtype_itemsize(out->dtype) : (ptrdiff_t)out->strides[last];
    for (int k = 0; k < x->nin; k++)
        w.is[k] = w.one_row ? (ptrdiff_t)mxp_dtype_itemsize(x->in[k]->dtype) : (ptrdiff_t)x->in[k]->strides[last];
    mxp_ew_parallel(p, (size_t)n, run_range, &w);
}

/* An input that overlaps out other than element for element is copied. */
static mxp_status separate(const mxp_array *out, const mxp_array *in, mxp_array **copy)
{
    *copy = NULL;
    bool same = in->data == out->data && in->ndim == out->ndim &&
                !memcmp(in->strides, out->strides, (size_t)in->ndim * sizeof in->strides[0]) &&
                mxp_dtype_itemsize(in->dtype) >= mxp_dtype_itemsize(out->dtype);
    if (same || !mxp_arrays_may_overlap(out, in))
        return MXP_OK;
    return mxp_array_astype(copy, in, in->dtype, NULL);
}

static mxp_status check_out(mxp_array *out, const mxp_ops_opts *opts, int ndim, const int64_t *shape)
{
    if (!(out->flags & MXP_ARRAY_WRITEABLE))
        return mxp_error(MXP_ERR_READONLY, "the output array is read-only");
    if (opts && opts->out_dtype && opts->out_dtype != out->dtype)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "out_dtype %s differs from the output array's %s",
                         mxp_dtype_name(opts->out_dtype), mxp_dtype_name(out->dtype));
    if (out->ndim != ndim || memcmp(out->shape, shape, (size_t)ndim * sizeof shape[0]))
        return mxp_error(MXP_ERR_SHAPE, "the output array's shape is not the broadcast shape of the inputs");
    return MXP_OK;
}

static mxp_status check_opts(const mxp_ops_opts *opts)
{
    if (!opts)
        return MXP_OK;
    if (opts->out_dtype && !mxp_dtype_is_valid(opts->out_dtype))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "out_dtype %d is not a valid mxp_dtype", (int)opts->out_dtype);
    return mxp_convert(NULL, MXP_F32, NULL, MXP_F32, 0, &opts->convert);
}

/* Shared by binary and unary: broadcast, make or check out, run. */
static mxp_status execute_in_env(mxp_array **made, mxp_array *given, const mxp_ew_plan *p, operands *x,
                          const mxp_ops_opts *opts)
{
    int nd = x->in[0]->ndim;
    int64_t shape[MXP_MAXDIMS];
    memcpy(shape, x->in[0]->shape, sizeof shape);
    mxp_status st = MXP_OK;
    if (x->nin == 2)
        st = mxp_broadcast_shapes(&nd, shape, x->in[0]->ndim, x->in[0]->shape, x->in[1]->ndim, x->in[1]->shape);
    if (st != MXP_OK)
        return st;
    mxp_array *out = given;
    if (given)
        st = check_out(given, opts, nd, shape);
    else
        st = mxp_array_new_owner(&out, p->out, nd, shape);
    mxp_array *views[2] = { NULL, NULL }, *copies[2] = { NULL, NULL };
    for (int k = 0; k < x->nin && st == MXP_OK; k++) {
        /* an input of the broadcast shape is used as it is (no view to make) */
        const bool same_shape = x->in[k]->ndim == nd &&
                                !memcmp(x->in[k]->shape, shape, (size_t)nd * sizeof shape[0]);
        if (!same_shape)
            st = mxp_array_broadcast_to(&views[k], x->in[k], nd, shape);
        const mxp_array *in = views[k] ? views[k] : x->in[k];
        if (st == MXP_OK && given)
            st = separate(given, in, &copies[k]);
        if (st == MXP_OK)
            x->in[k] = copies[k] ? copies[k] : in;
    }
    if (st == MXP_OK) {
        x->out = out;
        run(p, x);
    }
    for (int k = 0; k < 2; k++) {
        mxp_array_free(views[k]);
        mxp_array_free(copies[k]);
    }
    if (st != MXP_OK && !given)
        mxp_array_free(out);
    else if (!given)
        *made = out;
    return st;
}

/* Under the library's floating-point environment (core/fpenv.h). */
static mxp_status execute(mxp_array **made, mxp_array *given, const mxp_ew_plan *p, operands *x,
                          const mxp_ops_opts *opts)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    mxp_status st = execute_in_env(made, given, p, x, opts);
    mxp_fpenv_leave(env);
    return st;
}

static mxp_status binary_work(mxp_array **made, mxp_array *given, mxp_binary_op op, const mxp_array *a,
                              const mxp_array *b, const mxp_ops_opts *opts)
{
    mxp_status st = mxp_require_array(a, "a");
    if (st == MXP_OK)
        st = mxp_require_array(b, "b");
    if (st == MXP_OK && (unsigned)op >= MXP_BINARY_OP_COUNT)
        st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "binary op %d is not one of mxp_binary_op's", (int)op);
    if (st == MXP_OK)
        st = mxp_ew_check_binary(op, a->dtype, b->dtype);
    if (st == MXP_OK)
        st = check_opts(opts);
    if (st != MXP_OK)
        return st;
    mxp_dtype rt = given ? given->dtype : opts && opts->out_dtype ? opts->out_dtype : mxp_binary_result_type(op, a->dtype, b->dtype);
    mxp_ew_plan p;
    mxp_ew_plan_binary(&p, op, a->dtype, b->dtype, rt, opts ? &opts->convert : NULL);
    operands x = { 2, { a, b }, NULL };
    return execute(made, given, &p, &x, opts);
}

/* The profiler's count of an elementwise call: the inputs' bytes, the
 * output's (given, or the larger input's elements in the result dtype),
 * one operation per output element. */
static double ew_elements(const mxp_array *a, const mxp_array *b, const mxp_array *given)
{
    if (given)
        return (double)mxp_array_size(given);
    const double na = a ? (double)mxp_array_size(a) : 0, nb = b ? (double)mxp_array_size(b) : 0;
    return na > nb ? na : nb;
}

static double ew_bytes(const mxp_array *a, const mxp_array *b, const mxp_array *given, mxp_dtype out)
{
    const double o = given ? mxp_prof_array_bytes(given) : ew_elements(a, b, NULL) * (double)mxp_dtype_itemsize(out);
    return mxp_prof_array_bytes(a) + mxp_prof_array_bytes(b) + o;
}

static mxp_dtype ew_out_dtype(const mxp_array *a, const mxp_array *b, const mxp_ops_opts *opts)
{
    if (opts && opts->out_dtype)
        return opts->out_dtype;
    return a && b ? mxp_promote_types(a->dtype, b->dtype) : a ? a->dtype : MXP_F64;
}

static mxp_status binary(mxp_array **made, mxp_array *given, mxp_binary_op op, const mxp_array *a,
                         const mxp_array *b, const mxp_ops_opts *opts)
{
    MXP_PROF_RETURN(mxp_binary_op_name(op), ew_bytes(a, b, given, ew_out_dtype(a, b, opts)), ew_elements(a, b, given),
                    binary_work(made, given, op, a, b, opts));
}

mxp_status mxp_binary(mxp_array **out, mxp_binary_op op, const mxp_array *a, const mxp_array *b,
                      const mxp_ops_opts *opts)
{
    MXP_ABI_IN_OUT(opts, ops_opts, "mxp_binary", out);
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_binary: out is NULL");
    *out = NULL;
    return binary(out, NULL, op, a, b, opts);
}

mxp_status mxp_binary_into(mxp_array *out, mxp_binary_op op, const mxp_array *a, const mxp_array *b,
                           const mxp_ops_opts *opts)
{
    MXP_ABI_IN(opts, ops_opts, "mxp_binary_into");
    mxp_status st = mxp_require_array(out, "out");
    return st == MXP_OK ? binary(NULL, out, op, a, b, opts) : st;
}

static mxp_status unary_work(mxp_array **made, mxp_array *given, mxp_unary_op op, const mxp_array *a,
                             const mxp_ops_opts *opts)
{
    mxp_status st = mxp_require_array(a, "a");
    if (st == MXP_OK && (unsigned)op >= MXP_UNARY_OP_COUNT)
        st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "unary op %d is not one of mxp_unary_op's", (int)op);
    if (st == MXP_OK)
        st = check_opts(opts);
    if (st != MXP_OK)
        return st;
    mxp_dtype rt = given ? given->dtype : opts && opts->out_dtype ? opts->out_dtype : mxp_unary_result_type(op, a->dtype);
    mxp_ew_plan p;
    mxp_ew_plan_unary(&p, op, a->dtype, rt, opts ? &opts->convert : NULL);
    operands x = { 1, { a, NULL }, NULL };
    return execute(made, given, &p, &x, opts);
}

static mxp_status unary(mxp_array **made, mxp_array *given, mxp_unary_op op, const mxp_array *a,
                        const mxp_ops_opts *opts)
{
    MXP_PROF_RETURN(mxp_unary_op_name(op), ew_bytes(a, NULL, given, ew_out_dtype(a, NULL, opts)),
                    ew_elements(a, NULL, given), unary_work(made, given, op, a, opts));
}

mxp_status mxp_unary(mxp_array **out, mxp_unary_op op, const mxp_array *a, const mxp_ops_opts *opts)
{
    MXP_ABI_IN_OUT(opts, ops_opts, "mxp_unary", out);
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_unary: out is NULL");
    *out = NULL;
    return unary(out, NULL, op, a, opts);
}

mxp_status mxp_unary_into(mxp_array *out, mxp_unary_op op, const mxp_array *a, const mxp_ops_opts *opts)
{
    MXP_ABI_IN(opts, ops_opts, "mxp_unary_into");
    mxp_status st = mxp_require_array(out, "out");
    return st == MXP_OK ? unary(NULL, out, op, a, opts) : st;
}

mxp_status mxp_ops_run_custom(mxp_array **out, const mxp_array *a, mxp_dtype ct, mxp_dtype rt,
                              mxp_unary_kernel_fn fn, void *ctx, const mxp_ops_opts *opts)
{
    mxp_status st = check_opts(opts);
    if (st != MXP_OK)
        return st;
    mxp_ew_plan p = { .nin = 1, .in = { a->dtype, MXP_DTYPE_INVALID }, .out = rt, .ct = ct, .custom = fn,
                      .custom_ctx = ctx };
    if (opts)
        p.convert = opts->convert;
    operands x = { 1, { a, NULL }, NULL };
    return execute(out, NULL, &p, &x, opts);
}

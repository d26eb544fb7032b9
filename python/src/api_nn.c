/* Module functions: the neural-network operations of mxp/nn.h (softmax,
 * norms, gathers, row products, convolution, pooling, batch norm and the
 * backward passes) on NumPy arrays,
 * with out= and the GIL released around the C calls (docs/nn.md). */
#include <string.h>

#include "mxpy.h"

enum { MAXIN = 4 };

/* One call's arrays: inputs (None: NULL) and an optional out. */
typedef struct call {
    mxp_array *in[MAXIN];
    PyObject *out_obj; /* None or the out= array */
    mxp_array *into;   /* its view, or NULL */
    PyObject *tmp;     /* an aligned copy of out written instead */
    mxp_dtype dtype;   /* dtype= (0: the operation's default) */
} call;

static void call_free(call *c)
{
    for (int i = 0; i < MAXIN; i++)
        mxp_array_free(c->in[i]);
    mxp_array_free(c->into);
    Py_XDECREF(c->tmp);
}

/* Wraps the n inputs (names for messages, the first `required` of them
 * must not be None), out and dtype; 0, or -1 with an exception set and c
 * freed. */
static int call_wrap(call *c, PyObject *const *objs, const char *const *names, int n, int required, PyObject *out,
                     PyObject *dtype)
{
    memset(c, 0, sizeof *c);
    c->out_obj = out;
    for (int i = 0; i < n; i++) {
        if (objs[i] == Py_None && i >= required)
            continue;
        if (!(c->in[i] = mxpy_wrap(objs[i], names[i], false)))
            goto fail;
    }
    if (out != Py_None && !(c->into = mxpy_wrap_ex(out, "out", MXPY_WRITE, &c->tmp)))
        goto fail;
    if (dtype != Py_None && (c->dtype = mxpy_dtype_arg(dtype, "dtype")) == MXP_DTYPE_INVALID)
        goto fail;
    return 0;
fail:
    call_free(c);
    return -1;
}

/* The result: out (after copying back) or the new array r. */
static PyObject *call_end(call *c, mxp_status st, mxp_array *r)
{
    PyObject *tmp = c->tmp;
    c->tmp = NULL;
    call_free(c);
    if (st != MXP_OK) {
        Py_XDECREF(tmp);
        mxp_array_free(r);
        return mxpy_raise(st);
    }
    if (c->out_obj == Py_None)
        return mxpy_unwrap(r);
    if (mxpy_copy_back(c->out_obj, tmp) < 0)
        return NULL;
    Py_INCREF(c->out_obj);
    return c->out_obj;
}

/* _softmax(x, axis, mask, log, out, dtype) */
static PyObject *softmax(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[2], *out, *dtype;
    int axis, log;
    if (!PyArg_ParseTuple(args, "OiOpOO:_softmax", &o[0], &axis, &o[1], &log, &out, &dtype))
        return NULL;
    call c;
    if (call_wrap(&c, o, (const char *[]){ "x", "mask" }, 2, 1, out, dtype) < 0)
        return NULL;
    mxp_array *r = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    if (c.into)
        st = log ? mxp_log_softmax_into(c.into, c.in[0], axis, c.in[1]) : mxp_softmax_into(c.into, c.in[0], axis, c.in[1]);
    else
        st = log ? mxp_log_softmax(&r, c.in[0], axis, c.in[1], c.dtype) : mxp_softmax(&r, c.in[0], axis, c.in[1], c.dtype);
    Py_END_ALLOW_THREADS
    return call_end(&c, st, r);
}

/* _l2_normalize(x, axis, eps, out, dtype) */
static PyObject *l2_normalize(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[1], *out, *dtype;
    int axis;
    double eps;
    if (!PyArg_ParseTuple(args, "OidOO:_l2_normalize", &o[0], &axis, &eps, &out, &dtype))
        return NULL;
    call c;
    if (call_wrap(&c, o, (const char *[]){ "x" }, 1, 1, out, dtype) < 0)
        return NULL;
    mxp_array *r = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = c.into ? mxp_l2_normalize_into(c.into, c.in[0], axis, eps) : mxp_l2_normalize(&r, c.in[0], axis, eps, c.dtype);
    Py_END_ALLOW_THREADS
    return call_end(&c, st, r);
}

/* _unary(x, op, out, dtype): an elementwise function of mxp_unary by its
 * name ("gelu", "gelu_tanh" ...), for nn.gelu (docs/ops.md: each result
 * rounded once). */
static PyObject *unary(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[1], *out, *dtype;
    const char *name;
    if (!PyArg_ParseTuple(args, "OsOO:_unary", &o[0], &name, &out, &dtype))
        return NULL;
    int op = 0;
    while (op < MXP_UNARY_OP_COUNT && strcmp(mxp_unary_op_name((mxp_unary_op)op), name))
        op++;
    if (op == MXP_UNARY_OP_COUNT)
        return PyErr_Format(PyExc_ValueError, "no elementwise function named '%s'", name);
    call c;
    if (call_wrap(&c, o, (const char *[]){ "x" }, 1, 1, out, dtype) < 0)
        return NULL;
    mxp_ops_opts opts = { .out_dtype = c.dtype };
    mxp_array *r = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = c.into ? mxp_unary_into(c.into, (mxp_unary_op)op, c.in[0], &opts)
                : mxp_unary(&r, (mxp_unary_op)op, c.in[0], &opts);
    Py_END_ALLOW_THREADS
    return call_end(&c, st, r);
}

/* _softmax_backward(dy, y, axis, log, dtype) */
static PyObject *softmax_backward(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[2], *dtype;
    int axis, log;
    if (!PyArg_ParseTuple(args, "OOipO:_softmax_backward", &o[0], &o[1], &axis, &log, &dtype))
        return NULL;
    call c;
    if (call_wrap(&c, o, (const char *[]){ "dy", "y" }, 2, 2, Py_None, dtype) < 0)
        return NULL;
    mxp_array *r = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = log ? mxp_log_softmax_backward(&r, c.in[0], c.in[1], axis, c.dtype)
             : mxp_softmax_backward(&r, c.in[0], c.in[1], axis, c.dtype);
    Py_END_ALLOW_THREADS
    return call_end(&c, st, r);
}

/* The number of normalized axes: normalized (a tuple of ints, or None: 1)
 * must be x's last axes; -1 with ValueError (or TypeError) otherwise. */
static int nnorm_of(PyObject *normalized, const mxp_array *x)
{
    if (normalized == Py_None)
        return 1;
    if (!PyTuple_Check(normalized))
        return PyErr_Format(PyExc_TypeError, "normalized_shape must be a tuple of ints"), -1;
    const Py_ssize_t n = PyTuple_GET_SIZE(normalized);
    const int nd = mxp_array_ndim(x);
    bool same = n <= nd;
    for (Py_ssize_t i = 0; same && i < n; i++) {
        long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(normalized, i));
        if (v == -1 && PyErr_Occurred())
            return -1;
        same = v == mxp_array_shape(x)[nd - n + i];
    }
    if (!same)
        return PyErr_Format(PyExc_ValueError, "normalized_shape %R is not the last axes of x", normalized), -1;
    return (int)n;
}

/* _norm(x, normalized_shape, weight, bias, eps, rms, out, dtype) */
static PyObject *norm(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[3], *normalized, *out, *dtype;
    int rms;
    double eps;
    if (!PyArg_ParseTuple(args, "OOOOdpOO:_norm", &o[0], &normalized, &o[1], &o[2], &eps, &rms, &out, &dtype))
        return NULL;
    call c;
    if (call_wrap(&c, o, (const char *[]){ "x", "weight", "bias" }, 3, 1, out, dtype) < 0)
        return NULL;
    const int nnorm = nnorm_of(normalized, c.in[0]);
    if (nnorm < 0) {
        call_free(&c);
        return NULL;
    }
    mxp_array *r = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    if (rms)
        st = c.into ? mxp_rms_norm_into(c.into, c.in[0], nnorm, c.in[1], eps)
                    : mxp_rms_norm(&r, c.in[0], nnorm, c.in[1], eps, c.dtype);
    else
        st = c.into ? mxp_layer_norm_into(c.into, c.in[0], nnorm, c.in[1], c.in[2], eps)
                    : mxp_layer_norm(&r, c.in[0], nnorm, c.in[1], c.in[2], eps, c.dtype);
    Py_END_ALLOW_THREADS
    return call_end(&c, st, r);
}

/* _norm_backward(dy, x, normalized_shape, weight, eps, rms) -> (dx, dweight, dbias or None) */
static PyObject *norm_backward(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[3], *normalized;
    int rms;
    double eps;
    if (!PyArg_ParseTuple(args, "OOOOdp:_norm_backward", &o[0], &o[1], &normalized, &o[2], &eps, &rms))
        return NULL;
    call c;
    if (call_wrap(&c, o, (const char *[]){ "dy", "x", "weight" }, 3, 2, Py_None, Py_None) < 0)
        return NULL;
    const int nnorm = nnorm_of(normalized, c.in[1]);
    if (nnorm < 0) {
        call_free(&c);
        return NULL;
    }
    mxp_array *dx = NULL, *dw = NULL, *db = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = rms ? mxp_rms_norm_backward(&dx, &dw, c.in[0], c.in[1], nnorm, c.in[2], eps)
             : mxp_layer_norm_backward(&dx, &dw, &db, c.in[0], c.in[1], nnorm, c.in[2], eps);
    Py_END_ALLOW_THREADS
    call_free(&c);
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyObject *px = mxpy_unwrap(dx), *pw = mxpy_unwrap(dw), *pb = db ? mxpy_unwrap(db) : (Py_INCREF(Py_None), Py_None);
    PyObject *t = px && pw && pb ? PyTuple_Pack(3, px, pw, pb) : NULL;
    Py_XDECREF(px);
    Py_XDECREF(pw);
    Py_XDECREF(pb);
    return t;
}

/* _take(table, indices, axis, scales, out, dtype) */
static PyObject *take(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[3], *out, *dtype;
    int axis;
    if (!PyArg_ParseTuple(args, "OOiOOO:_take", &o[0], &o[1], &axis, &o[2], &out, &dtype))
        return NULL;
    call c;
    if (call_wrap(&c, o, (const char *[]){ "table", "indices", "scales" }, 3, 2, out, dtype) < 0)
        return NULL;
    mxp_array *r = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    if (c.in[2])
        st = c.into ? mxp_take_scaled_into(c.into, c.in[0], c.in[2], c.in[1])
                    : mxp_take_scaled(&r, c.in[0], c.in[2], c.in[1], c.dtype);
    else
        st = c.into ? mxp_take_into(c.into, c.in[0], c.in[1], axis) : mxp_take(&r, c.in[0], c.in[1], axis, c.dtype);
    Py_END_ALLOW_THREADS
    return call_end(&c, st, r);
}

/* _rowdot(a, b, outer, cosine, eps, out, dtype) */
static PyObject *rowdot(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[2], *out, *dtype;
    int outer, cosine;
    double eps;
    if (!PyArg_ParseTuple(args, "OOppdOO:_rowdot", &o[0], &o[1], &outer, &cosine, &eps, &out, &dtype))
        return NULL;
    call c;
    if (call_wrap(&c, o, (const char *[]){ "a", "b" }, 2, 2, out, dtype) < 0)
        return NULL;
    mxp_array *r = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    if (cosine)
        st = c.into ? mxp_cosine_similarity_into(c.into, c.in[0], c.in[1], outer, eps)
                    : mxp_cosine_similarity(&r, c.in[0], c.in[1], outer, eps, c.dtype);
    else
        st = c.into ? mxp_rowdot_into(c.into, c.in[0], c.in[1], outer) : mxp_rowdot(&r, c.in[0], c.in[1], outer, c.dtype);
    Py_END_ALLOW_THREADS
    return call_end(&c, st, r);
}

/* ---- convolution, pooling, batch norm ------------------------------------- */

/* A pair of int64 from a 2-tuple; -1 with an exception set otherwise. */
static int pair_of(PyObject *t, const char *what, int64_t *v)
{
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 2)
        return PyErr_Format(PyExc_TypeError, "%s must be a tuple of two ints", what), -1;
    for (int i = 0; i < 2; i++) {
        long long x = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
        if (x == -1 && PyErr_Occurred())
            return -1;
        v[i] = x;
    }
    return 0;
}

/* mxp_conv_opts from (stride, padding, dilation, groups, layout,
 * activation, clamp: None or (lo, hi)). */
static int conv_opts_of(mxp_conv_opts *o, PyObject *stride, PyObject *padding, PyObject *dilation, long long groups,
                        int layout, int act, PyObject *clamp)
{
    memset(o, 0, sizeof *o);
    if (pair_of(stride, "stride", o->stride) < 0 || pair_of(padding, "padding", o->padding) < 0 ||
        pair_of(dilation, "dilation", o->dilation) < 0)
        return -1;
    o->groups = groups;
    o->layout = (mxp_nn_layout)layout;
    o->activation = (mxp_activation)act;
    if (clamp != Py_None) {
        if (!PyArg_ParseTuple(clamp, "dd", &o->clamp_lo, &o->clamp_hi))
            return -1;
        o->clamp = true;
    }
    return 0;
}

/* _conv2d(x, weight, bias, stride, padding, dilation, groups, layout, activation, clamp, out, dtype, quant,
 * algorithm): quant None or (x_zero_point, w_zero_point, y_zero_point, x_scale, y_scale, w_scales: float32 1-d or
 * None) */
static PyObject *conv2d(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[4], *stride, *padding, *dilation, *clamp, *out, *dtype, *quant;
    long long groups;
    int layout, act, algorithm = 0;
    if (!PyArg_ParseTuple(args, "OOOOOOLiiOOOO|i:_conv2d", &o[0], &o[1], &o[2], &stride, &padding, &dilation,
                          &groups, &layout, &act, &clamp, &out, &dtype, &quant, &algorithm))
        return NULL;
    mxp_conv_opts opts;
    if (conv_opts_of(&opts, stride, padding, dilation, groups, layout, act, clamp) < 0)
        return NULL;
    opts.algorithm = (mxp_conv_algorithm)algorithm;
    o[3] = Py_None;
    if (quant != Py_None && !PyArg_ParseTuple(quant, "iiiddO", &opts.x_zero_point, &opts.w_zero_point,
                                              &opts.y_zero_point, &opts.x_scale, &opts.y_scale, &o[3]))
        return NULL;
    call c;
    if (call_wrap(&c, o, (const char *[]){ "x", "weight", "bias", "w_scale" }, 4, 2, out, dtype) < 0)
        return NULL;
    if (c.in[3]) {
        if (mxp_array_dtype(c.in[3]) != MXP_F32 || mxp_array_ndim(c.in[3]) != 1 ||
            mxp_array_strides(c.in[3])[0] != 4) {
            call_free(&c);
            return PyErr_Format(PyExc_TypeError, "w_scale must be a contiguous 1-d float32 array");
        }
        opts.w_scales = mxp_array_data(c.in[3]);
        opts.n_w_scales = (size_t)mxp_array_size(c.in[3]);
    }
    mxp_array *r = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = c.into ? mxp_conv2d_into(c.into, c.in[0], c.in[1], c.in[2], &opts)
                : mxp_conv2d(&r, c.in[0], c.in[1], c.in[2], &opts, c.dtype);
    Py_END_ALLOW_THREADS
    return call_end(&c, st, r);
}

/* The end of a call giving n gradients: c freed; the tuple of them (NULL:
 * None; the arrays are stolen), or the exception of st. */
static PyObject *grads_end(call *c, mxp_status st, mxp_array **g, int n)
{
    call_free(c);
    if (st != MXP_OK) {
        for (int i = 0; i < n; i++)
            mxp_array_free(g[i]);
        return mxpy_raise(st);
    }
    PyObject *items[3] = { NULL, NULL, NULL }, *t = NULL;
    bool ok = true;
    for (int i = 0; i < n; i++) {
        items[i] = g[i] ? mxpy_unwrap(g[i]) : (Py_INCREF(Py_None), Py_None);
        ok = ok && items[i];
    }
    if (ok)
        t = n == 2 ? PyTuple_Pack(2, items[0], items[1]) : PyTuple_Pack(3, items[0], items[1], items[2]);
    for (int i = 0; i < n; i++)
        Py_XDECREF(items[i]);
    return t;
}

/* _conv2d_backward(dy, x, weight, stride, padding, dilation, groups, layout, need) -> (dx, dweight, dbias) */
static PyObject *conv2d_backward(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[3], *stride, *padding, *dilation;
    long long groups;
    int layout, need[3];
    if (!PyArg_ParseTuple(args, "OOOOOOLi(ppp):_conv2d_backward", &o[0], &o[1], &o[2], &stride, &padding, &dilation,
                          &groups, &layout, &need[0], &need[1], &need[2]))
        return NULL;
    mxp_conv_opts opts;
    if (conv_opts_of(&opts, stride, padding, dilation, groups, layout, 0, Py_None) < 0)
        return NULL;
    call c;
    if (call_wrap(&c, o, (const char *[]){ "dy", "x", "weight" }, 3, 3, Py_None, Py_None) < 0)
        return NULL;
    mxp_array *g[3] = { NULL, NULL, NULL };
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_conv2d_backward(need[0] ? &g[0] : NULL, need[1] ? &g[1] : NULL, need[2] ? &g[2] : NULL, c.in[0],
                             c.in[1], c.in[2], &opts);
    Py_END_ALLOW_THREADS
    return grads_end(&c, st, g, 3);
}

/* mxp_pool_opts from (kernel, stride, padding, ceil_mode, exclude_pad, layout). */
static int pool_opts_of(mxp_pool_opts *o, PyObject *kernel, PyObject *stride, PyObject *padding, int ceil, int excl,
                        int layout)
{
    memset(o, 0, sizeof *o);
    if (pair_of(kernel, "kernel_size", o->kernel) < 0 || pair_of(stride, "stride", o->stride) < 0 ||
        pair_of(padding, "padding", o->padding) < 0)
        return -1;
    o->ceil_mode = ceil;
    o->exclude_pad = excl;
    o->layout = (mxp_nn_layout)layout;
    return 0;
}

/* _pool2d(x, avg, kernel, stride, padding, ceil_mode, exclude_pad, layout, out, dtype) */
static PyObject *pool2d(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[1], *kernel, *stride, *padding, *out, *dtype;
    int avg, ceil, excl, layout;
    if (!PyArg_ParseTuple(args, "OpOOOppiOO:_pool2d", &o[0], &avg, &kernel, &stride, &padding, &ceil, &excl, &layout,
                          &out, &dtype))
        return NULL;
    mxp_pool_opts opts;
    if (pool_opts_of(&opts, kernel, stride, padding, ceil, excl, layout) < 0)
        return NULL;
    call c;
    if (call_wrap(&c, o, (const char *[]){ "x" }, 1, 1, out, dtype) < 0)
        return NULL;
    mxp_array *r = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    if (avg)
        st = c.into ? mxp_avg_pool2d_into(c.into, c.in[0], &opts) : mxp_avg_pool2d(&r, c.in[0], &opts, c.dtype);
    else
        st = c.into ? mxp_max_pool2d_into(c.into, c.in[0], &opts) : mxp_max_pool2d(&r, c.in[0], &opts, c.dtype);
    Py_END_ALLOW_THREADS
    return call_end(&c, st, r);
}

/* _pool2d_backward(dy, x, avg, kernel, stride, padding, ceil_mode, exclude_pad, layout) */
static PyObject *pool2d_backward(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[2], *kernel, *stride, *padding;
    int avg, ceil, excl, layout;
    if (!PyArg_ParseTuple(args, "OOpOOOppi:_pool2d_backward", &o[0], &o[1], &avg, &kernel, &stride, &padding, &ceil,
                          &excl, &layout))
        return NULL;
    mxp_pool_opts opts;
    if (pool_opts_of(&opts, kernel, stride, padding, ceil, excl, layout) < 0)
        return NULL;
    call c;
    if (call_wrap(&c, o, (const char *[]){ "dy", "x" }, 2, 2, Py_None, Py_None) < 0)
        return NULL;
    mxp_array *r = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = avg ? mxp_avg_pool2d_backward(&r, c.in[0], c.in[1], &opts) : mxp_max_pool2d_backward(&r, c.in[0], c.in[1], &opts);
    Py_END_ALLOW_THREADS
    return call_end(&c, st, r);
}

/* _batch_norm(x, axis, running_mean, running_var, weight, bias, training, momentum, eps, out, dtype) */
static PyObject *batch_norm(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[3], *rm_obj, *rv_obj, *out, *dtype;
    int axis, training;
    double momentum, eps;
    if (!PyArg_ParseTuple(args, "OiOOOOpddOO:_batch_norm", &o[0], &axis, &rm_obj, &rv_obj, &o[1], &o[2], &training,
                          &momentum, &eps, &out, &dtype))
        return NULL;
    call c;
    if (call_wrap(&c, o, (const char *[]){ "x", "weight", "bias" }, 3, 1, out, dtype) < 0)
        return NULL;
    /* the running statistics are updated in place (training): writeable, aligned */
    mxp_array *rm = rm_obj == Py_None ? NULL : mxpy_wrap(rm_obj, "running_mean", training);
    mxp_array *rv = !PyErr_Occurred() && rv_obj != Py_None ? mxpy_wrap(rv_obj, "running_var", training) : NULL;
    if (PyErr_Occurred()) {
        mxp_array_free(rm);
        mxp_array_free(rv);
        call_free(&c);
        return NULL;
    }
    mxp_array *r = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = c.into ? mxp_batch_norm_into(c.into, c.in[0], axis, rm, rv, c.in[1], c.in[2], training, momentum, eps)
                : mxp_batch_norm(&r, c.in[0], axis, rm, rv, c.in[1], c.in[2], training, momentum, eps, c.dtype);
    Py_END_ALLOW_THREADS
    mxp_array_free(rm);
    mxp_array_free(rv);
    return call_end(&c, st, r);
}

/* _batch_norm_backward(dy, x, axis, weight, eps) -> (dx, dweight, dbias) */
static PyObject *batch_norm_backward(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[3];
    int axis;
    double eps;
    if (!PyArg_ParseTuple(args, "OOiOd:_batch_norm_backward", &o[0], &o[1], &axis, &o[2], &eps))
        return NULL;
    call c;
    if (call_wrap(&c, o, (const char *[]){ "dy", "x", "weight" }, 3, 2, Py_None, Py_None) < 0)
        return NULL;
    mxp_array *g[3] = { NULL, NULL, NULL };
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_batch_norm_backward(&g[0], &g[1], &g[2], c.in[0], c.in[1], axis, c.in[2], eps);
    Py_END_ALLOW_THREADS
    return grads_end(&c, st, g, 3);
}

/* _fold_batch_norm(weight, conv_bias, gamma, beta, mean, var, eps) -> (weight, bias) */
static PyObject *fold_batch_norm(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[6];
    double eps;
    if (!PyArg_ParseTuple(args, "OOOOOOd:_fold_batch_norm", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &eps))
        return NULL;
    call c;
    mxp_array *in6[6] = { NULL };
    const char *names[6] = { "weight", "bias", "gamma", "beta", "mean", "var" };
    if (call_wrap(&c, o, names, 4, 1, Py_None, Py_None) < 0)
        return NULL;
    for (int i = 4; i < 6; i++)
        if (!(in6[i] = mxpy_wrap(o[i], names[i], false))) {
            mxp_array_free(in6[4]);
            call_free(&c);
            return NULL;
        }
    mxp_array *g[2] = { NULL, NULL };
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_fold_batch_norm(&g[0], &g[1], c.in[0], c.in[1], c.in[2], c.in[3], in6[4], in6[5], eps);
    Py_END_ALLOW_THREADS
    mxp_array_free(in6[4]);
    mxp_array_free(in6[5]);
    return grads_end(&c, st, g, 2);
}

PyMethodDef mxpy_nn_methods[] = {
    { "_softmax", softmax, METH_VARARGS, "_softmax(x, axis, mask, log, out, dtype) (mxp_softmax, mxp_log_softmax)." },
    { "_softmax_backward", softmax_backward, METH_VARARGS, "_softmax_backward(dy, y, axis, log, dtype)." },
    { "_l2_normalize", l2_normalize, METH_VARARGS, "_l2_normalize(x, axis, eps, out, dtype)." },
    { "_unary", unary, METH_VARARGS, "_unary(x, op, out, dtype) (mxp_unary, mxp_unary_into by the op's name)." },
    { "_norm", norm, METH_VARARGS, "_norm(x, normalized_shape, weight, bias, eps, rms, out, dtype) (layer / rms norm)." },
    { "_norm_backward", norm_backward, METH_VARARGS,
      "_norm_backward(dy, x, normalized_shape, weight, eps, rms) -> (dx, dweight, dbias or None)." },
    { "_take", take, METH_VARARGS, "_take(table, indices, axis, scales, out, dtype) (mxp_take, mxp_take_scaled)." },
    { "_rowdot", rowdot, METH_VARARGS, "_rowdot(a, b, outer, cosine, eps, out, dtype)." },
    /* convolution, pooling, batch norm */
    { "_conv2d", conv2d, METH_VARARGS,
      "_conv2d(x, weight, bias, stride, padding, dilation, groups, layout, activation, clamp, out, dtype, quant"
      "[, algorithm])." },
    { "_conv2d_backward", conv2d_backward, METH_VARARGS,
      "_conv2d_backward(dy, x, weight, stride, padding, dilation, groups, layout, need) -> (dx, dweight, dbias)." },
    { "_pool2d", pool2d, METH_VARARGS, "_pool2d(x, avg, kernel, stride, padding, ceil_mode, exclude_pad, layout, out, dtype)." },
    { "_pool2d_backward", pool2d_backward, METH_VARARGS,
      "_pool2d_backward(dy, x, avg, kernel, stride, padding, ceil_mode, exclude_pad, layout)." },
    { "_batch_norm", batch_norm, METH_VARARGS,
      "_batch_norm(x, axis, running_mean, running_var, weight, bias, training, momentum, eps, out, dtype)." },
    { "_batch_norm_backward", batch_norm_backward, METH_VARARGS,
      "_batch_norm_backward(dy, x, axis, weight, eps) -> (dx, dweight, dbias)." },
    { "_fold_batch_norm", fold_batch_norm, METH_VARARGS,
      "_fold_batch_norm(weight, conv_bias, gamma, beta, mean, var, eps) -> (weight, bias)." },
    { NULL, NULL, 0, NULL },
};

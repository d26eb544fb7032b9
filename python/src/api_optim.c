/* Module functions: the optimizers with master weights and gradient
 * clipping (mxp/train.h).  An optimizer lives in a PyCapsule
 * (mxpy_kind_optimizer); mxp/_train.py wraps it in a class.
 *
 * Arrays handed to C are mxpy_wrap views: each holds a reference to its
 * NumPy array until the view is freed, so an optimizer (which keeps the
 * views of its parameters and gradients) keeps their arrays alive. */
#include <string.h>

#include "mxpy.h"

/* _optim_new(kind, lr, momentum, dampening, nesterov, weight_decay, beta1, beta2, eps,
 *            max_grad_norm, master, rounding, seed) -> capsule */
static PyObject *optim_new(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kw[] = { "kind", "lr", "momentum", "dampening", "nesterov", "weight_decay", "beta1", "beta2", "eps",
                          "max_grad_norm", "master", "rounding", "seed", NULL };
    int kind, nesterov, master;
    const char *rounding;
    unsigned long long seed;
    mxp_optimizer_opts o;
    memset(&o, 0, sizeof o);
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "idddpdddddpsK", kw, &kind, &o.lr, &o.momentum, &o.dampening,
                                     &nesterov, &o.weight_decay, &o.beta1, &o.beta2, &o.eps, &o.max_grad_norm,
                                     &master, &rounding, &seed))
        return NULL;
    o.nesterov = nesterov;
    o.master = master ? MXP_MASTER_AUTO : MXP_MASTER_NONE;
    o.seed = seed;
    if (!strcmp(rounding, "nearest_even"))
        o.rounding = MXP_ROUND_NEAREST_EVEN;
    else if (!strcmp(rounding, "stochastic"))
        o.rounding = MXP_ROUND_STOCHASTIC;
    else
        return PyErr_Format(PyExc_ValueError, "rounding '%s' is not 'nearest_even' or 'stochastic'", rounding);
    mxp_optimizer *opt = NULL;
    mxp_status st = mxp_optimizer_create(&opt, (mxp_optimizer_kind)kind, &o);
    return mxpy_capsule_new(st, opt, &mxpy_kind_optimizer);
}

/* _optim_add_param(cap, param, grad, master_init or None) */
static PyObject *optim_add_param(PyObject *self, PyObject *args)
{
    (void)self;
    mxpy_object opt = { &mxpy_kind_optimizer, NULL };
    PyObject *p, *g, *mi;
    if (!PyArg_ParseTuple(args, "O&OOO", mxpy_object_conv, &opt, &p, &g, &mi))
        return NULL;
    mxp_array *mp = mxpy_wrap(p, "optimizer: parameter", true);
    mxp_array *mg = mp ? mxpy_wrap_ex(g, "optimizer: gradient", MXPY_KEEP_READ, NULL) : NULL;
    mxp_array *mm = mg && mi != Py_None ? mxpy_wrap(mi, "optimizer: master_init", false) : NULL;
    mxp_status st = MXP_OK;
    bool ok = mp && mg && (mi == Py_None || mm);
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        st = mxp_optimizer_add_param(opt.obj, mp, mg, mm);
        Py_END_ALLOW_THREADS
    }
    mxp_array_free(mp); /* the optimizer keeps its own references */
    mxp_array_free(mg);
    mxp_array_free(mm);
    return ok ? mxpy_none(st) : NULL;
}

/* _optim_step(cap, grad_scale or None) */
static PyObject *optim_step(PyObject *self, PyObject *args)
{
    (void)self;
    mxpy_object opt = { &mxpy_kind_optimizer, NULL };
    PyObject *scale;
    if (!PyArg_ParseTuple(args, "O&O", mxpy_object_conv, &opt, &scale))
        return NULL;
    double s = 1.0;
    if (scale != Py_None && (s = PyFloat_AsDouble(scale)) == -1.0 && PyErr_Occurred())
        return NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = scale == Py_None ? mxp_optimizer_step(opt.obj) : mxp_optimizer_step_scaled(opt.obj, s);
    Py_END_ALLOW_THREADS
    return mxpy_none(st);
}

static PyObject *optim_set_lr(PyObject *self, PyObject *args)
{
    (void)self;
    mxpy_object opt = { &mxpy_kind_optimizer, NULL };
    double lr;
    if (!PyArg_ParseTuple(args, "O&d", mxpy_object_conv, &opt, &lr))
        return NULL;
    return mxpy_none(mxp_optimizer_set_lr(opt.obj, lr));
}

/* _optim_info(cap) -> (lr, steps, param_count, last_grad_norm) */
static PyObject *optim_info(PyObject *self, PyObject *cap)
{
    (void)self;
    mxp_optimizer *opt = mxpy_capsule_get(cap, &mxpy_kind_optimizer);
    if (!opt)
        return NULL;
    return Py_BuildValue("(dLnd)", mxp_optimizer_lr(opt), (long long)mxp_optimizer_steps(opt),
                         (Py_ssize_t)mxp_optimizer_param_count(opt), mxp_optimizer_last_grad_norm(opt));
}

/* _optim_master(cap, i) -> a float32 copy of parameter i's master */
static PyObject *optim_master(PyObject *self, PyObject *args)
{
    (void)self;
    mxpy_object opt = { &mxpy_kind_optimizer, NULL };
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, "O&n", mxpy_object_conv, &opt, &i))
        return NULL;
    const mxp_array *m = i >= 0 ? mxp_optimizer_master(opt.obj, (size_t)i) : NULL;
    if (!m)
        return PyErr_Format(PyExc_IndexError, "master: parameter %zd is out of range (%zd parameters)", i,
                            (Py_ssize_t)mxp_optimizer_param_count(opt.obj));
    npy_intp shape[NPY_MAXDIMS];
    for (int d = 0; d < mxp_array_ndim(m); d++)
        shape[d] = (npy_intp)mxp_array_shape(m)[d];
    PyObject *out = PyArray_SimpleNew(mxp_array_ndim(m), shape, NPY_FLOAT32);
    mxp_array *mo = out ? mxpy_wrap(out, "master", true) : NULL;
    if (!mo) {
        Py_XDECREF(out);
        return NULL;
    }
    mxp_status st = mxp_array_copyto(mo, m, MXP_CASTING_SAME_KIND, NULL);
    mxp_array_free(mo);
    if (st != MXP_OK) {
        Py_DECREF(out);
        return mxpy_raise(st);
    }
    return out;
}

/* _clip_grad_norm(grads list, max_norm) -> the norm before clipping */
static PyObject *clip_grad_norm(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *seq;
    double max_norm, norm = 0.0;
    mxpy_views l;
    if (!PyArg_ParseTuple(args, "Od", &seq, &max_norm) ||
        mxpy_views_wrap(seq, "clip_grad_norm: gradient", MXPY_WRITE, &l) < 0)
        return NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_clip_grad_norm(l.v, (size_t)l.n, max_norm, &norm);
    Py_END_ALLOW_THREADS
    if (mxpy_views_end(&l, st == MXP_OK) < 0)
        return NULL;
    return st == MXP_OK ? PyFloat_FromDouble(norm) : mxpy_raise(st);
}

PyMethodDef mxpy_optim_methods[] = {
    { "_optim_new", (PyCFunction)(void (*)(void))optim_new, METH_VARARGS | METH_KEYWORDS, NULL },
    { "_optim_add_param", optim_add_param, METH_VARARGS, NULL },
    { "_optim_step", optim_step, METH_VARARGS, NULL },
    { "_optim_set_lr", optim_set_lr, METH_VARARGS, NULL },
    { "_optim_info", optim_info, METH_O, NULL },
    { "_optim_master", optim_master, METH_VARARGS, NULL },
    { "_clip_grad_norm", clip_grad_norm, METH_VARARGS, NULL },
    { NULL, NULL, 0, NULL },
};

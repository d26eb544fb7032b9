/* Module functions: the dynamic loss scaler (mxp/train.h), in a PyCapsule
 * (mxpy_kind_loss_scaler) that mxp/_train.py wraps in a class. */
#include <string.h>

#include "mxpy.h"

/* _scaler_new(init, growth, backoff, interval, min, max, fixed) -> capsule */
static PyObject *scaler_new(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kw[] = { "init_scale", "growth_factor", "backoff_factor", "growth_interval", "min_scale",
                          "max_scale", "fixed", NULL };
    mxp_loss_scaler_opts o;
    memset(&o, 0, sizeof o);
    long long interval;
    int fixed;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "dddLddp", kw, &o.init_scale, &o.growth_factor, &o.backoff_factor,
                                     &interval, &o.min_scale, &o.max_scale, &fixed))
        return NULL;
    o.growth_interval = interval;
    o.fixed = fixed;
    mxp_loss_scaler *s = NULL;
    mxp_status st = mxp_loss_scaler_create(&s, &o);
    return mxpy_capsule_new(st, s, &mxpy_kind_loss_scaler);
}

/* _scaler_state(cap) -> (scale, growth_tracker, steps, skipped, found_inf) */
static PyObject *scaler_state(PyObject *self, PyObject *cap)
{
    (void)self;
    mxp_loss_scaler *s = mxpy_capsule_get(cap, &mxpy_kind_loss_scaler);
    if (!s)
        return NULL;
    mxp_loss_scaler_state state;
    mxp_status st = mxp_loss_scaler_get_state(s, &state);
    if (st != MXP_OK)
        return mxpy_raise(st);
    return Py_BuildValue("(dLLLO)", state.scale, (long long)state.growth_tracker, (long long)state.steps,
                         (long long)state.skipped, mxp_loss_scaler_found_inf(s) ? Py_True : Py_False);
}

/* _scaler_set_state(cap, scale, growth_tracker, steps, skipped) */
static PyObject *scaler_set_state(PyObject *self, PyObject *args)
{
    (void)self;
    mxpy_object s = { &mxpy_kind_loss_scaler, NULL };
    mxp_loss_scaler_state state;
    long long tracker, steps, skipped;
    if (!PyArg_ParseTuple(args, "O&dLLL", mxpy_object_conv, &s, &state.scale, &tracker, &steps, &skipped))
        return NULL;
    state.growth_tracker = tracker;
    state.steps = steps;
    state.skipped = skipped;
    return mxpy_none(mxp_loss_scaler_set_state(s.obj, &state));
}

/* _scaler_unscale(cap, grads list, write): unscale in place (write) or only
 * check; -> found_inf (since the last update) */
static PyObject *scaler_unscale(PyObject *self, PyObject *args)
{
    (void)self;
    mxpy_object s = { &mxpy_kind_loss_scaler, NULL };
    PyObject *seq;
    int write;
    mxpy_views l;
    if (!PyArg_ParseTuple(args, "O&Op", mxpy_object_conv, &s, &seq, &write) ||
        mxpy_views_wrap(seq, write ? "unscale_: gradient" : "check: array", write ? MXPY_WRITE : MXPY_READ, &l) < 0)
        return NULL;
    mxp_status st = MXP_OK;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < l.n && st == MXP_OK; i++)
        st = write ? mxp_loss_scaler_unscale(s.obj, l.v[i]) : mxp_loss_scaler_check(s.obj, l.v[i]);
    Py_END_ALLOW_THREADS
    /* unscale_ stops at the first failure: the arrays unscaled before it are copied back too */
    if (mxpy_views_end(&l, true) < 0)
        return NULL;
    if (st != MXP_OK)
        return mxpy_raise(st);
    return PyBool_FromLong(mxp_loss_scaler_found_inf(s.obj));
}

/* _scaler_step(cap, optimizer capsule) -> stepped */
static PyObject *scaler_step(PyObject *self, PyObject *args)
{
    (void)self;
    mxpy_object s = { &mxpy_kind_loss_scaler, NULL }, opt = { &mxpy_kind_optimizer, NULL };
    if (!PyArg_ParseTuple(args, "O&O&", mxpy_object_conv, &s, mxpy_object_conv, &opt))
        return NULL;
    bool stepped = false;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_loss_scaler_step(s.obj, opt.obj, &stepped);
    Py_END_ALLOW_THREADS
    if (st != MXP_OK)
        return mxpy_raise(st);
    return PyBool_FromLong(stepped);
}

static PyObject *scaler_update(PyObject *self, PyObject *cap)
{
    (void)self;
    mxp_loss_scaler *s = mxpy_capsule_get(cap, &mxpy_kind_loss_scaler);
    return s ? mxpy_none(mxp_loss_scaler_update(s)) : NULL;
}

PyMethodDef mxpy_scaler_methods[] = {
    { "_scaler_new", (PyCFunction)(void (*)(void))scaler_new, METH_VARARGS | METH_KEYWORDS, NULL },
    { "_scaler_state", scaler_state, METH_O, NULL },
    { "_scaler_set_state", scaler_set_state, METH_VARARGS, NULL },
    { "_scaler_unscale", scaler_unscale, METH_VARARGS, NULL },
    { "_scaler_step", scaler_step, METH_VARARGS, NULL },
    { "_scaler_update", scaler_update, METH_O, NULL },
    { NULL, NULL, 0, NULL },
};

/* Module functions: the stability monitor (mxp/train.h), in a PyCapsule
 * (mxpy_kind_monitor) that mxp/_train.py wraps in a class. */
#include <string.h>

#include "mxpy.h"

/* _monitor_new(target, overflow_share, underflow_share, exploding_norm, exploding_ratio,
 *              vanishing_norm, headroom, max_history) -> capsule */
static PyObject *monitor_new(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kw[] = { "target", "overflow_share", "underflow_share", "exploding_norm", "exploding_ratio",
                          "vanishing_norm", "headroom", "max_history", NULL };
    PyObject *target;
    mxp_monitor_opts o;
    memset(&o, 0, sizeof o);
    long long hist;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OddddddL", kw, &target, &o.overflow_share, &o.underflow_share,
                                     &o.exploding_norm, &o.exploding_ratio, &o.vanishing_norm, &o.headroom, &hist))
        return NULL;
    o.max_history = hist;
    if ((o.target = mxpy_dtype_arg(target, "Monitor: target")) == MXP_DTYPE_INVALID)
        return NULL;
    mxp_monitor *m = NULL;
    mxp_status st = mxp_monitor_create(&m, &o);
    return mxpy_capsule_new(st, m, &mxpy_kind_monitor);
}

/* A new list of n items, item(ctx, i) each (a new reference, or NULL with
 * an exception set). */
static PyObject *list_of(size_t n, PyObject *(*item)(const void *ctx, size_t i), const void *ctx)
{
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; l && i < n; i++) {
        PyObject *x = item(ctx, i);
        if (!x) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, (Py_ssize_t)i, x);
    }
    return l;
}

static PyObject *flag_list(unsigned flags)
{
    PyObject *l = PyList_New(0);
    for (unsigned f = 1; l && f <= MXP_MONITOR_VANISHING; f <<= 1) {
        if (!(flags & f))
            continue;
        PyObject *s = PyUnicode_FromString(mxp_monitor_flag_name(f));
        if (!s || PyList_Append(l, s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(l);
            return NULL;
        }
        Py_DECREF(s);
    }
    return l;
}

static PyObject *stats_dict(const mxp_tensor_stats *r)
{
    PyObject *flags = flag_list(r->flags);
    if (!flags)
        return NULL;
    return Py_BuildValue("{s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:d,s:d,s:d,s:d,s:d,s:d,s:N}", "step", (long long)r->step,
                         "count", (long long)r->count, "nan", (long long)r->nan, "inf", (long long)r->inf, "zeros",
                         (long long)r->zeros, "overflow", (long long)r->overflow, "underflow",
                         (long long)r->underflow, "subnormal", (long long)r->subnormal, "norm", r->norm, "max_abs",
                         r->max_abs, "min_abs", r->min_abs, "overflow_share", r->overflow_share, "underflow_share",
                         r->underflow_share, "underflow_norm_share", r->underflow_norm_share, "flags", flags);
}

static int role_arg(const char *name, mxp_tensor_role *role)
{
    for (int r = 0; r < MXP_ROLE_COUNT; r++)
        if (!strcmp(name, mxp_tensor_role_name((mxp_tensor_role)r))) {
            *role = (mxp_tensor_role)r;
            return 0;
        }
    mxpy_not_one_of("role", name, "TENSOR_ROLES");
    return -1;
}

/* _monitor_record(cap, step, name, role, x) -> stats dict */
static PyObject *monitor_record(PyObject *self, PyObject *args)
{
    (void)self;
    mxpy_object m = { &mxpy_kind_monitor, NULL };
    PyObject *x;
    long long step;
    const char *name, *rname;
    mxp_tensor_role role;
    if (!PyArg_ParseTuple(args, "O&LssO", mxpy_object_conv, &m, &step, &name, &rname, &x) ||
        role_arg(rname, &role) < 0)
        return NULL;
    mxp_array *mx = mxpy_wrap(x, "record: x", false);
    if (!mx)
        return NULL;
    mxp_tensor_stats stats = { 0 };
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_monitor_record(m.obj, step, name, role, mx, &stats);
    Py_END_ALLOW_THREADS
    mxp_array_free(mx);
    return st == MXP_OK ? stats_dict(&stats) : mxpy_raise(st);
}

static PyObject *history_item(const void *recs, size_t i)
{
    return stats_dict((const mxp_tensor_stats *)recs + i);
}

/* _monitor_history(cap, name) -> [stats dict] */
static PyObject *monitor_history(PyObject *self, PyObject *args)
{
    (void)self;
    mxpy_object m = { &mxpy_kind_monitor, NULL };
    const char *name;
    if (!PyArg_ParseTuple(args, "O&s", mxpy_object_conv, &m, &name))
        return NULL;
    const mxp_tensor_stats *recs = NULL;
    size_t n = 0;
    mxp_status st = mxp_monitor_history(m.obj, name, &recs, &n);
    return st == MXP_OK ? list_of(n, history_item, recs) : mxpy_raise(st);
}

static PyObject *tensor_item(const void *m, size_t i)
{
    return Py_BuildValue("(ss)", mxp_monitor_tensor_name(m, i), mxp_tensor_role_name(mxp_monitor_tensor_role(m, i)));
}

/* _monitor_info(cap) -> ([(name, role)], target dtype name, [flag names]) */
static PyObject *monitor_info(PyObject *self, PyObject *cap)
{
    (void)self;
    mxp_monitor *m = mxpy_capsule_get(cap, &mxpy_kind_monitor);
    if (!m)
        return NULL;
    PyObject *l = list_of(mxp_monitor_tensor_count(m), tensor_item, m);
    PyObject *flags = l ? flag_list(mxp_monitor_flags(m)) : NULL;
    if (!flags) {
        Py_XDECREF(l);
        return NULL;
    }
    return Py_BuildValue("(NsN)", l, mxp_dtype_name(mxp_monitor_target(m)), flags);
}

/* _monitor_suggest(cap, name) -> (dtype name, reason) */
static PyObject *monitor_suggest(PyObject *self, PyObject *args)
{
    (void)self;
    mxpy_object m = { &mxpy_kind_monitor, NULL };
    const char *name;
    if (!PyArg_ParseTuple(args, "O&s", mxpy_object_conv, &m, &name))
        return NULL;
    mxp_dtype dt = MXP_DTYPE_INVALID;
    char reason[512] = "";
    mxp_status st = mxp_monitor_suggest(m.obj, name, &dt, reason, sizeof reason);
    if (st != MXP_OK)
        return mxpy_raise(st);
    return Py_BuildValue("(ss)", mxp_dtype_name(dt), reason);
}

/* _monitor_report(cap, json) -> str */
static PyObject *monitor_report(PyObject *self, PyObject *args)
{
    (void)self;
    mxpy_object m = { &mxpy_kind_monitor, NULL };
    int json;
    if (!PyArg_ParseTuple(args, "O&p", mxpy_object_conv, &m, &json))
        return NULL;
    char *text = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_monitor_report(m.obj, json, &text);
    Py_END_ALLOW_THREADS
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyObject *r = PyUnicode_FromString(text);
    mxp_free(text);
    return r;
}

PyMethodDef mxpy_monitor_methods[] = {
    { "_monitor_new", (PyCFunction)(void (*)(void))monitor_new, METH_VARARGS | METH_KEYWORDS, NULL },
    { "_monitor_record", monitor_record, METH_VARARGS, NULL },
    { "_monitor_history", monitor_history, METH_VARARGS, NULL },
    { "_monitor_info", monitor_info, METH_O, NULL },
    { "_monitor_suggest", monitor_suggest, METH_VARARGS, NULL },
    { "_monitor_report", monitor_report, METH_VARARGS, NULL },
    { NULL, NULL, 0, NULL },
};

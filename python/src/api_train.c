/* Module functions: the training layer (mxp/train.h) — optimizers with
 * master weights, gradient clipping, the loss scaler, the autocast table
 * and the stability monitor.  Each object lives in a PyCapsule whose
 * destructor frees it; mxp/_train.py wraps the capsules in classes.
 *
 * Arrays handed to C are mxpy_wrap views: each holds a reference to its
 * NumPy array until the view is freed, so an optimizer (which keeps the
 * views of its parameters and gradients) keeps their arrays alive. */
#include <string.h>

#include "mxpy.h"

#define OPTIM "mxp.optimizer"
#define SCALER "mxp.loss_scaler"
#define AUTOCAST "mxp.autocast"
#define MONITOR "mxp.monitor"

static void optim_destructor(PyObject *cap) { mxp_optimizer_free(PyCapsule_GetPointer(cap, OPTIM)); }
static void scaler_destructor(PyObject *cap) { mxp_loss_scaler_free(PyCapsule_GetPointer(cap, SCALER)); }
static void autocast_destructor(PyObject *cap) { mxp_autocast_free(PyCapsule_GetPointer(cap, AUTOCAST)); }
static void monitor_destructor(PyObject *cap) { mxp_monitor_free(PyCapsule_GetPointer(cap, MONITOR)); }

/* ---- optimizers --------------------------------------------------------------- */

/* _optim_new(kind, lr, momentum, dampening, nesterov, weight_decay, beta1, beta2, eps,
 *            max_grad_norm, master, rounding, seed) -> capsule */
static PyObject *optim_new(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kw[] = { "kind", "lr", "momentum", "dampening", "nesterov", "weight_decay", "beta1", "beta2", "eps",
                          "max_grad_norm", "master", "rounding", "seed", NULL };
    int kind, nesterov, master;
    double lr, momentum, dampening, wd, b1, b2, eps, maxnorm;
    const char *rounding;
    unsigned long long seed;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "idddpdddddpsK", kw, &kind, &lr, &momentum, &dampening, &nesterov,
                                     &wd, &b1, &b2, &eps, &maxnorm, &master, &rounding, &seed))
        return NULL;
    mxp_optimizer_opts o;
    memset(&o, 0, sizeof o);
    o.lr = lr;
    o.momentum = momentum;
    o.dampening = dampening;
    o.nesterov = nesterov;
    o.weight_decay = wd;
    o.beta1 = b1;
    o.beta2 = b2;
    o.eps = eps;
    o.max_grad_norm = maxnorm;
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
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyObject *cap = PyCapsule_New(opt, OPTIM, optim_destructor);
    if (!cap)
        mxp_optimizer_free(opt);
    return cap;
}

static mxp_optimizer *optim_of(PyObject *cap) { return PyCapsule_GetPointer(cap, OPTIM); }

/* _optim_add_param(cap, param, grad, master_init or None) */
static PyObject *optim_add_param(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap, *p, *g, *mi;
    if (!PyArg_ParseTuple(args, "OOOO", &cap, &p, &g, &mi))
        return NULL;
    mxp_optimizer *opt = optim_of(cap);
    if (!opt)
        return NULL;
    mxp_array *mp = mxpy_wrap(p, "optimizer: parameter", true);
    mxp_array *mg = mp ? mxpy_wrap_ex(g, "optimizer: gradient", MXPY_KEEP_READ, NULL) : NULL;
    mxp_array *mm = mg && mi != Py_None ? mxpy_wrap(mi, "optimizer: master_init", false) : NULL;
    mxp_status st = MXP_OK;
    if (mp && mg && (mi == Py_None || mm)) {
        Py_BEGIN_ALLOW_THREADS
        st = mxp_optimizer_add_param(opt, mp, mg, mm);
        Py_END_ALLOW_THREADS
    }
    bool ok = mp && mg && (mi == Py_None || mm);
    mxp_array_free(mp); /* the optimizer keeps its own references */
    mxp_array_free(mg);
    mxp_array_free(mm);
    if (!ok)
        return NULL;
    if (st != MXP_OK)
        return mxpy_raise(st);
    Py_RETURN_NONE;
}

/* _optim_step(cap, grad_scale or None) */
static PyObject *optim_step(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap, *scale;
    if (!PyArg_ParseTuple(args, "OO", &cap, &scale))
        return NULL;
    mxp_optimizer *opt = optim_of(cap);
    if (!opt)
        return NULL;
    double s = 1.0;
    if (scale != Py_None && (s = PyFloat_AsDouble(scale)) == -1.0 && PyErr_Occurred())
        return NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = scale == Py_None ? mxp_optimizer_step(opt) : mxp_optimizer_step_scaled(opt, s);
    Py_END_ALLOW_THREADS
    if (st != MXP_OK)
        return mxpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *optim_set_lr(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap;
    double lr;
    if (!PyArg_ParseTuple(args, "Od", &cap, &lr))
        return NULL;
    mxp_optimizer *opt = optim_of(cap);
    if (!opt)
        return NULL;
    mxp_status st = mxp_optimizer_set_lr(opt, lr);
    if (st != MXP_OK)
        return mxpy_raise(st);
    Py_RETURN_NONE;
}

/* _optim_info(cap) -> (lr, steps, param_count, last_grad_norm) */
static PyObject *optim_info(PyObject *self, PyObject *cap)
{
    (void)self;
    mxp_optimizer *opt = optim_of(cap);
    if (!opt)
        return NULL;
    return Py_BuildValue("(dLnd)", mxp_optimizer_lr(opt), (long long)mxp_optimizer_steps(opt),
                         (Py_ssize_t)mxp_optimizer_param_count(opt), mxp_optimizer_last_grad_norm(opt));
}

/* _optim_master(cap, i) -> a float32 copy of parameter i's master */
static PyObject *optim_master(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap;
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, "On", &cap, &i))
        return NULL;
    mxp_optimizer *opt = optim_of(cap);
    if (!opt)
        return NULL;
    const mxp_array *m = i >= 0 ? mxp_optimizer_master(opt, (size_t)i) : NULL;
    if (!m)
        return PyErr_Format(PyExc_IndexError, "master: parameter %zd is out of range (%zd parameters)", i,
                            (Py_ssize_t)mxp_optimizer_param_count(opt));
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

/* Views of a sequence of arrays, read (MXPY_READ) or updated in place
 * during the call (MXPY_WRITE): n of them in l->v, which the caller ends
 * with end_views; -1 with an exception set. */
typedef struct view_list {
    PyObject *fast;  /* the sequence's items */
    mxp_array **v;
    PyObject **tmp;  /* MXPY_WRITE: the aligned copies of unaligned arrays (or NULL) */
    Py_ssize_t n;
} view_list;

static void free_views(view_list *l, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        mxp_array_free(l->v[i]);
        Py_XDECREF(l->tmp[i]);
    }
    PyMem_Free(l->v);
    PyMem_Free(l->tmp);
    Py_DECREF(l->fast);
}

static int wrap_list(PyObject *seq, const char *what, mxpy_use use, view_list *l)
{
    if (!(l->fast = PySequence_Fast(seq, "expected a list of arrays")))
        return -1;
    l->n = PySequence_Fast_GET_SIZE(l->fast);
    l->v = PyMem_Calloc((size_t)(l->n ? l->n : 1), sizeof *l->v);
    l->tmp = PyMem_Calloc((size_t)(l->n ? l->n : 1), sizeof *l->tmp);
    if (!l->v || !l->tmp) {
        PyMem_Free(l->v);
        PyMem_Free(l->tmp);
        Py_DECREF(l->fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < l->n; i++)
        if (!(l->v[i] = mxpy_wrap_ex(PySequence_Fast_GET_ITEM(l->fast, i), what, use, &l->tmp[i]))) {
            free_views(l, i);
            return -1;
        }
    return 0;
}

/* Frees the views; ok: copies the aligned copies back into their arrays
 * first.  0, or -1 with an exception set. */
static int end_views(view_list *l, bool ok)
{
    int rc = 0;
    for (Py_ssize_t i = 0; i < l->n; i++) {
        mxp_array_free(l->v[i]);
        l->v[i] = NULL;
        PyObject *tmp = l->tmp[i];
        l->tmp[i] = NULL;
        if (ok && rc == 0)
            rc = mxpy_copy_back(PySequence_Fast_GET_ITEM(l->fast, i), tmp); /* releases tmp */
        else
            Py_XDECREF(tmp);
    }
    free_views(l, l->n);
    return rc;
}

/* _clip_grad_norm(grads list, max_norm) -> the norm before clipping */
static PyObject *clip_grad_norm(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *seq;
    double max_norm, norm = 0.0;
    view_list l;
    if (!PyArg_ParseTuple(args, "Od", &seq, &max_norm) || wrap_list(seq, "clip_grad_norm: gradient", MXPY_WRITE, &l) < 0)
        return NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_clip_grad_norm(l.v, (size_t)l.n, max_norm, &norm);
    Py_END_ALLOW_THREADS
    if (end_views(&l, st == MXP_OK) < 0)
        return NULL;
    return st == MXP_OK ? PyFloat_FromDouble(norm) : mxpy_raise(st);
}

/* ---- loss scaler ---------------------------------------------------------------- */

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
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyObject *cap = PyCapsule_New(s, SCALER, scaler_destructor);
    if (!cap)
        mxp_loss_scaler_free(s);
    return cap;
}

static mxp_loss_scaler *scaler_of(PyObject *cap) { return PyCapsule_GetPointer(cap, SCALER); }

/* _scaler_state(cap) -> (scale, growth_tracker, steps, skipped, found_inf) */
static PyObject *scaler_state(PyObject *self, PyObject *cap)
{
    (void)self;
    mxp_loss_scaler *s = scaler_of(cap);
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
    PyObject *cap;
    mxp_loss_scaler_state state;
    long long tracker, steps, skipped;
    if (!PyArg_ParseTuple(args, "OdLLL", &cap, &state.scale, &tracker, &steps, &skipped))
        return NULL;
    mxp_loss_scaler *s = scaler_of(cap);
    if (!s)
        return NULL;
    state.growth_tracker = tracker;
    state.steps = steps;
    state.skipped = skipped;
    mxp_status st = mxp_loss_scaler_set_state(s, &state);
    if (st != MXP_OK)
        return mxpy_raise(st);
    Py_RETURN_NONE;
}

/* _scaler_unscale(cap, grads list, write): unscale in place (write) or only
 * check; -> found_inf (since the last update) */
static PyObject *scaler_unscale(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap, *seq;
    int write;
    view_list l;
    if (!PyArg_ParseTuple(args, "OOp", &cap, &seq, &write))
        return NULL;
    mxp_loss_scaler *s = scaler_of(cap);
    if (!s || wrap_list(seq, write ? "unscale_: gradient" : "check: array", write ? MXPY_WRITE : MXPY_READ, &l) < 0)
        return NULL;
    mxp_status st = MXP_OK;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < l.n && st == MXP_OK; i++)
        st = write ? mxp_loss_scaler_unscale(s, l.v[i]) : mxp_loss_scaler_check(s, l.v[i]);
    Py_END_ALLOW_THREADS
    /* unscale_ stops at the first failure: the arrays unscaled before it are copied back too */
    if (end_views(&l, true) < 0)
        return NULL;
    if (st != MXP_OK)
        return mxpy_raise(st);
    return PyBool_FromLong(mxp_loss_scaler_found_inf(s));
}

/* _scaler_step(cap, optimizer capsule) -> stepped */
static PyObject *scaler_step(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap, *ocap;
    if (!PyArg_ParseTuple(args, "OO", &cap, &ocap))
        return NULL;
    mxp_loss_scaler *s = scaler_of(cap);
    mxp_optimizer *opt = s ? optim_of(ocap) : NULL;
    if (!opt)
        return NULL;
    bool stepped = false;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_loss_scaler_step(s, opt, &stepped);
    Py_END_ALLOW_THREADS
    if (st != MXP_OK)
        return mxpy_raise(st);
    return PyBool_FromLong(stepped);
}

static PyObject *scaler_update(PyObject *self, PyObject *cap)
{
    (void)self;
    mxp_loss_scaler *s = scaler_of(cap);
    if (!s)
        return NULL;
    mxp_status st = mxp_loss_scaler_update(s);
    if (st != MXP_OK)
        return mxpy_raise(st);
    Py_RETURN_NONE;
}

/* ---- autocast ---------------------------------------------------------------------- */

static PyObject *autocast_new(PyObject *self, PyObject *args)
{
    (void)self;
    const char *policy;
    if (!PyArg_ParseTuple(args, "s", &policy))
        return NULL;
    mxp_autocast *ac = NULL;
    mxp_status st = mxp_autocast_create(&ac, policy);
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyObject *cap = PyCapsule_New(ac, AUTOCAST, autocast_destructor);
    if (!cap)
        mxp_autocast_free(ac);
    return cap;
}

static mxp_autocast *autocast_of(PyObject *cap) { return PyCapsule_GetPointer(cap, AUTOCAST); }

/* _autocast_table(cap) -> (policy name, {op name: numpy dtype}) */
static PyObject *autocast_table(PyObject *self, PyObject *cap)
{
    (void)self;
    mxp_autocast *ac = autocast_of(cap);
    PyObject *d = ac ? PyDict_New() : NULL;
    if (!d)
        return NULL;
    for (int op = 0; op < MXP_AUTOCAST_OP_COUNT; op++) {
        PyArray_Descr *dt = PyArray_DescrFromType(mxpy_typenum_from_dtype(mxp_autocast_dtype(ac, (mxp_autocast_op)op)));
        int rc = dt ? PyDict_SetItemString(d, mxp_autocast_op_name((mxp_autocast_op)op), (PyObject *)dt) : -1;
        Py_XDECREF(dt);
        if (rc < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return Py_BuildValue("(sN)", mxp_autocast_policy_name(ac), d);
}

static int autocast_op_arg(const char *name, mxp_autocast_op *op)
{
    *op = mxp_autocast_op_from_name(name);
    if (*op != MXP_AUTOCAST_OP_COUNT)
        return 0;
    mxpy_not_one_of("autocast op", name, "AUTOCAST_OPS");
    return -1;
}

/* _autocast_set(cap, op, dtype) */
static PyObject *autocast_set(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap, *dtype;
    const char *name;
    mxp_autocast_op op;
    if (!PyArg_ParseTuple(args, "OsO", &cap, &name, &dtype) || autocast_op_arg(name, &op) < 0)
        return NULL;
    mxp_autocast *ac = autocast_of(cap);
    mxp_dtype dt = ac ? mxpy_dtype_arg(dtype, "autocast: dtype") : MXP_DTYPE_INVALID;
    if (dt == MXP_DTYPE_INVALID)
        return NULL;
    mxp_status st = mxp_autocast_set(ac, op, dt);
    if (st != MXP_OK)
        return mxpy_raise(st);
    Py_RETURN_NONE;
}

/* _autocast_cast(cap, op, x) -> x in op's dtype (x itself when it has it) */
static PyObject *autocast_cast(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap, *x;
    const char *name;
    mxp_autocast_op op;
    if (!PyArg_ParseTuple(args, "OsO", &cap, &name, &x) || autocast_op_arg(name, &op) < 0)
        return NULL;
    mxp_autocast *ac = autocast_of(cap);
    if (!ac)
        return NULL;
    if (PyArray_Check(x) &&
        mxpy_dtype_from_typenum(PyArray_TYPE((PyArrayObject *)x)) == mxp_autocast_dtype(ac, op)) {
        Py_INCREF(x);
        return x;
    }
    mxp_array *mx = mxpy_wrap(x, "autocast: x", false), *out = NULL;
    if (!mx)
        return NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_autocast_cast(&out, ac, op, mx);
    Py_END_ALLOW_THREADS
    mxp_array_free(mx);
    return st == MXP_OK ? mxpy_unwrap(out) : mxpy_raise(st);
}

/* ---- monitor ------------------------------------------------------------------------ */

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
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyObject *cap = PyCapsule_New(m, MONITOR, monitor_destructor);
    if (!cap)
        mxp_monitor_free(m);
    return cap;
}

static mxp_monitor *monitor_of(PyObject *cap) { return PyCapsule_GetPointer(cap, MONITOR); }

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
    PyObject *cap, *x;
    long long step;
    const char *name, *rname;
    mxp_tensor_role role;
    if (!PyArg_ParseTuple(args, "OLssO", &cap, &step, &name, &rname, &x) || role_arg(rname, &role) < 0)
        return NULL;
    mxp_monitor *m = monitor_of(cap);
    mxp_array *mx = m ? mxpy_wrap(x, "record: x", false) : NULL;
    if (!mx)
        return NULL;
    mxp_tensor_stats stats = { 0 };
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_monitor_record(m, step, name, role, mx, &stats);
    Py_END_ALLOW_THREADS
    mxp_array_free(mx);
    return st == MXP_OK ? stats_dict(&stats) : mxpy_raise(st);
}

/* _monitor_history(cap, name) -> [stats dict] */
static PyObject *monitor_history(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap;
    const char *name;
    if (!PyArg_ParseTuple(args, "Os", &cap, &name))
        return NULL;
    mxp_monitor *m = monitor_of(cap);
    if (!m)
        return NULL;
    const mxp_tensor_stats *recs = NULL;
    size_t n = 0;
    mxp_status st = mxp_monitor_history(m, name, &recs, &n);
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; l && i < n; i++) {
        PyObject *d = stats_dict(&recs[i]);
        if (!d) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, (Py_ssize_t)i, d);
    }
    return l;
}

/* _monitor_info(cap) -> ([(name, role)], target dtype name, [flag names]) */
static PyObject *monitor_info(PyObject *self, PyObject *cap)
{
    (void)self;
    mxp_monitor *m = monitor_of(cap);
    if (!m)
        return NULL;
    size_t n = mxp_monitor_tensor_count(m);
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; l && i < n; i++) {
        PyObject *t = Py_BuildValue("(ss)", mxp_monitor_tensor_name(m, i),
                                    mxp_tensor_role_name(mxp_monitor_tensor_role(m, i)));
        if (!t) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, (Py_ssize_t)i, t);
    }
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
    PyObject *cap;
    const char *name;
    if (!PyArg_ParseTuple(args, "Os", &cap, &name))
        return NULL;
    mxp_monitor *m = monitor_of(cap);
    if (!m)
        return NULL;
    mxp_dtype dt = MXP_DTYPE_INVALID;
    char reason[512] = "";
    mxp_status st = mxp_monitor_suggest(m, name, &dt, reason, sizeof reason);
    if (st != MXP_OK)
        return mxpy_raise(st);
    return Py_BuildValue("(ss)", mxp_dtype_name(dt), reason);
}

/* _monitor_report(cap, json) -> str */
static PyObject *monitor_report(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap;
    int json;
    if (!PyArg_ParseTuple(args, "Op", &cap, &json))
        return NULL;
    mxp_monitor *m = monitor_of(cap);
    if (!m)
        return NULL;
    char *text = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_monitor_report(m, json, &text);
    Py_END_ALLOW_THREADS
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyObject *r = PyUnicode_FromString(text);
    mxp_free(text);
    return r;
}

PyMethodDef mxpy_train_methods[] = {
    { "_optim_new", (PyCFunction)(void (*)(void))optim_new, METH_VARARGS | METH_KEYWORDS, NULL },
    { "_optim_add_param", optim_add_param, METH_VARARGS, NULL },
    { "_optim_step", optim_step, METH_VARARGS, NULL },
    { "_optim_set_lr", optim_set_lr, METH_VARARGS, NULL },
    { "_optim_info", optim_info, METH_O, NULL },
    { "_optim_master", optim_master, METH_VARARGS, NULL },
    { "_clip_grad_norm", clip_grad_norm, METH_VARARGS, NULL },
    { "_scaler_new", (PyCFunction)(void (*)(void))scaler_new, METH_VARARGS | METH_KEYWORDS, NULL },
    { "_scaler_state", scaler_state, METH_O, NULL },
    { "_scaler_set_state", scaler_set_state, METH_VARARGS, NULL },
    { "_scaler_unscale", scaler_unscale, METH_VARARGS, NULL },
    { "_scaler_step", scaler_step, METH_VARARGS, NULL },
    { "_scaler_update", scaler_update, METH_O, NULL },
    { "_autocast_new", autocast_new, METH_VARARGS, NULL },
    { "_autocast_table", autocast_table, METH_O, NULL },
    { "_autocast_set", autocast_set, METH_VARARGS, NULL },
    { "_autocast_cast", autocast_cast, METH_VARARGS, NULL },
    { "_monitor_new", (PyCFunction)(void (*)(void))monitor_new, METH_VARARGS | METH_KEYWORDS, NULL },
    { "_monitor_record", monitor_record, METH_VARARGS, NULL },
    { "_monitor_history", monitor_history, METH_VARARGS, NULL },
    { "_monitor_info", monitor_info, METH_O, NULL },
    { "_monitor_suggest", monitor_suggest, METH_VARARGS, NULL },
    { "_monitor_report", monitor_report, METH_VARARGS, NULL },
    { NULL, NULL, 0, NULL },
};

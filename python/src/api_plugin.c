/* Module functions: operator plugins (mxp/plugin.h) — loading, listing,
 * calling on NumPy arrays with the GIL released, precision checks.
 * python/mxp/plugins.py makes the callables. */
#include "mxpy.h"

/* _ops_load(path) -> the number of operators the library declares */
static PyObject *ops_load(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&:_ops_load", PyUnicode_FSConverter, &path))
        return NULL;
    int n = 0;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_ops_load(PyBytes_AS_STRING(path), &n);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (st != MXP_OK)
        return mxpy_raise(st);
    return PyLong_FromLong(n);
}

static PyObject *info_dict(const mxp_op_info *info)
{
    PyObject *kernels = PyList_New(0);
    for (int k = 0; kernels && k < info->n_kernels; k++) {
        const char *sig;
        mxp_isa isa;
        if (mxp_op_kernel_at(info->name, k, &sig, NULL, NULL, &isa) != MXP_OK) {
            Py_DECREF(kernels);
            return mxpy_raise(MXP_ERR_INVALID_ARGUMENT);
        }
        PyObject *t = Py_BuildValue("(ss)", sig, mxp_isa_name(isa));
        if (!t || PyList_Append(kernels, t) < 0) {
            Py_XDECREF(t);
            Py_CLEAR(kernels);
            break;
        }
        Py_DECREF(t);
    }
    if (!kernels)
        return NULL;
    PyObject *library = PyUnicode_DecodeFSDefault(info->library);
    if (!library) {
        Py_DECREF(kernels);
        return NULL;
    }
    return Py_BuildValue("{s:s,s:s,s:N,s:s,s:i,s:O,s:s,s:N}", "name", info->name, "doc", info->doc, "library",
                         library, "kind", mxp_op_kind_name(info->kind), "n_inputs", info->n_inputs, "has_reference",
                         info->has_reference ? Py_True : Py_False, "check_shapes", info->check_shapes, "kernels",
                         kernels);
}

/* _op_list() -> [dict] of every loaded operator */
static PyObject *op_list(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    PyObject *list = PyList_New(0);
    const int n = mxp_op_count();
    for (int i = 0; list && i < n; i++) {
        mxp_op_info info = { 0 };
        if (mxp_op_info_at(i, &info) != MXP_OK) {
            Py_DECREF(list);
            return mxpy_raise(MXP_ERR_INVALID_ARGUMENT);
        }
        PyObject *d = info_dict(&info);
        if (!d || PyList_Append(list, d) < 0)
            Py_CLEAR(list);
        Py_XDECREF(d);
    }
    return list;
}

/* _op_call(name, inputs, out, dtype, axis, keepdims, signature): axis an
 * int, None (every axis) or the string "last" (the default). */
static PyObject *op_call(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name, *signature;
    PyObject *inputs, *out, *dtype, *axis;
    int keepdims;
    if (!PyArg_ParseTuple(args, "sOOOOpz:_op_call", &name, &inputs, &out, &dtype, &axis, &keepdims, &signature))
        return NULL;
    mxp_op_call_opts o = { .keepdims = keepdims, .signature = signature };
    if (axis == Py_None) {
        o.set_axis = 1, o.axis = MXP_OP_ALL_AXES;
    } else if (PyLong_Check(axis)) {
        o.set_axis = 1, o.axis = PyLong_AsLong(axis);
        if (o.axis == -1 && PyErr_Occurred())
            return NULL;
    }
    if (dtype != Py_None && (o.out_dtype = mxpy_dtype_arg(dtype, "dtype")) == MXP_DTYPE_INVALID)
        return NULL;
    mxpy_views in;
    if (mxpy_views_wrap(inputs, "input", MXPY_READ, &in) < 0)
        return NULL;
    PyObject *tmp = NULL;
    mxp_array *into = NULL, *r = NULL;
    if (out != Py_None && !(into = mxpy_wrap_ex(out, "out", MXPY_WRITE, &tmp))) {
        mxpy_views_end(&in, false);
        return NULL;
    }
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = into ? mxp_op_call_into(into, name, (const mxp_array *const *)in.v, (int)in.n, &o)
              : mxp_op_call(&r, name, (const mxp_array *const *)in.v, (int)in.n, &o);
    Py_END_ALLOW_THREADS
    mxp_array_free(into);
    mxpy_views_end(&in, true);
    if (st != MXP_OK) {
        Py_XDECREF(tmp);
        return mxpy_raise(st);
    }
    if (!into)
        return mxpy_unwrap(r);
    if (mxpy_copy_back(out, tmp) < 0)
        return NULL;
    Py_INCREF(out);
    return out;
}

static PyObject *report_dict(const mxp_op_check_report *r, int n_inputs)
{
    PyObject *hist = PyList_New(MXP_OP_CHECK_BINS), *worst = PyTuple_New(n_inputs);
    if (!hist || !worst) {
        Py_XDECREF(hist), Py_XDECREF(worst);
        return NULL;
    }
    for (int b = 0; b < MXP_OP_CHECK_BINS; b++)
        PyList_SET_ITEM(hist, b, PyLong_FromUnsignedLongLong(r->histogram[b]));
    for (int i = 0; i < n_inputs; i++)
        PyTuple_SET_ITEM(worst, i, PyFloat_FromDouble(r->worst_in[i]));
    return Py_BuildValue("{s:s,s:s,s:K,s:O,s:d,s:d,s:N,s:K,s:K,s:N,s:d,s:d,s:K,s:d,s:d}", "signature", r->signature,
                         "isa", mxp_isa_name(r->isa), "count", (unsigned long long)r->count, "exhaustive",
                         r->exhaustive ? Py_True : Py_False, "max_ulp", r->max_ulp, "mean_ulp", r->mean_ulp,
                         "histogram", hist, "nan_mismatch", (unsigned long long)r->nan_mismatch, "inf_mismatch",
                         (unsigned long long)r->inf_mismatch, "worst_input", worst, "worst_got", r->worst_got,
                         "worst_want", r->worst_want, "worst_index", (unsigned long long)r->worst_index,
                         "kernel_ns", r->kernel_ns, "reference_ns", r->reference_ns);
}

/* _op_check(name, signature, reference, samples, seed) -> [dict] */
static PyObject *op_check(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name, *signature, *reference;
    unsigned long long samples, seed;
    if (!PyArg_ParseTuple(args, "szzKK:_op_check", &name, &signature, &reference, &samples, &seed))
        return NULL;
    mxp_op_check_opts o = { .signature = signature, .reference = reference, .samples = samples, .seed = seed };
    mxp_op_check_report reports[64] = { 0 };
    mxp_op_info info = { 0 };
    int n = 0;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_op_info_by_name(name, &info);
    if (st == MXP_OK)
        st = mxp_op_check(name, &o, reports, 64, &n);
    Py_END_ALLOW_THREADS
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < n; i++) {
        PyObject *d = report_dict(&reports[i], info.kind == MXP_OP_ELEMENTWISE ? info.n_inputs : 0);
        if (!d || PyList_Append(list, d) < 0)
            Py_CLEAR(list);
        Py_XDECREF(d);
    }
    return list;
}

/* _op_check_compare(got, want) -> dict: the distances of got from want
 * (arrays of one dtype and size, C-contiguous). */
static PyObject *op_check_compare(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o[2];
    if (!PyArg_ParseTuple(args, "OO:_op_check_compare", &o[0], &o[1]))
        return NULL;
    mxp_array *a = mxpy_wrap(o[0], "got", false), *b = a ? mxpy_wrap(o[1], "want", false) : NULL;
    mxp_status st = MXP_OK;
    if (!a || !b) {
        mxp_array_free(a);
        return NULL;
    }
    if (mxp_array_dtype(a) != mxp_array_dtype(b) || mxp_array_size(a) != mxp_array_size(b) ||
        !(mxp_array_flags(a) & mxp_array_flags(b) & MXP_ARRAY_C_CONTIGUOUS)) {
        mxp_array_free(a), mxp_array_free(b);
        return PyErr_Format(PyExc_ValueError, "got and want must be C-contiguous arrays of one dtype and size");
    }
    mxp_op_check_report r = { 0 };
    Py_BEGIN_ALLOW_THREADS
    st = mxp_op_check_compare(mxp_array_data(a), mxp_array_data(b), mxp_array_dtype(a), (size_t)mxp_array_size(a), &r);
    Py_END_ALLOW_THREADS
    mxp_array_free(a), mxp_array_free(b);
    if (st != MXP_OK)
        return mxpy_raise(st);
    return report_dict(&r, 0);
}

PyMethodDef mxpy_plugin_methods[] = {
    { "_ops_load", ops_load, METH_VARARGS, "_ops_load(path) -> number of operators (mxp_ops_load)." },
    { "_op_list", op_list, METH_NOARGS, "_op_list() -> [dict] of the loaded operators." },
    { "_op_call", op_call, METH_VARARGS, "_op_call(name, inputs, out, dtype, axis, keepdims, signature)." },
    { "_op_check", op_check, METH_VARARGS, "_op_check(name, signature, reference, samples, seed) -> [dict]." },
    { "_op_check_compare", op_check_compare, METH_VARARGS, "_op_check_compare(got, want) -> dict (ulp distances)." },
    { NULL, NULL, 0, NULL },
};

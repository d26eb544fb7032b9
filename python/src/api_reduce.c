/* Module functions: reductions along any axes through mxp_reduce (a wide
 * accumulator, one rounding into the result), for what NumPy's own
 * reductions over a non-last axis cannot give the mxp dtypes: np.sum(x,
 * axis=0) adds row by row in the array's type (docs/python.md). */
#include <string.h>

#include "mxpy.h"

/* _reduce(x, op name, axes tuple or None, keepdims, ddof, acc dtype or None,
 * out dtype or None) -> ndarray (0-d for a full reduction) */
static PyObject *reduce(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kw[] = { "x", "op", "axes", "keepdims", "ddof", "acc", "dtype", NULL };
    PyObject *x, *axes_obj, *acc_obj, *out_obj;
    const char *name;
    int keepdims;
    long long ddof;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OsOpLOO:_reduce", kw, &x, &name, &axes_obj, &keepdims, &ddof,
                                     &acc_obj, &out_obj))
        return NULL;
    int op = 0;
    while (op < MXP_REDUCE_OP_COUNT && strcmp(mxp_reduce_op_name((mxp_reduce_op)op), name))
        op++;
    if (op == MXP_REDUCE_OP_COUNT)
        return PyErr_Format(PyExc_ValueError, "reduce: no reduction '%s'", name);
    mxp_reduce_opts o = { 0 };
    o.keepdims = keepdims;
    o.ddof = ddof;
    if (acc_obj != Py_None && (o.acc_dtype = mxpy_dtype_arg(acc_obj, "reduce: acc")) == MXP_DTYPE_INVALID)
        return NULL;
    if (out_obj != Py_None && (o.out_dtype = mxpy_dtype_arg(out_obj, "reduce: dtype")) == MXP_DTYPE_INVALID)
        return NULL;
    int axes[NPY_MAXDIMS], naxes = 0;
    if (axes_obj != Py_None) {
        if (!PyTuple_Check(axes_obj) || PyTuple_GET_SIZE(axes_obj) > NPY_MAXDIMS)
            return PyErr_Format(PyExc_TypeError, "reduce: axes must be a tuple of at most %d ints", NPY_MAXDIMS);
        naxes = (int)PyTuple_GET_SIZE(axes_obj);
        for (int i = 0; i < naxes; i++) {
            long v = PyLong_AsLong(PyTuple_GET_ITEM(axes_obj, i));
            if (v == -1 && PyErr_Occurred())
                return NULL;
            if (v < -NPY_MAXDIMS || v >= NPY_MAXDIMS)
                return PyErr_Format(mxpy_axis_error_type(), "reduce: axis %ld is out of range", v);
            axes[i] = (int)v;
        }
    }
    mxp_array *a = mxpy_wrap(x, "reduce: x", false);
    if (!a)
        return NULL;
    mxp_array *r = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_reduce(&r, (mxp_reduce_op)op, a, axes_obj == Py_None ? 0 : naxes, axes_obj == Py_None ? NULL : axes, &o);
    Py_END_ALLOW_THREADS
    mxp_array_free(a);
    if (st != MXP_OK)
        return mxpy_raise(st);
    return mxpy_unwrap(r);
}

PyMethodDef mxpy_reduce_methods[] = {
    { "_reduce", (PyCFunction)(void (*)(void))reduce, METH_VARARGS | METH_KEYWORDS,
      "_reduce(x, op, axes, keepdims, ddof, acc, dtype) -> ndarray (mxp_reduce)." },
    { NULL, NULL, 0, NULL },
};

/* Module functions: the autocast table (mxp/train.h), in a PyCapsule
 * (mxpy_kind_autocast) that mxp/_train.py wraps in a class. */
#include "mxpy.h"

static PyObject *autocast_new(PyObject *self, PyObject *args)
{
    (void)self;
    const char *policy;
    if (!PyArg_ParseTuple(args, "s", &policy))
        return NULL;
    mxp_autocast *ac = NULL;
    mxp_status st = mxp_autocast_create(&ac, policy);
    return mxpy_capsule_new(st, ac, &mxpy_kind_autocast);
}

/* _autocast_table(cap) -> (policy name, {op name: numpy dtype}) */
static PyObject *autocast_table(PyObject *self, PyObject *cap)
{
    (void)self;
    mxp_autocast *ac = mxpy_capsule_get(cap, &mxpy_kind_autocast);
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

/* The arguments (cap, op name, obj) of _autocast_set and _autocast_cast:
 * 0, or -1 with an exception set. */
static int table_op_args(PyObject *args, mxp_autocast **ac, mxp_autocast_op *op, PyObject **obj)
{
    mxpy_object table = { &mxpy_kind_autocast, NULL };
    const char *name;
    if (!PyArg_ParseTuple(args, "O&sO", mxpy_object_conv, &table, &name, obj))
        return -1;
    *ac = table.obj;
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
    mxp_autocast *ac;
    mxp_autocast_op op;
    PyObject *dtype;
    if (table_op_args(args, &ac, &op, &dtype) < 0)
        return NULL;
    mxp_dtype dt = mxpy_dtype_arg(dtype, "autocast: dtype");
    if (dt == MXP_DTYPE_INVALID)
        return NULL;
    return mxpy_none(mxp_autocast_set(ac, op, dt));
}

/* _autocast_cast(cap, op, x) -> x in op's dtype (x itself when it has it) */
static PyObject *autocast_cast(PyObject *self, PyObject *args)
{
    (void)self;
    mxp_autocast *ac;
    mxp_autocast_op op;
    PyObject *x;
    if (table_op_args(args, &ac, &op, &x) < 0)
        return NULL;
    if (PyArray_Check(x) && mxpy_dtype_from_typenum(PyArray_TYPE((PyArrayObject *)x)) == mxp_autocast_dtype(ac, op)) {
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

PyMethodDef mxpy_autocast_methods[] = {
    { "_autocast_new", autocast_new, METH_VARARGS, NULL },
    { "_autocast_table", autocast_table, METH_O, NULL },
    { "_autocast_set", autocast_set, METH_VARARGS, NULL },
    { "_autocast_cast", autocast_cast, METH_VARARGS, NULL },
    { NULL, NULL, 0, NULL },
};

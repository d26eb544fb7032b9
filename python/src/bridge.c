/* NumPy arrays <-> mxp_array, both ways without copying.
 *
 * mxpy_wrap: an mxp_array view of a NumPy array's memory, holding a
 * reference to the array until the view is freed.  mxpy_unwrap: a NumPy
 * array over an mxp_array's memory, which lives as long as the NumPy array
 * (a capsule base frees it). */
#include "mxpy.h"

static void release_array(void *ctx, void *data)
{
    (void)data;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF((PyObject *)ctx);
    PyGILState_Release(g);
}

mxp_array *mxpy_wrap(PyObject *obj, const char *what, bool writeable)
{
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a numpy.ndarray, got a %.200s", what, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    PyArray_Descr *d = PyArray_DESCR(a);
    mxp_dtype dt = mxpy_dtype_from_typenum(d->type_num);
    if (dt == MXP_DTYPE_INVALID || !PyArray_ISNBO(d->byteorder)) {
        PyErr_Format(PyExc_TypeError, "%s: mxp has no dtype %R (bool, ints, float16/32/64, bfloat16, float8)", what,
                     (PyObject *)d);
        return NULL;
    }
    if (writeable && !PyArray_ISWRITEABLE(a)) {
        PyErr_Format(PyExc_ValueError, "%s: the array is read-only", what);
        return NULL;
    }
    int64_t shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    for (int i = 0; i < PyArray_NDIM(a); i++) {
        shape[i] = PyArray_DIM(a, i);
        strides[i] = PyArray_STRIDE(a, i);
    }
    mxp_array *m = NULL;
    Py_INCREF(obj);
    mxp_status st = mxp_array_wrap(&m, PyArray_DATA(a), dt, PyArray_NDIM(a), shape, strides,
                                   PyArray_ISWRITEABLE(a), release_array, obj);
    if (st != MXP_OK) {
        Py_DECREF(obj);
        mxpy_raise(st);
        return NULL;
    }
    return m;
}

static void free_mxp_array(PyObject *capsule)
{
    mxp_array_free(PyCapsule_GetPointer(capsule, "mxp.array"));
}

PyObject *mxpy_unwrap(mxp_array *m)
{
    if (!m)
        return NULL;
    PyArray_Descr *d = PyArray_DescrFromType(mxpy_typenum_from_dtype(mxp_array_dtype(m)));
    if (!d) {
        mxp_array_free(m);
        return NULL;
    }
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    int nd = mxp_array_ndim(m);
    for (int i = 0; i < nd; i++) {
        shape[i] = (npy_intp)mxp_array_shape(m)[i];
        strides[i] = (npy_intp)mxp_array_strides(m)[i];
    }
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, d, nd, shape, strides, mxp_array_data(m),
                                         NPY_ARRAY_WRITEABLE, NULL);
    PyObject *base = arr ? PyCapsule_New(m, "mxp.array", free_mxp_array) : NULL;
    if (!base) {
        Py_XDECREF(arr);
        mxp_array_free(m);
        return NULL;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)arr, base) < 0) { /* steals base, which frees m */
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

mxp_dtype mxpy_dtype_arg(PyObject *obj, const char *what)
{
    if (PyUnicode_Check(obj)) {
        mxp_dtype dt = mxp_dtype_from_name(PyUnicode_AsUTF8(obj));
        if (dt != MXP_DTYPE_INVALID)
            return dt;
    }
    PyArray_Descr *d = NULL;
    if (!PyArray_DescrConverter2(obj, &d) || !d) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "%s: %R is not a dtype", what, obj);
        return MXP_DTYPE_INVALID;
    }
    mxp_dtype dt = mxpy_dtype_from_typenum(d->type_num);
    if (dt == MXP_DTYPE_INVALID || !PyArray_ISNBO(d->byteorder))
        PyErr_Format(PyExc_TypeError, "%s: mxp has no dtype %R", what, (PyObject *)d);
    Py_DECREF(d);
    return PyErr_Occurred() ? MXP_DTYPE_INVALID : dt;
}

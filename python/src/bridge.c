/* NumPy arrays <-> mxp_array, both ways without copying.
 *
 * mxpy_wrap: an mxp_array view of a NumPy array's memory, holding a
 * reference to the array until the view is freed (an unaligned array: a
 * view of an aligned copy, or a refusal; see mxpy_use).  mxpy_unwrap: a NumPy
 * array over an mxp_array's memory, which lives as long as the NumPy array
 * (a capsule base frees it).  mxpy_views_*: views of a sequence of arrays
 * for one call. */
#include "mxpy.h"

static void release_array(void *ctx, void *data)
{
    (void)data;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF((PyObject *)ctx);
    PyGILState_Release(g);
}

bool mxpy_is_aligned(PyArrayObject *a)
{
    npy_intp size = PyArray_ITEMSIZE(a);
    if (PyArray_SIZE(a) == 0 || size <= 1)
        return true;
    if (!PyArray_ISALIGNED(a) || (uintptr_t)PyArray_DATA(a) % (uintptr_t)size)
        return false;
    for (int i = 0; i < PyArray_NDIM(a); i++)
        if (PyArray_DIM(a, i) > 1 && PyArray_STRIDE(a, i) % size)
            return false;
    return true;
}

PyObject *mxpy_aligned(PyObject *obj)
{
    if (!PyArray_Check(obj) || mxpy_is_aligned((PyArrayObject *)obj)) {
        Py_INCREF(obj);
        return obj;
    }
    return PyArray_NewCopy((PyArrayObject *)obj, NPY_KEEPORDER);
}

int mxpy_copy_back(PyObject *obj, PyObject *tmp)
{
    if (!tmp)
        return 0;
    int rc = PyArray_CopyInto((PyArrayObject *)obj, (PyArrayObject *)tmp);
    Py_DECREF(tmp);
    return rc < 0 ? -1 : 0;
}

mxp_array *mxpy_wrap_ex(PyObject *obj, const char *what, mxpy_use use, PyObject **tmp)
{
    if (tmp)
        *tmp = NULL;
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
    bool writeable = use == MXPY_KEEP_WRITE || use == MXPY_WRITE;
    if (writeable && !PyArray_ISWRITEABLE(a)) {
        PyErr_Format(PyExc_ValueError, "%s: the array is read-only", what);
        return NULL;
    }
    bool view_writeable = PyArray_ISWRITEABLE(a);
    if (!mxpy_is_aligned(a)) {
        if (use == MXPY_KEEP_READ || use == MXPY_KEEP_WRITE || (use == MXPY_WRITE && !tmp)) {
            PyErr_Format(PyExc_ValueError,
                         "%s: the array is not aligned (its address or a stride is not a multiple of its item size, "
                         "%zd bytes), and it is kept and used in place; pass an aligned array "
                         "(np.require(x, requirements='A') copies only an unaligned one)",
                         what, (Py_ssize_t)PyArray_ITEMSIZE(a));
            return NULL;
        }
        /* read once, or written once: an aligned copy (use == MXPY_WRITE:
         * the caller copies it back with mxpy_copy_back) */
        PyObject *copy = PyArray_NewCopy(a, NPY_KEEPORDER);
        if (!copy)
            return NULL;
        if (use == MXPY_WRITE) {
            Py_INCREF(copy);
            *tmp = copy;
        }
        obj = copy; /* the reference the view holds (released with it) */
        a = (PyArrayObject *)copy;
    } else {
        Py_INCREF(obj);
    }
    int64_t shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    for (int i = 0; i < PyArray_NDIM(a); i++) {
        shape[i] = PyArray_DIM(a, i);
        strides[i] = PyArray_STRIDE(a, i);
    }
    mxp_array *m = NULL;
    mxp_status st = mxp_array_wrap(&m, PyArray_DATA(a), dt, PyArray_NDIM(a), shape, strides, view_writeable,
                                   release_array, obj);
    if (st != MXP_OK) {
        Py_DECREF(obj);
        if (tmp && *tmp) {
            Py_DECREF(*tmp);
            *tmp = NULL;
        }
        mxpy_raise(st);
        return NULL;
    }
    return m;
}

mxp_array *mxpy_wrap(PyObject *obj, const char *what, bool writeable)
{
    return mxpy_wrap_ex(obj, what, writeable ? MXPY_KEEP_WRITE : MXPY_READ, NULL);
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

/* ---- sequences of arrays for one call ---------------------------------- */

static void free_views(mxpy_views *l, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        mxp_array_free(l->v[i]);
        Py_XDECREF(l->tmp[i]);
    }
    PyMem_Free(l->v);
    PyMem_Free(l->tmp);
    Py_DECREF(l->fast);
}

int mxpy_views_wrap(PyObject *seq, const char *what, mxpy_use use, mxpy_views *l)
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

int mxpy_views_end(mxpy_views *l, bool ok)
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

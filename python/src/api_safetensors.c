/* Module functions for mxp.safetensors (python/mxp/safetensors.py): an
 * open file in a capsule, its entries and metadata, a tensor converted
 * straight into a new NumPy array, and saving NumPy arrays.  The C library
 * does the format (include/mxp/safetensors.h); the GIL is released while
 * it converts or writes. */
#include "mxpy.h"
#include "mxp/safetensors.h"

static void safetensors_free(void *p) { mxp_safetensors_close(p); }

static const mxpy_kind kind_safetensors = { "mxp.safetensors", safetensors_free };

/* _st_open(path or bytes) -> capsule */
static PyObject *st_open(PyObject *self, PyObject *arg)
{
    (void)self;
    mxp_safetensors *st = NULL;
    mxp_status s;
    if (PyBytes_Check(arg) || PyByteArray_Check(arg) || PyObject_CheckBuffer(arg)) {
        Py_buffer b;
        if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0)
            return NULL;
        Py_BEGIN_ALLOW_THREADS
        s = mxp_safetensors_open_buffer(&st, b.buf, (size_t)b.len);
        Py_END_ALLOW_THREADS
        PyBuffer_Release(&b);
    } else {
        PyObject *path;
        if (!PyUnicode_FSConverter(arg, &path))
            return NULL;
        const char *p = PyBytes_AS_STRING(path);
        Py_BEGIN_ALLOW_THREADS
        s = mxp_safetensors_open(&st, p);
        Py_END_ALLOW_THREADS
        Py_DECREF(path);
    }
    return mxpy_capsule_new(s, st, &kind_safetensors);
}

/* _st_entries(capsule) -> [(name, file dtype name, shape, NumPy dtype or None)] in file order */
static PyObject *st_entries(PyObject *self, PyObject *cap)
{
    (void)self;
    const mxp_safetensors *st = mxpy_capsule_get(cap, &kind_safetensors);
    if (!st)
        return NULL;
    const size_t n = mxp_safetensors_count(st);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        const int nd = mxp_safetensors_ndim(st, i);
        PyObject *shape = PyTuple_New(nd);
        for (int d = 0; shape && d < nd; d++)
            PyTuple_SET_ITEM(shape, d, PyLong_FromLongLong(mxp_safetensors_shape(st, i)[d]));
        const mxp_dtype dt = mxp_safetensors_dtype(st, i);
        PyObject *np_dtype = dt ? (PyObject *)PyArray_DescrFromType(mxpy_typenum_from_dtype(dt)) : Py_NewRef(Py_None);
        PyObject *item = shape && np_dtype ? Py_BuildValue("(ssOO)", mxp_safetensors_name(st, i),
                                                           mxp_safetensors_dtype_name(st, i), shape, np_dtype)
                                           : NULL;
        Py_XDECREF(shape);
        Py_XDECREF(np_dtype);
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

/* _st_metadata(capsule) -> dict of the __metadata__ strings (empty without) */
static PyObject *st_metadata(PyObject *self, PyObject *cap)
{
    (void)self;
    const mxp_safetensors *st = mxpy_capsule_get(cap, &kind_safetensors);
    if (!st)
        return NULL;
    PyObject *d = PyDict_New();
    for (size_t j = 0; d && j < mxp_safetensors_metadata_count(st); j++) {
        PyObject *v = PyUnicode_FromString(mxp_safetensors_metadata_value(st, j));
        if (!v || PyDict_SetItemString(d, mxp_safetensors_metadata_key(st, j), v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(v);
    }
    return d;
}

/* _st_read(capsule, index, dtype or None, rounding, overflow, seed) -> a new ndarray */
static PyObject *st_read(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap, *dtype_obj;
    Py_ssize_t index;
    const char *rounding, *overflow;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "OnOssK:_st_read", &cap, &index, &dtype_obj, &rounding, &overflow, &seed))
        return NULL;
    const mxp_safetensors *st = mxpy_capsule_get(cap, &kind_safetensors);
    if (!st)
        return NULL;
    if (index < 0 || (size_t)index >= mxp_safetensors_count(st))
        return PyErr_Format(PyExc_IndexError, "safetensors: tensor %zd of %zu", index, mxp_safetensors_count(st));
    mxp_convert_opts o;
    if (mxpy_convert_opts(rounding, overflow, seed, &o) < 0)
        return NULL;
    mxp_dtype dt = mxp_safetensors_dtype(st, (size_t)index);
    if (dtype_obj != Py_None && (dt = mxpy_dtype_arg(dtype_obj, "safetensors: dtype")) == MXP_DTYPE_INVALID)
        return NULL;
    const int nd = mxp_safetensors_ndim(st, (size_t)index);
    if (dt == MXP_DTYPE_INVALID || nd > MXP_MAXDIMS) { /* a dtype mxp lacks, too many axes: the library's error */
        mxp_array *none = NULL;
        return mxpy_raise(mxp_safetensors_read(&none, st, (size_t)index, dt, &o));
    }
    npy_intp shape[MXP_MAXDIMS];
    for (int d = 0; d < nd; d++)
        shape[d] = (npy_intp)mxp_safetensors_shape(st, (size_t)index)[d];
    PyObject *out = PyArray_Empty(nd, shape, PyArray_DescrFromType(mxpy_typenum_from_dtype(dt)), 0);
    if (!out)
        return NULL;
    mxp_array *a = mxpy_wrap(out, "safetensors: out", true);
    if (!a) {
        Py_DECREF(out);
        return NULL;
    }
    mxp_status s;
    Py_BEGIN_ALLOW_THREADS
    s = mxp_safetensors_read_into(a, st, (size_t)index, &o);
    Py_END_ALLOW_THREADS
    mxp_array_free(a);
    if (s != MXP_OK) {
        Py_DECREF(out);
        return mxpy_raise(s);
    }
    return out;
}

/* _st_save(path or None, names, arrays, keys, values) -> None, or bytes for None */
static PyObject *st_save(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path_obj, *names, *arrays, *keys, *values;
    if (!PyArg_ParseTuple(args, "OO!OO!O!:_st_save", &path_obj, &PyList_Type, &names, &arrays, &PyList_Type, &keys,
                          &PyList_Type, &values))
        return NULL;
    const Py_ssize_t n = PyList_GET_SIZE(names), nmeta = PyList_GET_SIZE(keys);
    PyObject *path = NULL;
    if (path_obj != Py_None && !PyUnicode_FSConverter(path_obj, &path))
        return NULL;
    const char **c_names = PyMem_Calloc((size_t)n + 1, sizeof *c_names);
    const char **c_keys = PyMem_Calloc((size_t)nmeta + 1, sizeof *c_keys);
    const char **c_values = PyMem_Calloc((size_t)nmeta + 1, sizeof *c_values);
    mxpy_views views = { 0 };
    PyObject *result = NULL;
    bool ok = c_names && c_keys && c_values;
    if (!ok)
        PyErr_NoMemory();
    for (Py_ssize_t i = 0; ok && i < n; i++)
        ok = (c_names[i] = PyUnicode_AsUTF8(PyList_GET_ITEM(names, i))) != NULL;
    for (Py_ssize_t j = 0; ok && j < nmeta; j++)
        ok = (c_keys[j] = PyUnicode_AsUTF8(PyList_GET_ITEM(keys, j))) != NULL &&
             (c_values[j] = PyUnicode_AsUTF8(PyList_GET_ITEM(values, j))) != NULL;
    if (ok && PyList_GET_SIZE(values) != nmeta) {
        PyErr_SetString(PyExc_ValueError, "safetensors: keys and values differ in length");
        ok = false;
    }
    if (ok && mxpy_views_wrap(arrays, "safetensors.save: tensors", MXPY_READ, &views) < 0)
        ok = false, views.v = NULL; /* nothing to end */
    if (ok && views.n != n) {
        PyErr_SetString(PyExc_ValueError, "safetensors: names and arrays differ in length");
        ok = false;
    }
    if (ok) {
        mxp_status s;
        void *data = NULL;
        size_t size = 0;
        const mxp_array *const *a = (const mxp_array *const *)views.v;
        Py_BEGIN_ALLOW_THREADS
        s = path ? mxp_safetensors_save(PyBytes_AS_STRING(path), (size_t)n, c_names, a, (size_t)nmeta, c_keys, c_values)
                 : mxp_safetensors_save_buffer(&data, &size, (size_t)n, c_names, a, (size_t)nmeta, c_keys, c_values);
        Py_END_ALLOW_THREADS
        if (s != MXP_OK)
            mxpy_raise(s);
        else if (path)
            result = Py_NewRef(Py_None);
        else
            result = PyBytes_FromStringAndSize(data, (Py_ssize_t)size);
        mxp_free(data);
    }
    if (views.v)
        mxpy_views_end(&views, result != NULL);
    PyMem_Free(c_names);
    PyMem_Free(c_keys);
    PyMem_Free(c_values);
    Py_XDECREF(path);
    return result;
}

/* _st_cast(capsule, path, dtype, rounding, overflow, seed, index_offset) -> (converted, elements) */
static PyObject *st_cast(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap, *path_obj, *dtype_obj;
    const char *rounding, *overflow;
    unsigned long long seed, offset;
    if (!PyArg_ParseTuple(args, "OOOssKK:_st_cast", &cap, &path_obj, &dtype_obj, &rounding, &overflow, &seed, &offset))
        return NULL;
    const mxp_safetensors *st = mxpy_capsule_get(cap, &kind_safetensors);
    if (!st)
        return NULL;
    mxp_convert_opts o;
    if (mxpy_convert_opts(rounding, overflow, seed, &o) < 0)
        return NULL;
    o.index_offset = offset;
    const mxp_dtype dt = mxpy_dtype_arg(dtype_obj, "safetensors.cast: dtype");
    if (dt == MXP_DTYPE_INVALID)
        return NULL;
    PyObject *path;
    if (!PyUnicode_FSConverter(path_obj, &path))
        return NULL;
    size_t converted = 0;
    uint64_t elements = 0;
    mxp_status s;
    Py_BEGIN_ALLOW_THREADS
    s = mxp_safetensors_cast(PyBytes_AS_STRING(path), st, dt, &o, &converted, &elements);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (s != MXP_OK)
        return mxpy_raise(s);
    return Py_BuildValue("(nK)", (Py_ssize_t)converted, (unsigned long long)elements);
}

PyMethodDef mxpy_safetensors_methods[] = {
    { "_st_cast", st_cast, METH_VARARGS,
      "_st_cast(capsule, path, dtype, rounding, overflow, seed, index_offset) -> (converted, elements)." },
    { "_st_open", st_open, METH_O, "_st_open(path or bytes) -> capsule: mxp_safetensors_open(_buffer)." },
    { "_st_entries", st_entries, METH_O, "_st_entries(capsule) -> [(name, dtype name, shape, dtype or None)]." },
    { "_st_metadata", st_metadata, METH_O, "_st_metadata(capsule) -> dict." },
    { "_st_read", st_read, METH_VARARGS, "_st_read(capsule, i, dtype, rounding, overflow, seed) -> ndarray." },
    { "_st_save", st_save, METH_VARARGS, "_st_save(path or None, names, arrays, keys, values) -> None or bytes." },
    { NULL, NULL, 0, NULL },
};

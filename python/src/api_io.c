/* Module functions: .npy files and whole-file writes through the C
 * library's saver, so that Python's mxp.save keeps its guarantees (atomic,
 * modes and links kept, devices written in place; docs/npy.md), the bytes
 * of a file in memory, and what a header's descr means to the library. */
#include "mxpy.h"

/* _npy_save(path, array): mxp_npy_save (bfloat16/float8 as the one-field
 * structured dtype, byte for byte what np.save writes otherwise) */
static PyObject *npy_save(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path_obj, *x;
    if (!PyArg_ParseTuple(args, "O&O:_npy_save", PyUnicode_FSConverter, &path_obj, &x))
        return NULL;
    mxp_array *a = mxpy_wrap(x, "save: arr", false);
    if (!a) {
        Py_DECREF(path_obj);
        return NULL;
    }
    mxp_status st;
    const char *path = PyBytes_AS_STRING(path_obj);
    Py_BEGIN_ALLOW_THREADS
    st = mxp_npy_save(path, a);
    Py_END_ALLOW_THREADS
    mxp_array_free(a);
    Py_DECREF(path_obj);
    if (st != MXP_OK)
        return mxpy_raise(st);
    Py_RETURN_NONE;
}

/* _write_file(path, bytes): mxp_file_write */
static PyObject *write_file(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path_obj;
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "O&y*:_write_file", PyUnicode_FSConverter, &path_obj, &data))
        return NULL;
    mxp_status st;
    const char *path = PyBytes_AS_STRING(path_obj);
    Py_BEGIN_ALLOW_THREADS
    st = mxp_file_write(path, data.buf, (size_t)data.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    Py_DECREF(path_obj);
    if (st != MXP_OK)
        return mxpy_raise(st);
    Py_RETURN_NONE;
}

/* _npy_save_buffer(array) -> bytes: mxp_npy_save_buffer (a file's bytes in memory) */
static PyObject *npy_save_buffer(PyObject *self, PyObject *x)
{
    (void)self;
    mxp_array *a = mxpy_wrap(x, "save: arr", false);
    if (!a)
        return NULL;
    void *data = NULL;
    size_t size = 0;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_npy_save_buffer(&data, &size, a);
    Py_END_ALLOW_THREADS
    mxp_array_free(a);
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyObject *bytes = PyBytes_FromStringAndSize(data, (Py_ssize_t)size);
    mxp_free(data);
    return bytes;
}

/* _npy_descr_dtype(descr text) -> (dtype, swapped), or None for a dtype mxp
 * lacks: mxp_npy_descr_dtype (ValueError for a malformed descr) */
static PyObject *npy_descr_dtype(PyObject *self, PyObject *text)
{
    (void)self;
    const char *s = PyUnicode_AsUTF8(text);
    if (!s)
        return NULL;
    mxp_dtype dt;
    bool swapped;
    mxp_status st = mxp_npy_descr_dtype(&dt, &swapped, s);
    if (st == MXP_ERR_UNSUPPORTED)
        Py_RETURN_NONE;
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyArray_Descr *d = PyArray_DescrFromType(mxpy_typenum_from_dtype(dt));
    return d ? Py_BuildValue("(NO)", (PyObject *)d, swapped ? Py_True : Py_False) : NULL;
}

PyMethodDef mxpy_io_methods[] = {
    { "_npy_save_buffer", npy_save_buffer, METH_O, "_npy_save_buffer(array) -> bytes: mxp_npy_save_buffer." },
    { "_npy_descr_dtype", npy_descr_dtype, METH_O, "_npy_descr_dtype(text) -> (dtype, swapped) or None." },
    { "_npy_save", npy_save, METH_VARARGS, "_npy_save(path, array): mxp_npy_save." },
    { "_write_file", write_file, METH_VARARGS, "_write_file(path, bytes): mxp_file_write." },
    { NULL, NULL, 0, NULL },
};

/* Module functions: .npy files and whole-file writes through the C
 * library's saver, so that Python's mxp.save keeps its guarantees (atomic,
 * modes and links kept, devices written in place; docs/npy.md). */
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

PyMethodDef mxpy_io_methods[] = {
    { "_npy_save", npy_save, METH_VARARGS, "_npy_save(path, array): mxp_npy_save." },
    { "_write_file", write_file, METH_VARARGS, "_write_file(path, bytes): mxp_file_write." },
    { NULL, NULL, 0, NULL },
};

/* The module mxp._mxp: set-up in dependency order (dtypes, casts, ufunc
 * loops, matmul), the mapping of mxp_status to Python exceptions, and
 * the small functions the pure-Python part builds on. */
#include <string.h>

#define MXPY_IMPORT_NUMPY
#include "mxpy.h"

/* An axis out of range raises NumPy's AxisError, as NumPy does: a subclass
 * of both ValueError (what docs/python.md promises for bad values) and
 * IndexError.  Other MXP_ERR_INDEX failures (an element index) stay
 * IndexError. */
PyObject *mxpy_axis_error_type(void)
{
    static PyObject *cls;
    if (!cls) {
        PyObject *mod = PyImport_ImportModule("numpy.exceptions"); /* NumPy >= 1.25 */
        if (!mod) {
            PyErr_Clear();
            mod = PyImport_ImportModule("numpy");
        }
        cls = mod ? PyObject_GetAttrString(mod, "AxisError") : NULL;
        Py_XDECREF(mod);
        if (!cls) {
            PyErr_Clear();
            return PyExc_IndexError;
        }
    }
    return cls;
}

PyObject *mxpy_raise(mxp_status st)
{
    PyObject *type = PyExc_ValueError;
    switch (st) {
    case MXP_ERR_NO_MEMORY: type = PyExc_MemoryError; break;
    case MXP_ERR_INVALID_DTYPE:
    case MXP_ERR_UNSUPPORTED:
    case MXP_ERR_CASTING: type = PyExc_TypeError; break;
    case MXP_ERR_IO: type = PyExc_OSError; break;
    case MXP_ERR_INDEX:
        type = strstr(mxp_last_error(), "axis") || strstr(mxp_last_error(), "axes") ? mxpy_axis_error_type()
                                                                                      : PyExc_IndexError;
        break;
    case MXP_ERR_SIZE_OVERFLOW: type = PyExc_OverflowError; break;
    default: break;
    }
    PyErr_SetString(type, mxp_last_error());
    return NULL;
}

/* _traits(dtype) -> dict: mxp_dtype_traits as Python values, and the
 * NumPy dtype it is. */
static PyObject *traits(PyObject *self, PyObject *arg)
{
    (void)self;
    mxp_dtype dt = mxpy_dtype_arg(arg, "_traits");
    if (dt == MXP_DTYPE_INVALID)
        return NULL;
    const mxp_dtype_traits *t = mxp_dtype_get_traits(dt);
    PyArray_Descr *d = PyArray_DescrFromType(mxpy_typenum_from_dtype(dt));
    if (!d)
        return NULL;
    return Py_BuildValue("{s:s,s:s,s:N,s:n,s:C,s:i,s:i,s:i,s:i,s:d,s:d,s:d,s:d,s:d,s:O,s:O,s:O,s:K}",
                         "name", t->name, "short_name", t->short_name, "dtype", (PyObject *)d,
                         "itemsize", (Py_ssize_t)t->itemsize, "kind", (int)t->kind, "bits", t->bits,
                         "exp_bits", t->exp_bits, "mant_bits", t->mant_bits, "bias", t->bias, "eps", t->eps,
                         "max", t->max, "lowest", t->lowest, "min_normal", t->min_normal,
                         "min_subnormal", t->min_subnormal, "has_inf", t->has_inf ? Py_True : Py_False,
                         "has_nan", t->has_nan ? Py_True : Py_False, "is_signed",
                         t->is_signed ? Py_True : Py_False, "max_exact_int", (unsigned long long)t->max_exact_int);
}

/* promote_types(a, b) -> dtype: mxp_promote_types (docs/dtypes.md), the
 * same on both NumPy generations; np.promote_types where mxp lacks a type
 * (complex, long double, structured ...). */
static PyObject *promote_types(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "OO:promote_types", &a, &b))
        return NULL;
    PyArray_Descr *da = NULL, *db = NULL;
    if (!PyArray_DescrConverter(a, &da))
        return NULL;
    if (!PyArray_DescrConverter(b, &db)) {
        Py_DECREF(da);
        return NULL;
    }
    mxp_dtype ta = PyArray_ISNBO(da->byteorder) ? mxpy_dtype_from_typenum(da->type_num) : MXP_DTYPE_INVALID;
    mxp_dtype tb = PyArray_ISNBO(db->byteorder) ? mxpy_dtype_from_typenum(db->type_num) : MXP_DTYPE_INVALID;
    PyObject *r;
    if (ta != MXP_DTYPE_INVALID && tb != MXP_DTYPE_INVALID)
        r = (PyObject *)PyArray_DescrFromType(mxpy_typenum_from_dtype(mxp_promote_types(ta, tb)));
    else
        r = (PyObject *)PyArray_PromoteTypes(da, db);
    Py_DECREF(da);
    Py_DECREF(db);
    return r;
}

static PyMethodDef methods[] = {
    { "_register_foreign", mxpy_register_foreign, METH_VARARGS,
      "_register_foreign(dtype, name): another package's dtype with the encoding of mxp's `name` (ml_dtypes)." },
    { "promote_types", promote_types, METH_VARARGS,
      "promote_types(a, b) -> dtype: mxp's promotion table (docs/dtypes.md) on every NumPy version." },
    { "_traits", traits, METH_O, "_traits(dtype) -> dict of mxp_dtype_traits." },
    { "from_dlpack", mxpy_from_dlpack, METH_O,
      "from_dlpack(x) -> ndarray viewing the memory of x (an object with __dlpack__, or a DLPack capsule)." },
    { "to_dlpack", mxpy_to_dlpack, METH_O, "to_dlpack(a) -> a DLPack capsule viewing the array a (no copy)." },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "mxp._mxp", "mxp's NumPy extension (C); use the package mxp.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__mxp(void);
PyMODINIT_FUNC PyInit__mxp(void)
{
    import_array();
    import_umath();
    PyObject *m = PyModule_Create(&moduledef);
    PyObject *numpy = PyImport_ImportModule("numpy");
    if (!m || !numpy || mxpy_init_dtypes(m) < 0 || mxpy_init_casts() < 0 || mxpy_fix_float8_casts() < 0 || mxpy_init_ufuncs(numpy) < 0 ||
        mxpy_init_promotion(numpy) < 0 || mxpy_init_matmul(numpy) < 0 || PyModule_AddFunctions(m, mxpy_runtime_methods) < 0 ||
        PyModule_AddFunctions(m, mxpy_gemm_methods) < 0 || PyModule_AddFunctions(m, mxpy_quant_methods) < 0 ||
        PyModule_AddFunctions(m, mxpy_analysis_methods) < 0 || PyModule_AddFunctions(m, mxpy_optim_methods) < 0 ||
        PyModule_AddFunctions(m, mxpy_scaler_methods) < 0 || PyModule_AddFunctions(m, mxpy_autocast_methods) < 0 ||
        PyModule_AddFunctions(m, mxpy_monitor_methods) < 0 ||
        PyModule_AddFunctions(m, mxpy_reduce_methods) < 0 || PyModule_AddFunctions(m, mxpy_io_methods) < 0 ||
        PyModule_AddFunctions(m, mxpy_safetensors_methods) < 0 || PyModule_AddFunctions(m, mxpy_nn_methods) < 0 ||
        PyModule_AddFunctions(m, mxpy_plugin_methods) < 0 || PyModule_AddFunctions(m, mxpy_profile_methods) < 0 ||
        PyModule_AddFunctions(m, mxpy_fft_methods) < 0 ||
        mxpy_init_constants(m) < 0 ||
        PyModule_AddStringConstant(m, "__version__", mxp_version()) < 0) {
        Py_XDECREF(numpy);
        Py_XDECREF(m);
        return NULL;
    }
    Py_DECREF(numpy);
    return m;
}

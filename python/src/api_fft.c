/* Module functions: the FFT of mxp/nn.h (python/mxp/fft.py). */
#include "mxpy.h"

/* _fft(x, kind, axes or None, n or None, norm, inverse, real_input, dtype):
 * kind 0 fft, 1 rfft, 2 irfft; axes and n tuples of one or two ints
 * (n entries 0: the axis length); complex arrays with a trailing axis of 2. */
static PyObject *fft(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *xo, *axes, *ns, *dtype;
    int kind, norm, inverse, real_input;
    if (!PyArg_ParseTuple(args, "OiOOippO:_fft", &xo, &kind, &axes, &ns, &norm, &inverse, &real_input, &dtype))
        return NULL;
    mxp_fft_opts o = { .norm = (mxp_fft_norm)norm, .inverse = inverse, .real_input = real_input };
    if (axes != Py_None) {
        if (!PyTuple_Check(axes) || PyTuple_GET_SIZE(axes) < 1 || PyTuple_GET_SIZE(axes) > 2)
            return PyErr_Format(PyExc_ValueError, "axes: one or two axes");
        o.naxes = (int)PyTuple_GET_SIZE(axes);
        for (int i = 0; i < o.naxes; i++) {
            o.axes[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(axes, i));
            if (o.axes[i] == -1 && PyErr_Occurred())
                return NULL;
        }
    }
    if (ns != Py_None) {
        if (!PyTuple_Check(ns) || PyTuple_GET_SIZE(ns) != (o.naxes ? o.naxes : 1))
            return PyErr_Format(PyExc_ValueError, "n/s: one length per axis");
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(ns); i++) {
            o.n[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(ns, i));
            if (o.n[i] == -1 && PyErr_Occurred())
                return NULL;
            if (o.n[i] < 1)
                return PyErr_Format(PyExc_ValueError, "invalid number of data points (%lld) specified",
                                    (long long)o.n[i]);
        }
    }
    if (dtype != Py_None && (o.out_dtype = mxpy_dtype_arg(dtype, "dtype")) == MXP_DTYPE_INVALID)
        return NULL;
    mxp_array *x = mxpy_wrap(xo, "a", false), *r = NULL;
    if (!x)
        return NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = kind == 0 ? mxp_fft(&r, x, &o) : kind == 1 ? mxp_rfft(&r, x, &o) : mxp_irfft(&r, x, &o);
    Py_END_ALLOW_THREADS
    mxp_array_free(x);
    if (st != MXP_OK)
        return mxpy_raise(st);
    return mxpy_unwrap(r);
}

PyMethodDef mxpy_fft_methods[] = {
    { "_fft", fft, METH_VARARGS, "_fft(x, kind, axes, n, norm, inverse, real_input, dtype) (mxp_fft, mxp_rfft, mxp_irfft)." },
    { NULL, NULL, 0, NULL },
};

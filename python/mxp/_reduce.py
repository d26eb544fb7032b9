"""Reductions along any axes through the C library's mxp_reduce: a float32
(or float64) accumulator and one rounding into the result, where NumPy's
own np.sum(x, axis=0) on these dtypes adds row by row in the array's type.
The results are arrays of the input's type (0-d for a full reduction, as
numpy's reductions give scalars: take [()] or float())."""
import numpy as np

from . import _mxp


def _axes(axis):
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)):
        return (int(axis),)
    return tuple(int(a) for a in axis)


def _run(op, x, axis, dtype, keepdims, ddof=0, acc=None):
    x = np.asarray(x)
    r = _mxp._reduce(x, op, axes=_axes(axis), keepdims=bool(keepdims), ddof=int(ddof), acc=acc, dtype=dtype)
    return r[()] if r.ndim == 0 else r


def sum(x, axis=None, dtype=None, keepdims=False, acc=None):  # noqa: A001 (numpy's name)
    """Sum along axis (None: all; an int or a tuple), accumulated in acc
    (default float32 for 8- and 16-bit floats, float64 for float32/64 and
    integers by NumPy's rule), rounded once into dtype (default x's type)."""
    return _run("sum", x, axis, dtype, keepdims, acc=acc)


def mean(x, axis=None, dtype=None, keepdims=False, acc=None):
    return _run("mean", x, axis, dtype, keepdims, acc=acc)


def prod(x, axis=None, dtype=None, keepdims=False, acc=None):
    return _run("prod", x, axis, dtype, keepdims, acc=acc)


def var(x, axis=None, dtype=None, keepdims=False, ddof=0):
    """Variance in float64 (two passes), rounded once: float8's std and var
    do not overflow as NumPy's do (its squares and sums stay in float8)."""
    return _run("var", x, axis, dtype, keepdims, ddof=ddof)


def std(x, axis=None, dtype=None, keepdims=False, ddof=0):
    return _run("std", x, axis, dtype, keepdims, ddof=ddof)

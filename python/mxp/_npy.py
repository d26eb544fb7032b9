"""mxp.save / mxp.load: .npy files that keep bfloat16 and float8.

The format has no descr for those types; mxp (the C library, the CLI and
this module alike) writes them as a one-field structured dtype whose field
name is the type's name -- ``[('bfloat16', '<u2')]`` -- which NumPy loads
without mxp (docs/npy.md).  load() turns such files back into arrays of
the mxp dtype; every other file loads as numpy.load would.
"""
import io
import os

import numpy as np

from . import _mxp
from ._mxp import bfloat16, float8_e4m3fn, float8_e5m2

_TYPES = {t.__name__: np.dtype(t) for t in (bfloat16, float8_e4m3fn, float8_e5m2)}


def _mxp_view(a):
    """The mxp-typed view of a one-field structured array, or None."""
    names = a.dtype.names
    if not names or len(names) != 1 or names[0] not in _TYPES:
        return None
    want = _TYPES[names[0]]
    field = a.dtype.fields[names[0]][0]
    if field.kind != "u" or field.itemsize != want.itemsize:
        raise ValueError(f"{names[0]} field of type {field} (expected a {want.itemsize}-byte unsigned integer)")
    bits = a[names[0]]
    if not field.isnative:
        bits = bits.byteswap().view(bits.dtype.newbyteorder())
    return np.require(bits, requirements="C").view(want)


def load(file):
    """Loads a .npy file; bfloat16/float8 files come back with their dtype."""
    a = np.load(file, allow_pickle=False)
    v = _mxp_view(a)
    return a if v is None else v


def save(file, arr):
    """Saves arr as .npy (what np.save writes; bfloat16/float8 as the
    one-field structured dtype).  A path goes through the C library's saver
    (mxp_npy_save; NumPy's other dtypes: the bytes np.save makes, written by
    mxp_file_write): a regular file is replaced atomically and keeps its
    mode, a symbolic link is followed and kept, a device or FIFO is written
    in place, and a failure never leaves a truncated file where a valid one
    was (docs/npy.md)."""
    arr = np.asanyarray(arr)
    if not isinstance(file, (str, bytes, os.PathLike)):
        np.save(file, _structured(arr), allow_pickle=False)  # an open file: NumPy writes it
        return
    path = os.fsdecode(os.fspath(file))
    if not path.endswith(".npy"):
        path += ".npy"
    if arr.dtype.hasobject:
        raise ValueError("save: object arrays are not saved (they would need pickles)")
    try:
        _mxp._npy_save(path, arr)  # every dtype mxp has, any layout
        return
    except TypeError:
        pass  # a NumPy dtype mxp lacks (complex, strings, structured ...)
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    _mxp._write_file(path, buf.getbuffer())


def _structured(arr):
    """bfloat16/float8 as the one-field structured dtype np.save can write."""
    if arr.dtype not in _TYPES.values():
        return arr
    name = arr.dtype.type.__name__
    bits = "<u2" if arr.dtype.itemsize == 2 else "u1"
    raw = np.require(arr, requirements="C").view(np.uint16 if arr.dtype.itemsize == 2 else np.uint8)
    return raw.astype(bits, copy=False).view([(name, bits)])

"""mxp.save / mxp.load: .npy files that keep bfloat16 and float8.

The format has no descr for those types; mxp writes them as a one-field
structured dtype whose field name is the type's name -- ``[('bfloat16',
'<u2')]`` -- which NumPy loads without mxp (docs/npy.md).  That scheme is
the C library's alone: it writes the files (mxp_npy_save to a path,
mxp_npy_save_buffer for an open file) and says what a descr stands for
(mxp_npy_descr_dtype); NumPy's np.load reads every file (paths, open files,
memory maps in mxp.dask) and np.save writes NumPy's other dtypes to an open
file.  docs/python.md, ".npy files", has the reasons.
"""
import io
import os

import numpy as np

from . import _mxp

_TYPES = tuple(np.dtype(t) for t in _mxp._TYPES)


def _mxp_view(a):
    """The mxp-typed view of a structured array that holds one of mxp's
    types (the C library's reading of its descr), or None."""
    if not a.dtype.names:
        return None
    found = _mxp._npy_descr_dtype(repr(np.lib.format.dtype_to_descr(a.dtype)))  # ValueError: a malformed one
    if found is None:
        return None
    dtype, swapped = found
    bits = a[a.dtype.names[0]]
    if swapped:
        bits = bits.byteswap().view(bits.dtype.newbyteorder())
    return np.require(bits, requirements="C").view(dtype)


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
    was (docs/npy.md).  An open file gets the same bytes, written by its
    own write()."""
    arr = np.asanyarray(arr)
    if not isinstance(file, (str, bytes, os.PathLike)):
        if arr.dtype in _TYPES and hasattr(file, "write"):  # the C library's bytes, of a C-ordered copy
            file.write(_mxp._npy_save_buffer(np.require(arr, requirements="C")))
        else:
            np.save(file, arr, allow_pickle=False)  # NumPy's dtypes (and NumPy's TypeError for no file)
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

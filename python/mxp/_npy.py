"""mxp.save / mxp.load: .npy files that keep bfloat16 and float8.

The format has no descr for those types; mxp (the C library, the CLI and
this module alike) writes them as a one-field structured dtype whose field
name is the type's name -- ``[('bfloat16', '<u2')]`` -- which NumPy loads
without mxp (docs/npy.md).  load() turns such files back into arrays of
the mxp dtype; every other file loads as numpy.load would.
"""
import os
import tempfile

import numpy as np

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
    one-field structured dtype).  A path is written to a temporary file in
    the same folder and renamed over the target, so a failure never leaves
    a truncated file where a valid one was."""
    arr = np.asanyarray(arr)
    name = arr.dtype.type.__name__
    if arr.dtype in _TYPES.values():
        bits = "<u2" if arr.dtype.itemsize == 2 else "u1"
        arr = np.require(arr, requirements="C").view(np.uint16 if arr.dtype.itemsize == 2 else np.uint8)
        arr = arr.astype(bits, copy=False).view([(name, bits)])
    if not isinstance(file, (str, os.PathLike)):
        np.save(file, arr, allow_pickle=False)
        return
    path = os.fspath(file)
    if not path.endswith(".npy"):
        path += ".npy"
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".mxp-", suffix=".npy.tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, arr, allow_pickle=False)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask

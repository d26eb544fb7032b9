"""Shared helpers of the Python tests: the C library through ctypes (an
independent path to mxp_convert for the float8 oracles) and bit views."""
import ctypes
import os

import numpy as np
import pytest

import mxp

FLOATS = [mxp.bfloat16, mxp.float8_e4m3fn, mxp.float8_e5m2]
# mxp_dtype numbers (include/mxp/dtype.h)
MXP_DTYPE = {"bool": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5, "uint8": 6, "uint16": 7, "uint32": 8,
             "uint64": 9, "float16": 10, "bfloat16": 11, "float32": 12, "float64": 13, "float8_e4m3fn": 14,
             "float8_e5m2": 15}


def uint_of(t):
    return np.uint16 if np.dtype(t).itemsize == 2 else np.uint8


def all_values(t):
    """Every bit pattern of t, as an array of t."""
    u = uint_of(t)
    return np.arange(np.iinfo(u).max + 1, dtype=np.uint64).astype(u).view(t)


def bits(a):
    a = np.asarray(a)
    return a.view(uint_of(a.dtype))


@pytest.fixture(scope="session")
def libmxp():
    path = os.environ.get("MXP_LIB") or os.path.join(os.path.dirname(__file__), "..", "..", "build", "libmxp.so")
    lib = ctypes.CDLL(path)
    lib.mxp_convert.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t,
                                ctypes.c_void_p]
    lib.mxp_convert.restype = ctypes.c_int
    return lib


def c_convert(lib, x, to):
    """The C library's mxp_convert(x -> to), defaults (nearest even)."""
    x = np.ascontiguousarray(x)
    out = np.empty(x.shape, dtype=to)
    src = x.view(uint_of(x.dtype)) if x.dtype in map(np.dtype, FLOATS) else x
    st = lib.mxp_convert(out.ctypes.data, MXP_DTYPE[np.dtype(to).name], src.ctypes.data, MXP_DTYPE[x.dtype.name],
                         x.size, None)
    assert st == 0
    return out

"""Shared helpers of the Python tests (imported by name, not through
conftest, so that tests/dask/conftest.py cannot shadow them): bit views,
every bit pattern of a dtype, the C library's mxp_convert through ctypes."""
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


def c_convert(lib, x, to):
    """The C library's mxp_convert(x -> to), defaults (nearest even)."""
    x = np.ascontiguousarray(x)
    out = np.empty(x.shape, dtype=to)
    src = x.view(uint_of(x.dtype)) if x.dtype in map(np.dtype, FLOATS) else x
    st = lib.mxp_convert(out.ctypes.data, MXP_DTYPE[np.dtype(to).name], src.ctypes.data, MXP_DTYPE[x.dtype.name],
                         x.size, None)
    assert st == 0
    return out

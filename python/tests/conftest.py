"""pytest fixtures of the Python tests; the helpers are in mxptest.py."""
import ctypes
import os

import pytest


@pytest.fixture(scope="session")
def libmxp():
    path = os.environ.get("MXP_LIB") or os.path.join(os.path.dirname(__file__), "..", "..", "build", "libmxp.so")
    lib = ctypes.CDLL(path)
    lib.mxp_convert.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t,
                                ctypes.c_void_p]
    lib.mxp_convert.restype = ctypes.c_int
    return lib



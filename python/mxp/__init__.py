"""mxp: exact, fast low-precision numerics for NumPy.

``import mxp`` gives NumPy real ``bfloat16``, ``float8_e4m3fn`` and
``float8_e5m2`` dtypes (the names ml_dtypes uses), computed by the mxp C
library: casts rounded once, ufuncs through its SIMD paths, sums accumulated
in float64 and rounded once, ``a @ b`` through ``mxp_gemm``.  See
docs/python.md.
"""
from . import _mxp
from ._mxp import bfloat16, float8_e4m3fn, float8_e5m2, from_dlpack, to_dlpack
from ._info import finfo, iinfo
from ._npy import load, save

__version__ = _mxp.__version__

__all__ = [
    "bfloat16", "float8_e4m3fn", "float8_e5m2",
    "finfo", "iinfo", "from_dlpack", "to_dlpack", "load", "save",
]

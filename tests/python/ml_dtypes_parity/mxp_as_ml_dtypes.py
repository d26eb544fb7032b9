"""ml_dtypes' names, with mxp's types where mxp has them (parity run)."""
import ml_dtypes as _real
import numpy as np
import mxp as _mxp

globals().update({k: getattr(_real, k) for k in dir(_real) if not k.startswith("__")})
# every float type mxp has (ml_dtypes' integer types have their own tests, intn_test.py)
_OURS = {t for t in _mxp._mxp._TYPES if t.__name__ in dir(_real) and "int" not in t.__name__}
globals().update({t.__name__: t for t in _OURS})


_NAMES = {t.__name__: t for t in _OURS}


def finfo(dtype):
    if isinstance(dtype, str) and dtype in _NAMES:  # the names are ml_dtypes' once it is loaded
        dtype = _NAMES[dtype]
    if hasattr(dtype, "dtype") and not isinstance(dtype, (type, np.dtype)):  # an array or a scalar
        dtype = dtype.dtype
    t = dtype if isinstance(dtype, type) else np.dtype(dtype).type
    return _mxp.finfo(t) if t in _OURS else _real.finfo(dtype)

"""ml_dtypes' names, with mxp's types where mxp has them (parity run): every
float type and the sub-byte integers (int1/2/4, uint1/2/4)."""
import ml_dtypes as _real
import numpy as np
import mxp as _mxp

globals().update({k: getattr(_real, k) for k in dir(_real) if not k.startswith("__")})
_OURS = {t for t in _mxp._mxp._TYPES if t.__name__ in dir(_real)}
globals().update({t.__name__: t for t in _OURS})


_NAMES = {t.__name__: t for t in _OURS}


def _ours(dtype):
    """mxp's scalar type for a type, dtype, name, array or scalar of one, else None."""
    if isinstance(dtype, str) and dtype in _NAMES:  # the names are ml_dtypes' once it is loaded
        return _NAMES[dtype]
    if hasattr(dtype, "dtype") and not isinstance(dtype, (type, np.dtype)):  # an array or a scalar
        dtype = dtype.dtype
    try:
        t = dtype if isinstance(dtype, type) else np.dtype(dtype).type
    except TypeError:
        return None
    return t if t in _OURS else None


def finfo(dtype):
    t = _ours(dtype)
    return _mxp.finfo(t) if t is not None else _real.finfo(dtype)


def iinfo(dtype):
    t = _ours(dtype)
    return _mxp.iinfo(t) if t is not None else _real.iinfo(dtype)

"""finfo and iinfo for every dtype mxp knows, from the C library's traits
table (include/mxp/dtype.h), so bfloat16 and float8 get the same fields as
NumPy's float types."""
import numpy as np

from . import _mxp


def _traits(dtype):
    if hasattr(dtype, "dtype") and not isinstance(dtype, (type, np.dtype)):  # an array or a scalar
        dtype = dtype.dtype
    try:
        return _mxp._traits(dtype)
    except TypeError:
        raise TypeError(f"mxp has no dtype {dtype!r}") from None


def _cached(cls, dtype):
    """One object per dtype, as numpy.finfo: finfo(t) is finfo(t)."""
    t = _traits(dtype)
    obj = cls._cache.get(t["name"])
    if obj is None:
        obj = object.__new__(cls)
        obj._init(t)
        cls._cache[t["name"]] = obj
    return obj


class finfo:
    """Machine limits of a float dtype, with numpy.finfo's field names.

    Values are scalars of the dtype itself (as numpy.finfo gives them)::

        >>> mxp.finfo(mxp.bfloat16).eps
        0.0078125
    """

    _cache = {}
    __new__ = _cached

    def _init(self, t):
        if t["kind"] != "f":
            raise TypeError(f"finfo: {t['name']} is not a floating type (use mxp.iinfo)")
        self.dtype = t["dtype"]
        scalar = self.dtype.type
        self.bits = t["bits"]
        self.nexp = t["exp_bits"]
        self.nmant = t["mant_bits"]
        self.precision = int(np.floor(self.nmant * np.log10(2)))
        self.resolution = scalar(10.0 ** -self.precision)
        self.eps = scalar(t["eps"])
        # 1 - the value below 1: eps/2, or where 1 is the smallest normal
        # (float4_e2m1fn, float6_e2m3fn) the subnormal step
        epsneg = t["eps"] / 2 if t["min_normal"] < 1 else t["min_subnormal"]
        self.epsneg = scalar(epsneg)
        self.machep = -self.nmant
        self.negep = int(np.log2(epsneg))  # epsneg = 2**negep
        self.max = scalar(t["max"])
        self.min = scalar(t["lowest"])
        self.smallest_normal = scalar(t["min_normal"])
        self.tiny = self.smallest_normal
        self.smallest_subnormal = scalar(t["min_subnormal"])
        self.maxexp = int(np.frexp(t["max"])[1])
        self.minexp = int(np.frexp(t["min_normal"])[1]) - 1
        self.iexp = self.nexp
        self.has_inf = t["has_inf"]
        self.has_nan = t["has_nan"]

    def __repr__(self):
        return (f"mxp.finfo(resolution={self.resolution}, min={self.min}, max={self.max}, "
                f"dtype={self.dtype.name})")

    __str__ = __repr__


class iinfo:
    """Limits of an integer dtype (numpy.iinfo's fields: bits, min, max, dtype)."""

    _cache = {}
    __new__ = _cached

    def _init(self, t):
        if t["kind"] not in ("i", "u"):
            raise TypeError(f"iinfo: {t['name']} is not an integer type (use mxp.finfo)")
        self.dtype = t["dtype"]
        self.kind = t["kind"]
        self.bits = t["bits"]
        self.min = int(t["lowest"]) if t["is_signed"] else 0
        self.max = (1 << (self.bits - 1)) - 1 if t["is_signed"] else (1 << self.bits) - 1

    def __repr__(self):
        return f"mxp.iinfo(min={self.min}, max={self.max}, dtype={self.dtype.name})"

    __str__ = __repr__

"""The tests' access to libmxp.so: the ctypes binding generated from the
headers (mxp_abi.py, by gen_mxp_abi.py) and helpers over it.

The library comes from $MXP_LIB (the path of libmxp.so, set by ctest), else
../../build/libmxp.so relative to this file; the binding from $MXP_ABI (the
mxp_abi.py the build generates), else it is generated from ../../include
into a temporary folder.

    import mxp_ctypes as mx
    a = mx.from_numpy(np.arange(12.0).reshape(3, 4))  # wraps, no copy
    v = a.slice(slice(None, None, -1))                 # an mxp view
    mx.to_numpy(v)                                     # a NumPy copy

Every MXP_* constant of the headers is here without its prefix (mx.BF16,
mx.ERR_SHAPE, mx.ROUND_STOCHASTIC); structs and functions keep their C
names (mx.abi.mxp_convert_opts, mx.lib.mxp_convert).  Every failing call
raises MxpError carrying the status (its number and mxp_status_str name)
and the mxp_last_error() sentence.
"""
import ctypes
import importlib.util
import os
import tempfile
from ctypes import POINTER, c_char, c_int, c_int64, c_size_t, c_void_p  # noqa: F401 (c_void_p: for the tests)

import numpy as np

# ---- the library and its binding -------------------------------------------

_HERE = os.path.dirname(os.path.abspath(__file__))
LIB_PATH = os.environ.get("MXP_LIB") or os.path.join(_HERE, "..", "..", "build", "libmxp.so")


def _load_abi():
    path = os.environ.get("MXP_ABI")
    if path:
        return _load_module(path)
    import gen_mxp_abi  # no built binding: generate one for this run, then remove it
    with tempfile.TemporaryDirectory(prefix="mxp-abi-") as tmp:
        path = os.path.join(tmp, "mxp_abi.py")
        gen_mxp_abi.generate(os.path.join(_HERE, "..", "..", "include", "mxp.h"), path)
        return _load_module(path)


def _load_module(path):
    spec = importlib.util.spec_from_file_location("mxp_abi", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


abi = _load_abi()
lib = abi.bind(ctypes.CDLL(LIB_PATH))
globals().update({k[4:]: v for k, v in vars(abi).items() if k.startswith("MXP_")})


def _enum_names(enum, prefix):
    """An enum's member names in order, lower case without the prefix (MXP_OP_ADD: "add")."""
    members = [name for name, _ in abi.ENUMS[enum] if not name.endswith("_COUNT")]
    assert [v for _, v in abi.ENUMS[enum][:len(members)]] == list(range(len(members)))
    return [name[len(prefix):].lower() for name in members]


BINARY_OPS = _enum_names("mxp_binary_op", "MXP_OP_")
UNARY_OPS = _enum_names("mxp_unary_op", "MXP_OP_")
REDUCE_OPS = _enum_names("mxp_reduce_op", "MXP_REDUCE_")
# The NumPy names of the dtypes: each value's last name in the header, the
# long alias (MXP_FLOAT8_E4M3FN = MXP_E4M3), or its only one (MXP_BOOL).
DTYPE_NAMES = {v: k[4:].lower() for k, v in abi.ENUMS["mxp_dtype"] if k not in ("MXP_DTYPE_INVALID", "MXP_DTYPE_COUNT")}


def _numpy_dtype(code):
    """The NumPy dtype of an mxp dtype: NumPy's type of that name, kind and
    size; bfloat16 and float8 (which NumPy lacks) as their bits."""
    t = lib.mxp_dtype_get_traits(code).contents
    try:
        d = np.dtype(t.name.decode())
        if d.kind == chr(t.kind) and d.itemsize == t.itemsize:
            return d
    except TypeError:
        pass
    return np.dtype("u%d" % t.itemsize)


TO_NUMPY = {code: _numpy_dtype(code) for code in DTYPE_NAMES}
# The standard types only (a NumPy uint16 array is uint16, not bfloat16).
FROM_NUMPY = {dt: code for code, dt in TO_NUMPY.items()
              if dt.kind == chr(lib.mxp_dtype_get_traits(code).contents.kind)
              and 8 * dt.itemsize == lib.mxp_dtype_get_traits(code).contents.bits}

# ---- errors -------------------------------------------------------------


class MxpError(Exception):
    """A failed mxp call: .status (int), .status_name, .message."""

    def __init__(self, status, where=""):
        self.status = status
        self.status_name = lib.mxp_status_str(status).decode()
        self.message = (lib.mxp_last_error() or b"").decode()
        super().__init__("%s%s: %s" % (where + ": " if where else "", self.status_name, self.message))


def check(status, where=""):
    if status != abi.MXP_OK:
        raise MxpError(status, where)


def _i64(values):
    values = list(values)
    return (c_int64 * max(len(values), 1))(*values)


def _ints(values):
    values = list(values)
    return (c_int * max(len(values), 1))(*values)


# ---- arrays -------------------------------------------------------------


class Array:
    """Owns one reference to an mxp_array.  `keep` holds the NumPy buffers the
    array may point into (mxp_array_wrap with release NULL does not keep them
    alive), passed on to every view made from it."""

    def __init__(self, ptr, keep=()):
        self._ptr = ptr
        self._keep = tuple(keep)

    @property
    def ptr(self):
        if not self._ptr:
            raise ValueError("the mxp array is closed")
        return self._ptr

    def close(self):
        if getattr(self, "_ptr", None):
            lib.mxp_array_free(self._ptr)
            self._ptr = None
            self._keep = ()

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- properties
    @property
    def dtype(self):
        return lib.mxp_array_dtype(self.ptr)

    @property
    def ndim(self):
        return lib.mxp_array_ndim(self.ptr)

    @property
    def shape(self):
        p = lib.mxp_array_shape(self.ptr)
        return tuple(p[i] for i in range(self.ndim))

    @property
    def strides(self):
        p = lib.mxp_array_strides(self.ptr)
        return tuple(p[i] for i in range(self.ndim))

    @property
    def size(self):
        return lib.mxp_array_size(self.ptr)

    @property
    def itemsize(self):
        return lib.mxp_array_itemsize(self.ptr)

    @property
    def data(self):
        """Address of element (0, ..., 0) as an int (0 for NULL)."""
        return lib.mxp_array_data(self.ptr) or 0

    @property
    def flags(self):
        return lib.mxp_array_flags(self.ptr)

    def numpy(self):
        return to_numpy(self)

    # -- views and copies (each returns a new Array)
    def _make(self, fn, where, *args, keep=None):
        out = c_void_p()
        check(fn(ctypes.byref(out), *args), where)
        return Array(out.value, self._keep if keep is None else keep)

    def slice(self, *slices):
        s = (abi.mxp_slice * max(len(slices), 1))(*[to_slice(x) for x in slices])
        return self._make(lib.mxp_array_slice, "mxp_array_slice", self.ptr, len(slices), s)

    def index(self, axis, i):
        return self._make(lib.mxp_array_index, "mxp_array_index", self.ptr, axis, i)

    def transpose(self, perm=None):
        return self._make(lib.mxp_array_transpose, "mxp_array_transpose", self.ptr,
                          None if perm is None else _ints(perm))

    def reshape(self, shape):
        return self._make(lib.mxp_array_reshape, "mxp_array_reshape", self.ptr, len(shape), _i64(shape))

    def reshape_copy(self, shape):
        return self._make(lib.mxp_array_reshape_copy, "mxp_array_reshape_copy", self.ptr, len(shape), _i64(shape),
                          keep=())

    def squeeze(self, axis=None):
        return self._make(lib.mxp_array_squeeze, "mxp_array_squeeze", self.ptr,
                          abi.MXP_ALL_AXES if axis is None else axis)

    def expand_dims(self, axis):
        return self._make(lib.mxp_array_expand_dims, "mxp_array_expand_dims", self.ptr, axis)

    def broadcast_to(self, shape):
        return self._make(lib.mxp_array_broadcast_to, "mxp_array_broadcast_to", self.ptr, len(shape), _i64(shape))

    def ascontiguous(self, order="C"):
        return self._make(lib.mxp_array_ascontiguous, "mxp_array_ascontiguous", self.ptr, order.encode())

    def astype(self, dtype, rounding=abi.MXP_ROUND_NEAREST_EVEN, overflow=abi.MXP_OVERFLOW_INF, seed=0):
        o = abi.mxp_convert_opts(rounding=rounding, overflow=overflow, seed=seed)
        return self._make(lib.mxp_array_astype, "mxp_array_astype", self.ptr, dtype_code(dtype), ctypes.byref(o),
                          keep=())


def dtype_code(dt):
    """An mxp_dtype from an int code or anything np.dtype accepts."""
    if isinstance(dt, int):
        return dt
    return FROM_NUMPY[np.dtype(dt)]


def to_slice(s):
    """A Python slice (or an mxp_slice) as an mxp_slice."""
    if isinstance(s, abi.mxp_slice):
        return s
    if not isinstance(s, slice):
        raise TypeError("expected a slice, got %r" % (s,))
    none = lambda v: abi.MXP_SLICE_NONE if v is None else int(v)  # noqa: E731
    return abi.mxp_slice(start=none(s.start), stop=none(s.stop), step=1 if s.step is None else int(s.step))


def from_numpy(arr, writeable=None, dtype=None):
    """Wraps a NumPy array's buffer without copying (NumPy's byte strides).
    dtype overrides the mxp dtype for bit carriers (BF16 over uint16 ...)."""
    if not isinstance(arr, np.ndarray):
        raise TypeError("from_numpy needs an ndarray")
    if not arr.dtype.isnative:
        raise ValueError("only native byte order can be wrapped")
    code = dtype_code(arr.dtype) if dtype is None else dtype
    if TO_NUMPY[code].itemsize != arr.dtype.itemsize:
        raise ValueError("dtype %s does not match the array's itemsize" % DTYPE_NAMES[code])
    if writeable is None:
        writeable = arr.flags.writeable
    out = c_void_p()
    data = arr.__array_interface__["data"][0]
    check(lib.mxp_array_wrap(ctypes.byref(out), data or None, code, arr.ndim, _i64(arr.shape), _i64(arr.strides),
                             bool(writeable), None, None), "mxp_array_wrap")
    return Array(out.value, keep=(arr,))


def byte_extent(shape, strides, itemsize):
    """(low, high): the byte offsets, relative to element 0, that an array
    touches (high exclusive); (0, 0) when it is empty."""
    if any(n == 0 for n in shape):
        return 0, 0
    low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    high = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0) + itemsize
    return low, high


def to_numpy(a):
    """A NumPy copy of an mxp array (bfloat16/float8 as their bits)."""
    dt = TO_NUMPY[a.dtype]
    shape, strides = a.shape, a.strides
    low, high = byte_extent(shape, strides, dt.itemsize)
    if high == 0:
        return np.empty(shape, dtype=dt)
    buf = (c_char * (high - low)).from_address(a.data + low)
    first = np.frombuffer(buf, dtype=dt, count=1, offset=-low)
    return np.lib.stride_tricks.as_strided(first, shape=shape, strides=strides).copy()


# ---- operations ---------------------------------------------------------


def broadcast_shapes(shape_a, shape_b):
    nd = c_int()
    out = (c_int64 * abi.MXP_MAXDIMS)()
    check(lib.mxp_broadcast_shapes(ctypes.byref(nd), out, len(shape_a), _i64(shape_a), len(shape_b), _i64(shape_b)),
          "mxp_broadcast_shapes")
    return tuple(out[i] for i in range(nd.value))


def _ops_opts(out_dtype, rounding):
    if out_dtype is None and rounding == abi.MXP_ROUND_NEAREST_EVEN:
        return None
    return ctypes.byref(abi.mxp_ops_opts(out_dtype=0 if out_dtype is None else dtype_code(out_dtype),
                                         convert=abi.mxp_convert_opts(rounding=rounding)))


def binary(op, a, b, out_dtype=None, rounding=abi.MXP_ROUND_NEAREST_EVEN):
    """mxp_binary(op name, a, b) -> a new Array."""
    out = c_void_p()
    check(lib.mxp_binary(ctypes.byref(out), BINARY_OPS.index(op), a.ptr, b.ptr, _ops_opts(out_dtype, rounding)),
          "mxp_binary(%s)" % op)
    return Array(out.value)


def unary(op, a, out_dtype=None, rounding=abi.MXP_ROUND_NEAREST_EVEN):
    out = c_void_p()
    check(lib.mxp_unary(ctypes.byref(out), UNARY_OPS.index(op), a.ptr, _ops_opts(out_dtype, rounding)),
          "mxp_unary(%s)" % op)
    return Array(out.value)


def reduce(op, a, axis=None, keepdims=False, ddof=0, out_dtype=None, acc_dtype=None, algorithm=abi.MXP_SUM_PAIRWISE):
    """mxp_reduce with NumPy's axis argument: None, an int or a tuple."""
    if axis is None:
        naxes, axes = 0, None
    else:
        axis = (axis,) if isinstance(axis, int) else tuple(axis)
        naxes, axes = len(axis), _ints(axis)
    o = abi.mxp_reduce_opts(acc_dtype=0 if acc_dtype is None else dtype_code(acc_dtype), algorithm=algorithm,
                            out_dtype=0 if out_dtype is None else dtype_code(out_dtype), keepdims=keepdims, ddof=ddof)
    out = c_void_p()
    check(lib.mxp_reduce(ctypes.byref(out), REDUCE_OPS.index(op), a.ptr, naxes, axes, ctypes.byref(o)),
          "mxp_reduce(%s)" % op)
    return Array(out.value)


def format_array(a, repr=False, precision=0, edgeitems=0, threshold=0, linewidth=0):
    """mxp_array_format(a, opts) -> str (NumPy's str(a), or repr(a))."""
    out = ctypes.c_char_p()
    n = c_size_t()
    o = abi.mxp_print_opts(precision=precision, edgeitems=edgeitems, threshold=threshold, linewidth=linewidth,
                           repr=repr)
    check(lib.mxp_array_format(ctypes.byref(out), ctypes.byref(n), a.ptr, ctypes.byref(o)), "mxp_array_format")
    try:
        return ctypes.string_at(out, n.value).decode()
    finally:
        lib.mxp_free(ctypes.cast(out, c_void_p))


def get_f64(a, idx):
    """mxp_array_get_f64(a, idx) -> float."""
    v = ctypes.c_double()
    check(lib.mxp_array_get_f64(a.ptr, _i64(idx) if len(idx) else None, ctypes.byref(v)), "mxp_array_get_f64")
    return v.value


def binary_scalar(op, a, value, scalar_first=False):
    """a op value (or value op a) with a Python float or int value."""
    out = c_void_p()
    isint = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if scalar_first:
        fn = lib.mxp_scalar_int_binary if isint else lib.mxp_scalar_binary
        st = fn(ctypes.byref(out), BINARY_OPS.index(op), value, a.ptr, None)
    else:
        fn = lib.mxp_binary_scalar_int if isint else lib.mxp_binary_scalar
        st = fn(ctypes.byref(out), BINARY_OPS.index(op), a.ptr, value, None)
    check(st, "mxp_binary_scalar(%s)" % op)
    return Array(out.value)


def scalar_result_type(dtype, ndim, value):
    """mxp_scalar_result_type / mxp_scalar_int_result_type -> an mxp dtype code."""
    if isinstance(value, (int, np.integer)):
        return lib.mxp_scalar_int_result_type(dtype_code(dtype), ndim, int(value))
    return lib.mxp_scalar_result_type(dtype_code(dtype), ndim, float(value))


def matmul(a, b):
    """mxp_matmul(a, b) with default options -> a new Array."""
    out = c_void_p()
    check(lib.mxp_matmul(ctypes.byref(out), a.ptr, b.ptr, None), "mxp_matmul")
    return Array(out.value)


def matmul_into(out, a, b):
    """mxp_matmul_into(out, a, b) with default options."""
    check(lib.mxp_matmul_into(out.ptr, a.ptr, b.ptr, None), "mxp_matmul_into")


def compare(reference, test):
    """mxp_compare(reference, test) -> an mxp_compare_report."""
    rep = abi.mxp_compare_report()
    check(lib.mxp_compare(reference.ptr, test.ptr, ctypes.byref(rep)), "mxp_compare")
    return rep


def binary_result_type(op, a, b):
    return lib.mxp_binary_result_type(BINARY_OPS.index(op), dtype_code(a), dtype_code(b))


def unary_result_type(op, a):
    return lib.mxp_unary_result_type(UNARY_OPS.index(op), dtype_code(a))


def _strided_operand(arr):
    """(address, byte stride) of a 1-d NumPy array."""
    assert arr.ndim == 1
    return arr.__array_interface__["data"][0] or None, arr.strides[0]


def binary_strided(op, out, out_dtype, a, a_dtype, b, b_dtype):
    """mxp_binary_strided over 1-d NumPy arrays (any strides) into out."""
    (o, os), (pa, sa), (pb, sb) = _strided_operand(out), _strided_operand(a), _strided_operand(b)
    check(lib.mxp_binary_strided(BINARY_OPS.index(op), len(out), o, dtype_code(out_dtype), os, pa,
                                 dtype_code(a_dtype), sa, pb, dtype_code(b_dtype), sb, None),
          "mxp_binary_strided(%s)" % op)


def unary_strided(op, out, out_dtype, a, a_dtype):
    (o, os), (pa, sa) = _strided_operand(out), _strided_operand(a)
    check(lib.mxp_unary_strided(UNARY_OPS.index(op), len(out), o, dtype_code(out_dtype), os, pa,
                                dtype_code(a_dtype), sa, None), "mxp_unary_strided(%s)" % op)


def np_dtype(code):
    return TO_NUMPY[code]

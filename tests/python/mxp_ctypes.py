"""A small ctypes binding of libmxp.so: only what the Python tests need.

The library comes from $MXP_LIB (the path of libmxp.so, set by ctest), else
../../build/libmxp.so relative to this file.

    import mxp_ctypes as mx
    a = mx.from_numpy(np.arange(12.0).reshape(3, 4))  # wraps, no copy
    v = a.slice(slice(None, None, -1))                 # an mxp view
    mx.to_numpy(v)                                     # a NumPy copy

Every failing call raises MxpError carrying the status (its number and
mxp_status_str name) and the mxp_last_error() sentence.
"""
import ctypes
import os
from ctypes import POINTER, c_bool, c_char, c_char_p, c_int, c_int64, c_size_t, c_ssize_t, c_uint, c_uint64, c_void_p

import numpy as np

# ---- the library --------------------------------------------------------

_HERE = os.path.dirname(os.path.abspath(__file__))
LIB_PATH = os.environ.get("MXP_LIB") or os.path.join(_HERE, "..", "..", "build", "libmxp.so")
lib = ctypes.CDLL(LIB_PATH)

# ---- enums (include/mxp/*.h; C enums are int) ----------------------------

# mxp_status (common.h)
OK = 0
(ERR_INVALID_ARGUMENT, ERR_INVALID_DTYPE, ERR_SIZE_OVERFLOW, ERR_OVERLAP, ERR_NO_MEMORY, ERR_UNSUPPORTED, ERR_IO,
 ERR_FORMAT, ERR_SHAPE, ERR_INDEX, ERR_READONLY, ERR_CASTING) = range(1, 13)

# mxp_dtype (dtype.h): 0 is never a dtype.
DTYPE_INVALID = 0
BOOL, S8, S16, S32, S64, U8, U16, U32, U64, F16, BF16, F32, F64, E4M3, E5M2 = range(1, 16)
DTYPE_NAMES = {
    BOOL: "bool", S8: "int8", S16: "int16", S32: "int32", S64: "int64",
    U8: "uint8", U16: "uint16", U32: "uint32", U64: "uint64",
    F16: "float16", BF16: "bfloat16", F32: "float32", F64: "float64",
    E4M3: "float8_e4m3fn", E5M2: "float8_e5m2",
}

# NumPy dtype of each mxp dtype; bfloat16 and float8 are carried as their bits.
TO_NUMPY = {
    BOOL: np.dtype(np.bool_), S8: np.dtype(np.int8), S16: np.dtype(np.int16), S32: np.dtype(np.int32),
    S64: np.dtype(np.int64), U8: np.dtype(np.uint8), U16: np.dtype(np.uint16), U32: np.dtype(np.uint32),
    U64: np.dtype(np.uint64), F16: np.dtype(np.float16), BF16: np.dtype(np.uint16), F32: np.dtype(np.float32),
    F64: np.dtype(np.float64), E4M3: np.dtype(np.uint8), E5M2: np.dtype(np.uint8),
}
# The standard types only (a NumPy uint16 array is uint16, not bfloat16).
FROM_NUMPY = {dt: code for code, dt in TO_NUMPY.items() if code not in (BF16, E4M3, E5M2)}

# mxp_rounding, mxp_overflow (convert.h)
ROUND_NEAREST_EVEN, ROUND_NEAREST_AWAY, ROUND_TOWARD_ZERO, ROUND_UP, ROUND_DOWN, ROUND_STOCHASTIC = range(6)
OVERFLOW_INF, OVERFLOW_SATURATE = range(2)

# mxp_binary_op, mxp_unary_op (ops.h)
BINARY_OPS = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
              "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
              "floor_divide", "remainder", "fmod", "fmax", "fmin", "arctan2", "hypot", "copysign", "nextafter",
              "logical_and", "logical_or", "logical_xor", "ldexp"]
UNARY_OPS = ["negative", "abs", "sqrt", "exp", "log", "tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "silu",
             "positive", "sign", "reciprocal", "square", "cbrt", "exp2", "expm1", "log2", "log10", "log1p",
             "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh",
             "floor", "ceil", "rint", "trunc", "spacing", "isnan", "isinf", "isfinite", "signbit", "logical_not",
             "frexp_mantissa", "frexp_exponent"]

# mxp_reduce_op, mxp_sum_algorithm (ops.h)
REDUCE_OPS = ["sum", "mean", "prod", "max", "min", "argmax", "argmin", "norm2", "var", "std"]
SUM_PAIRWISE, SUM_KAHAN, SUM_NAIVE = range(3)

# array.h
MAXDIMS = 32
SLICE_NONE = -(2**63)  # INT64_MIN
ALL_AXES = -(2**31)    # INT32_MIN
C_CONTIGUOUS, F_CONTIGUOUS, WRITEABLE, ALIGNED, OWNDATA = 0x1, 0x2, 0x4, 0x8, 0x10

# ---- structs ------------------------------------------------------------


class Slice(ctypes.Structure):
    _fields_ = [("start", c_int64), ("stop", c_int64), ("step", c_int64)]


class ConvertOpts(ctypes.Structure):
    # struct_size 0: the library's layout of this release (docs/abi.md).
    _fields_ = [("struct_size", ctypes.c_size_t), ("rounding", c_int), ("overflow", c_int), ("seed", c_uint64), ("flags", c_void_p),
                ("index_offset", c_uint64)]


class OpsOpts(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("out_dtype", c_int), ("convert", ConvertOpts)]


class ReduceOpts(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t),
                ("acc_dtype", c_int), ("algorithm", c_int), ("out_dtype", c_int), ("keepdims", c_bool),
                ("ddof", c_int64), ("convert", ConvertOpts)]


class PrintOpts(ctypes.Structure):
    """mxp_print_opts (array.h)."""
    _fields_ = [("struct_size", ctypes.c_size_t),
                ("precision", c_int), ("edgeitems", c_int), ("threshold", c_int64), ("linewidth", c_int),
                ("repr", c_bool)]


PRINT_PRECISION_NONE = -1

COMPARE_BINS = 32  # MXP_COMPARE_BINS (analysis.h)


class CompareReport(ctypes.Structure):
    """mxp_compare_report (analysis.h)."""
    _fields_ = [("struct_size", ctypes.c_size_t)] + [(name, ctypes.c_double) for name in (
        "max_abs_error", "max_rel_error", "mean_rel_error",
        "p50_rel_error", "p90_rel_error", "p99_rel_error", "p999_rel_error",
        "mse", "rmse", "psnr_db", "snr_db", "cosine_similarity", "max_ulp", "mean_ulp")] + [
        ("worst_index", c_int64), ("nan_mismatches", c_int64), ("inf_mismatches", c_int64), ("count", c_int64),
        ("histogram", c_int64 * COMPARE_BINS), ("histogram_edges", ctypes.c_double * (COMPARE_BINS + 1))]


# Sizes from the C compiler on x86-64 / aarch64 Linux (sizeof in C).
assert ctypes.sizeof(Slice) == 24
assert ctypes.sizeof(ConvertOpts) == 40
assert ctypes.sizeof(OpsOpts) == 56 and OpsOpts.convert.offset == 16
assert ctypes.sizeof(ReduceOpts) == 72 and ReduceOpts.ddof.offset == 24 and ReduceOpts.convert.offset == 32
assert ctypes.sizeof(PrintOpts) == 32
assert ctypes.sizeof(CompareReport) == 672 and CompareReport.worst_index.offset == 120

# ---- prototypes ---------------------------------------------------------

P = c_void_p  # mxp_array *
PP = POINTER(c_void_p)
I64P = POINTER(c_int64)
IP = POINTER(c_int)


def _proto(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_proto("mxp_status_str", c_char_p, c_int)
_proto("mxp_last_error", c_char_p)
_proto("mxp_clear_error", None)
_proto("mxp_dtype_name", c_char_p, c_int)
_proto("mxp_dtype_from_name", c_int, c_char_p)
_proto("mxp_promote_types", c_int, c_int, c_int)
_proto("mxp_array_free", None, P)
_proto("mxp_array_dtype", c_int, P)
_proto("mxp_array_ndim", c_int, P)
_proto("mxp_array_shape", I64P, P)
_proto("mxp_array_strides", I64P, P)
_proto("mxp_array_size", c_int64, P)
_proto("mxp_array_itemsize", c_size_t, P)
_proto("mxp_array_data", c_void_p, P)
_proto("mxp_array_flags", c_uint, P)
_proto("mxp_array_wrap", c_int, PP, c_void_p, c_int, c_int, I64P, I64P, c_bool, c_void_p, c_void_p)
_proto("mxp_array_slice", c_int, PP, P, c_int, POINTER(Slice))
_proto("mxp_array_index", c_int, PP, P, c_int, c_int64)
_proto("mxp_array_transpose", c_int, PP, P, IP)
_proto("mxp_array_reshape", c_int, PP, P, c_int, I64P)
_proto("mxp_array_reshape_copy", c_int, PP, P, c_int, I64P)
_proto("mxp_array_squeeze", c_int, PP, P, c_int)
_proto("mxp_array_expand_dims", c_int, PP, P, c_int)
_proto("mxp_array_broadcast_to", c_int, PP, P, c_int, I64P)
_proto("mxp_broadcast_shapes", c_int, IP, I64P, c_int, I64P, c_int, I64P)
_proto("mxp_array_ascontiguous", c_int, PP, P, c_char)
_proto("mxp_array_astype", c_int, PP, P, c_int, POINTER(ConvertOpts))
_proto("mxp_binary", c_int, PP, c_int, P, P, POINTER(OpsOpts))
_proto("mxp_unary", c_int, PP, c_int, P, POINTER(OpsOpts))
_proto("mxp_binary_result_type", c_int, c_int, c_int, c_int)
_proto("mxp_unary_result_type", c_int, c_int, c_int)
_proto("mxp_binary_op_name", c_char_p, c_int)
_proto("mxp_binary_strided", c_int, c_int, c_size_t, P, c_int, c_ssize_t, P, c_int, c_ssize_t, P, c_int, c_ssize_t,
       POINTER(ConvertOpts))
_proto("mxp_unary_strided", c_int, c_int, c_size_t, P, c_int, c_ssize_t, P, c_int, c_ssize_t, POINTER(ConvertOpts))
_proto("mxp_unary_op_name", c_char_p, c_int)
_proto("mxp_reduce", c_int, PP, c_int, P, c_int, IP, POINTER(ReduceOpts))
_proto("mxp_reduce_op_name", c_char_p, c_int)
# opts (const mxp_gemm_opts *) is passed as NULL: the defaults.
_proto("mxp_matmul", c_int, PP, P, P, c_void_p)
_proto("mxp_matmul_into", c_int, P, P, P, c_void_p)
_proto("mxp_compare", c_int, P, P, POINTER(CompareReport))
_proto("mxp_array_format", c_int, POINTER(ctypes.c_char_p), POINTER(c_size_t), P, POINTER(PrintOpts))
_proto("mxp_array_get_f64", c_int, P, I64P, POINTER(ctypes.c_double))
_proto("mxp_free", None, c_void_p)
_proto("mxp_array_scalar", c_int, PP, ctypes.c_double, c_int)
_proto("mxp_binary_scalar", c_int, PP, c_int, P, ctypes.c_double, POINTER(OpsOpts))
_proto("mxp_binary_scalar_int", c_int, PP, c_int, P, c_int64, POINTER(OpsOpts))
_proto("mxp_scalar_binary", c_int, PP, c_int, ctypes.c_double, P, POINTER(OpsOpts))
_proto("mxp_scalar_int_binary", c_int, PP, c_int, c_int64, P, POINTER(OpsOpts))
_proto("mxp_scalar_result_type", c_int, c_int, c_int, ctypes.c_double)
_proto("mxp_scalar_int_result_type", c_int, c_int, c_int, c_int64)

# ---- errors -------------------------------------------------------------


class MxpError(Exception):
    """A failed mxp call: .status (int), .status_name, .message."""

    def __init__(self, status, where=""):
        self.status = status
        self.status_name = lib.mxp_status_str(status).decode()
        self.message = (lib.mxp_last_error() or b"").decode()
        super().__init__("%s%s: %s" % (where + ": " if where else "", self.status_name, self.message))


def check(status, where=""):
    if status != OK:
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
        s = (Slice * max(len(slices), 1))(*[to_slice(x) for x in slices])
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
                          ALL_AXES if axis is None else axis)

    def expand_dims(self, axis):
        return self._make(lib.mxp_array_expand_dims, "mxp_array_expand_dims", self.ptr, axis)

    def broadcast_to(self, shape):
        return self._make(lib.mxp_array_broadcast_to, "mxp_array_broadcast_to", self.ptr, len(shape), _i64(shape))

    def ascontiguous(self, order="C"):
        return self._make(lib.mxp_array_ascontiguous, "mxp_array_ascontiguous", self.ptr, order.encode())

    def astype(self, dtype, rounding=ROUND_NEAREST_EVEN, overflow=OVERFLOW_INF, seed=0):
        o = ConvertOpts(0, rounding, overflow, seed, None, 0)
        return self._make(lib.mxp_array_astype, "mxp_array_astype", self.ptr, dtype_code(dtype), ctypes.byref(o),
                          keep=())


def dtype_code(dt):
    """An mxp_dtype from an int code or anything np.dtype accepts."""
    if isinstance(dt, int):
        return dt
    return FROM_NUMPY[np.dtype(dt)]


def to_slice(s):
    """A Python slice (or an mxp Slice) as an mxp_slice."""
    if isinstance(s, Slice):
        return s
    if not isinstance(s, slice):
        raise TypeError("expected a slice, got %r" % (s,))
    none = lambda v: SLICE_NONE if v is None else int(v)  # noqa: E731
    return Slice(none(s.start), none(s.stop), 1 if s.step is None else int(s.step))


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
    out = (c_int64 * MAXDIMS)()
    check(lib.mxp_broadcast_shapes(ctypes.byref(nd), out, len(shape_a), _i64(shape_a), len(shape_b), _i64(shape_b)),
          "mxp_broadcast_shapes")
    return tuple(out[i] for i in range(nd.value))


def _ops_opts(out_dtype, rounding):
    if out_dtype is None and rounding == ROUND_NEAREST_EVEN:
        return None
    return ctypes.byref(OpsOpts(0, 0 if out_dtype is None else dtype_code(out_dtype),
                                ConvertOpts(0, rounding, OVERFLOW_INF, 0, None, 0)))


def binary(op, a, b, out_dtype=None, rounding=ROUND_NEAREST_EVEN):
    """mxp_binary(op name, a, b) -> a new Array."""
    out = c_void_p()
    check(lib.mxp_binary(ctypes.byref(out), BINARY_OPS.index(op), a.ptr, b.ptr, _ops_opts(out_dtype, rounding)),
          "mxp_binary(%s)" % op)
    return Array(out.value)


def unary(op, a, out_dtype=None, rounding=ROUND_NEAREST_EVEN):
    out = c_void_p()
    check(lib.mxp_unary(ctypes.byref(out), UNARY_OPS.index(op), a.ptr, _ops_opts(out_dtype, rounding)),
          "mxp_unary(%s)" % op)
    return Array(out.value)


def reduce(op, a, axis=None, keepdims=False, ddof=0, out_dtype=None, acc_dtype=None, algorithm=SUM_PAIRWISE):
    """mxp_reduce with NumPy's axis argument: None, an int or a tuple."""
    if axis is None:
        naxes, axes = 0, None
    else:
        axis = (axis,) if isinstance(axis, int) else tuple(axis)
        naxes, axes = len(axis), _ints(axis)
    o = ReduceOpts(0, 0 if acc_dtype is None else dtype_code(acc_dtype), algorithm,
                   0 if out_dtype is None else dtype_code(out_dtype), keepdims, ddof,
                   ConvertOpts(0, ROUND_NEAREST_EVEN, OVERFLOW_INF, 0, None, 0))
    out = c_void_p()
    check(lib.mxp_reduce(ctypes.byref(out), REDUCE_OPS.index(op), a.ptr, naxes, axes, ctypes.byref(o)),
          "mxp_reduce(%s)" % op)
    return Array(out.value)


def format_array(a, repr=False, precision=0, edgeitems=0, threshold=0, linewidth=0):
    """mxp_array_format(a, opts) -> str (NumPy's str(a), or repr(a))."""
    out = ctypes.c_char_p()
    n = c_size_t()
    o = PrintOpts(0, precision, edgeitems, threshold, linewidth, repr)
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
    """mxp_compare(reference, test) -> a CompareReport."""
    rep = CompareReport()
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

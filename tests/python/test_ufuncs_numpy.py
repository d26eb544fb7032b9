"""The NumPy ufunc operations of mxp (floor_divide ... ldexp, positive ...
frexp) against NumPy itself, through ctypes on libmxp.so: result dtypes for
every pair of NumPy's types; float16/float32/float64 values bit for bit
where both compute an exact or correctly rounded result, the transcendental
functions bit for bit against the C library's (glibc libm's) float64 function
rounded once (float32 sin and cos, which go through SLEEF, within 1 ulp of it) (and within a few ulp of NumPy's own loops: on AVX-512 NumPy
1.24 computes float32 and float64 with SIMD code of up to 4 ulp, elsewhere
with libm);
integer semantics; the strided entry points on NumPy's strided views.  Where
mxp differs from NumPy on purpose (NumPy's float16 loops for spacing of
negative values and nextafter(x, x) of zeros; saturating integers) the
difference itself is tested.

Run by ctest (pytest_ufuncs) with MXP_LIB naming libmxp.so; by hand:
    MXP_LIB=build/libmxp.so /usr/bin/python3 -m pytest -q tests/python/test_ufuncs_numpy.py
"""
import ctypes
import ctypes.util
import itertools
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxp_ctypes as mx  # noqa: E402
from test_array_numpy import assert_bits, assert_ulp, rng  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

TYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
         "float64"]
INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOATS = ["float16", "float32", "float64"]

NEW_BINARY = ["floor_divide", "remainder", "fmod", "fmax", "fmin", "arctan2", "hypot", "copysign", "nextafter",
              "logical_and", "logical_or", "logical_xor", "ldexp"]
NEW_UNARY = ["positive", "sign", "reciprocal", "square", "cbrt", "exp2", "expm1", "log2", "log10", "log1p", "sin",
             "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "floor",
             "ceil", "rint", "trunc", "spacing", "isnan", "isinf", "isfinite", "signbit", "logical_not",
             "frexp_mantissa", "frexp_exponent"]
TRANSCENDENTAL = ["cbrt", "exp2", "expm1", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos",
                  "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh"]

# float32 results of these come from SLEEF's float32 functions (1 ulp; libm's
# float64 rounded once at MXP_ISA=scalar or without SLEEF): docs/ops.md
SLEEF_F32 = ["sin", "cos"]


def np_unary(op):
    """NumPy's function for an mxp unary op (frexp split in two)."""
    if op == "frexp_mantissa":
        return lambda x: np.frexp(x)[0]
    if op == "frexp_exponent":
        return lambda x: np.frexp(x)[1]
    return getattr(np, op)


_LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
_LIBM_NAMES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh",
               "arctanh": "atanh", "arctan2": "atan2"}


def libm(op, *args):
    """The C library's float64 function, element by element: the oracle for
    mxp's transcendental functions (NumPy's own float64 loops are libm's on
    some machines and SVML's, within 4 ulp, on AVX-512 ones)."""
    f = getattr(_LIBM, _LIBM_NAMES.get(op, op))
    f.restype = ctypes.c_double
    f.argtypes = [ctypes.c_double] * len(args)
    flat = [np.asarray(a, np.float64).ravel() for a in args]
    out = np.array([f(*vals) for vals in zip(*[a.tolist() for a in flat])], np.float64)
    return out.reshape(np.shape(args[0]))


# NumPy's own loops against which mxp stays within this many ulp: its float16
# loops compute in float32 and round (1 ulp); its float32/float64 loops are
# SIMD on AVX-512 machines (up to 4 ulp, its documented bound).
NUMPY_LOOP_ULP = {"float16": 1, "float32": 4, "float64": 4}


def mxp_binary(op, x, y):
    return mx.to_numpy(mx.binary(op, mx.from_numpy(x), mx.from_numpy(y)))


def mxp_unary(op, x):
    return mx.to_numpy(mx.unary(op, mx.from_numpy(x)))


# ---- result dtypes --------------------------------------------------------


@pytest.mark.parametrize("op", NEW_BINARY)
def test_binary_result_dtype_every_pair(op):
    """NumPy's ufunc type resolution; where NumPy has no loop, mxp still
    gives the float/integer type NumPy's rules imply, except ldexp, whose
    exponent must be an integer NumPy accepts (no uint64, no floats)."""
    bad = []
    for ta, tb in itertools.product(TYPES, repeat=2):
        got = mx.binary_result_type(op, ta, tb)
        try:
            want = getattr(np, op)(np.ones(1, ta), np.ones(1, tb)).dtype
        except TypeError:
            if op == "ldexp" and got != 0:
                bad.append("ldexp(%s, %s): mxp %s, NumPy refuses" % (ta, tb, mx.np_dtype(got)))
            continue
        if got == 0 or mx.np_dtype(got) != want:
            bad.append("%s(%s, %s): mxp %s, NumPy %s" % (op, ta, tb, got and mx.np_dtype(got), want))
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("op", NEW_UNARY)
def test_unary_result_dtype_every_type(op):
    bad = []
    for t in TYPES:
        got = mx.unary_result_type(op, t)
        try:
            want = np_unary(op)(np.ones(1, t)).dtype
        except TypeError:
            continue  # bool positive/sign: NumPy has no loop, mxp keeps bool
        if mx.np_dtype(got) != want:
            bad.append("%s(%s): mxp %s, NumPy %s" % (op, t, mx.np_dtype(got), want))
    assert not bad, "\n".join(bad)


# ---- float values -----------------------------------------------------------


def float_pool(dtype, *key):
    """Specials, subnormals, halves and integers, a spread of magnitudes and
    random finite bit patterns."""
    dt = np.dtype(dtype)
    fi = np.finfo(dt)
    r = rng("pool", dtype, *key)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny,
               -fi.tiny, fi.max, -fi.max, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -7.0, 0.1, 1e-3, 100.0]
    spread = r.standard_normal(400) * 10.0 ** r.uniform(-4, 4, 400)
    bits = r.integers(0, 2 ** (8 * dt.itemsize), 300, dtype=np.uint64).astype("u%d" % dt.itemsize).view(dt)
    with np.errstate(all="ignore"):
        return np.concatenate([np.array(special, dt), spread.astype(dt), bits[np.isfinite(bits)]])


def float_pairs(dtype, op):
    """Every pair of the specials and random pairs of the pool."""
    v = float_pool(dtype, op)
    s = v[:25]
    x = np.concatenate([np.repeat(s, len(s)), v, v[::-1]])
    y = np.concatenate([np.tile(s, len(s)), rng("pairs", dtype, op).permutation(v), v])
    return x, y


EXACT_BINARY = ["floor_divide", "remainder", "fmod", "fmax", "fmin", "copysign", "nextafter", "logical_and",
                "logical_or", "logical_xor"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", EXACT_BINARY)
def test_exact_binary_bit_for_bit(op, dtype):
    """floor_divide and remainder are NumPy's divmod in float32 for float16
    and float32 (as NumPy's loops), in float64 for float64: the same bits."""
    x, y = float_pairs(dtype, op)
    got = mxp_binary(op, x, y)
    want = getattr(np, op)(x, y)
    keep = np.ones(len(x), bool)
    if dtype == "float16" and op == "nextafter":
        keep = x != y  # NumPy's float16 loop gives x for x == y, IEEE (and its float32 loop) y: see below
    # NumPy's float16 fmax/fmin return the first of +0/-0, its float32/64 loops the second (as mxp)
    assert_bits(got[keep], want[keep], "%s(%s)" % (op, dtype), zero_sign=not (op in ("fmax", "fmin") and
                                                                               dtype == "float16"))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["arctan2", "hypot"])
def test_arctan2_hypot_are_float64_rounded_once(op, dtype):
    x, y = float_pairs(dtype, op)
    got = mxp_binary(op, x, y)
    want = libm(op, x, y).astype(dtype)
    assert_bits(got, want, "%s(%s)" % (op, dtype))
    assert_ulp(got, getattr(np, op)(x, y), NUMPY_LOOP_ULP[dtype], "%s(%s) against NumPy's own loop" % (op, dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_ldexp_bit_for_bit(dtype):
    x = float_pool(dtype, "ldexp")
    for et in ("int8", "int32", "int64"):
        info = np.iinfo(et)
        e = rng("ldexp", dtype, et).integers(-40, 41, len(x)).astype(et)
        e[::7] = info.min
        e[3::7] = info.max
        e[5::11] = max(info.min, -1100)
        e[6::13] = min(info.max, 1100)
        got = mxp_binary("ldexp", x, e)
        assert_bits(got, np.ldexp(x, e), "ldexp(%s, %s)" % (dtype, et))


EXACT_UNARY = ["positive", "sign", "reciprocal", "square", "floor", "ceil", "rint", "trunc", "isnan", "isinf",
               "isfinite", "signbit", "logical_not", "frexp_mantissa", "frexp_exponent", "spacing"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", EXACT_UNARY)
def test_exact_unary_bit_for_bit(op, dtype):
    x = float_pool(dtype, op)
    got = mxp_unary(op, x)
    want = np_unary(op)(x)
    if op == "spacing" and dtype == "float16":
        keep = ~np.signbit(x)  # negatives: test_float16_spacing_and_nextafter_follow_float32s_rule
        got, want = got[keep], want[keep]
    assert_bits(got, want, "%s(%s)" % (op, dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", TRANSCENDENTAL)
def test_transcendental_are_float64_rounded_once(op, dtype):
    """Bit for bit libm's float64 function rounded once to the dtype; within
    NUMPY_LOOP_ULP of NumPy's own loops."""
    x = float_pool(dtype, op)
    got = mxp_unary(op, x)
    if dtype == "float32" and op in SLEEF_F32:
        assert_ulp(got, libm(op, x).astype(dtype), 1, "%s(%s) through SLEEF" % (op, dtype), inputs=x)
    else:
        assert_bits(got, libm(op, x).astype(dtype), "%s(%s)" % (op, dtype))
    assert_ulp(got, getattr(np, op)(x), NUMPY_LOOP_ULP[dtype], "%s(%s) against NumPy's own loop" % (op, dtype),
               inputs=x)


def test_float16_spacing_and_nextafter_follow_float32s_rule():
    """NumPy's float16 loops differ from its float32/float64 ones here; mxp
    follows float32/float64 (IEEE) for every dtype: spacing(x) is signed as
    x (float16: always positive, and below -2^k the smaller gap), and
    nextafter(x, y) is y when x == y (float16: x)."""
    x = np.array([-1.0, -3.0, -0.5, -65504.0, 1.0], np.float16)
    got = mxp_unary("spacing", x)
    want32 = np.array([-2.0 ** -10, -2.0 ** -9, -2.0 ** -11, -np.inf, 2.0 ** -10], np.float16)
    assert_bits(got, want32, "float16 spacing")
    assert np.spacing(np.float16(-1.0)) == 2.0 ** -11  # NumPy's float16 loop
    assert np.spacing(np.float32(-1.0)) == -(2.0 ** -23)  # NumPy's float32 loop
    z = np.array([0.0, -0.0], np.float16)
    got = mxp_binary("nextafter", z, z[::-1].copy())
    assert_bits(got, z[::-1], "float16 nextafter(+-0, -+0)")
    assert_bits(np.nextafter(z.astype(np.float32), z[::-1].astype(np.float32)), z[::-1].astype(np.float32))


# ---- integers --------------------------------------------------------------


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", ["floor_divide", "remainder", "fmod", "fmax", "fmin", "logical_and", "logical_xor"])
def test_integer_binary(op, dtype):
    """Floor division and remainders of NumPy's, 0 for division by zero;
    (NumPy's MIN // -1 wraps around where mxp saturates: not drawn here)."""
    info = np.iinfo(dtype)
    r = rng("int", op, dtype)
    lo = max(info.min, -1000)
    x = r.integers(lo, min(info.max, 1000), 3000, endpoint=True).astype(dtype)
    y = r.integers(lo, min(info.max, 1000), 3000, endpoint=True).astype(dtype)
    y[::5] = 0
    x[::7] = info.max
    if info.min < 0:
        x[1::7] = info.min + 1
    got = mxp_binary(op, x, y)
    assert_bits(got, getattr(np, op)(x, y), "%s(%s)" % (op, dtype))


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", ["positive", "sign", "reciprocal", "square", "isnan", "isinf", "isfinite", "signbit",
                                "logical_not", "floor", "rint", "spacing", "sqrt"])
def test_integer_unary(op, dtype):
    info = np.iinfo(dtype)
    x = rng("int", op, dtype).integers(max(info.min, -11), 11, 500, endpoint=True).astype(dtype)
    if op == "reciprocal":
        x[x == 0] = 1  # NumPy's 1/0 is undefined behaviour (mxp: 0, test_ufuncs)
    if op == "spacing" and np.dtype(dtype).itemsize == 1:
        x = abs(x).astype(dtype)  # float16 results: test_float16_spacing_and_nextafter_follow_float32s_rule
    got = mxp_unary(op, x)
    want = np_unary(op)(x)
    if op == "sqrt":
        assert_ulp(got, want, 1, "sqrt(%s)" % dtype)  # NumPy's float16 sqrt of int8 goes through float32
    else:
        assert_bits(got, want, "%s(%s)" % (op, dtype))


def test_integer_overflow_saturates_where_numpy_wraps():
    """docs/ops.md: 8-, 16- and 32-bit integer results saturate."""
    x, y = np.array([-128, 100], np.int8), np.array([-1, 2], np.int8)
    assert list(mxp_binary("floor_divide", x, y)) == [127, 50]
    assert list(np.floor_divide(x, y)) == [-128, 50]
    assert list(mxp_unary("square", np.array([100], np.int8))) == [127]
    assert list(np.square(np.array([100], np.int8))) == [16]


# ---- the strided entry points ---------------------------------------------------


@pytest.mark.parametrize("op", ["add", "remainder", "nextafter", "hypot", "greater"])
def test_binary_strided_on_numpy_views(op):
    """Reversed, every-other and broadcast (stride 0) views, as a ufunc
    inner loop sees them: NumPy's bits."""
    r = rng("strided", op)
    a = r.standard_normal(4001).astype(np.float16)
    b = r.standard_normal(2001).astype(np.float16)
    want = getattr(np, op)(a[::-2], b)
    out = np.zeros(len(want) * 3, want.dtype)
    mx.binary_strided(op, out[::3], want.dtype, a[::-2], "float16", b, "float16")
    assert_bits(out[::3], want, op)
    scalar = np.broadcast_to(np.float16(0.75), (2001,))
    want = getattr(np, op)(b, scalar)
    out = np.zeros(2001, want.dtype)
    mx.binary_strided(op, out[::-1], want.dtype, b[::-1], "float16", scalar, "float16")
    assert_bits(out, want, op + " with a stride-0 scalar")


@pytest.mark.parametrize("op", ["rint", "spacing", "log1p", "isfinite"])
def test_unary_strided_on_numpy_views(op):
    x = float_pool("float32", "strided", op)
    want = np_unary(op)(x[::-3])
    if op == "log1p":
        want = np.log1p(x[::-3].astype(np.float64)).astype(np.float32)
    out = np.zeros(len(want) * 2, want.dtype)
    mx.unary_strided(op, out[::2], want.dtype, x[::-3], "float32")
    assert_bits(out[::2], want, op)

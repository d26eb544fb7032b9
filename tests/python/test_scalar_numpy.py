"""Python-style scalar operands (mxp_binary_scalar & co.) against NumPy
1.24 itself: the result dtype of array op python_scalar and
python_scalar op array (value-based casting) for every NumPy dtype and a
spread of values, and the values computed, bit for bit where NumPy's loops
round the same way (no integer overflow, which mxp saturates).

Run by ctest (pytest_scalar) with MXP_LIB naming libmxp.so.
"""
import os
import sys
import warnings

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxp_ctypes as mx  # noqa: E402

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float16, np.float32, np.float64]
FLOATS = [0.5, -0.1, 1e-8, 3.0, 64999.0, 65000.0, 70000.0, -1e5, 3.3e38, 3.5e38, -1e300, float("inf"),
          float("nan")]
INTS = [0, 1, -1, 100, 127, 128, 200, 255, 256, -128, -129, 1000, 32767, 32768, 65535, 65536, -32769,
        2**31 - 1, 2**31, 2**32, -2**31, -2**31 - 1, 2**62, -2**63]


def numpy_type(dtype, ndim, value):
    arr = np.zeros((2,) * ndim, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (arr + value).dtype


@pytest.mark.parametrize("ndim", [1, 2, 0])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_result_types_are_numpys(dtype, ndim):
    for value in FLOATS + INTS:
        want = numpy_type(dtype, ndim, value)
        got = mx.scalar_result_type(dtype, ndim, value)
        assert mx.np_dtype(got) == want, (np.dtype(dtype).name, ndim, value)


OPS = ["add", "subtract", "multiply", "divide", "maximum", "less", "equal"]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8, np.int64, np.float16, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_values_and_dtypes_match_numpy(op, dtype):
    rng = np.random.default_rng(3)
    if np.dtype(dtype).kind == "f":
        arr = (rng.standard_normal(37) * 4).astype(dtype)
        values = [0.5, -0.1, 3, -2, 2.75]
    else:
        arr = rng.integers(-5 if np.dtype(dtype).kind == "i" else 0, 20, 37).astype(dtype)
        values = [3, 100, 2.5, -0.25] + ([-7] if np.dtype(dtype).kind == "i" else [7])
    ufunc = getattr(np, op if op != "divide" else "true_divide")
    a = mx.from_numpy(arr)
    for value in values:
        for first in (False, True):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # x / 0 as NumPy gives it
                want = ufunc(value, arr) if first else ufunc(arr, value)
            got = mx.to_numpy(mx.binary_scalar(op, a, value, scalar_first=first))
            assert got.dtype == want.dtype, (op, value, first)
            if want.dtype.kind in "iu":  # NumPy wraps around where mxp saturates (docs/ops.md)
                wide = arr.astype(np.int64)
                exact = ufunc(value, wide) if first else ufunc(wide, value)
                info = np.iinfo(want.dtype)
                assert got.tolist() == np.clip(exact, info.min, info.max).tolist(), (op, value, first)
                fits = exact == want.astype(np.int64)
                assert got[fits].tolist() == want[fits].tolist()
            else:
                np.testing.assert_array_equal(got, want, err_msg=f"{op} {value} first={first}")


def test_bfloat16_and_float8_keep_their_dtype_within_range():
    for code, big in [(mx.BF16, 1e39), (mx.E4M3, 1000.0), (mx.E5M2, 1e5)]:
        assert mx.scalar_result_type(code, 1, 0.5) == code
        assert mx.scalar_result_type(code, 1, 3) == code
        assert mx.scalar_result_type(code, 1, float("nan")) == code
        assert mx.scalar_result_type(code, 1, big) != code  # beyond the range: promoted
    assert mx.scalar_result_type(mx.E4M3, 1, 1000.0) == mx.F16   # float16 holds 1000 and every e4m3 value
    assert mx.scalar_result_type(mx.E4M3, 1, float("inf")) == mx.F16  # e4m3 has no inf
    assert mx.scalar_result_type(mx.E5M2, 1, float("inf")) == mx.E5M2
    assert mx.scalar_result_type(mx.BF16, 1, 1e39) == mx.F64
    assert mx.scalar_result_type(mx.BF16, 0, 0.5) == mx.F64  # a 0-d array: no value-based casting
    assert mx.scalar_result_type(mx.E4M3, 1, 1000) == mx.F32     # uint16 with e4m3: float32


def test_bad_input():
    a = mx.from_numpy(np.ones(3, np.float32))
    out = mx.c_void_p()
    assert mx.lib.mxp_binary_scalar(mx.ctypes.byref(out), 99, a.ptr, 1.0, None) == mx.ERR_INVALID_ARGUMENT
    assert b"op 99" in mx.lib.mxp_last_error()
    assert mx.lib.mxp_binary_scalar(mx.ctypes.byref(out), 0, None, 1.0, None) == mx.ERR_INVALID_ARGUMENT
    assert mx.lib.mxp_array_scalar(mx.ctypes.byref(out), 1.0, 99) == mx.ERR_INVALID_DTYPE
    assert mx.scalar_result_type(99, 1, 1.0) == mx.DTYPE_INVALID
    with pytest.raises(mx.MxpError, match="ldexp"):  # a float exponent has no ldexp
        mx.binary_scalar("ldexp", a, 2.0)
    got = mx.to_numpy(mx.binary_scalar("ldexp", a, 3))  # an int exponent: a's dtype
    assert got.dtype == np.float32 and got.tolist() == [8.0, 8.0, 8.0]

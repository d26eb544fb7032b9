"""mxp_array_format (and so mxp_array_fprint) against NumPy's own
np.array2string (= str() but for 0-d arrays) and repr() of the same arrays, character for character: every kind NumPy
has (positional and scientific floats, nan/inf/-0, subnormals, integer
extremes, bool, 0-d, empty, wrapped lines, summaries), the repr's dtype
suffix and where it wraps, and the options (precision, edgeitems,
threshold, linewidth) as np.array2string / np.printoptions take them.
Also mxp_array_get_f64 against NumPy's indexing.

Run by ctest (pytest_print) with MXP_LIB naming libmxp.so.
"""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxp_ctypes as mx  # noqa: E402

CASES = {
    "float32 0.1": np.array([0.1, 1, 2.5], np.float32),
    "float64 scientific": np.array([1e-5, 1, 1000.0]),
    "float64 ratio over 1000": np.array([1, 1000.5]),
    "nan inf -0": np.array([[np.nan, -np.inf, 1.5], [0, -0.0, 3]]),
    "float16 2-d": np.arange(12, dtype=np.float16).reshape(3, 4) / 3,
    "float16 subnormal": np.array([2.0 ** -24, 65504], np.float16),
    "float64 extremes": np.array([5e-324, 1e300, -1.7976931348623157e308]),
    "0-d float64": np.array(1.5),
    "0-d float32": np.array(0.1, np.float32),
    "0-d int8": np.array(-7, np.int8),
    "0-d bool": np.array(True),
    "empty 1-d": np.zeros(0),
    "empty 1-d float32": np.zeros(0, np.float32),
    "empty 2-d": np.zeros((3, 0)),
    "empty 2-d int32": np.zeros((0, 2), np.int32),
    "int64": np.arange(-5, 7).reshape(3, 4),
    "int32": np.arange(-5, 7, dtype=np.int32).reshape(3, 4),
    "int64 extremes": np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max]),
    "uint64 max": np.array([0, np.iinfo(np.uint64).max], np.uint64),
    "uint8": np.arange(0, 256, 17, dtype=np.uint8),
    "int16 3-d": np.arange(24, dtype=np.int16).reshape(2, 3, 4),
    "bool": np.array([[True, False], [False, True]]),
    "bool 1-d": np.array([True, False, True]),
    "5-d": np.ones((2, 1, 2, 1, 2)),
    "wrapped float64": np.linspace(-1, 1, 30),
    "wrapped float32": np.linspace(-1, 1, 30).astype(np.float32),
    "wrapped int8 2-d": np.arange(-60, 60, dtype=np.int8).reshape(2, 60),
    "summary 1-d": np.arange(2000) / 7,
    "summary 2-d int32": np.arange(3600, dtype=np.int32).reshape(60, 60) - 1000,
    "summary 3-d": np.arange(4000.0).reshape(10, 20, 20),
    "fortran order": np.asfortranarray(np.arange(12.0).reshape(3, 4) ** 3),
    "reversed view": np.arange(10, dtype=np.float32)[::-2],
    "dtype on its own line": np.linspace(0, 1, 12).astype(np.float32),
}
OPTIONS = [{}, {"precision": 3}, {"precision": 0}, {"edgeitems": 1}, {"threshold": 10},
           {"linewidth": 40}, {"precision": 12, "edgeitems": 5, "linewidth": 120}]


def mxp_text(arr, repr_, opt):
    a = mx.from_numpy(arr)
    p = opt.get("precision", 8)
    return mx.format_array(a, repr=repr_, precision=mx.PRINT_PRECISION_NONE if p == 0 else p,
                           edgeitems=opt.get("edgeitems", 0), threshold=opt.get("threshold", 0),
                           linewidth=opt.get("linewidth", 0))


def numpy_text(arr, repr_, opt):
    """repr(arr), or np.array2string(arr): str(arr) for every array but a
    0-d one, whose str is its scalar's (options ignored, float 1.0 as '1.0')."""
    with np.printoptions(**opt):
        if not repr_ and arr.ndim:
            assert str(arr) == np.array2string(arr)
        return repr(arr) if repr_ else np.array2string(arr)


@pytest.mark.parametrize("opt", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults")
@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("repr_", [False, True], ids=["str", "repr"])
def test_matches_numpy(name, opt, repr_):
    arr = CASES[name]
    assert mxp_text(arr, repr_, opt) == numpy_text(arr, repr_, opt)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int16, np.uint32])
def test_random_arrays_match_numpy(seed, dtype):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 7, size=int(rng.integers(1, 4))))
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 9)
    with np.errstate(over="ignore"):  # float16 overflows to inf: printed as NumPy prints it
        arr = x.astype(dtype) if np.dtype(dtype).kind == "f" else (x * 1000).astype(np.int64).astype(dtype)
    for repr_ in (False, True):
        assert mxp_text(arr, repr_, {}) == numpy_text(arr, repr_, {})


def test_bad_options_are_refused():
    a = mx.from_numpy(np.arange(3.0))
    for kw, word in [({"precision": 41}, "precision 41"), ({"precision": -2}, "precision -2"),
                     ({"edgeitems": -1}, "edgeitems -1"), ({"threshold": -5}, "threshold -5"),
                     ({"linewidth": -1}, "linewidth -1")]:
        with pytest.raises(mx.MxpError, match=word):
            mx.format_array(a, **kw)


def test_get_f64_matches_numpy_indexing():
    arr = np.arange(24, dtype=np.int16).reshape(2, 3, 4)[:, ::-1, 1:]
    a = mx.from_numpy(arr)
    for idx in [(0, 0, 0), (1, 2, 2), (-1, -1, -1), (1, -3, 0)]:
        assert mx.get_f64(a, idx) == float(arr[idx])
    for idx, word in [((2, 0, 0), "index 2 is out of range for axis 0 of size 2"),
                      ((0, -4, 0), "index -4 is out of range for axis 1 of size 3")]:
        with pytest.raises(mx.MxpError, match=word) as e:
            mx.get_f64(a, idx)
        assert e.value.status == mx.ERR_INDEX
    assert mx.get_f64(mx.from_numpy(np.array(2.5, np.float16)), ()) == 2.5
    big = mx.from_numpy(np.array([2**53 + 1], np.int64))
    assert mx.get_f64(big, (0,)) == float(2**53)  # rounded to nearest even, as float(np.int64) does

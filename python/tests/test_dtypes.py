"""The dtypes and their scalar types: NumPy integration, construction,
repr round trips, arithmetic, hashing, finfo/iinfo."""
import math
import pickle

import numpy as np
import pytest

import mxp
from mxptest import FLOATS, all_values, bits


@pytest.mark.parametrize("t,size", [(mxp.bfloat16, 2), (mxp.float8_e4m3fn, 1), (mxp.float8_e5m2, 1)])
def test_dtype_is_a_numpy_dtype(t, size):
    d = np.dtype(t)
    assert d.itemsize == size and d.type is t and d.name == t.__name__
    assert np.zeros(4, t).dtype == d and np.zeros(4, t).itemsize == size
    assert issubclass(t, np.generic)
    assert np.dtype(t.__name__ if False else t) == d
    assert np.array([1, 2], dtype=t).tolist() == [1.0, 2.0]


def test_names_match_ml_dtypes():
    assert [t.__name__ for t in FLOATS] == ["bfloat16", "float8_e4m3fn", "float8_e5m2"]
    assert mxp.bfloat16.__module__ == "mxp"


@pytest.mark.parametrize("t", FLOATS)
def test_repr_round_trips_every_bit_pattern(t):
    for v in all_values(t)[:: 1 if np.dtype(t).itemsize == 1 else 7]:
        back = t(repr(v))
        assert bits(np.array(back, t)) == bits(np.array(v, t)) or (math.isnan(float(v)) and math.isnan(float(back)))
        assert str(v) == repr(v)


def test_repr_is_short_and_exact_for_integers():
    assert repr(mxp.bfloat16(0.1)) == "0.1"
    assert repr(mxp.bfloat16(1)) == "1.0"
    assert repr(mxp.bfloat16(3.14159)) == "3.14"
    assert repr(mxp.float8_e4m3fn(448)) == "448.0"
    assert repr(mxp.float8_e5m2(57344)) == "57344.0"
    assert repr(mxp.bfloat16(float("inf"))) == "inf" and repr(mxp.bfloat16(float("-inf"))) == "-inf"
    assert repr(mxp.bfloat16(float("nan"))) == "nan"
    assert repr(mxp.bfloat16(-0.0)) == "-0.0"


def test_construction_rounds_once_to_nearest_even():
    # 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even gives 1.
    assert float(mxp.bfloat16(1 + 2**-8)) == 1.0
    assert float(mxp.bfloat16(1 + 3 * 2**-8)) == 1 + 2**-6
    # float64 just above the tie: one rounding goes up (a float32 detour would not).
    assert float(mxp.bfloat16(1 + 2**-8 + 2**-40)) == 1 + 2**-7
    assert float(mxp.bfloat16("1.5")) == 1.5 and float(mxp.bfloat16(b"2.5")) == 2.5
    assert float(mxp.bfloat16(np.float32(0.1))) == float(mxp.bfloat16(0.1))
    assert float(mxp.bfloat16(np.int64(2**40 + 1))) == 2.0**40
    assert float(mxp.float8_e4m3fn(mxp.bfloat16(3.0))) == 3.0
    assert float(mxp.bfloat16()) == 0.0
    assert math.isnan(float(mxp.float8_e4m3fn(1000)))  # no infinity in e4m3fn: overflow is NaN
    assert float(mxp.float8_e5m2(1e6)) == math.inf


def test_construction_from_an_array_casts_it():
    a = mxp.bfloat16(np.array([1.0, 2.5]))
    assert a.dtype == np.dtype(mxp.bfloat16) and a.tolist() == [1.0, 2.5]
    # a 0-d array gives a scalar, as np.float32(np.array(1.5)) does (ml_dtypes' float types too)
    for t in (mxp.bfloat16, mxp.float8_e4m3fn, mxp.int4):
        s = t(np.array(1.0))
        assert type(s) is t and float(s) == 1.0
        assert type(t(np.array(3, np.int8).astype(t))) is t


@pytest.mark.parametrize("bad", [object(), [1, 2], "abc", None])
def test_bad_construction_raises(bad):
    with pytest.raises((TypeError, ValueError)):
        mxp.bfloat16(bad)


def test_scalar_arithmetic_rounds_once_in_the_type():
    x, y = mxp.bfloat16(1.5), mxp.bfloat16(0.1)
    for r, want in [(x + y, 1.5 + float(y)), (x - y, 1.5 - float(y)), (x * y, 1.5 * float(y)),
                    (x / y, 1.5 / float(y)), (x ** 2, 2.25), (x // y, 1.5 // float(y)), (x % y, 1.5 % float(y))]:
        assert type(r) is mxp.bfloat16
        assert float(r) == float(mxp.bfloat16(want))
    assert type(x + 1) is mxp.bfloat16 and type(2.0 * x) is mxp.bfloat16
    assert float(-x) == -1.5 and float(abs(mxp.bfloat16(-2))) == 2.0 and +x is x
    assert int(mxp.bfloat16(2.75)) == 2 and bool(mxp.bfloat16(0)) is False and bool(mxp.bfloat16("nan"))


def test_scalar_mixed_with_numpy_types_follows_promotion():
    assert type(mxp.bfloat16(1) + np.float16(1)) is np.float32
    assert type(mxp.bfloat16(1) + np.float32(1)) is np.float32
    assert type(mxp.float8_e4m3fn(1) + mxp.bfloat16(1)) is mxp.bfloat16


def test_comparisons_and_hash():
    x = mxp.bfloat16(1.5)
    assert x == 1.5 and x != 2 and x < 2 and x <= 1.5 and x > 1 and x >= 1.5
    assert hash(x) == hash(1.5) and hash(mxp.bfloat16(3)) == hash(3)
    assert mxp.bfloat16("nan") != mxp.bfloat16("nan")
    assert {mxp.bfloat16(2): "a"}[2.0] == "a"


def test_scalar_pickles():
    x = mxp.float8_e5m2(0.75)
    assert pickle.loads(pickle.dumps(np.array([x]))).tolist() == [0.75]


@pytest.mark.parametrize("t,exp", [
    (mxp.bfloat16, dict(bits=16, eps=2**-7, max=(2 - 2**-7) * 2**127, tiny=2**-126, smallest_subnormal=2**-133,
                        nmant=7, nexp=8, maxexp=128, minexp=-126, precision=2)),
    (mxp.float8_e4m3fn, dict(bits=8, eps=2**-3, max=448, tiny=2**-6, smallest_subnormal=2**-9, nmant=3, nexp=4,
                             maxexp=9, minexp=-6, precision=0)),
    (mxp.float8_e5m2, dict(bits=8, eps=2**-2, max=57344, tiny=2**-14, smallest_subnormal=2**-16, nmant=2, nexp=5,
                           maxexp=16, minexp=-14, precision=0)),
])
def test_finfo_of_the_new_types(t, exp):
    fi = mxp.finfo(t)
    for k, v in exp.items():
        assert float(getattr(fi, k)) == v, k
    assert type(fi.max) is t and float(fi.min) == -exp["max"] and fi.dtype == np.dtype(t)


@pytest.mark.parametrize("t", [np.float16, np.float32, np.float64])
def test_finfo_agrees_with_numpy(t):
    ours, theirs = mxp.finfo(t), np.finfo(t)
    for k in ["bits", "eps", "epsneg", "max", "min", "tiny", "smallest_normal", "smallest_subnormal", "nmant",
              "nexp", "maxexp", "minexp", "precision", "resolution", "machep", "negep"]:
        assert getattr(ours, k) == getattr(theirs, k), k


@pytest.mark.parametrize("t", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64])
def test_iinfo_agrees_with_numpy(t):
    assert (mxp.iinfo(t).min, mxp.iinfo(t).max, mxp.iinfo(t).bits) == (np.iinfo(t).min, np.iinfo(t).max,
                                                                          np.iinfo(t).bits)


def test_info_bad_input():
    with pytest.raises(TypeError):
        mxp.finfo(np.int8)
    with pytest.raises(TypeError):
        mxp.iinfo(mxp.bfloat16)
    with pytest.raises(TypeError):
        mxp.finfo("no-such-type")
    with pytest.raises(TypeError):
        mxp.finfo(np.complex64)


def test_sort_argmax_nonzero_arange():
    a = np.array([3, float("nan"), -1, 2], dtype=mxp.bfloat16)
    assert np.sort(a)[:3].tolist() == [-1, 2, 3] and math.isnan(float(np.sort(a)[3]))
    assert np.argmax(a) == 1 and np.argmax(a[[0, 2, 3]]) == 0 and np.argmin(a[[0, 2, 3]]) == 1
    assert np.nonzero(np.array([0, 1, 0, -2], mxp.bfloat16))[0].tolist() == [1, 3]
    assert np.arange(0, 2, 0.5, dtype=mxp.bfloat16).tolist() == [0, 0.5, 1, 1.5]


@pytest.mark.parametrize("t", [mxp.bfloat16, mxp.float8_e4m3fn, mxp.float8_e5m2])
def test_tolist_and_item_give_python_floats_indexing_gives_scalars(t):
    import json
    a = np.array([[1.5, -0.25], [448.0, 2.0]], t)
    assert a.tolist() == [[1.5, -0.25], [448.0, 2.0]] and type(a.tolist()[0][0]) is float
    assert type(a.item(1)) is float and a.item(1) == -0.25
    assert json.dumps(a[0].tolist()) == "[1.5, -0.25]"
    assert type(a[0, 0]) is t and type(a[0][1]) is t and type(np.sum(a[0])) is t
    assert a.astype(object)[0, 0] == 1.5 and type(a.astype(object)[0, 0]) is float
    assert np.isnan(np.array([np.nan], t).item())


def test_dtype_names_as_strings():
    import sys
    for t in (mxp.bfloat16, mxp.float8_e4m3fn, mxp.float8_e5m2):
        owner = sys.modules.get("ml_dtypes")  # ml_dtypes registers its names over any earlier ones
        want = getattr(owner, t.__name__) if owner is not None else t
        assert np.dtype(t.__name__).type is want
        assert np.zeros(2, t.__name__).dtype == np.dtype(want)
        assert np.array([1.5]).astype(t.__name__).astype(np.float32).tolist() == [1.5]

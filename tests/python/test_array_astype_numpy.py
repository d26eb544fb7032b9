"""mxp's conversions and low-precision accumulators against NumPy, through
ctypes on libmxp.so: astype NumPy's bits where both define the same
rounding (and the saturation where mxp differs on purpose), float16 and
bfloat16 sums against NumPy emulations, bit for bit.

Run by ctest (pytest_arrays) with MXP_LIB naming libmxp.so; by hand:
    MXP_LIB=build/libmxp.so /usr/bin/python3 -m pytest -q tests/python/test_array_astype_numpy.py
"""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxp_ctypes as mx  # noqa: E402
from array_support import rng, assert_bits, arrange, FLOATS  # noqa: E402

# NumPy's own warnings for var with ddof >= n and the mean of nothing (the
# values are what is compared).
pytestmark = [pytest.mark.filterwarnings("ignore:Degrees of freedom <= 0:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")]


# ---- astype -------------------------------------------------------------


def float_inputs(src, dst, n=600):
    """Values that exercise src -> dst rounding: random bits, the target's
    grid points and midpoints (ties), subnormals, the overflow boundary."""
    s, d = np.dtype(src), np.dtype(dst)
    r = rng("astype", src, dst)
    fd = np.finfo(d)
    bits = r.integers(0, 2 ** (s.itemsize * 8), n, dtype=np.uint64).astype("u%d" % s.itemsize).view(s)
    bits = bits[~np.isnan(bits)]
    # Target values and the exact midpoints between neighbours (ties), plus
    # a nudge either side of each midpoint.
    t = r.integers(0, 2 ** (d.itemsize * 8), n, dtype=np.uint64).astype("u%d" % d.itemsize).view(d)
    t = t[np.isfinite(t)].astype(np.float64)
    nxt = np.nextafter(t.astype(d), np.array(np.inf, d)).astype(np.float64)
    mid = (t + nxt) / 2
    mids = np.concatenate([mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf)])
    edges = [fd.max, float(fd.max) * (1 + 2.0 ** -(fd.nmant + 1)), float(fd.max) * (1 + 2.0 ** -(fd.nmant + 2)),
             fd.smallest_subnormal / 2, fd.smallest_subnormal * 0.75, fd.smallest_subnormal * 0.25, fd.tiny * 0.5,
             0.0, -0.0, np.inf, -np.inf]
    with np.errstate(all="ignore"):
        vals = np.concatenate([bits.astype(np.float64), mids, np.array(edges, np.float64)])
        vals = np.concatenate([vals, -vals]).astype(s)
    return vals


@pytest.mark.parametrize("src,dst", [("float64", "float32"), ("float32", "float16"), ("float64", "float16")])
def test_astype_float_narrowing_is_numpys_round_to_nearest_even(src, dst):
    x = float_inputs(src, dst)
    with np.errstate(all="ignore"):
        want = x.astype(dst)
    for layout in ("C", "strided"):
        xv = arrange(x, layout)
        assert_bits(mx.to_numpy(mx.from_numpy(xv).astype(dst)), want, "%s -> %s" % (src, dst))
    # NaN stays NaN and keeps its sign (payloads are not compared).
    nan = np.array([np.nan, -np.nan], src)
    got = mx.to_numpy(mx.from_numpy(nan).astype(dst))
    assert np.all(np.isnan(got)) and list(np.signbit(got)) == [False, True]


@pytest.mark.parametrize("dst", FLOATS)
@pytest.mark.parametrize("src", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
def test_astype_int_to_float(src, dst):
    r = rng("int2float", src, dst)
    if src == "bool":
        x = r.integers(0, 2, 50).astype(bool)
    else:
        info = np.iinfo(src)
        x = r.integers(info.min, info.max, 300, dtype=src, endpoint=True)
        edge = [info.min, info.max, 0, 1, -1 if info.min else 2, 2049, 65504, 65519, 65520, 2**24 + 1, 2**53 + 1,
                2**63 - 1, 2**63 + 1025]
        x = np.concatenate([x, np.array([e for e in edge if info.min <= e <= info.max], src)])
    with np.errstate(all="ignore"):
        want = x.astype(dst)
    assert_bits(mx.to_numpy(mx.from_numpy(x).astype(dst)), want, "%s -> %s" % (src, dst))


@pytest.mark.parametrize("dst", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
@pytest.mark.parametrize("src", FLOATS)
def test_astype_float_to_int_toward_zero_is_numpys_astype(src, dst):
    """For values whose truncation is in range: mxp with rounding toward_zero
    equals NumPy's astype (a C cast, which truncates)."""
    info = np.iinfo(dst)
    lo, hi = float(info.min) - 0.99, float(info.max) + 0.99
    if src != "float64":
        f = np.finfo(src)
        lo, hi = max(lo, -float(f.max)), min(hi, float(f.max))
    r = rng("float2int", src, dst)
    x = np.concatenate([r.uniform(lo, hi, 200), r.uniform(-3, 3, 100), [0.5, -0.5, 1.5, 2.5, -2.5, 0.0, -0.0]])
    x = x.astype(src)
    ti = np.trunc(x.astype(np.float64))
    x = x[(ti >= info.min) & (ti <= info.max)]
    got = mx.to_numpy(mx.from_numpy(x).astype(dst, rounding=mx.ROUND_TOWARD_ZERO))
    assert_bits(got, x.astype(dst), "%s -> %s toward_zero" % (src, dst))
    # The default rounds to nearest even (np.rint), unlike NumPy's astype.
    y = np.array([2.5, 3.5, -2.5, 2.7, -2.7, 0.5], src)
    got = mx.to_numpy(mx.from_numpy(y).astype(dst))
    want = np.clip(np.rint(y.astype(np.float64)), info.min, info.max).astype(dst)
    assert_bits(got, want, "%s -> %s nearest even" % (src, dst))
    assert not np.array_equal(got, y.astype(dst)) or dst.startswith("u")


@pytest.mark.parametrize("src,dst", [("float16", "float32"), ("float16", "float64"), ("float32", "float64"),
                                     ("float32", "bool"), ("float64", "bool"), ("float16", "bool"), ("int32", "bool"),
                                     ("bool", "float16"), ("bool", "int8"), ("uint8", "int16"), ("int8", "int64")])
def test_astype_exact_conversions(src, dst):
    """Widening and conversions to bool (NaN true, -0.0 false) are exact in
    both: NumPy's bits (NaN payloads aside)."""
    r = rng("exact", src, dst)
    s = np.dtype(src)
    if s.kind == "f":
        x = r.integers(0, 2 ** (s.itemsize * 8), 400, dtype=np.uint64).astype("u%d" % s.itemsize).view(s)
        x = np.concatenate([x, np.array([0.0, -0.0, np.nan, np.inf, -np.inf], s)])
    elif s.kind == "b":
        x = r.integers(0, 2, 50).astype(bool)
    else:
        info = np.iinfo(s)
        x = r.integers(info.min, info.max, 400, dtype=s, endpoint=True)
    with np.errstate(invalid="ignore"):  # signalling NaNs
        want = x.astype(dst)
    for layout in ("C", "strided"):
        assert_bits(mx.to_numpy(mx.from_numpy(arrange(x, layout)).astype(dst)), want, "%s -> %s" % (src, dst))


def test_astype_int_narrowing_saturates_where_numpy_wraps():
    x = np.array([300, -300, 127, -129, 70000], np.int32)
    got = mx.to_numpy(mx.from_numpy(x).astype("int8"))
    assert list(got) == [127, -128, 127, -128, 127]
    assert list(x.astype(np.int8)) == [44, -44, 127, 127, 112]
    got = mx.to_numpy(mx.from_numpy(x).astype("uint8"))
    assert list(got) == [255, 0, 127, 0, 255]


# ---- float16 / bfloat16 accumulators: NumPy emulations, bit for bit ----------

def _bf16(x):
    """float64 values rounded to bfloat16 (nearest even) through float32: the
    float32 rounding first is innocuous (24 >= 2 * 8 + 2)."""
    u = np.asarray(x, np.float64).astype(np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(np.asarray(x, np.float64))
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    r = u.astype(np.uint32).view(np.float32).astype(np.float64)
    return np.where(nan, np.nan, r)


ROUND_TO = {"float16": lambda x: np.float64(np.float16(x)), "bfloat16": lambda x: float(_bf16([x])[0])}


@pytest.mark.parametrize("acc", ["float16", "bfloat16"])
@pytest.mark.parametrize("src", [np.float16, np.float32, np.float64])
def test_naive_and_kahan_sums_in_a_low_precision_accumulator(acc, src):
    """acc_dtype float16/bfloat16: every input rounded to the accumulator,
    every step of the running sum rounded (a Python loop of np.float16)."""
    x = (np.random.default_rng(7).standard_normal(3000) * 3 + 1).astype(src)
    r = ROUND_TO[acc]
    xs = [r(float(v)) for v in x]
    s = 0.0
    for v in xs:
        s = r(s + v)
    code = {"float16": mx.F16, "bfloat16": mx.BF16}[acc]
    got = mx.to_numpy(mx.reduce("sum", mx.from_numpy(x), acc_dtype=code, out_dtype=np.float64,
                                algorithm=mx.SUM_NAIVE))
    assert float(got) == s
    total, c = 0.0, 0.0  # Kahan, every step rounded
    for v in xs:
        y = r(v - c)
        t = r(total + y)
        c = r(r(t - total) - y)
        total = t
    got = mx.to_numpy(mx.reduce("sum", mx.from_numpy(x), acc_dtype=code, out_dtype=np.float64,
                                algorithm=mx.SUM_KAHAN))
    assert float(got) == total
    if acc == "float16":  # the float16 result dtype keeps the same bits
        got16 = mx.to_numpy(mx.reduce("sum", mx.from_numpy(x.astype(np.float16)), acc_dtype=code,
                                      algorithm=mx.SUM_NAIVE))
        s16 = np.float16(0)
        for v in x.astype(np.float16):
            s16 = np.float16(s16 + v)
        assert got16.dtype == np.float16 and got16.tobytes() == np.float16(s16).tobytes()


def test_low_precision_accumulator_refuses_float8():
    with pytest.raises(mx.MxpError, match="accumulator dtype float8_e5m2"):
        mx.reduce("sum", mx.from_numpy(np.ones(4, np.float32)), acc_dtype=mx.E5M2)

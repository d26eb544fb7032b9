"""Hostile arguments for every public function of mxp (issue 24): wrong
types, shapes and dtypes, 0-d, empty, reversed, Fortran-ordered and
non-contiguous arrays, read-only and overlapping out=, NaN/inf, shapes
whose sizes overflow, bad and unknown keywords.  Each case expects the
exception class docs/python.md names (TypeError for unsupported types,
ValueError for bad values and shapes, AxisError for an axis, OSError for
files, MemoryError) or, where a layout is valid, the result of a
contiguous copy bit for bit.  Every case runs first in a child interpreter
(hostile.crash_map), so a crash fails the case that caused it.  This file:
the dtypes and scalars, casts, reductions, products, DLPack, files and the
runtime; test_hostile_more.py: quantization, analysis, training, mxp.dask;
test_hostile_nn.py: mxp.nn; test_hostile_conv.py: its convolution, pooling, batch norm;
test_hostile_plugin.py: operator plugins and the profiler.
Unaligned arrays are not covered here (a separate harness)."""
import atexit
import inspect
import json
import os
import shutil
import tempfile

import numpy as np
import pytest

import mxp
import hostile
from hostile import AxisError, case, expect, raises, same_on_layouts, bits_equal
import test_hostile_more  # noqa: F401  (registers its cases before the coverage check)
import test_hostile_nn  # noqa: F401
import test_hostile_conv  # noqa: F401
import test_hostile_plugin  # noqa: F401

BF, E4, E5 = mxp.bfloat16, mxp.float8_e4m3fn, mxp.float8_e5m2
MXP_TYPES = mxp._mxp._TYPES  # bfloat16, the float8/6/4 types, int4 ...
INT_TYPES = (mxp.int4, mxp.uint4, mxp.int2, mxp.uint2, mxp.int1, mxp.uint1)
FLOAT_TYPES = tuple(t for t in MXP_TYPES if t not in INT_TYPES)
X = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
XS = X.copy()
XS[0, 0], XS[1, 1], XS[2, 2], XS[3, 3] = np.nan, np.inf, -np.inf, 1e30  # NaN/inf/overflow
XB = X.astype(BF)
HUGE = np.broadcast_to(np.float32(1), (2**30, 2**30))  # 2^60 elements, no memory
NOT_ARRAYS = ("abc", object(), None)


def readonly(a):
    a = np.array(a)
    a.flags.writeable = False
    return a


# ---- coverage ----------------------------------------------------------------------

CONSTANTS = {"AUTOCAST_OPS", "OBSERVERS"}  # tuples of names, not callables


def public_names():
    """Every public name of mxp (its __all__ and the public names of
    mxp/__init__.py), the public methods of its classes (Class.method),
    mxp.nn's __all__ (nn.NAME) and mxp.dask's __all__ where Dask is
    importable (dask.NAME)."""
    names = set(mxp.__all__) | {n for n, v in vars(mxp).items() if not n.startswith("_")
                                and not inspect.ismodule(v)}
    out = set()
    for n in names:
        v = getattr(mxp, n)
        out.add(n)
        if inspect.isclass(v) and v not in MXP_TYPES:
            for klass in v.__mro__:
                if not klass.__module__.startswith("mxp"):
                    continue
                for m, f in vars(klass).items():
                    if (not m.startswith("_") or m in ("__dlpack__", "__dlpack_device__")) and callable(f):
                        out.add(f"{n}.{m}")
    out |= {f"nn.{n}" for n in mxp.nn.__all__}
    try:
        import mxp.dask as mdask
    except ImportError:
        mdask = None
    if mdask is not None:
        out |= {f"dask.{n}" for n in mdask.__all__}
    return out - CONSTANTS - {f"dask.{c}" for c in CONSTANTS}


def test_every_public_name_has_hostile_cases():
    covered = {c for covers, *_ in hostile.CASES.values() for c in covers}
    missing = sorted(public_names() - covered)
    assert not missing, f"public names without hostile cases: {missing}"
    assert len(public_names()) >= 90


# ---- scalar types and the dtypes' functions -------------------------------------------

for t in MXP_TYPES:
    n = t.__name__
    raises(f"{n}(object())", n, TypeError, t, object())
    raises(f"{n}(None)", n, TypeError, t, None)
    raises(f"{n}(1j)", n, TypeError, t, 1j)
    raises(f"{n}('abc')", n, ValueError, t, "abc")
    raises(f"{n}(1, 2)", n, TypeError, t, 1, 2)
    raises(f"{n}(x=1)", n, TypeError, t, x=1)
    raises(f"{n}([1, 2])", n, TypeError, t, [1, 2])

    @case(f"{n}: NaN, inf, huge ints, strings, scalars", n)
    def _(t=t):
        if t in INT_TYPES:  # truncated as NumPy's int8(2.7), saturated (not wrapped)
            i = mxp.iinfo(t)
            assert int(t(float("nan"))) == 0 and int(t(2**70)) == i.max and int(t("-inf")) == i.min
            one = min(1, int(i.max))  # int1 holds -1 and 0
            assert int(t(b"1.5")) == one and int(t(" 1 ")) == one and int(t(np.float64(-0.9))) == 0
            assert int(t(True)) == one and int(t(t(1))) == one and int(t()) == 0 and repr(t(-1)) == str(max(-1, i.min))
            bits_equal(t(np.array(X)), X.astype(t))
            return
        f = mxp.finfo(t)
        nan = float(t(float("nan")))
        assert np.isnan(nan) if f.has_nan else nan == 0.0  # float6/float4: a zero, as ml_dtypes
        big = float(t(2**70))
        assert big == (2.0**70 if float(f.max) >= 2**70 else np.inf if f.has_inf else np.nan if f.has_nan
                       else float(f.max)) or (np.isnan(big) and not f.has_inf and f.has_nan), big
        ninf = float(t("-inf"))
        assert ninf == -np.inf if f.has_inf else np.isnan(ninf) if f.has_nan else ninf == -float(f.max)
        if t is mxp.float8_e8m0fnu:  # powers of two, no zero, no sign
            assert float(t(b"1.5")) == 2.0 and float(t(" 2 ")) == 2.0 and float(t(np.float64(0.5))) == 0.5
            assert np.isnan(float(t(np.int8(-3)))) and float(t()) == 2.0**-127
        else:
            assert float(t(b"1.5")) == 1.5 and float(t(" 2 ")) == 2.0
            assert float(t(np.float64(0.5))) == 0.5 and float(t(np.int8(-3))) == -3.0 and float(t(True)) == 1.0
            assert float(t(t(1.5))) == 1.5 and float(t()) == 0.0
        bits_equal(t(np.array(X)), X.astype(t))  # an array argument casts the array

    @case(f"{n} dtype: setitem/fill of wrong types and sequences", n)
    def _(t=t):
        a = np.zeros(3, t)
        expect(ValueError, a.__setitem__, 0, "abc")
        expect(TypeError, a.__setitem__, 0, object())
        expect(TypeError, a.__setitem__, 0, [1.0, 2.0])  # ml_dtypes: TypeError too
        expect(ValueError, a.__setitem__, slice(None), [1.0, 2.0])  # shapes (3,) and (2,)
        expect(ValueError, a.fill, "abc")
        assert a.tobytes() == bytes(a.nbytes)  # nothing written by the failures
        a[1] = np.nan
        a[2] = "1.5"
        bits_equal(a[1:], np.array([np.nan, 1.5]).astype(t))  # as the cast gives them

    @case(f"{n} dtype: sort, argmax, nonzero, dot, copy on every layout", n)
    def _(t=t):
        x = X.astype(t)
        same_on_layouts(lambda v: np.sort(v, axis=1), x)
        same_on_layouts(lambda v: np.argsort(v, axis=0, kind="stable"), x)
        same_on_layouts(lambda v: np.argmax(v), x)
        same_on_layouts(lambda v: np.argmin(v, axis=1), x)
        same_on_layouts(lambda v: np.nonzero(v), x)
        same_on_layouts(lambda v: np.dot(v, v.T), x)
        same_on_layouts(lambda v: v.copy(), x)
        same_on_layouts(lambda v: v.byteswap(), x)
        same_on_layouts(lambda v: v.astype(np.float32), x)
        same_on_layouts(lambda v: np.add(v, v), x)
        bits_equal(np.sort(x[:0]), x[:0])
        bits_equal(np.argmax(x[0, 0].reshape(())), np.argmax(x[0, :1]))
        expect(ValueError, np.argmax, x[:0])  # NumPy's: an empty sequence

    @case(f"{n} dtype: NaN/inf sort and argmax as NumPy orders them", n)
    def _(t=t):
        if t in INT_TYPES or not mxp.finfo(t).has_nan:
            x = np.sort(XS.astype(t).reshape(-1)).astype(np.float64)
            assert np.all(x[:-1] <= x[1:])  # no NaN: plainly ascending
            return
        x = XS.astype(t)
        s = np.sort(x.reshape(-1))
        f = s.astype(np.float64)
        fin = f[~np.isnan(f)]
        assert np.all(fin[:-1] <= fin[1:]) and np.all(np.isnan(f[len(fin):]))
        assert np.argmax(x) == 0  # the first NaN, as NumPy

# ---- promote_types, result_type, finfo, iinfo -----------------------------------------

raises("promote_types('abc', bf16)", "promote_types", TypeError, mxp.promote_types, "abc", BF)
raises("promote_types(object(), bf16)", "promote_types", TypeError, mxp.promote_types, object(), BF)
raises("promote_types(bf16)", "promote_types", TypeError, mxp.promote_types, BF)
raises("promote_types(unknown keyword)", "promote_types", TypeError, mxp.promote_types, BF, BF, x=1)
raises("promote_types(bf16, 'S3')", "promote_types", TypeError, mxp.promote_types, BF, "S3")
raises("result_type()", "result_type", TypeError, mxp.result_type)
raises("result_type('abc')", "result_type", TypeError, mxp.result_type, "abc", BF)
raises("result_type(object())", "result_type", TypeError, mxp.result_type, BF, object())
raises("result_type(unknown keyword)", "result_type", TypeError, mxp.result_type, BF, x=1)


@case("promote_types, result_type: byte orders, arrays, 0-d, empty", "promote_types", "result_type")
def _():
    assert mxp.promote_types(BF, np.float16) == np.float32
    assert mxp.promote_types(BF, ">f4") == np.promote_types(np.float32, ">f4")  # NumPy's where mxp lacks it
    assert mxp.result_type(np.zeros((0, 3), BF), np.array(1, np.float16)) == np.float32
    assert mxp.result_type(np.zeros(2, E4)[::-1], E5) == np.float16


for f in (mxp.finfo, mxp.iinfo):
    raises(f"{f.__name__}('abc')", f.__name__, TypeError, f, "abc")
    raises(f"{f.__name__}(object())", f.__name__, TypeError, f, object())
    raises(f"{f.__name__}(None)", f.__name__, TypeError, f, None)
    raises(f"{f.__name__}(complex64)", f.__name__, TypeError, f, np.complex64)
    raises(f"{f.__name__}(unknown keyword)", f.__name__, TypeError, f, BF, x=1)
raises("finfo(int8)", "finfo", TypeError, mxp.finfo, np.int8)
raises("iinfo(bfloat16)", "iinfo", TypeError, mxp.iinfo, BF)


@case("finfo, iinfo of arrays of any layout, 0-d, empty", "finfo", "iinfo")
def _():
    assert mxp.finfo(np.zeros((0, 2), BF)) is mxp.finfo(BF)
    assert mxp.finfo(XB[::-1]) is mxp.finfo(BF) and mxp.finfo(np.array(1, E4)) is mxp.finfo(E4)
    assert mxp.iinfo(np.zeros((2, 3), np.int8, order="F")).max == 127


# ---- astype, convert_stats ------------------------------------------------------------

raises("astype(x, 'abc')", "astype", TypeError, mxp.astype, X, "abc")
raises("astype(x, object())", "astype", TypeError, mxp.astype, X, object())
raises("astype(x, complex64)", "astype", TypeError, mxp.astype, X, np.complex64)
raises("astype(x, '>f4')", "astype", TypeError, mxp.astype, X, ">f4")
raises("astype(object array)", "astype", TypeError, mxp.astype, np.array([1.0, None]), BF)
raises("astype(str array)", "astype", TypeError, mxp.astype, np.array(["1"]), BF)
raises("astype(complex array)", "astype", TypeError, mxp.astype, np.ones(2, np.complex64), BF)
raises("astype(big-endian array)", "astype", TypeError, mxp.astype, X.astype(">f4"), BF)
raises("astype(string)", "astype", (TypeError, ValueError), mxp.astype, "abc", BF)
raises("astype(rounding='up ')", "astype", ValueError, mxp.astype, X, BF, rounding="up ")
raises("astype(rounding=None)", "astype", ValueError, mxp.astype, X, BF, rounding=None)
raises("astype(overflow='clip')", "astype", ValueError, mxp.astype, X, BF, overflow="clip")
raises("astype(seed=-1)", "astype", ValueError, mxp.astype, X, BF, seed=-1)
raises("astype(seed=2**64)", "astype", ValueError, mxp.astype, X, BF, seed=2**64)
raises("astype(seed='x')", "astype", ValueError, mxp.astype, X, BF, seed="x")
raises("astype(index_offset=-1)", "astype", ValueError, mxp.astype, X, BF, index_offset=-1)
raises("astype(unknown keyword)", "astype", TypeError, mxp.astype, X, BF, roundin="up")
raises("astype(out=list)", "astype", TypeError, mxp.astype, X, None, out=[0.0] * 24)
raises("astype(out of another shape)", "astype", ValueError, mxp.astype, X, None, out=np.zeros((6, 4), BF))
raises("astype(out of another dtype)", "astype", ValueError, mxp.astype, X, E4, out=np.zeros((4, 6), BF))
raises("astype(out of complex dtype)", "astype", TypeError, mxp.astype, X, None, out=np.zeros((4, 6), np.complex64))
raises("astype(huge)", "astype", MemoryError, mxp.astype, HUGE, BF)
raises("convert_stats(x, 'abc')", "convert_stats", TypeError, mxp.convert_stats, X, "abc")
raises("convert_stats(rounding='x')", "convert_stats", ValueError, mxp.convert_stats, X, BF, "x")
raises("convert_stats(object array)", "convert_stats", TypeError, mxp.convert_stats, np.array([None]), BF)
raises("convert_stats(unknown keyword)", "convert_stats", TypeError, mxp.convert_stats, X, BF, out=None)


@case("astype(out=read-only): refused, out unchanged", "astype")
def _():
    out = readonly(np.zeros((4, 6), BF))
    expect(ValueError, mxp.astype, X, None, out=out)
    assert not out.view(np.uint16).any()


@case("astype(out= overlapping x)", "astype")
def _():
    # in place (out is x) converts in place; a shifted view is refused or right
    x = X.copy()
    mxp.astype(x, None, out=x, rounding="toward_zero")
    bits_equal(x, X)
    buf = np.arange(8, dtype=np.float32)
    want = mxp.astype(buf[1:].copy(), np.float32)
    try:
        got = mxp.astype(buf[1:], None, out=buf[:-1])
    except ValueError:
        assert np.array_equal(buf, np.arange(8, dtype=np.float32))
    else:
        bits_equal(got, want)
    raw = np.zeros(16, np.uint16)
    src = raw.view(np.float32)  # 8 float32 over the same bytes as 16 bfloat16
    src[:] = np.arange(8)
    want = mxp.astype(src.copy(), BF)
    dst = raw[:8].view(BF)
    try:
        mxp.astype(src, None, out=dst)
    except ValueError:
        assert np.array_equal(src, np.arange(8, dtype=np.float32))
    else:
        bits_equal(dst, want)


@case("astype: every layout equals a contiguous copy, every mode", "astype", "convert_stats")
def _():
    for to in (BF, E4, np.float16, np.int8):
        for mode in ("nearest_even", "stochastic", "up"):
            same_on_layouts(lambda v: mxp.astype(v, to, rounding=mode, seed=7, overflow="saturate"), XS)
            same_on_layouts(lambda v: mxp.astype(v, to, rounding=mode, seed=7, stats=True), XS)
        same_on_layouts(lambda v: mxp.convert_stats(v, to), XS)
    same_on_layouts(lambda v: mxp.astype(v, np.float32), XB)

    def into(v):  # out= of every layout
        for o in hostile.layouts(np.zeros((4, 6), E5)).values():
            mxp.astype(v, None, out=o, rounding="stochastic", seed=3)
            yield np.ascontiguousarray(o)
    same_on_layouts(lambda v: tuple(into(v)), XS)


@case("astype: 0-d, empty, NaN/inf", "astype", "convert_stats")
def _():
    for x in (np.float32(np.nan), np.array(np.inf, np.float32), np.array(-0.0, np.float32)):
        got = mxp.astype(x, BF)
        assert got.shape == () and got.dtype == BF
        bits_equal(got.reshape(1), mxp.astype(np.asarray(x).reshape(1), BF))
    e = mxp.astype(np.zeros((0, 5), np.float32), E4)
    assert e.shape == (0, 5) and e.dtype == E4
    r, c = mxp.astype(np.zeros((3, 0)), BF, stats=True)
    assert r.shape == (3, 0) and dict(c) == {"inexact": 0, "overflow": 0, "underflow": 0, "invalid": 0}
    c = mxp.convert_stats(np.array([np.nan, np.inf, 1e30, 1e-30], np.float32), E4)
    assert c.overflow >= 1 and c.invalid == 0 and c.underflow >= 1
    c = mxp.convert_stats(np.array([np.nan, np.inf, -np.inf]), np.int8)
    assert c.invalid == 3


# ---- reductions ------------------------------------------------------------------------

REDUCE = (mxp.sum, mxp.mean, mxp.prod, mxp.var, mxp.std)
for f in REDUCE:
    n = f.__name__
    raises(f"{n}(axis=2)", n, AxisError, f, XB, axis=2)
    raises(f"{n}(axis=-3)", n, AxisError, f, XB, axis=-3)
    raises(f"{n}(axis=2**40)", n, (AxisError, OverflowError), f, XB, axis=2**40)
    raises(f"{n}(axis=(0, 0))", n, ValueError, f, XB, axis=(0, 0))
    raises(f"{n}(axis='0')", n, (TypeError, ValueError), f, XB, axis="x")
    raises(f"{n}(axis=1.5)", n, TypeError, f, XB, axis=1.5)
    raises(f"{n}(axis=0 of 0-d)", n, AxisError, f, np.array(1.0, BF), axis=0)
    raises(f"{n}(object array)", n, TypeError, f, np.array([1.0, None]))
    raises(f"{n}(complex array)", n, TypeError, f, np.ones(3, np.complex128))
    raises(f"{n}(str)", n, TypeError, f, "abc")
    raises(f"{n}(dtype='abc')", n, TypeError, f, XB, dtype="abc")
    raises(f"{n}(dtype=complex)", n, TypeError, f, XB, dtype=np.complex64)
    raises(f"{n}(unknown keyword)", n, TypeError, f, XB, axes=0)
    raises(f"{n}(out=)", n, TypeError, f, XB, out=np.zeros(6, BF))

    @case(f"{n}: every layout and axis equals a contiguous copy", n)
    def _(f=f):
        for x in (XB, XS.astype(E4), XS, XS.astype(np.float16)):
            for axis in (None, 0, 1, -1, (0, 1), (1, 0)):
                same_on_layouts(lambda v: f(v, axis=axis), x)
                same_on_layouts(lambda v: f(v, axis=axis, keepdims=True, dtype=np.float32), x)

    @case(f"{n}: 0-d, empty, NaN", n)
    def _(f=f):
        bits_equal(f(np.array(1.5, BF)), f(np.array([1.5], BF)))
        if f in (mxp.var, mxp.std):  # the C library's: no value for an empty selection
            expect(ValueError, f, np.zeros((0, 3), BF), axis=0)
        else:
            r = f(np.zeros((0, 3), BF), axis=0)
            assert r.shape == (3,) and r.dtype == BF
        r = f(np.zeros((3, 0), BF), axis=0)
        assert r.shape == (0,) and r.dtype == BF
        r = f(np.array([1.0, np.nan], BF))
        assert np.isnan(float(r)) and type(r) is BF
raises("sum(acc='abc')", "sum", TypeError, mxp.sum, XB, acc="abc")
raises("var(ddof='x')", "var", ValueError, mxp.var, XB, ddof="x")
raises("std(ddof=2**70)", "std", OverflowError, mxp.std, XB, ddof=2**70)


@case("var, std: ddof beyond the count", "var", "std")
def _():
    for f in (mxp.var, mxp.std):
        r = f(np.ones(3, BF), ddof=3)  # NumPy: inf/nan with a warning, never an error
        assert not np.isfinite(float(r))
        r = f(np.ones(3, BF), ddof=-1)
        assert np.isfinite(float(r))


# ---- matmul, gemm, gemm_safe -----------------------------------------------------------

A, B = X.astype(BF), X.T.copy().astype(BF)   # (4, 6) @ (6, 4)
for n, f in (("matmul", mxp.matmul), ("gemm", mxp.gemm), ("gemm_safe", mxp.gemm_safe)):
    raises(f"{n}(str)", n, (TypeError, ValueError), f, "abc", B)
    raises(f"{n}(object arrays)", n, TypeError, f, np.array([[None]]), np.array([[None]]))
    raises(f"{n}(complex)", n, TypeError, f, np.ones((2, 2), np.complex64), np.ones((2, 2), np.complex64))
    raises(f"{n}(k mismatch)", n, ValueError, f, A, A)
    raises(f"{n}(compute='abc')", n, TypeError, f, A, B, compute="abc")
    raises(f"{n}(compute=object())", n, TypeError, f, A, B, compute=object())
    raises(f"{n}(activation='tanh')", n, ValueError, f, A, B, activation="tanh")
    raises(f"{n}(activation=1)", n, ValueError, f, A, B, activation=1)
    raises(f"{n}(clamp=(2, 1))", n, ValueError, f, A, B, clamp=(2, 1))
    raises(f"{n}(clamp=1)", n, TypeError, f, A, B, clamp=1)
    raises(f"{n}(clamp=('a', 1))", n, ValueError, f, A, B, clamp=("a", 1))
    raises(f"{n}(rounding='x')", n, ValueError, f, A, B, rounding="x")
    raises(f"{n}(overflow='x')", n, ValueError, f, A, B, overflow="x")
    raises(f"{n}(seed=-1)", n, ValueError, f, A, B, seed=-1)
    raises(f"{n}(bias of 3)", n, ValueError, f, A, B, bias=np.ones(3, np.float32))
    raises(f"{n}(bias 2-d)", n, ValueError, f, A, B, bias=np.ones((4, 4), np.float32))
    raises(f"{n}(bias of strings)", n, ValueError, f, A, B, bias=np.array(["a"] * 4))
    raises(f"{n}(scales of 3)", n, ValueError, f, A, B, scales=np.ones(3, np.float32))
    raises(f"{n}(a_zero_point='x')", n, ValueError, f, A, B, a_zero_point="x")
    raises(f"{n}(a_zero_point=2**40)", n, OverflowError, f, A, B, a_zero_point=2**40)
    raises(f"{n}(unknown keyword)", n, TypeError, f, A, B, activations="relu")
raises("matmul(0-d)", "matmul", ValueError, mxp.matmul, np.array(1.0, BF), B)
raises("matmul(batch mismatch)", "matmul", ValueError, mxp.matmul, np.ones((2, 4, 6), BF), np.ones((3, 6, 4), BF))
raises("matmul(out=list)", "matmul", ValueError, mxp.matmul, A, B, out=[[0.0] * 4] * 4)
raises("matmul(out of another shape)", "matmul", ValueError, mxp.matmul, A, B, out=np.zeros((4, 5), BF))
raises("matmul(out_dtype other than out's)", "matmul", ValueError, mxp.matmul, A, B, out_dtype=np.float32,
       out=np.zeros((4, 4), BF))
raises("matmul(out_dtype='abc')", "matmul", TypeError, mxp.matmul, A, B, out_dtype="abc")
raises("matmul(huge)", "matmul", (MemoryError, ValueError), mxp.matmul, HUGE, HUGE)
raises("gemm(1-d a)", "gemm", ValueError, mxp.gemm, np.ones(6, BF), B)
raises("gemm(scales with float operands: would be ignored)", "gemm", ValueError, mxp.gemm,
       np.ones((2, 3), np.float32), np.ones((3, 2), np.float32), scales=np.ones(1, np.float32))
raises("matmul(a_zero_point with float operands)", "matmul", ValueError, mxp.matmul,
       np.ones((2, 3), np.float32), np.ones((3, 2), np.float32), a_zero_point=2)
raises("gemm(c of another shape)", "gemm", ValueError, mxp.gemm, A, B, np.zeros((4, 5), BF))
raises("gemm(c list)", "gemm", TypeError, mxp.gemm, A, B, [[0.0] * 4] * 4)
raises("gemm(c read-only)", "gemm", ValueError, mxp.gemm, A, B, readonly(np.zeros((4, 4), BF)))
raises("gemm(c with reversed rows)", "gemm", ValueError, mxp.gemm, A, B, np.zeros((4, 4), BF)[::-1])
raises("gemm(c Fortran)", "gemm", ValueError, mxp.gemm, A, B, np.zeros((4, 4), BF, order="F"))
raises("gemm(c with rows over each other)", "gemm", ValueError, mxp.gemm, A, B,
       np.lib.stride_tricks.as_strided(np.zeros(8, np.float32), (4, 4), (4, 4)))
raises("gemm(c overlaps a)", "gemm", ValueError, lambda: mxp.gemm(*(lambda m: (m[:, :4], m[:4, :4].T, m[:, 2:]))(
    np.ones((4, 6), np.float32))))
raises("gemm(alpha='x')", "gemm", ValueError, mxp.gemm, A, B, alpha="x")
raises("gemm(beta=None)", "gemm", TypeError, mxp.gemm, A, B, beta=None)
raises("gemm(trans_a: k mismatch)", "gemm", ValueError, mxp.gemm, A, B, trans_a=True)
raises("gemm(out_dtype='abc')", "gemm", TypeError, mxp.gemm, A, B, out_dtype="abc")
raises("gemm_safe(strategy='x')", "gemm_safe", ValueError, mxp.gemm_safe, A, B, strategy="x")
raises("gemm_safe(strategy=None)", "gemm_safe", ValueError, mxp.gemm_safe, A, B, strategy=None)
raises("gemm_safe(promote without promote_to)", "gemm_safe", ValueError, mxp.gemm_safe, A, B, strategy="promote")
raises("gemm_safe(promote_to without promote)", "gemm_safe", ValueError, mxp.gemm_safe, A, B,
       promote_to=np.zeros((4, 4), np.float32))
for shape in ((1, 1), (4, 3), (3, 4), (4,)):
    raises(f"gemm_safe(promote_to of shape {shape})", "gemm_safe", ValueError, mxp.gemm_safe, A, B,
           np.zeros((4, 4), BF), strategy="promote", promote_to=np.zeros(shape, np.float32))
raises("gemm_safe(promote_to read-only)", "gemm_safe", ValueError, mxp.gemm_safe, A, B, np.zeros((4, 4), BF),
       strategy="promote", promote_to=readonly(np.zeros((4, 4), np.float32)))
raises("gemm_safe(promote_to complex)", "gemm_safe", TypeError, mxp.gemm_safe, A, B, np.zeros((4, 4), BF),
       strategy="promote", promote_to=np.zeros((4, 4), np.complex64))
raises("gemm_safe(refuse overflow)", "gemm_safe", OverflowError, mxp.gemm_safe, np.full((2, 64), 400, E4),
       np.full((64, 2), 400, E4), np.zeros((2, 2), E4), strategy="refuse")


@case("matmul, gemm, gemm_safe: every layout equals a contiguous copy", "matmul", "gemm", "gemm_safe")
def _():
    a, b = XS[:, :4].astype(BF), X[:, :4].T.copy()  # square blocks: every transpose fits
    bias = np.arange(4, dtype=np.float32)
    same_on_layouts(lambda u, v: mxp.matmul(u, v), a, b)
    same_on_layouts(lambda u, v: mxp.matmul(u, v, bias=bias, activation="gelu", clamp=(-1, 2),
                                            out_dtype=np.float32, rounding="stochastic", seed=5), a, b)
    same_on_layouts(lambda u, v: mxp.gemm(u, v, alpha=0.5), a, b)
    same_on_layouts(lambda u, v: mxp.gemm(u, v, trans_a=True, trans_b=True), a, b)
    same_on_layouts(lambda u, v: mxp.gemm_safe(u, v, np.zeros((4, 4), E4), strategy="scale"), a * 0, b)
    same_on_layouts(lambda u: mxp.gemm(u, u, np.ones((4, 4), np.float32), beta=2.0), a)
    for name, o in hostile.layouts(np.zeros((4, 4), np.float32)).items():  # out= of any layout
        bits_equal(mxp.matmul(a, b, out=o), mxp.matmul(a, b, out_dtype=np.float32), name)
    q = np.arange(16, dtype=np.int8).reshape(4, 4)
    same_on_layouts(lambda u, v: mxp.matmul(u, v, a_zero_point=3), q.astype(np.uint8), q)


@case("matmul, gemm: broadcast and overlapping rows of a and b read as NumPy does", "matmul", "gemm")
def _():
    row = np.arange(4, dtype=np.float32)
    a = np.broadcast_to(row, (4, 4))  # every row the same memory (row stride 0)
    b = np.lib.stride_tricks.as_strided(np.arange(10, dtype=np.float32), (4, 4), (8, 4))  # rows overlap; ends at [9]
    want = np.ascontiguousarray(a) @ np.ascontiguousarray(b)
    bits_equal(mxp.matmul(a, b, out_dtype=np.float32), want)
    bits_equal(mxp.gemm(a, b), want)
    bits_equal(mxp.gemm_safe(a, b, strategy="none")[0], want)


@case("matmul: 1-d, empty, 0-sized k, NaN/inf, out= overlapping an input", "matmul")
def _():
    a = XS[:, :4].astype(BF).copy()
    bits_equal(mxp.matmul(a[0], a), mxp.matmul(a[:1], a)[0])
    assert mxp.matmul(np.zeros((0, 4), BF), a).shape == (0, 4)
    z = mxp.matmul(np.ones((3, 0), BF), np.ones((0, 2), BF))
    assert z.shape == (3, 2) and not z.astype(np.float32).any()
    r = mxp.matmul(a, a, out_dtype=np.float32)
    assert np.isnan(r[0]).all()  # row 0 holds a NaN
    want = mxp.matmul(a, a)
    out = a  # a = a @ a in place: the input is read first (docs/reliability.md)
    mxp.matmul(a, a.copy(), out=out)
    bits_equal(out, want)
    a = XS[:, :4].astype(BF).copy()
    buf = np.zeros((4, 8), BF)
    buf[:, :4] = a
    got = mxp.matmul(buf[:, :4], buf[:, :4], out=buf[:, 2:6])  # out overlaps half of the input
    bits_equal(np.ascontiguousarray(got), want)


@case("gemm: overlapping c refused with c untouched, 0-sized", "gemm", "gemm_safe")
def _():
    m = np.ones((4, 8), np.float32)
    before = m.copy()
    expect(ValueError, mxp.gemm, m[:, :4], m[:, :4], m[:, 2:6])
    bits_equal(m, before)
    expect(ValueError, mxp.gemm_safe, m[:, :4], m[:, :4], m[:, 2:6], strategy="none")
    bits_equal(m, before)
    assert mxp.gemm(np.zeros((0, 3), np.float32), np.zeros((3, 2), np.float32)).shape == (0, 2)
    c = mxp.gemm(np.zeros((2, 0), np.float32), np.zeros((0, 2), np.float32), np.full((2, 2), 3, np.float32),
                 beta=1.0)
    bits_equal(c, np.full((2, 2), 3, np.float32))


# ---- DLPack -----------------------------------------------------------------------------

class NoCapsule:
    def __dlpack__(self, **kw):
        return 42


class Raises:
    def __dlpack__(self, **kw):
        raise BufferError("no")


raises("from_dlpack(list)", "from_dlpack", TypeError, mxp.from_dlpack, [1, 2])
raises("from_dlpack(None)", "from_dlpack", TypeError, mxp.from_dlpack, None)
raises("from_dlpack(__dlpack__ returns 42)", "from_dlpack", ValueError, mxp.from_dlpack, NoCapsule())
raises("from_dlpack(__dlpack__ raises)", "from_dlpack", BufferError, mxp.from_dlpack, Raises())
raises("from_dlpack(another capsule)", "from_dlpack", ValueError, mxp.from_dlpack,
       __import__("datetime").datetime_CAPI)
raises("from_dlpack(two arguments)", "from_dlpack", TypeError, mxp.from_dlpack, XB, XB)
raises("to_dlpack(list)", "to_dlpack", TypeError, mxp.to_dlpack, [1.0])
raises("to_dlpack(object array)", "to_dlpack", TypeError, mxp.to_dlpack, np.array([None]))
raises("to_dlpack(str array)", "to_dlpack", TypeError, mxp.to_dlpack, np.array(["a"]))
raises("to_dlpack(big-endian)", "to_dlpack", TypeError, mxp.to_dlpack, X.astype(">f4"))
raises("to_dlpack(read-only)", "to_dlpack", BufferError, mxp.to_dlpack, readonly(XB))
raises("to_dlpack(negative strides)", "to_dlpack", BufferError, mxp.to_dlpack, XB[::-1])
raises("to_dlpack(keyword)", "to_dlpack", TypeError, mxp.to_dlpack, a=XB)
raises("dlpack(list)", ("dlpack", "DLPackView"), TypeError, mxp.dlpack, [1.0])
raises("DLPackView(None)", "DLPackView", TypeError, mxp.DLPackView, None)
raises("dlpack(unknown keyword)", "dlpack", TypeError, mxp.dlpack, XB, copy=True)
raises("DLPackView.__dlpack__(stream=1)", "DLPackView.__dlpack__", BufferError, mxp.dlpack(XB).__dlpack__, stream=1)
raises("DLPackView.__dlpack__(dl_device=(2, 0))", "DLPackView.__dlpack__", BufferError,
       mxp.dlpack(XB).__dlpack__, dl_device=(2, 0))
raises("DLPackView.__dlpack__(copy=False, negative strides)", "DLPackView.__dlpack__", BufferError,
       mxp.dlpack(XB[::-1]).__dlpack__, copy=False)
raises("DLPackView.__dlpack__(positional)", "DLPackView.__dlpack__", TypeError, mxp.dlpack(XB).__dlpack__, None)
raises("DLPackView.__dlpack__(unknown keyword)", "DLPackView.__dlpack__", TypeError, mxp.dlpack(XB).__dlpack__,
       device=1)
raises("DLPackView.__dlpack_device__(argument)", "DLPackView.__dlpack_device__", TypeError,
       mxp.dlpack(XB).__dlpack_device__, 1)


@case("DLPack: a capsule is consumed once; every layout round-trips", "from_dlpack", "to_dlpack", "dlpack",
      "DLPackView.__dlpack__", "DLPackView.__dlpack_device__")
def _():
    cap = mxp.to_dlpack(XB.copy())
    mxp.from_dlpack(cap)
    expect(ValueError, mxp.from_dlpack, cap)
    for x in (XB, XS.astype(E5), X, np.zeros((0, 3), BF), np.array(1.5, BF), np.ones((3, 4), np.complex64)):
        views = hostile.layouts(x) if x.ndim == 2 and x.size else {"as is": x}
        for name, v in views.items():
            got = mxp.from_dlpack(mxp.dlpack(v))
            bits_equal(np.ascontiguousarray(got), np.ascontiguousarray(x), name)
            if not name.startswith(("negative", "last")):
                got = mxp.from_dlpack(mxp.to_dlpack(v))
                bits_equal(np.ascontiguousarray(got), np.ascontiguousarray(x), name)
                assert got.__array_interface__["data"][0] == v.__array_interface__["data"][0]  # no copy
    assert mxp.dlpack(XB).__dlpack_device__() == (1, 0)
    got = mxp.from_dlpack(mxp.dlpack(XB).__dlpack__(copy=True, dl_device=(1, 0), max_version=(1, 0)))
    bits_equal(got, XB)


# ---- save, load -------------------------------------------------------------------------

_TMP = tempfile.mkdtemp(prefix="mxp-hostile-")
atexit.register(shutil.rmtree, _TMP, True)


def _tmp(name="x.npy"):
    return os.path.join(tempfile.mkdtemp(dir=_TMP), name)


raises("save(object array)", "save", ValueError, mxp.save, _tmp(), np.array([None, 1]))
raises("save(missing folder)", "save", OSError, mxp.save, "/nonexistent-mxp-dir/x.npy", XB)
raises("save(onto a folder)", "save", OSError, lambda p=_tmp(): (os.mkdir(p), mxp.save(p, XB)))
raises("save(below a file)", "save", OSError, lambda p=_tmp(): (open(p, "wb").close(), mxp.save(p + "/y.npy", XB)))
raises("save(path 3)", "save", TypeError, mxp.save, 3, XB)
raises("save(path None)", "save", TypeError, mxp.save, None, XB)
raises("save(path with NUL)", "save", ValueError, mxp.save, "a\0b.npy", XB)
raises("save(unknown keyword)", "save", TypeError, mxp.save, _tmp(), XB, allow_pickle=True)
raises("load(missing)", "load", OSError, mxp.load, "/nonexistent-mxp-dir/x.npy")
raises("load(a folder)", "load", OSError, mxp.load, tempfile.gettempdir())
raises("load(None)", "load", TypeError, mxp.load, None)
raises("load(unknown keyword)", "load", TypeError, mxp.load, _tmp(), mmap_mode="r")


@case("load: not a .npy file, a bfloat16 field of the wrong type, a truncated file", "load")
def _():
    p = _tmp()
    with open(p, "wb") as f:
        f.write(b"not an npy file at all")
    expect(ValueError, mxp.load, p)
    np.save(p, np.zeros(3, [("bfloat16", "<f4")]))
    expect(ValueError, mxp.load, p)
    np.save(p, np.zeros(3, [("float8_e4m3fn", "<u2")]))
    expect(ValueError, mxp.load, p)
    mxp.save(p, XB)
    data = open(p, "rb").read()
    with open(p, "wb") as f:
        f.write(data[:-5])
    expect(ValueError, mxp.load, p)
    np.save(p, np.arange(4, dtype=">u2").view([("bfloat16", ">u2")]))  # big-endian bits load right
    bits_equal(mxp.load(p), np.arange(4, dtype=np.uint16).view(BF))


@case("save: every layout, 0-d, empty, NaN/inf write the bytes of a contiguous copy", "save", "load")
def _():
    p = _tmp()

    def saved(v):
        mxp.save(p, v)
        return mxp.load(p)
    for x in (XS.astype(BF), XS.astype(E4), XS, XS.astype(">f4"), np.ones((4, 3), np.complex64)):
        same_on_layouts(saved, x)
        mxp.save(p, x)
        want = open(p, "rb").read()
        for kind, v in hostile.layouts(x).items():  # the file's bytes too (Fortran order: its header says so)
            if kind != "fortran":
                mxp.save(p, v)
                assert open(p, "rb").read() == want, kind
    for x in (np.array(np.nan, BF), np.zeros((0, 3), E5), np.zeros(0, np.float32)):
        mxp.save(p, x)
        bits_equal(mxp.load(p), x)


@case("save: a failure keeps the old file", "save")
def _():
    p = _tmp()
    mxp.save(p, XB)
    before = open(p, "rb").read()
    expect(ValueError, mxp.save, p, np.array([None]))
    expect(ValueError, mxp.save, p, np.zeros(2, [("a", "O")]))
    assert open(p, "rb").read() == before and os.listdir(os.path.dirname(p)) == ["x.npy"]


# ---- the runtime ------------------------------------------------------------------------

raises("info(argument)", "info", TypeError, mxp.info, 1)
raises("memory_stats(unknown keyword)", "memory_stats", TypeError, mxp.memory_stats, clear=True)
raises("set_num_threads(-1)", "set_num_threads", ValueError, mxp.set_num_threads, -1)
raises("set_num_threads(2**70)", "set_num_threads", (OverflowError, ValueError), mxp.set_num_threads, 2**70)
raises("set_num_threads(1.5)", "set_num_threads", TypeError, mxp.set_num_threads, 1.5)
raises("set_num_threads('2')", "set_num_threads", TypeError, mxp.set_num_threads, "2")
raises("set_num_threads(None)", "set_num_threads", TypeError, mxp.set_num_threads, None)
raises("get_num_threads(1)", "get_num_threads", TypeError, mxp.get_num_threads, 1)
raises("hugepages(positional)", "hugepages", TypeError, mxp.hugepages, True)
raises("hugepages(threshold=-1)", "hugepages", ValueError, mxp.hugepages, threshold=-1)
raises("hugepages(threshold='x')", "hugepages", TypeError, mxp.hugepages, threshold="x")
raises("hugepages(threshold=1.5)", "hugepages", TypeError, mxp.hugepages, threshold=1.5)
raises("hugepages(threshold=2**70)", "hugepages", OverflowError, mxp.hugepages, threshold=2**70)
raises("hugepages(unknown keyword)", "hugepages", TypeError, mxp.hugepages, enable=True)
raises("release_workspaces(1)", "release_workspaces", TypeError, mxp.release_workspaces, 1)
raises("Result.as_dict(1)", "Result.as_dict", TypeError, mxp.Result().as_dict, 1)
raises("Result.missing", "Result", AttributeError, getattr, mxp.Result(a=1), "b")


@case("runtime: the settings are unchanged by refused calls", "set_num_threads", "get_num_threads", "hugepages",
      "info", "memory_stats", "release_workspaces", "Result", "Result.as_dict")
def _():
    n, hp = mxp.get_num_threads(), mxp.hugepages()
    for bad in (-1, 1025, 2**70):
        expect((ValueError, OverflowError), mxp.set_num_threads, bad)
    expect(ValueError, mxp.hugepages, enabled=False, threshold=-5)
    assert mxp.get_num_threads() == n and mxp.hugepages() == hp
    mxp.set_num_threads(1)
    try:
        assert mxp.get_num_threads() == 1
    finally:
        mxp.set_num_threads(0)
    assert mxp.get_num_threads() == n
    assert mxp.hugepages(enabled=hp["enabled"], threshold=hp["threshold"]) == hp
    assert set(mxp.info()) >= {"version", "isa", "threads", "kernels"}
    s = mxp.memory_stats(reset="yes")  # truthy
    assert s.as_dict() == dict(s) and isinstance(s.peak_bytes, int)
    mxp.release_workspaces()


PROFILE_NAMES = ("profile", "Profile", "Profile.as_dict", "Profile.reset", "Profile.roofline", "Profile.save_trace",
                 "Profile.table", "Profile.to_chrome_trace", "Profile.to_json")
raises("profile(1)", "profile", TypeError, mxp.profile, 1)


@case("profile: read while running, nested, reset outside, a path that cannot be written", *PROFILE_NAMES)
def _():
    old = os.environ.get("MXP_PROFILE_MACHINE")
    os.environ["MXP_PROFILE_MACHINE"] = "20,100,2"  # no measurement
    try:
        p = mxp.profile()
        for read in (p.table, p.to_json, p.as_dict, p.roofline, lambda: p.save_trace("x.json"),
                     lambda: p.to_chrome_trace("x.json"), lambda: p["gemm"]):
            expect(RuntimeError, read)  # before the block ran
        expect(RuntimeError, p.reset)
        with p:
            expect(ValueError, mxp.profile().__enter__)  # profiles do not nest
            expect(RuntimeError, p.table)
            mxp.astype(X, BF)
        expect(RuntimeError, p.reset)
        expect(KeyError, lambda: p["gemm"])
        expect(OSError, p.save_trace, "/nonexistent-dir/t.json")
        expect(TypeError, p.save_trace, None)
        assert p["astype"].calls == 1 and "astype" in p.table() and p.as_dict()["entries"]
        assert json.loads(p.to_json())["entries"][0]["op"] == "astype"
    finally:
        if old is None:
            del os.environ["MXP_PROFILE_MACHINE"]
        else:
            os.environ["MXP_PROFILE_MACHINE"] = old


# after every case of this file is registered
@pytest.mark.parametrize("name", hostile.cases_of(__name__))
def test_hostile(name):
    hostile.run_case(name)

"""Hostile arguments, continued (see test_hostile.py): quantization,
observers, MX blocks, analysis, training and mxp.dask."""
import numpy as np
import pytest

import mxp
import hostile
from hostile import AxisError, case, expect, raises, same_on_layouts, bits_equal

BF, E4 = mxp.bfloat16, mxp.float8_e4m3fn
X = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
XS = X.copy()
XS[0, 0], XS[1, 1], XS[2, 2] = np.nan, np.inf, -np.inf


def readonly(a):
    a = np.array(a)
    a.flags.writeable = False
    return a


# ---- quantization -------------------------------------------------------------------

QP = mxp.calibrate(X, "int8")
Q = mxp.quantize(X, "int8")
raises("QParams(qtype='int9')", "QParams", ValueError, mxp.QParams, "int9", 1.0)
raises("QParams(scales='x')", "QParams", ValueError, mxp.QParams, "int8", "x")
raises("QParams(2-d scales)", "QParams", ValueError, mxp.QParams, "int8", np.ones((2, 2)))
raises("QParams(scales, zero points of other lengths)", "QParams", ValueError, mxp.QParams, "int8", [1.0, 2.0], [0])
raises("QParams(unknown keyword)", "QParams", TypeError, mxp.QParams, "int8", 1.0, sym=True)
raises("QParams.scale of several", "QParams", ValueError, getattr, mxp.QParams("int8", [1.0, 2.0], axis=0), "scale")
raises("QuantizedTensor(no qparams)", "QuantizedTensor", TypeError, mxp.QuantizedTensor, Q.codes)
raises("QuantizedTensor.dequantize('abc')", "QuantizedTensor.dequantize", TypeError, Q.dequantize, "abc")
raises("QuantizedTensor.dequantize(complex)", "QuantizedTensor.dequantize", TypeError, Q.dequantize, np.complex64)
for n, f in (("calibrate", mxp.calibrate), ("quantize", mxp.quantize), ("fake_quantize", mxp.fake_quantize)):
    raises(f"{n}(qtype='int9')", n, ValueError, f, X, "int9")
    raises(f"{n}(qtype=8)", n, ValueError, f, X, 8)
    raises(f"{n}(axis=2)", n, (AxisError, ValueError), f, X, axis=2)
    raises(f"{n}(axis='x')", n, ValueError, f, X, axis="x")
    raises(f"{n}(group_size=-1)", n, ValueError, f, X, axis=1, group_size=-1)
    raises(f"{n}(group_size=5 of 6)", n, ValueError, f, X, axis=1, group_size=5)
    raises(f"{n}(object array)", n, TypeError, f, np.array([None, 1.0]))
    raises(f"{n}(complex array)", n, TypeError, f, np.ones(3, np.complex64))
    raises(f"{n}(str)", n, TypeError, f, "abc")
    raises(f"{n}(unknown keyword)", n, TypeError, f, X, symmetrical=True)
for n, f in (("quantize", mxp.quantize), ("fake_quantize", mxp.fake_quantize)):
    raises(f"{n}(rounding='x')", n, ValueError, f, X, rounding="x")
    raises(f"{n}(seed=-1)", n, ValueError, f, X, rounding="stochastic", seed=-1)
raises("quantize(qparams=dict)", "quantize", TypeError, mxp.quantize, X, qparams={"scale": 1})
raises("quantize(qparams of 3 channels for 4)", "quantize", ValueError, mxp.quantize, X,
       qparams=mxp.QParams("int8", [1.0, 1.0, 1.0], axis=0))
raises("quantize(out of another shape)", "quantize", ValueError, mxp.quantize, X, out=np.zeros((6, 4), np.int8))
raises("quantize(out of another dtype)", "quantize", (TypeError, ValueError), mxp.quantize, X,
       out=np.zeros((4, 6), np.uint8))
raises("quantize(out read-only)", "quantize", ValueError, mxp.quantize, X, out=readonly(np.zeros((4, 6), np.int8)))
raises("quantize(out list)", "quantize", TypeError, mxp.quantize, X, out=[0] * 24)
raises("quantize(index_offset=-1)", "quantize", ValueError, mxp.quantize, X, index_offset=-1)
raises("quantize_rows(qtype='int4')", "quantize_rows", ValueError, mxp.quantize_rows, X, "int4")
raises("quantize_rows(1-d x)", "quantize_rows", ValueError, mxp.quantize_rows, X[0])
raises("quantize_rows(3-d x)", "quantize_rows", ValueError, mxp.quantize_rows, X.reshape(2, 2, 6))
raises("quantize_rows(int32 x)", "quantize_rows", TypeError, mxp.quantize_rows, X.astype(np.int32))
raises("quantize_rows(object array)", "quantize_rows", TypeError, mxp.quantize_rows, np.array([[None, 1.0]]))
raises("quantize_rows(str)", "quantize_rows", TypeError, mxp.quantize_rows, "abc")
raises("quantize_rows(col_scale of 5 for 6)", "quantize_rows", ValueError, mxp.quantize_rows, X,
       col_scale=np.ones(5, np.float32))
raises("quantize_rows(col_scale 2-d)", "quantize_rows", ValueError, mxp.quantize_rows, X,
       col_scale=np.ones((1, 6), np.float32))
raises("quantize_rows(col_scale 'x')", "quantize_rows", ValueError, mxp.quantize_rows, X, col_scale="x")
raises("quantize_rows(out of another shape)", "quantize_rows", ValueError, mxp.quantize_rows, X,
       out=np.zeros((6, 4), np.uint8))
raises("quantize_rows(out int8 for uint8)", "quantize_rows", TypeError, mxp.quantize_rows, X,
       out=np.zeros((4, 6), np.int8))
raises("quantize_rows(out read-only)", "quantize_rows", ValueError, mxp.quantize_rows, X,
       out=readonly(np.zeros((4, 6), np.uint8)))
raises("quantize_rows(out list)", "quantize_rows", TypeError, mxp.quantize_rows, X, out=[0] * 24)
raises("quantize_rows(unknown keyword)", "quantize_rows", TypeError, mxp.quantize_rows, X, symmetrical=True)
raises("dequantize(codes without qparams)", "dequantize", TypeError, mxp.dequantize, Q.codes)
raises("dequantize(dtype='abc')", "dequantize", TypeError, mxp.dequantize, Q, "abc")
raises("dequantize(qparams=dict)", "dequantize", AttributeError, mxp.dequantize, Q.codes, qparams={})
raises("dequantize(float codes)", "dequantize", TypeError, mxp.dequantize, X, qparams=QP)
raises("dequantize(codes of 3 channels for 4)", "dequantize", ValueError, mxp.dequantize, Q.codes,
       qparams=mxp.QParams("int8", [1.0, 1.0, 1.0], axis=0))
raises("dequantize(unknown keyword)", "dequantize", TypeError, mxp.dequantize, Q, out=None)
raises("pack_int4(float codes)", "pack_int4", TypeError, mxp.pack_int4, X)
raises("pack_int4(0-d)", "pack_int4", ValueError, mxp.pack_int4, np.array(1, np.int8))
raises("pack_int4(str)", "pack_int4", TypeError, mxp.pack_int4, "abc")
raises("unpack_int4(float bytes)", "unpack_int4", TypeError, mxp.unpack_int4, X, 12)
raises("unpack_int4(n too large)", "unpack_int4", ValueError, mxp.unpack_int4, np.zeros((2, 3), np.uint8), 7)
raises("unpack_int4(n=-1)", "unpack_int4", ValueError, mxp.unpack_int4, np.zeros((2, 3), np.uint8), -1)
raises("unpack_int4(n=2**62)", "unpack_int4", (ValueError, OverflowError), mxp.unpack_int4,
       np.zeros((2, 3), np.uint8), 2**62)
raises("unpack_int4(n='x')", "unpack_int4", ValueError, mxp.unpack_int4, np.zeros((2, 3), np.uint8), "x")
raises("pack(float32)", "pack", TypeError, mxp.pack, X)
raises("pack(0-d)", "pack", ValueError, mxp.pack, np.zeros((), mxp.int4))
raises("pack(str)", "pack", TypeError, mxp.pack, "abc")
raises("unpack(float bytes)", "unpack", TypeError, mxp.unpack, X, mxp.int4, 8)
raises("unpack(int8 bytes)", "unpack", TypeError, mxp.unpack, np.zeros(2, np.int8), mxp.int4, 4)
raises("unpack(dtype float32)", "unpack", TypeError, mxp.unpack, np.zeros(2, np.uint8), np.float32, 2)
raises("unpack(n too large)", "unpack", ValueError, mxp.unpack, np.zeros((2, 3), np.uint8), mxp.int4, 7)
raises("unpack(n=-1)", "unpack", ValueError, mxp.unpack, np.zeros((2, 3), np.uint8), mxp.int4, -1)
raises("unpack(n=2**62)", "unpack", (ValueError, OverflowError), mxp.unpack, np.zeros((2, 3), np.uint8),
       mxp.float4_e2m1fn, 2**62)
raises("unpack(0-d)", "unpack", ValueError, mxp.unpack, np.zeros((), np.uint8), mxp.int4, 2)
raises("packed_bytes(float32)", "packed_bytes", TypeError, mxp.packed_bytes, np.float32, 3)
raises("packed_bytes(n=-1)", "packed_bytes", ValueError, mxp.packed_bytes, mxp.int4, -1)
raises("packed_bytes(dtype 'x')", "packed_bytes", TypeError, mxp.packed_bytes, "x", 1)
raises("quantize_weight(1-d)", "quantize_weight", ValueError, mxp.quantize_weight, np.ones(4, np.float32))
raises("quantize_weight(complex)", "quantize_weight", TypeError, mxp.quantize_weight, np.ones((2, 2), np.complex64))
raises("quantize_weight(unknown keyword)", "quantize_weight", TypeError, mxp.quantize_weight, X, axis=0)
W = mxp.quantize_weight(X)
raises("qlinear(weight array)", "qlinear", TypeError, mxp.qlinear, X, X)
raises("qlinear(x_qparams dict)", "qlinear", TypeError, mxp.qlinear, X, W, x_qparams={})
raises("qlinear(in_features mismatch)", "qlinear", ValueError, mxp.qlinear, X[:, :5], W)
raises("qlinear(bias of 3)", "qlinear", ValueError, mxp.qlinear, X, W, np.ones(3, np.float32))
raises("qlinear(out_dtype='abc')", "qlinear", TypeError, mxp.qlinear, X, W, out_dtype="abc")
raises("qlinear(object x)", "qlinear", TypeError, mxp.qlinear, np.array([[None] * 6]), W)
raises("qlinear(0-d x)", "qlinear", ValueError, mxp.qlinear, np.array(1.0, np.float32), W)
raises("qlinear(unknown keyword)", "qlinear", TypeError, mxp.qlinear, X, W, x_scale=1.0)
raises("QuantizedTensor.prepack(uint8 codes)", "QuantizedTensor.prepack", TypeError,
       mxp.quantize(X, "uint8", symmetric=False).prepack)
raises("QuantizedTensor.prepack(per input channel)", "QuantizedTensor.prepack", TypeError,
       mxp.quantize(X, axis=1).prepack)
raises("QuantizedTensor.prepack(1-d codes)", "QuantizedTensor.prepack", ValueError,
       mxp.quantize(np.ones(4, np.float32)).prepack)
raises("QuantizedTensor.prepack(codes a list)", "QuantizedTensor.prepack", TypeError,
       mxp.QuantizedTensor([[1, 2]], W.qparams).prepack)


@case("quantize, fake_quantize, calibrate, dequantize: every layout equals a contiguous copy", "quantize",
      "fake_quantize", "calibrate", "dequantize", "QuantizedTensor.dequantize", "QParams", "QuantizedTensor")
def _():
    for x in (X, X.astype(BF)):
        for kw in ({}, {"axis": 1}, {"axis": 0, "symmetric": False}, {"axis": 1, "group_size": 3},
                   {"rounding": "stochastic", "seed": 9}):
            same_on_layouts(lambda v: mxp.quantize(v, "int8", **kw), x)
            same_on_layouts(lambda v: mxp.fake_quantize(v, "uint4", **kw), x)
        same_on_layouts(lambda v: mxp.calibrate(v, "float8_e4m3fn", axis=0), x)
    same_on_layouts(lambda c: mxp.dequantize(c, np.float32, qparams=QP), Q.codes)
    q1 = mxp.quantize(X, "int8", axis=1)
    same_on_layouts(lambda c: mxp.dequantize(c, BF, qparams=q1.qparams), q1.codes)
    for o in hostile.layouts(np.zeros((4, 6), np.int8)).values():
        bits_equal(np.ascontiguousarray(mxp.quantize(X, out=o).codes), Q.codes)


@case("quantize: NaN/inf, 0-d, empty", "quantize", "calibrate", "dequantize", "fake_quantize")
def _():
    q = mxp.quantize(XS, "int8")  # calibration ignores NaN/inf; inf saturates
    c = q.codes
    assert np.isfinite(q.qparams.scale) and q.qparams.scale > 0
    assert c[1, 1] == 127 and c[2, 2] == -127 or c[2, 2] == -128
    z = mxp.quantize(np.array(2.0, np.float32))
    assert z.codes.shape == () and float(mxp.dequantize(z)) == 2.0
    expect(ValueError, mxp.quantize, np.zeros((0, 4), np.float32), qparams=QP)  # the C library's: empty
    expect(ValueError, mxp.calibrate, np.zeros((0, 4), np.float32))  # nothing to calibrate from
    assert mxp.fake_quantize(np.array([np.nan], np.float32), qparams=QP).shape == (1,)


@case("pack_int4, unpack_int4: layouts, odd lengths, empty", "pack_int4", "unpack_int4")
def _():
    codes = (np.arange(24, dtype=np.int8).reshape(4, 6) % 16 - 8)
    packed = same_on_layouts(mxp.pack_int4, codes)
    same_on_layouts(lambda p: mxp.unpack_int4(p, 6), packed)
    bits_equal(mxp.unpack_int4(packed, 6), codes)
    odd = codes[:, :5].copy()
    bits_equal(mxp.unpack_int4(mxp.pack_int4(odd), 5), odd)
    assert mxp.pack_int4(np.zeros((3, 0), np.int8)).shape == (3, 0)
    expect(ValueError, mxp.pack_int4, np.full((2, 2), 9, np.int8))  # out of int4's range


@case("pack, unpack, packed_bytes: layouts, every sub-byte type, empty", "pack", "unpack", "packed_bytes")
def _():
    codes = np.arange(24, dtype=np.uint8).reshape(4, 6) % 16
    for t, bits in ((mxp.int4, 4), (mxp.float6_e3m2fn, 6), (mxp.uint2, 2), (mxp.int1, 1)):
        c = (codes % (1 << bits)).view(t)
        packed = same_on_layouts(mxp.pack, c)
        assert packed.shape == (4, mxp.packed_bytes(t, 6))
        same_on_layouts(lambda p: mxp.unpack(p, t, 6), packed)
        bits_equal(mxp.unpack(packed, t, 6), c)
    assert mxp.pack(np.zeros((3, 0), mxp.int4)).shape == (3, 0)
    assert mxp.unpack(np.zeros((3, 0), np.uint8), mxp.int4, 0).shape == (3, 0)
    assert mxp.packed_bytes(mxp.float6_e2m3fn, 0) == 0


@case("quantize_weight, qlinear: layouts, NaN, empty batch", "quantize_weight", "qlinear")
def _():
    same_on_layouts(mxp.quantize_weight, X)
    bias = np.arange(4, dtype=np.float32)
    x = X[:, :6].copy()
    same_on_layouts(lambda v: mxp.qlinear(v, W, bias), x)
    assert mxp.qlinear(np.zeros((0, 6), np.float32), W).shape == (0, 4)
    y = mxp.qlinear(np.ones((2, 6), np.float32), W, np.array([np.nan, 0, 0, 0], np.float32))
    assert np.isnan(y[:, 0]).all() and np.isfinite(y[:, 1:]).all()


OBS = (mxp.MinMaxObserver, mxp.MovingAverageObserver, mxp.PercentileObserver, mxp.MSEObserver, mxp.KLObserver)
for o in OBS:
    n = o.__name__
    raises(f"{n}(qtype='x')", n, ValueError, o, "x")
    raises(f"{n}(unknown keyword)", n, TypeError, o, "int8", window=3)
    raises(f"{n}.qparams before update", f"{n}.qparams", ValueError, lambda o=o: o("int8").qparams())
    raises(f"{n}.update(str)", f"{n}.update", TypeError, lambda o=o: o("int8").update("abc"))
    raises(f"{n}.update(complex)", f"{n}.update", TypeError, lambda o=o: o("int8").update(np.ones(2, np.complex64)))
    raises(f"{n}.update(1, 2)", f"{n}.update", TypeError, lambda o=o: o("int8").update(X, X))

    @case(f"{n}: layouts of batches equal contiguous ones; NaN/inf ignored", n, f"{n}.update", f"{n}.qparams")
    def _(o=o):
        same_on_layouts(lambda v: o("int8").update(v).update(v * 2).qparams(), X)
        same_on_layouts(lambda v: o("uint8", symmetric=False).update(v).qparams(), XS)
        assert np.isfinite(o("int8").update(XS).qparams().scales).all()
raises("MinMaxObserver(axis=-2)", "MinMaxObserver", ValueError, mxp.MinMaxObserver, axis=-2)
raises("MinMaxObserver(axis='x')", "MinMaxObserver", ValueError, mxp.MinMaxObserver, axis="x")
raises("MinMaxObserver(axis 2 of 2-d)", "MinMaxObserver.update", (AxisError, ValueError),
       lambda: mxp.MinMaxObserver(axis=2).update(X))
raises("MinMaxObserver(channels change)", "MinMaxObserver.update", ValueError,
       lambda: mxp.MinMaxObserver(axis=0).update(X).update(X[:3]))
raises("MovingAverageObserver(momentum=1)", "MovingAverageObserver", ValueError, mxp.MovingAverageObserver,
       momentum=1.0)
raises("MovingAverageObserver(momentum=nan)", "MovingAverageObserver", ValueError, mxp.MovingAverageObserver,
       momentum=float("nan"))
raises("PercentileObserver(percentile=0)", "PercentileObserver", ValueError, mxp.PercentileObserver, percentile=0)
raises("PercentileObserver(percentile=nan)", "PercentileObserver", ValueError, mxp.PercentileObserver,
       percentile=float("nan"))
raises("PercentileObserver(bins=0)", "PercentileObserver", ValueError, mxp.PercentileObserver, bins=0)
raises("MSEObserver(bins=-1)", "MSEObserver", ValueError, mxp.MSEObserver, bins=-1)
raises("KLObserver(bins=2**40)", "KLObserver", (ValueError, OverflowError), mxp.KLObserver, bins=2**40)

MXT = mxp.mx_quantize(X)
raises("mx_quantize(format='mxfp6')", "mx_quantize", ValueError, mxp.mx_quantize, X, "mxfp6")
raises("mx_quantize(format=None)", "mx_quantize", ValueError, mxp.mx_quantize, X, None)
raises("mx_quantize(rounding='x')", "mx_quantize", ValueError, mxp.mx_quantize, X, rounding="x")
raises("mx_quantize(complex)", "mx_quantize", TypeError, mxp.mx_quantize, np.ones(4, np.complex64))
raises("mx_quantize(str)", "mx_quantize", (TypeError, ValueError), mxp.mx_quantize, "abc")
raises("mx_quantize(unknown keyword)", "mx_quantize", TypeError, mxp.mx_quantize, X, block=32)
raises("mx_dequantize(array)", "mx_dequantize", TypeError, mxp.mx_dequantize, X)
raises("mx_dequantize(unknown format)", ("mx_dequantize", "MXTensor"), ValueError, mxp.mx_dequantize,
       mxp.MXTensor(MXT.data, "mxfp6", MXT.shape))
raises("mx_dequantize(shape beyond the data)", "mx_dequantize", ValueError, mxp.mx_dequantize,
       mxp.MXTensor(MXT.data, MXT.format, (4, 600)))
raises("mx_dequantize(shape whose size overflows)", "mx_dequantize", ValueError, mxp.mx_dequantize,
       mxp.MXTensor(MXT.data, MXT.format, (2**32, 2**32)))
raises("mx_dequantize(negative shape)", "mx_dequantize", ValueError, mxp.mx_dequantize,
       mxp.MXTensor(MXT.data, MXT.format, (-1, 24)))
raises("mx_dequantize(data of floats)", "mx_dequantize", TypeError, mxp.mx_dequantize,
       mxp.MXTensor(X, MXT.format, MXT.shape))
raises("mx_dequantize(data read as a list)", "mx_dequantize", TypeError, mxp.mx_dequantize,
       mxp.MXTensor(list(MXT.data), MXT.format, MXT.shape))
raises("MXTensor(shape None)", "MXTensor", TypeError, mxp.MXTensor, MXT.data, MXT.format, None)
MXW = mxp.mx_quantize(np.linspace(-1, 1, 96, dtype=np.float32).reshape(3, 32), "mxfp4")
XW = np.linspace(-2, 2, 64, dtype=np.float32).reshape(2, 32)
raises("mx_matmul(w an array)", "mx_matmul", TypeError, mxp.mx_matmul, XW, XW)
raises("mx_matmul(x of 6 columns)", "mx_matmul", ValueError, mxp.mx_matmul, X, MXW)
raises("mx_matmul(0-d x)", "mx_matmul", ValueError, mxp.mx_matmul, np.float32(1), MXW)
raises("mx_matmul(k 6: not whole blocks)", "mx_matmul", ValueError, mxp.mx_matmul, X, MXT)
raises("mx_matmul(complex x)", "mx_matmul", TypeError, mxp.mx_matmul, XW.astype(np.complex64), MXW)
raises("mx_matmul(int x)", "mx_matmul", TypeError, mxp.mx_matmul, XW.astype(np.int32), MXW)
raises("mx_matmul(1-d w)", "mx_matmul", ValueError, mxp.mx_matmul, XW, mxp.MXTensor(MXW.data, "mxfp4", (96,)))
raises("mx_matmul(w data too short)", "mx_matmul", ValueError, mxp.mx_matmul, XW,
       mxp.MXTensor(MXW.data[:10], "mxfp4", (3, 32)))
raises("mx_matmul(w data of floats)", "mx_matmul", TypeError, mxp.mx_matmul, XW,
       mxp.MXTensor(np.zeros(60, np.float32), "mxfp4", (3, 32)))
raises("mx_matmul(unknown format)", "mx_matmul", ValueError, mxp.mx_matmul, XW, mxp.MXTensor(MXW.data, "fp5", (3, 32)))
raises("mx_matmul(bias of 2 for 3)", "mx_matmul", ValueError, mxp.mx_matmul, XW, MXW, bias=np.ones(2, np.float32))
raises("mx_matmul(activation 'x')", "mx_matmul", ValueError, mxp.mx_matmul, XW, MXW, activation="x")
raises("mx_matmul(rounding 'x')", "mx_matmul", ValueError, mxp.mx_matmul, XW, MXW, rounding="x")
raises("mx_matmul(out_dtype int8)", "mx_matmul", (TypeError, ValueError), mxp.mx_matmul, XW, MXW, out_dtype=np.int8)


@case("mx_matmul: layouts, 1-d and empty x", "mx_matmul")
def _():
    same_on_layouts(lambda v: mxp.mx_matmul(v, MXW), XW)
    assert mxp.mx_matmul(XW[0], MXW).shape == (3,)
    assert mxp.mx_matmul(np.zeros((0, 32), np.float32), MXW).shape == (0, 3)
    bits_equal(mxp.mx_matmul(XW, MXW), mxp.matmul(XW, mxp.mx_dequantize(MXW).T))


@case("mx_quantize: layouts, NaN/inf, 0-d, empty", "mx_quantize", "mx_dequantize", "MXTensor")
def _():
    for fmt in ("mxfp8_e4m3", "mxfp4", "mxint8"):
        same_on_layouts(lambda v: mxp.mx_quantize(v, fmt), XS)
        same_on_layouts(lambda v: mxp.mx_dequantize(mxp.mx_quantize(v, fmt, "stochastic", 4)), X)
    t = mxp.mx_quantize(np.array(1.5, np.float32))
    assert mxp.mx_dequantize(t).shape == () and float(mxp.mx_dequantize(t)) == 1.5
    e = mxp.mx_dequantize(mxp.mx_quantize(np.zeros((0, 7), BF)))
    assert e.shape == (0, 7) and e.dtype == np.float32
    assert np.isnan(mxp.mx_dequantize(mxp.mx_quantize(XS))[0, 0])


# ---- analysis ----------------------------------------------------------------------

raises("compare(shape mismatch)", ("compare", "CompareResult"), ValueError, mxp.compare, X, X[:3])
raises("compare(object)", "compare", TypeError, mxp.compare, np.array([None]), np.array([None]))
raises("compare(complex)", "compare", TypeError, mxp.compare, np.ones(2, np.complex64), np.ones(2, np.complex64))
raises("compare(str)", "compare", TypeError, mxp.compare, "a", "b")
raises("compare(unknown keyword)", "compare", TypeError, mxp.compare, X, X, exact=True)
raises("roundtrip(dtypes=['abc'])", ("roundtrip", "RoundtripTable"), TypeError, mxp.roundtrip, X, ["abc"])
raises("roundtrip(dtypes=[complex64])", "roundtrip", TypeError, mxp.roundtrip, X, [np.complex64])
raises("roundtrip(dtypes=3)", "roundtrip", TypeError, mxp.roundtrip, X, 3)
raises("roundtrip(object x)", "roundtrip", TypeError, mxp.roundtrip, np.array([None]))
raises("roundtrip(unknown keyword)", "roundtrip", TypeError, mxp.roundtrip, X, types=None)
for req in ("psnr>=", "psnr<=40", "relerr>=0.1", "snr>=3", "", 40, None):
    raises(f"recommend_dtype(require={req!r})", "recommend_dtype", ValueError, mxp.recommend_dtype, X, req)
raises("recommend_dtype(object x)", "recommend_dtype", TypeError, mxp.recommend_dtype, np.array([None]))
raises("recommend_dtype(unknown keyword)", "recommend_dtype", TypeError, mxp.recommend_dtype, X, target="x")
for cand, exc in ((["int8"], TypeError), (["float16", "abc"], TypeError), ([None], TypeError), ([], ValueError),
                  (["float16"] * 2, ValueError), (["float32"] * 65, ValueError), ("six", ValueError), (3, TypeError),
                  (mxp.bfloat16, TypeError), ([mxp.int4, "float16"], TypeError)):
    raises(f"recommend_dtype(candidates={cand!r})", "recommend_dtype", exc, mxp.recommend_dtype, X, "psnr>=20",
           candidates=cand)
raises("recommend_dtype(candidates none meets)", "recommend_dtype", ValueError, mxp.recommend_dtype, X, "psnr>=300",
       candidates=["float4_e2m1fn"])


@case("compare, roundtrip, recommend_dtype: layouts, NaN/inf, 0-d, empty", "compare", "roundtrip",
      "recommend_dtype", "CompareResult", "RoundtripTable", "CompareResult.as_dict")
def _():
    y = XS.astype(BF)
    same_on_layouts(lambda a, b: mxp.compare(a, b).as_dict(), XS, y)
    same_on_layouts(lambda a, b: mxp.compare(a, b).as_dict(), XS.astype(E4), y)
    same_on_layouts(lambda v: list(map(dict, mxp.roundtrip(v))), XS)
    same_on_layouts(lambda v: mxp.recommend_dtype(v, "relerr<=0.01"), X)
    r = mxp.compare(XS, XS)
    assert r.nan_mismatches == 0 and r.inf_mismatches == 0 and r.max_abs_error == 0
    r = mxp.compare(np.array(1.0), np.array(1.0))
    assert r.count == 1
    expect(ValueError, mxp.compare, np.zeros((0, 2)), np.zeros((0, 2), BF))  # the C library's: no metric
    expect(ValueError, mxp.roundtrip, np.zeros(0, np.float32))
    assert mxp.recommend_dtype(XS, "no-overflow").dtype in ("float32", "float64", "bfloat16", "float8_e5m2",
                                                              "float16", "float8_e4m3fn")
    same_on_layouts(lambda v: mxp.recommend_dtype(v, "relerr<=0.1", candidates="all"), X)
    # NaN and inf: float4/float6 and the fn/fnuz float8s lose them; of the IEEE-style float8s e3m4 has the best PSNR
    assert mxp.recommend_dtype(XS, "no-overflow", candidates="all").dtype == "float8_e3m4"


# ---- training ----------------------------------------------------------------------

def _p(dtype=np.float32):
    return np.ones((2, 3), dtype)


for O in (mxp.SGD, mxp.Adam, mxp.AdamW):
    n = O.__name__
    raises(f"{n}([])", n, ValueError, O, [])
    raises(f"{n}(params=3)", n, TypeError, O, 3)
    raises(f"{n}(params=[list])", n, TypeError, O, [[1.0, 2.0]])
    raises(f"{n}(lr='x')", n, TypeError, O, [_p()], lr="x")
    raises(f"{n}(lr=nan)", n, ValueError, O, [_p()], lr=float("nan"))
    raises(f"{n}(lr=-1)", n, ValueError, O, [_p()], lr=-1.0)
    raises(f"{n}(read-only param)", n, ValueError, O, [readonly(_p())])
    raises(f"{n}(Fortran param)", n, ValueError, O, [np.ones((2, 3), np.float32, order="F")])
    raises(f"{n}(reversed param)", n, ValueError, O, [_p()[::-1]])
    raises(f"{n}(int param)", n, TypeError, O, [np.ones(3, np.int32)])
    raises(f"{n}(complex param)", n, TypeError, O, [np.ones(3, np.complex64)])
    raises(f"{n}(grads of another shape)", n, ValueError, O, [_p()], grads=[np.ones(6, np.float32)])
    raises(f"{n}(grads count)", n, ValueError, O, [_p()], grads=[_p(), _p()])
    raises(f"{n}(int grads)", n, TypeError, O, [_p()], grads=[np.ones((2, 3), np.int32)])
    raises(f"{n}(master_init of another shape)", n, ValueError, O, [_p()], master_init=[np.ones(5)])
    raises(f"{n}(rounding='up')", n, ValueError, O, [_p()], rounding="up")
    raises(f"{n}(seed=-1)", n, ValueError, O, [_p()], seed=-1)
    raises(f"{n}(unknown keyword)", n, TypeError, O, [_p()], momentun=0.9)
    opt = O([_p()])
    raises(f"{n}.step(grads of another shape)", f"{n}.step", ValueError, opt.step, [np.ones(4, np.float32)])
    raises(f"{n}.step(grads count)", f"{n}.step", ValueError, opt.step, [_p(), _p()])
    raises(f"{n}.step(str)", f"{n}.step", TypeError, opt.step, "abc")
    raises(f"{n}.step(complex grads)", f"{n}.step", TypeError, opt.step, [np.ones((2, 3), np.complex64)])
    raises(f"{n}.step_scaled(0)", f"{n}.step_scaled", ValueError, opt.step_scaled, 0.0)
    raises(f"{n}.step_scaled(nan)", f"{n}.step_scaled", ValueError, opt.step_scaled, float("nan"))
    raises(f"{n}.step_scaled('x')", f"{n}.step_scaled", TypeError, opt.step_scaled, "x")
    raises(f"{n}.master(5)", f"{n}.master", IndexError, opt.master, 5)
    raises(f"{n}.master(-1)", f"{n}.master", IndexError, opt.master, -1)
    raises(f"{n}.master('x')", f"{n}.master", ValueError, opt.master, "x")
    raises(f"{n}.zero_grad(1)", f"{n}.zero_grad", TypeError, opt.zero_grad, 1)
raises("SGD(momentum='x')", "SGD", TypeError, mxp.SGD, [_p()], momentum="x")
raises("SGD(nesterov without momentum)", "SGD", ValueError, mxp.SGD, [_p()], nesterov=True)
raises("Adam(betas=1)", "Adam", TypeError, mxp.Adam, [_p()], betas=1)
raises("Adam(betas=(0, 0.9))", "Adam", ValueError, mxp.Adam, [_p()], betas=(0, 0.9))
raises("Adam(betas=(1.5, 0.9))", "Adam", ValueError, mxp.Adam, [_p()], betas=(1.5, 0.9))
raises("AdamW(eps=-1)", "AdamW", ValueError, mxp.AdamW, [_p()], eps=-1.0)


@case("optimizers: a NaN gradient, non-contiguous grads and master_init, bfloat16 params", "SGD", "Adam", "AdamW",
      "SGD.step", "Adam.step", "AdamW.step", "SGD.step_scaled", "Adam.step_scaled", "AdamW.step_scaled",
      "SGD.master", "Adam.master", "AdamW.master", "SGD.zero_grad", "Adam.zero_grad", "AdamW.zero_grad")
def _():
    g = X.copy()
    for O in (mxp.SGD, mxp.Adam, mxp.AdamW):
        def run(grad, init):
            p = np.zeros((4, 6), BF)
            opt = O([p], lr=0.1, master_init=[init])
            opt.step([grad])
            opt.step_scaled(2.0)
            return p, opt.master(0)
        same_on_layouts(run, g, X * 0.5)
        p = np.zeros((4, 6), np.float32)
        opt = O([p], lr=0.1)
        opt.step([XS])  # NaN/inf in: the update is what torch's would be (NaN where they enter)
        assert np.isnan(p[0, 0]) and np.isfinite(p[0, 1])
        opt.zero_grad()
        assert not opt.grads[0].any()


raises("clip_grad_norm(str)", "clip_grad_norm", TypeError, mxp.clip_grad_norm, "abc", 1.0)
raises("clip_grad_norm(max_norm='x')", "clip_grad_norm", TypeError, mxp.clip_grad_norm, [_p()], "x")
raises("clip_grad_norm(max_norm=-1)", "clip_grad_norm", ValueError, mxp.clip_grad_norm, [_p()], -1.0)
raises("clip_grad_norm(read-only)", "clip_grad_norm", ValueError, mxp.clip_grad_norm, [readonly(_p() * 9)], 1.0)
raises("clip_grad_norm(int)", "clip_grad_norm", TypeError, mxp.clip_grad_norm, [np.ones(3, np.int32)], 1.0)
raises("clip_grad_norm(unknown keyword)", "clip_grad_norm", TypeError, mxp.clip_grad_norm, [_p()], 1.0, norm=2)


@case("clip_grad_norm: every layout, NaN, empty", "clip_grad_norm")
def _():
    for kind, v in hostile.layouts(X).items():  # in place: C-contiguous gradients only (docs/train.md)
        expect(ValueError, mxp.clip_grad_norm, [v], 1.0)
        bits_equal(np.ascontiguousarray(v), X)
    w = X.copy()
    n = mxp.clip_grad_norm([w, X[:1].copy()], 1.0)
    assert n == float(np.sqrt(np.sum(X.astype(np.float64) ** 2) + np.sum(X[:1].astype(np.float64) ** 2)))
    assert abs(float(np.sqrt(np.sum(w.astype(np.float64) ** 2))) - 1.0 / (1 + 1e-6 / n) * np.sqrt(
        np.sum(X.astype(np.float64) ** 2)) / n) < 1e-6
    assert np.isnan(mxp.clip_grad_norm([XS.copy()], 1.0)) or np.isinf(mxp.clip_grad_norm([XS.copy()], 1.0))
    assert mxp.clip_grad_norm([np.zeros(0, np.float32)], 1.0) == 0.0


S = mxp.LossScaler()
raises("LossScaler(init_scale='x')", "LossScaler", TypeError, mxp.LossScaler, "x")
raises("LossScaler(init_scale=0)", "LossScaler", ValueError, mxp.LossScaler, 0.0)
raises("LossScaler(init_scale=nan)", "LossScaler", ValueError, mxp.LossScaler, float("nan"))
raises("LossScaler(init_scale=inf)", "LossScaler", ValueError, mxp.LossScaler, float("inf"))
raises("LossScaler(growth_factor=0.5)", "LossScaler", ValueError, mxp.LossScaler, growth_factor=0.5)
raises("LossScaler(backoff_factor=2)", "LossScaler", ValueError, mxp.LossScaler, backoff_factor=2.0)
raises("LossScaler(growth_interval=1.5)", "LossScaler", TypeError, mxp.LossScaler, growth_interval=1.5)
raises("LossScaler(growth_interval=-1)", "LossScaler", ValueError, mxp.LossScaler, growth_interval=-1)
raises("LossScaler(min_scale > max_scale)", "LossScaler", ValueError, mxp.LossScaler, min_scale=4.0, max_scale=2.0)
raises("LossScaler(unknown keyword)", "LossScaler", TypeError, mxp.LossScaler, dynamic=True)
raises("LossScaler.unscale_(str)", "LossScaler.unscale_", TypeError, S.unscale_, "abc")
raises("LossScaler.unscale_(read-only)", "LossScaler.unscale_", ValueError, S.unscale_, [readonly(_p())])
raises("LossScaler.unscale_(int)", "LossScaler.unscale_", TypeError, S.unscale_, [np.ones(2, np.int32)])
raises("LossScaler.check(str)", "LossScaler.check", TypeError, S.check, "abc")
raises("LossScaler.check(object)", "LossScaler.check", TypeError, S.check, [np.array([None])])
raises("LossScaler.step(not an optimizer)", "LossScaler.step", TypeError, S.step, object())
raises("LossScaler.update(1)", "LossScaler.update", TypeError, S.update, 1)
raises("LossScaler.scale_loss(str)", "LossScaler.scale_loss", TypeError, S.scale_loss, "abc")
raises("LossScaler.state_dict(1)", "LossScaler.state_dict", TypeError, S.state_dict, 1)
raises("LossScaler.load_state_dict(list)", "LossScaler.load_state_dict", TypeError, S.load_state_dict, [])
raises("LossScaler.load_state_dict(missing keys)", "LossScaler.load_state_dict", ValueError, S.load_state_dict,
       {"scale": 1.0})
raises("LossScaler.load_state_dict(scale='x')", "LossScaler.load_state_dict", TypeError, S.load_state_dict,
       {"scale": "x", "growth_tracker": 0, "steps": 0, "skipped": 0})
raises("LossScaler.load_state_dict(scale=nan)", "LossScaler.load_state_dict", ValueError, S.load_state_dict,
       {"scale": float("nan"), "growth_tracker": 0, "steps": 0, "skipped": 0})
raises("LossScaler.load_state_dict(steps=-1)", "LossScaler.load_state_dict", ValueError, S.load_state_dict,
       {"scale": 1.0, "growth_tracker": 0, "steps": -1, "skipped": 0})


@case("LossScaler: NaN/inf found on any layout; unscale_ in place equals a contiguous copy", "LossScaler",
      "LossScaler.check", "LossScaler.unscale_", "LossScaler.step", "LossScaler.update", "LossScaler.scale_loss",
      "LossScaler.state_dict", "LossScaler.load_state_dict")
def _():
    for kind, v in hostile.layouts(XS).items():
        assert mxp.LossScaler().check([v]) is True, kind
        assert mxp.LossScaler().check([hostile.layouts(X)[kind]]) is False, kind
        w = hostile.layouts(X.astype(BF))[kind]  # in place: C-contiguous only, refused untouched
        expect(ValueError, mxp.LossScaler(init_scale=4.0).unscale_, [w])
        bits_equal(np.ascontiguousarray(w), X.astype(BF), kind)
    c = X.astype(BF)
    mxp.LossScaler(init_scale=4.0).unscale_([c])
    bits_equal(c, (X.astype(BF).astype(np.float32) * np.float32(0.25)).astype(BF))
    s = mxp.LossScaler(init_scale=8.0)
    p = np.zeros(4, np.float32)
    opt = mxp.SGD([p], lr=1.0)
    assert s.step(opt, [np.array([1, np.inf, 0, 0], np.float32)]) is False and not p.any()
    s.update()
    assert s.scale == 4.0 and s.scale_loss(2.0) == 8.0
    d = s.state_dict()
    s.load_state_dict(d)
    assert s.state_dict() == d
    assert s.check([np.zeros((0, 3), BF)]) is False


AC = mxp.Autocast("bf16")
raises("Autocast(policy='fp8')", "Autocast", ValueError, mxp.Autocast, "fp8")
raises("Autocast(policy=None)", "Autocast", TypeError, mxp.Autocast, None)
raises("Autocast(unknown keyword)", "Autocast", TypeError, mxp.Autocast, "bf16", enabled=True)
raises("Autocast.set(op='conv')", "Autocast.set", ValueError, AC.set, "conv", np.float32)
raises("Autocast.set(dtype='abc')", "Autocast.set", TypeError, AC.set, "matmul", "abc")
raises("Autocast.set(dtype=int8)", "Autocast.set", (TypeError, ValueError), AC.set, "matmul", np.int8)
raises("Autocast.dtype(op='conv')", "Autocast.dtype", ValueError, AC.dtype, "conv")
raises("Autocast.cast(op='conv')", "Autocast.cast", ValueError, AC.cast, "conv", X)
raises("Autocast.cast(object x)", "Autocast.cast", TypeError, AC.cast, "matmul", np.array([None]))
raises("Autocast.cast(complex x)", "Autocast.cast", TypeError, AC.cast, "matmul", np.ones(2, np.complex64))
raises("Autocast.table(1)", "Autocast.table", TypeError, AC.table, 1)
raises("autocast_policy('x')", "autocast_policy", ValueError, mxp.autocast_policy, "x")
raises("autocast_policy(3)", "autocast_policy", TypeError, mxp.autocast_policy, 3)


@case("Autocast.cast: every layout, 0-d, empty, NaN", "Autocast", "Autocast.cast", "Autocast.table",
      "Autocast.dtype", "Autocast.set", "autocast_policy")
def _():
    a = mxp.Autocast("bf16")
    same_on_layouts(lambda v: a.cast("matmul", v), XS)
    same_on_layouts(lambda v: a.cast("softmax", v), XS.astype(BF))
    assert a.cast("matmul", np.array(np.nan, np.float32)).shape == ()
    assert a.cast("matmul", np.zeros((0, 2))).dtype == BF
    a.set("matmul", np.float16)
    assert a.dtype("matmul") == np.float16 and a.table()["matmul"] == np.float16
    assert mxp.autocast_policy("bf16")["matmul"] == BF


M = mxp.Monitor()
raises("Monitor(target='int8')", "Monitor", (TypeError, ValueError), mxp.Monitor, "int8")
raises("Monitor(target='abc')", "Monitor", (TypeError, ValueError), mxp.Monitor, "abc")
raises("Monitor(underflow_share='x')", "Monitor", TypeError, mxp.Monitor, underflow_share="x")
raises("Monitor(underflow_share=-1)", "Monitor", ValueError, mxp.Monitor, underflow_share=-1.0)
raises("Monitor(max_history=-1)", "Monitor", ValueError, mxp.Monitor, max_history=-1)
raises("Monitor(unknown keyword)", "Monitor", TypeError, mxp.Monitor, history=3)
raises("Monitor.record(name 3)", "Monitor.record", TypeError, M.record, 3, X)
raises("Monitor.record(role 'bias')", "Monitor.record", ValueError, M.record, "w", X, "bias")
raises("Monitor.record(role 3)", "Monitor.record", TypeError, M.record, "w", X, 3)
raises("Monitor.record(object x)", "Monitor.record", TypeError, M.record, "w", np.array([None]))
raises("Monitor.record(step 'x')", "Monitor.record", ValueError, M.record, "w", X, step="x")
raises("Monitor.history(unknown name)", "Monitor.history", (KeyError, ValueError), M.history, "nothing")
raises("Monitor.suggest(unknown name)", "Monitor.suggest", (KeyError, ValueError), M.suggest, "nothing")
raises("Monitor.report(1)", "Monitor.report", TypeError, M.report, 1)
raises("Monitor.report_json(1)", "Monitor.report_json", TypeError, M.report_json, 1)


@case("Monitor.record: every layout, NaN/inf, 0-d, empty", "Monitor", "Monitor.record", "Monitor.history",
      "Monitor.suggest", "Monitor.report", "Monitor.report_json")
def _():
    same_on_layouts(lambda v: mxp.Monitor("float16").record("g", v, "gradient", 0), XS)
    same_on_layouts(lambda v: mxp.Monitor("bfloat16").record("w", v, "weight", 3), X.astype(E4))
    m = mxp.Monitor()
    m.record("z", np.array(1.0, np.float32))
    m.record("e", np.zeros((0, 3), BF))
    m.record("n", XS)
    assert len(m.history("n")) == 1 and isinstance(m.report(), str) and set(m.report_json())
    assert isinstance(m.suggest("n"), tuple)


# ---- mxp.dask ------------------------------------------------------------------------

try:
    import dask.array as da
    import mxp.dask as mdask
except ImportError:
    mdask = None

if mdask is not None:
    DX = da.from_array(X, chunks=(2, 3))
    for n in ("astype", "sum", "mean", "calibrate", "compare", "matmul", "to_npy_shards", "dequantize"):
        f = getattr(mdask, n)
        raises(f"dask.{n}(unknown keyword)", f"dask.{n}", TypeError, f, DX, DX, bogus=1)
    raises("dask.astype(dtype='abc')", "dask.astype", TypeError, mdask.astype, DX, "abc")
    raises("dask.astype(rounding='x')", "dask.astype", ValueError, mdask.astype, DX, BF, rounding="x")
    raises("dask.astype(object)", "dask.astype", TypeError, lambda: mdask.astype(da.from_array(
        np.array([None, 1.0]), chunks=1), BF).compute())
    raises("dask.sum(axis=2)", "dask.sum", AxisError, lambda: mdask.sum(DX.astype(BF), axis=2).compute())
    raises("dask.mean(axis=2)", "dask.mean", AxisError, lambda: mdask.mean(DX.astype(BF), axis=2).compute())
    raises("dask.calibrate(observer='x')", "dask.calibrate", ValueError, mdask.calibrate, DX, observer="x")
    raises("dask.calibrate(qtype='x')", "dask.calibrate", ValueError, mdask.calibrate, DX, "x")
    raises("dask.quantize(qtype='x')", "dask.quantize", ValueError, mdask.quantize, DX, "x")
    raises("dask.dequantize(array)", "dask.dequantize", TypeError, mdask.dequantize, DX)
    raises("dask.compare(shape mismatch)", "dask.compare", ValueError, mdask.compare, DX, DX[:3])
    raises("dask.matmul(1-d)", "dask.matmul", ValueError, mdask.matmul, DX[0], DX)
    raises("dask.matmul(k mismatch)", "dask.matmul", ValueError, mdask.matmul, DX, DX)
    raises("dask.matmul(int)", "dask.matmul", TypeError, mdask.matmul, DX.astype(np.int8), DX.T.astype(np.int8))
    for n in ("from_zarr", "from_npy_shards", "open_array", "open_quantized"):
        raises(f"dask.{n}(missing)", f"dask.{n}", (OSError, ValueError), getattr(mdask, n), "/nonexistent-mxp/x")
    import tempfile
    _file = tempfile.NamedTemporaryFile(prefix="mxp-hostile-")  # a folder below a file cannot be made
    raises("dask.to_npy_shards(below a file)", "dask.to_npy_shards", OSError, mdask.to_npy_shards, DX,
           _file.name + "/y")
    raises("dask.to_zarr(below a file)", "dask.to_zarr", (OSError, ValueError, ImportError, KeyError),
           mdask.to_zarr, DX, _file.name + "/x.zarr")
    raises("dask.save_quantized(array)", "dask.save_quantized", (TypeError, AttributeError), mdask.save_quantized,
           DX, "/tmp/x")
    raises("dask.cast_safetensors(missing)", "dask.cast_safetensors", OSError, mdask.cast_safetensors,
           "/nonexistent-mxp/x", "/tmp/mxp-hostile-y", BF)
    _empty = tempfile.TemporaryDirectory(prefix="mxp-hostile-")
    raises("dask.cast_safetensors(no shards)", "dask.cast_safetensors", ValueError, mdask.cast_safetensors,
           _empty.name, _empty.name + "/y", BF)
    raises("dask.cast_safetensors(below a file)", "dask.cast_safetensors", OSError, mdask.cast_safetensors,
           _file.name, _empty.name + "/y", BF)

    @case("dask: reversed and Fortran blocks equal contiguous ones", "dask.astype", "dask.sum", "dask.mean",
          "dask.compare", "dask.matmul", "dask.calibrate", "dask.quantize", "dask.dequantize")
    def _():
        same_on_layouts(hostile.dask_results, XS)


# after every case of this file is registered
@pytest.mark.parametrize("name", hostile.cases_of(__name__))
def test_hostile(name):
    hostile.run_case(name)

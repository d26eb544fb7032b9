"""Unaligned arrays (issue 24 item 8): an address or a stride that is not a
multiple of the item size -- np.frombuffer(buf, offset=1), np.ndarray(shape,
dtype, buffer, offset=1), a field of a packed structured array -- of every
dtype a function takes, for every public function of mxp that takes arrays
and for NumPy's ufuncs, casts, sorts and reductions of mxp's dtypes.

Inputs: the result equals the same call on an aligned copy, bit for bit (or
the same exception where the dtype is refused), and the input is unchanged.
Outputs written during the call (out=, gemm's c, promote_to, unscale_,
clip_grad_norm): the same bits as an aligned output.  Arrays an object
keeps and uses later (an optimizer's params and grads) and zero-copy
exports (to_dlpack): ValueError / BufferError, array untouched
(docs/python.md, "Layouts").  Every case runs first in a child interpreter,
so a crash fails the case that caused it."""
import os

import numpy as np
import pytest

import mxp
from hostile import CrashGuard, bits_equal, dask_results, expect
from test_hostile import public_names

BF, E4, E5 = mxp.bfloat16, mxp.float8_e4m3fn, mxp.float8_e5m2
ALL = (np.float32, np.float64, np.float16, BF, E4, E5, np.int8, np.int32)
FLOATS = (np.float32, np.float64, np.float16, BF, E4, E5)
X = np.linspace(-3, 3, 24).reshape(4, 6)
XS = X.copy()
XS[0, 0], XS[1, 1], XS[2, 2] = np.nan, np.inf, -np.inf

CASES = {}  # name -> (covered public names, function)


def case(name, *covers):
    def register(fn):
        assert name not in CASES and covers
        CASES[name] = (covers, fn)
        return fn
    return register


def val(dt, src=X):
    """src in dtype dt (ints: rounded, in int8's range)."""
    dt = np.dtype(dt)
    if dt.kind in "iu":
        return np.nan_to_num(np.round(src * 7), posinf=100, neginf=-100).astype(dt)
    return src.astype(dt)


def is_aligned(a):
    s = a.itemsize
    return a.size == 0 or (a.flags.aligned and a.__array_interface__["data"][0] % s == 0
                           and all(st % s == 0 for n, st in zip(a.shape, a.strides) if n > 1))


def unaligned_views(x):
    """Views with x's values whose memory is not aligned to the item size:
    {kind: view}.  Each is checked to hold x's values and to be unaligned
    (for items of more than one byte)."""
    x = np.ascontiguousarray(x)
    out = {}
    buf = np.zeros(x.nbytes + 1, np.uint8)
    out["offset 1"] = np.ndarray(x.shape, x.dtype, buf, offset=1)
    out["frombuffer offset 3"] = np.frombuffer(bytearray(x.nbytes + 3), x.dtype, offset=3).reshape(x.shape)
    packed = np.zeros(x.shape, np.dtype([("pad", "u1"), ("v", x.dtype)], align=False))
    out["packed field"] = packed["v"]
    wide = np.zeros(x.nbytes * 2 + 1, np.uint8)
    out["offset 1, reversed rows"] = np.ndarray(x.shape, x.dtype, wide, offset=1)[::-1]
    for k, v in out.items():
        if not v.flags.writeable:  # frombuffer of a bytearray is writeable; keep the check
            raise AssertionError(k)
        v[...] = x
        assert np.ascontiguousarray(v).tobytes() == x.tobytes(), k
        assert x.itemsize == 1 or x.size == 0 or not is_aligned(v), k
    return out


def outcome(fn, *args):
    """fn(*args), or the class and message of what it raised."""
    try:
        with np.errstate(all="ignore"):
            return ("value", fn(*args))
    except Exception as e:  # noqa: BLE001 (compared, not hidden)
        return ("raised", type(e).__name__, str(e))


def same_unaligned(fn, *arrays):
    """fn on unaligned views (all arguments at once, and each alone) equals
    fn on aligned copies bit for bit -- results, or the exception raised --
    and leaves the views' values unchanged.  Returns the aligned outcome."""
    ref = [np.ascontiguousarray(a) for a in arrays]
    want = outcome(fn, *[r.copy() for r in ref])
    views = [unaligned_views(a) for a in arrays]
    for kind in views[0]:
        sets = [("all", [v[kind] for v in views])]
        if len(arrays) > 1:
            sets += [(f"argument {i}", [views[j][kind] if j == i else ref[j].copy() for j in range(len(arrays))])
                     for i in range(len(arrays))]
        for what, args in sets:
            got = outcome(fn, *args)
            bits_equal(got, want, f"{kind}, {what}")
            for a, r in zip(args, ref):
                bits_equal(np.ascontiguousarray(a), r, f"{kind}, {what}: input changed")
    return want


def accepted(fn, dtypes, *shapes_of, must=None):
    """same_unaligned of fn on one array of each dtype; the dtypes in must
    (default: all) give a value, not an exception."""
    ok = []
    for dt in dtypes:
        if outcome_ok(same_unaligned(fn, val(dt))):
            ok.append(np.dtype(dt))
    want = [np.dtype(d) for d in (dtypes if must is None else must)]
    assert all(d in ok for d in want), f"refused: {[str(d) for d in want if d not in ok]}"


def outcome_ok(o):
    return o[0] == "value"


ROW_CONTIGUOUS = ("offset 1", "frombuffer offset 3")  # the kinds whose rows are contiguous (gemm's c)


def into(fn, out_like, kinds=None):
    """fn(out) writing into an unaligned out equals writing into an aligned
    one: the same bits in out (and the call returns what it returns for the
    aligned out, with out in place of the aligned out).  kinds: the kinds of
    unaligned_views to try (default: all)."""
    ref = np.zeros_like(np.ascontiguousarray(out_like))
    ref[...] = out_like
    aligned = ref.copy()
    r_al = fn(aligned)
    for kind, o in unaligned_views(ref).items():
        if kinds is not None and kind not in kinds:
            continue
        r_un = fn(o)
        bits_equal(np.ascontiguousarray(o), aligned, f"{kind}: out")
        if r_al is aligned:
            assert r_un is o, kind
        elif isinstance(r_al, tuple) and r_al and r_al[0] is aligned:
            assert r_un[0] is o, kind
            bits_equal(r_un[1:], r_al[1:], kind)
        else:
            bits_equal(r_un, r_al, kind)
    return aligned


# ---- dtypes: NumPy's ufuncs, casts, sorts, reductions on mxp's types ---------------------

for t in mxp._mxp._TYPES:  # bfloat16, the float8/6/4 types, int4 ...
    @case(f"{t.__name__}: ufuncs, casts, sorts, reductions, copies", t.__name__)
    def _(t=t):
        x = val(t, XS)
        y = val(t, X[::-1].copy())
        for f in (np.add, np.subtract, np.multiply, np.divide, np.maximum, np.minimum, np.less, np.equal,
                  np.copysign, np.fmax):
            same_unaligned(f, x, y)
        for f in (np.negative, np.absolute, np.sqrt, np.exp, np.isnan, np.isinf, np.sign, np.floor, np.square):
            same_unaligned(f, x)
        for to in (np.float32, np.float64, np.float16, BF, E4, E5, np.int8, np.int32, np.bool_):
            same_unaligned(lambda v: v.astype(to), x)
        for src in (np.float32, np.float64, np.float16, np.int8, np.int32, BF, E4, E5):
            same_unaligned(lambda v: v.astype(t), val(src, XS))
        for fn in (lambda v: np.sort(v, axis=1), lambda v: np.sort(v, axis=0, kind="stable"),
                   lambda v: np.argsort(v, axis=1, kind="stable"), lambda v: np.argmax(v, axis=1),
                   lambda v: np.argmin(v), lambda v: np.nonzero(v), lambda v: np.sum(v, axis=0),
                   lambda v: np.sum(v), lambda v: np.prod(v, axis=1), lambda v: np.add.reduce(v, axis=1),
                   lambda v: np.maximum.reduce(v, axis=0), lambda v: np.add.accumulate(v, axis=1),
                   lambda v: np.cumsum(v, axis=0), lambda v: np.mean(v, axis=1, dtype=np.float32),
                   lambda v: np.dot(v, v.T), lambda v: v @ v.T, lambda v: np.matmul(v.T, v), lambda v: v.copy(),
                   lambda v: v.byteswap(), lambda v: v.tolist(), lambda v: v.tobytes(), lambda v: v[1, 2],
                   lambda v: repr(v), lambda v: np.where(v > 0, v, v[0, 1]), lambda v: np.concatenate([v, v])):
            same_unaligned(fn, val(t, X))
        # written by NumPy: out= of ufuncs, casts into an unaligned array, setitem, fill
        into(lambda o: np.add(x, y, out=o), x)
        into(lambda o: np.multiply(x, 2, out=o), x)
        into(lambda o: np.sqrt(x, out=o), x)
        into(lambda o: np.copyto(o, val(np.float32, XS), casting="unsafe"), x)
        into(lambda o: np.copyto(o, x), x)
        into(lambda o: np.sum(x, axis=0, out=o), x[0])
        into(lambda o: o.__setitem__((slice(None), 1), 1.5), x)
        into(lambda o: o.fill(-2), x)
        into(lambda o: np.add(o, o, out=o), x)  # in place
        into(lambda o: o.sort(axis=1), x)
        for dst in (np.float32, np.float64, np.float16, BF, E4):  # out of another dtype: a cast on the way
            into(lambda o: np.add(x, y, out=o, casting="unsafe"), val(dst))
            into(lambda o: np.negative(val(dst), out=o, casting="unsafe"), x)


# ---- astype, convert_stats, reductions ----------------------------------------------------

@case("astype, convert_stats: every dtype, every mode", "astype", "convert_stats")
def _():
    for to in (BF, E4, E5, np.float16, np.int8, np.float32):
        for mode in ("nearest_even", "stochastic", "up"):
            accepted(lambda v: mxp.astype(v, to, rounding=mode, seed=7, overflow="saturate"), ALL)
        accepted(lambda v: mxp.astype(v, to, stats=True), ALL)
        accepted(lambda v: mxp.convert_stats(v, to), ALL)
        same_unaligned(lambda v: mxp.astype(v, to, rounding="stochastic", seed=2, index_offset=5), val(BF, XS))


@case("astype(out= unaligned): the bits of an aligned out", "astype")
def _():
    for src in ALL:
        for dst in (BF, E4, np.float16, np.float32, np.int32, np.int8):
            into(lambda o: mxp.astype(val(src, XS), None, out=o, rounding="stochastic", seed=3), val(dst))
    for kind, v in unaligned_views(val(np.float32, XS)).items():  # out is x: converted in place
        want = mxp.astype(val(np.float32, XS), np.float32, rounding="toward_zero")
        bits_equal(mxp.astype(v, None, out=v, rounding="toward_zero"), want, kind)


REDUCE = (mxp.sum, mxp.mean, mxp.prod, mxp.var, mxp.std)
for f in REDUCE:
    @case(f"{f.__name__}: every dtype and axis", f.__name__)
    def _(f=f):
        for axis in (None, 0, 1, (0, 1)):
            accepted(lambda v: f(v, axis=axis), ALL)
            accepted(lambda v: f(v, axis=axis, keepdims=True, dtype=np.float32), ALL)
        same_unaligned(lambda v: f(v, axis=1), val(BF, XS))


# ---- products -------------------------------------------------------------------------

SQ = X[:, :4]  # 4 x 4


@case("matmul: every dtype, epilogues, out= unaligned", "matmul")
def _():
    for dt in FLOATS:
        a, b = val(dt, SQ), val(np.float32, SQ.T.copy())
        same_unaligned(mxp.matmul, a, val(dt, SQ.T.copy()))
        same_unaligned(lambda u, v: mxp.matmul(u, v, bias=np.arange(4, dtype=np.float32), activation="gelu",
                                               clamp=(-1, 2), out_dtype=BF, rounding="stochastic", seed=5), a, b)
        same_unaligned(lambda u: mxp.matmul(u, u[0]), a)  # a vector
        for odt in (np.float32, BF, E4, np.float16):
            into(lambda o: mxp.matmul(a, b, out=o), val(odt, SQ))
    q = val(np.int8, SQ)
    same_unaligned(mxp.matmul, q, q.T.copy())
    same_unaligned(lambda u, v: mxp.matmul(u, v, a_zero_point=3), q.astype(np.uint8), q)
    same_unaligned(lambda u, v: mxp.matmul(u, v, scales=np.float32([0.5]), out_dtype=np.int8), q, q)
    into(lambda o: mxp.matmul(q, q, out=o), val(np.int32, SQ))
    b3 = np.stack([val(BF, SQ)] * 3)
    same_unaligned(mxp.matmul, b3, val(BF, SQ))  # batched
    for kind, bias in unaligned_views(np.arange(4, dtype=np.float32)).items():  # an unaligned bias, scales
        bits_equal(mxp.matmul(val(BF, SQ), val(BF, SQ), bias=bias), mxp.matmul(val(BF, SQ), val(BF, SQ),
                                                                               bias=np.arange(4, dtype=np.float32)))
        s = np.ascontiguousarray(bias) * 0 + 0.25
        sv = unaligned_views(s)[kind]
        bits_equal(mxp.matmul(q, q, scales=sv, out_dtype=np.float32), mxp.matmul(q, q, scales=s, out_dtype=np.float32))


@case("gemm, gemm_safe: every dtype; c and promote_to unaligned", "gemm", "gemm_safe")
def _():
    for dt in FLOATS:
        a, b = val(dt, SQ), val(dt, SQ.T.copy())
        same_unaligned(lambda u, v: mxp.gemm(u, v, alpha=0.5), a, b)
        same_unaligned(lambda u, v: mxp.gemm(u, v, trans_a=True, trans_b=True, out_dtype=np.float32), a, b)
        same_unaligned(lambda u, v: mxp.gemm_safe(u, v, np.zeros((4, 4), E4), strategy="scale"), a, b)
        same_unaligned(lambda u, v: mxp.gemm_safe(u, v, strategy="none"), a, b)
        for cdt in (np.float32, BF, E4, np.float16, np.float64):
            c0 = val(cdt, SQ * 0.5)
            into(lambda c: mxp.gemm(a, b, c, beta=2.0, bias=np.arange(4, dtype=np.float32)), c0, ROW_CONTIGUOUS)
            into(lambda c: mxp.gemm_safe(a, b, c, strategy="clip", beta=1.0), c0, ROW_CONTIGUOUS)
        for kind, c in unaligned_views(val(dt, SQ)).items():  # rows apart or reversed: refused, as when aligned
            if kind not in ROW_CONTIGUOUS:
                expect(ValueError, mxp.gemm, a, b, c)
                bits_equal(np.ascontiguousarray(c), val(dt, SQ), kind)
    q = val(np.int8, SQ)
    same_unaligned(lambda u, v: mxp.gemm(u, v), q, q)
    into(lambda c: mxp.gemm(q, q, c, beta=1.0), val(np.int32, SQ), ROW_CONTIGUOUS)
    big = np.full((2, 64), 400, np.float32)
    for pdt in (np.float32, np.float64):
        for c0 in (np.zeros((2, 2), E4), np.zeros((2, 2), BF)):
            def promoted(p, c0=c0):
                c = c0.copy()
                return mxp.gemm_safe(big, big.T.copy(), c, strategy="promote", promote_to=p)[1], c
            into(promoted, np.zeros((2, 2), pdt), ROW_CONTIGUOUS)

            def promoted_c(c):
                p = np.zeros((2, 2), pdt)
                r = mxp.gemm_safe(big, big.T.copy(), c, strategy="promote", promote_to=p)
                return r[0], r[1], p
            into(promoted_c, c0, ROW_CONTIGUOUS)
    refused = val(np.float16, SQ[:2, :2])  # refuse: OverflowError with an unaligned c untouched
    for kind in ROW_CONTIGUOUS:
        c = unaligned_views(refused)[kind]
        expect(OverflowError, mxp.gemm_safe, np.full((2, 64), 400, E4), np.full((64, 2), 400, E4), c,
               strategy="refuse")
        bits_equal(np.ascontiguousarray(c), refused, kind)


# ---- quantization ---------------------------------------------------------------------

@case("quantize, quantize_rows, fake_quantize, calibrate, dequantize: every dtype", "quantize", "quantize_rows",
      "fake_quantize", "calibrate", "dequantize", "QuantizedTensor", "QuantizedTensor.dequantize", "QParams")
def _():
    for kw in ({}, {"axis": 1}, {"axis": 0, "symmetric": False}, {"axis": 1, "group_size": 3},
               {"rounding": "stochastic", "seed": 9}):
        accepted(lambda v: mxp.quantize(v, "int8", **kw), ALL, must=FLOATS)
        accepted(lambda v: mxp.fake_quantize(v, "uint4", **kw), ALL, must=FLOATS)
    for qt in ("int8", "uint8", "int4", "float8_e4m3fn"):
        accepted(lambda v: mxp.calibrate(v, qt, axis=0), ALL, must=FLOATS)
    for qt, axis in (("int8", None), ("uint8", 1), ("int4", 0)):
        q = mxp.quantize(X, qt, axis=axis)
        for dt in (np.float32, BF, np.float16, np.float64):
            same_unaligned(lambda c: mxp.dequantize(c, dt, qparams=q.qparams), q.codes)
            same_unaligned(lambda c: mxp.QuantizedTensor(c, q.qparams).dequantize(dt), q.codes)
    q16 = mxp.quantize(X, "int8", axis=1)
    for kind, s in unaligned_views(q16.qparams.scales).items():  # unaligned scales and zero points
        z = unaligned_views(np.arange(6, dtype=np.int32))[kind]
        qp = mxp.QParams("int8", s, z, symmetric=False, axis=1)
        qa = mxp.QParams("int8", q16.qparams.scales.copy(), np.arange(6, dtype=np.int32), symmetric=False, axis=1)
        bits_equal(qp, qa, kind)
        bits_equal(mxp.quantize(X, qparams=qp), mxp.quantize(X, qparams=qa), kind)
        bits_equal(mxp.dequantize(q16.codes, qparams=qp), mxp.dequantize(q16.codes, qparams=qa), kind)
    cs = np.linspace(0.5, 2, 6, dtype=np.float32)  # quantize_rows: float32/bfloat16/float16 rows, factors unaligned
    for qt, sym in (("uint8", False), ("int8", True)):
        accepted(lambda v: mxp.quantize_rows(v, qt, symmetric=sym, col_scale=cs), ALL, must=(np.float32, BF, np.float16))
    same_unaligned(lambda s: mxp.quantize_rows(val(np.float32), col_scale=s), cs)
    for odt, qt in ((np.int8, "int8"), (np.uint8, "uint8")):  # out=: one-byte codes are always aligned; checked
        into(lambda o: mxp.quantize(X, qt, out=o).codes, np.zeros((4, 6), odt))
        into(lambda o: mxp.quantize_rows(val(np.float32), qt, out=o).codes, np.zeros((4, 6), odt))


@case("pack_int4, unpack_int4, quantize_weight, qlinear, QuantizedTensor.prepack: every dtype", "pack_int4",
      "unpack_int4", "quantize_weight", "qlinear", "QuantizedTensor.prepack")
def _():
    codes = (np.arange(24, dtype=np.int8).reshape(4, 6) % 16 - 8)
    packed = same_unaligned(mxp.pack_int4, codes)[1]
    same_unaligned(lambda p: mxp.unpack_int4(p, 6), packed)
    accepted(mxp.quantize_weight, ALL, must=FLOATS)
    w = mxp.quantize_weight(X)
    for dt in FLOATS:
        same_unaligned(lambda v: mxp.qlinear(v, w, np.arange(4, dtype=np.float32)), val(dt))
        same_unaligned(lambda v, b: mxp.qlinear(v, w, b), val(dt), np.arange(4, dtype=np.float32))
        same_unaligned(lambda v: mxp.qlinear(v, w, x_qparams=mxp.calibrate(X, "int8")), val(dt))
    for kind, wv in unaligned_views(w.codes).items():  # int8 codes: one byte, aligned anyway
        bits_equal(mxp.qlinear(X, mxp.QuantizedTensor(wv, w.qparams)), mxp.qlinear(X, w), kind)
        bits_equal(mxp.qlinear(X, mxp.QuantizedTensor(wv, w.qparams).prepack()), mxp.qlinear(X, w), kind)


OBS = (mxp.MinMaxObserver, mxp.MovingAverageObserver, mxp.PercentileObserver, mxp.MSEObserver, mxp.KLObserver)
for o in OBS:
    @case(f"{o.__name__}.update: every dtype", o.__name__, f"{o.__name__}.update", f"{o.__name__}.qparams")
    def _(o=o):
        accepted(lambda v: o("int8").update(v).update(v * 2).qparams(), ALL, must=FLOATS)
        accepted(lambda v: o("uint8", symmetric=False).update(v).qparams(), ALL, must=FLOATS)
        same_unaligned(lambda v: o("int8").update(v).qparams(), val(BF, XS))


@case("mx_quantize, mx_dequantize: every dtype and format", "mx_quantize", "mx_dequantize", "MXTensor")
def _():
    big = np.linspace(-5, 5, 96).reshape(3, 32)
    for fmt in ("mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp4", "mxint8"):
        if fmt not in mxp._quant.MX_FORMATS:
            continue
        for dt in ALL:
            same_unaligned(lambda v: mxp.mx_quantize(v, fmt), val(dt, big))
        same_unaligned(lambda v: mxp.mx_quantize(v, fmt, "stochastic", 4), val(np.float32, big))
        t = mxp.mx_quantize(big.astype(np.float32), fmt)
        same_unaligned(lambda d: mxp.mx_dequantize(mxp.MXTensor(d, t.format, t.shape)), t.data)


@case("mx_matmul: every float dtype of x, unaligned bias", "mx_matmul")
def _():
    big = np.linspace(-5, 5, 96).reshape(3, 32)
    w = mxp.mx_quantize(np.linspace(-1, 1, 64, dtype=np.float32).reshape(2, 32), "mxfp4")
    for dt in FLOATS:
        same_unaligned(lambda v: mxp.mx_matmul(v, w), val(dt, big))
    same_unaligned(lambda b: mxp.mx_matmul(big.astype(np.float32), w, bias=b), np.arange(2, dtype=np.float32))
    same_unaligned(lambda d: mxp.mx_matmul(big.astype(np.float32), mxp.MXTensor(d, w.format, w.shape)), w.data)


@case("pack, unpack: one-byte elements and rows", "pack", "unpack")
def _():
    codes = (np.arange(24, dtype=np.uint8).reshape(4, 6) % 16).view(mxp.int4)
    packed = same_unaligned(mxp.pack, codes)[1]
    same_unaligned(lambda p: mxp.unpack(p, mxp.int4, 6), packed)


# ---- analysis --------------------------------------------------------------------------

@case("compare, roundtrip, recommend_dtype: every dtype", "compare", "roundtrip", "recommend_dtype",
      "CompareResult", "CompareResult.as_dict", "RoundtripTable")
def _():
    for dt in ALL:
        for dt2 in (np.float32, BF, E4):
            same_unaligned(lambda a, b: mxp.compare(a, b).as_dict(), val(dt, XS), val(dt2, XS))
    accepted(lambda v: [dict(r) for r in mxp.roundtrip(v)], ALL, must=FLOATS)
    accepted(lambda v: [dict(r) for r in mxp.roundtrip(v, [BF, np.int8])], ALL, must=FLOATS)
    accepted(lambda v: mxp.recommend_dtype(v, "relerr<=0.01"), ALL, must=FLOATS)
    accepted(lambda v: mxp.recommend_dtype(v, "no-overflow"), ALL, must=FLOATS)


# ---- training ---------------------------------------------------------------------------

@case("optimizers: unaligned grads to step() and master_init work; unaligned params and grads= refused",
      "SGD", "Adam", "AdamW", "SGD.step", "Adam.step", "AdamW.step", "SGD.step_scaled", "Adam.step_scaled",
      "AdamW.step_scaled", "SGD.master", "Adam.master", "AdamW.master", "SGD.zero_grad", "Adam.zero_grad",
      "AdamW.zero_grad")
def _():
    for O in (mxp.SGD, mxp.Adam, mxp.AdamW):
        for pdt in (np.float32, BF, np.float16):
            for gdt in FLOATS:
                def run(grad, init):
                    p = np.zeros((4, 6), pdt)
                    opt = O([p], lr=0.1, master_init=[init])
                    opt.step([grad])
                    opt.step_scaled(2.0)
                    opt.zero_grad()
                    return p, opt.master(0), opt.grads[0]
                same_unaligned(run, val(gdt), X * 0.5)
            for kind, p in unaligned_views(val(pdt)).items():  # kept and updated in place: refused
                e = expect(ValueError, O, [p], lr=0.1)
                assert "not aligned" in str(e), e
                bits_equal(np.ascontiguousarray(p), val(pdt), kind)
                g = unaligned_views(np.zeros((4, 6), np.float32))[kind]
                e = expect(ValueError, O, [np.zeros((4, 6), pdt)], grads=[g])
                assert "not aligned" in str(e), e


@case("clip_grad_norm, LossScaler: unaligned gradients updated in place", "clip_grad_norm", "LossScaler",
      "LossScaler.check", "LossScaler.unscale_", "LossScaler.step", "LossScaler.update", "LossScaler.scale_loss",
      "LossScaler.state_dict", "LossScaler.load_state_dict")
def _():
    for dt in (np.float32, np.float64, np.float16, BF):
        g0 = val(dt, X)
        into(lambda g: mxp.clip_grad_norm([g, val(dt, X[:1])], 1.0), g0)
        into(lambda g: mxp.clip_grad_norm([val(dt, X[:1]), g], 1.0), g0)
        into(lambda g: (mxp.LossScaler(init_scale=4.0).unscale_([g]), g)[0], g0)
        into(lambda g: (mxp.LossScaler(init_scale=4.0).unscale_([val(dt, X), g, val(dt, XS)]), g)[0], g0)
        into(lambda g: mxp.LossScaler(init_scale=8.0).unscale_([val(dt, XS), g]), g0)
    for dt in ALL:
        same_unaligned(lambda v: mxp.LossScaler().check([v]), val(dt, XS))
        same_unaligned(lambda v: mxp.LossScaler().check([v]), val(dt, X))

    def stepped(grad):
        s = mxp.LossScaler(init_scale=8.0)
        p = np.ones((4, 6), np.float32)
        r = s.step(mxp.SGD([p], lr=1.0), [grad])
        s.update()
        return r, p, s.scale, s.scale_loss(2.0), s.state_dict()
    for dt in FLOATS:
        same_unaligned(stepped, val(dt, X))
        same_unaligned(stepped, val(dt, XS))
    d = mxp.LossScaler().state_dict()
    mxp.LossScaler().load_state_dict(d)


@case("Autocast.cast, Monitor.record: every dtype", "Autocast", "Autocast.cast", "Monitor", "Monitor.record",
      "Monitor.history", "Monitor.suggest", "Monitor.report", "Monitor.report_json", "Autocast.table",
      "Autocast.dtype", "Autocast.set", "autocast_policy")
def _():
    for policy in ("bf16", "fp16", "fp32"):
        a = mxp.Autocast(policy)
        for op in ("matmul", "softmax", "reduction"):
            accepted(lambda v: a.cast(op, v), ALL, must=FLOATS)
    a = mxp.Autocast("bf16")
    a.set("matmul", np.float16)
    assert a.dtype("matmul") == np.float16 and a.table()["matmul"] == np.float16
    assert mxp.autocast_policy("bf16")["matmul"] == BF

    def rec(v):
        m = mxp.Monitor("float16")
        r = m.record("g", v, "gradient", 0)
        return r, [dict(h) for h in m.history("g")], m.suggest("g"), m.report(), m.report_json()
    accepted(rec, ALL, must=FLOATS)
    accepted(lambda v: mxp.Monitor("bfloat16").record("w", v, "weight", 3), ALL, must=FLOATS)


# ---- DLPack, files, dtype queries ---------------------------------------------------

@case("DLPack: to_dlpack refuses unaligned arrays; dlpack() copies them", "to_dlpack", "from_dlpack", "dlpack",
      "DLPackView", "DLPackView.__dlpack__", "DLPackView.__dlpack_device__")
def _():
    for dt in ALL:
        x = val(dt, XS)
        for kind, v in unaligned_views(x).items():
            bits_equal(np.ascontiguousarray(mxp.from_dlpack(mxp.dlpack(v))), x, kind)
            bits_equal(np.ascontiguousarray(mxp.from_dlpack(mxp.dlpack(v).__dlpack__(copy=True))), x, kind)
            if x.itemsize > 1:
                expect(BufferError, mxp.to_dlpack, v)
                expect(BufferError, mxp.dlpack(v).__dlpack__, copy=False)
            elif not kind.endswith("reversed rows"):  # one-byte items: always aligned, exported as they are
                got = mxp.from_dlpack(mxp.to_dlpack(v))
                assert got.__array_interface__["data"][0] == v.__array_interface__["data"][0]
        got = mxp.from_dlpack(mxp.to_dlpack(x))  # aligned: no copy, as before
        assert got.__array_interface__["data"][0] == x.__array_interface__["data"][0]
        assert mxp.dlpack(x).__dlpack_device__() == (1, 0)


@case("save, load: every dtype", "save", "load")
def _():
    import tempfile
    with tempfile.TemporaryDirectory(prefix="mxp-unaligned-") as d:
        p = os.path.join(d, "x.npy")

        def saved(v):
            mxp.save(p, v)
            return open(p, "rb").read(), mxp.load(p)
        for dt in ALL:
            same_unaligned(saved, val(dt, XS))


@case("finfo, iinfo, result_type, promote_types of unaligned arrays", "finfo", "iinfo", "result_type",
      "promote_types")
def _():
    for dt in ALL:
        x = val(dt)
        for kind, v in unaligned_views(x).items():
            if np.dtype(dt).kind == "f" or dt in (BF, E4, E5):
                assert mxp.finfo(v) is mxp.finfo(x), kind
            else:
                assert mxp.iinfo(v).max == mxp.iinfo(x).max, kind
            assert mxp.result_type(v, BF) == mxp.result_type(x, BF), kind
            assert mxp.promote_types(v.dtype, E4) == mxp.promote_types(x.dtype, E4), kind


# ---- mxp.nn --------------------------------------------------------------------------------

NN_W = np.linspace(0.5, 1.5, 6)
NN_ONE = {
    "nn.softmax": lambda x, **k: mxp.nn.softmax(x, **k),
    "nn.log_softmax": lambda x, **k: mxp.nn.log_softmax(x, axis=0, **k),
    "nn.l2_normalize": lambda x, **k: mxp.nn.l2_normalize(x, **k),
    "nn.gelu": lambda x, **k: mxp.nn.gelu(x, **k),
    "nn.layer_norm": lambda x, **k: mxp.nn.layer_norm(x, weight=NN_W, bias=NN_W, **k),
    "nn.rms_norm": lambda x, **k: mxp.nn.rms_norm(x, weight=NN_W, **k),
}


@case("nn: softmax, norms, l2_normalize on every dtype, unaligned out=", *NN_ONE)
def _():
    for f in NN_ONE.values():
        accepted(f, ALL)
        same_unaligned(lambda x: f(x, dtype=np.float32), val(BF, XS))
        for dst in (np.float32, BF, np.float16):
            into(lambda o: f(val(BF, XS), out=o), val(dst))
    same_unaligned(lambda x, m: mxp.nn.softmax(x, mask=m), val(np.float32), val(np.float32, np.where(X > 0, 0, -np.inf)))
    same_unaligned(lambda x, w, b: mxp.nn.layer_norm(x, weight=w, bias=b), val(BF), val(np.float16, X[0]),
                   val(np.float32, X[1]))


@case("nn: backward passes", "nn.softmax_backward", "nn.log_softmax_backward", "nn.layer_norm_backward",
      "nn.rms_norm_backward")
def _():
    for dt in FLOATS:
        same_unaligned(mxp.nn.softmax_backward, val(dt), val(np.float32, mxp.nn.softmax(X)))
        same_unaligned(mxp.nn.log_softmax_backward, val(np.float64), val(dt, mxp.nn.log_softmax(X)))
        same_unaligned(lambda dy, x, w: mxp.nn.layer_norm_backward(dy, x, weight=w), val(dt), val(np.float32),
                       val(dt, X[0]))
        same_unaligned(lambda dy, x: mxp.nn.rms_norm_backward(dy, x), val(np.float32), val(dt))


@case("nn: take, embedding on every dtype and index dtype, unaligned out=", "nn.take", "nn.embedding")
def _():
    idx = np.array([[3, 0, -1], [1, 1, 2]])
    accepted(lambda t: mxp.nn.take(t, idx), ALL)
    accepted(lambda t: mxp.nn.take(t, idx % 6, axis=1), ALL)
    accepted(lambda t: mxp.nn.embedding(idx, t, np.linspace(0.1, 1, 4)), ALL)
    for it in (np.int8, np.int16, np.int32, np.int64, np.uint16):
        same_unaligned(lambda i: mxp.nn.take(val(BF), i), (idx % 4).astype(it))
    same_unaligned(lambda s: mxp.nn.embedding(idx, val(np.int8), s), val(np.float32, X[:, 0]))
    for dst in (np.float32, BF, np.int32):
        into(lambda o: mxp.nn.take(val(np.float32), idx, out=o), np.zeros((2, 3, 6), dst))


@case("nn: rowdot, cosine_similarity, paired and every pair", "nn.rowdot", "nn.cosine_similarity")
def _():
    for f in (mxp.nn.rowdot, mxp.nn.cosine_similarity):
        for dt in ALL:
            same_unaligned(lambda a, b: f(a, b), val(dt), val(dt, X[::-1]))
            same_unaligned(lambda a, b: f(a, b, outer=True), val(dt), val(np.float32))
        into(lambda o: f(val(BF), val(BF), outer=True, out=o), np.zeros((4, 4), np.float32))


X4 = np.linspace(-2, 2, 2 * 3 * 5 * 4).reshape(2, 3, 5, 4)  # NCHW
W4 = np.linspace(-1, 1, 4 * 3 * 3 * 3).reshape(4, 3, 3, 3)


@case("nn: conv2d, conv1d, conv2d_backward on every float dtype, quantized, unaligned out=", "nn.conv2d",
      "nn.conv1d", "nn.conv2d_backward")
def _():
    for dt in FLOATS:
        same_unaligned(lambda x, w: mxp.nn.conv2d(x, w, padding=1), val(dt, X4), val(dt, W4))
    same_unaligned(lambda x, w, b: mxp.nn.conv2d(x, w, b, layout="NHWC", activation="relu"),
                   val(BF, X4.transpose(0, 2, 3, 1)), val(np.float32, W4.transpose(0, 2, 3, 1)), val(np.float16, X[0, :4]))
    same_unaligned(lambda x, w, b: mxp.nn.conv2d(x, w, b, dtype=np.uint8, x_zero_point=3, x_scale=0.1, y_scale=0.5),
                   val(np.int8, X4), val(np.int8, W4), val(np.int32, X[0, :4]))
    same_unaligned(lambda x, w: mxp.nn.conv1d(x, w, padding=1), val(np.float32, X4[:, :, 0]), val(E4, W4[:, :, 0]))
    dy = np.linspace(-1, 1, 2 * 4 * 3 * 2).reshape(2, 4, 3, 2)
    same_unaligned(lambda d, x, w: mxp.nn.conv2d_backward(d, x, w)[0], val(np.float32, dy), val(BF, X4), val(np.float64, W4))
    same_unaligned(lambda d, x, w: mxp.nn.conv2d_backward(d, x, w)[1], val(np.float32, dy), val(BF, X4), val(np.float64, W4))
    into(lambda o: mxp.nn.conv2d(val(np.float32, X4), val(np.float32, W4), padding=1, out=o), np.zeros((2, 4, 5, 4), BF))


@case("nn: pooling and its backward on every dtype, unaligned out=", "nn.max_pool2d", "nn.avg_pool2d",
      "nn.max_pool2d_backward", "nn.avg_pool2d_backward", "nn.global_avg_pool2d", "nn.global_max_pool2d",
      "nn.adaptive_avg_pool2d")
def _():
    accepted(lambda x: mxp.nn.max_pool2d(x.reshape(1, 1, 4, 6), 2, 1, 1), ALL)
    accepted(lambda x: mxp.nn.avg_pool2d(x.reshape(1, 1, 4, 6), 3, 2, 1, count_include_pad=False), ALL)
    for dt in FLOATS:
        same_unaligned(lambda x: mxp.nn.global_avg_pool2d(x), val(dt, X4))
        same_unaligned(lambda x: mxp.nn.global_max_pool2d(x, layout="NHWC"), val(dt, X4))
        same_unaligned(lambda x: mxp.nn.adaptive_avg_pool2d(x, (5, 2)), val(dt, X4))
        same_unaligned(lambda d, x: mxp.nn.max_pool2d_backward(d, x, 2), val(dt, X4[:, :, :2, :2]), val(dt, X4))
        same_unaligned(lambda d, x: mxp.nn.avg_pool2d_backward(d, x, 2), val(dt, X4[:, :, :2, :2]), val(dt, X4))
    into(lambda o: mxp.nn.max_pool2d(val(BF, X4), 2, out=o), np.zeros((2, 3, 2, 2), np.float32))


@case("nn: batch_norm, its backward, fold_batch_norm on every float dtype, unaligned out=", "nn.batch_norm",
      "nn.batch_norm_backward", "nn.fold_batch_norm")
def _():
    c3 = np.array([0.5, 1.0, 2.0])
    for dt in FLOATS:
        same_unaligned(lambda x, w: mxp.nn.batch_norm(x, None, None, w, w, training=True), val(dt, X4), val(dt, c3))
        same_unaligned(lambda x, m: mxp.nn.batch_norm(x, m, m + 1, dtype=np.float64), val(dt, X4), val(dt, c3))
        same_unaligned(lambda d, x, w: mxp.nn.batch_norm_backward(d, x, w)[0], val(dt, X4[::-1]), val(dt, X4),
                       val(dt, c3))
        same_unaligned(lambda w, g: mxp.nn.fold_batch_norm(w, None, g, g, g, g + 1)[0], val(dt, W4[:3]), val(dt, c3))
    into(lambda o: mxp.nn.batch_norm(val(np.float32, X4), None, None, training=True, out=o), np.zeros((2, 3, 5, 4), BF))


try:
    import dask.array  # noqa: F401  (dask_results needs it)
    import mxp.dask  # noqa: F401
    HAVE_DASK = True
except ImportError:
    HAVE_DASK = False

if HAVE_DASK:
    @case("dask: unaligned blocks", "dask.astype", "dask.sum", "dask.mean", "dask.compare", "dask.matmul",
          "dask.calibrate", "dask.quantize", "dask.dequantize")
    def _():
        for dt in (np.float32, BF):
            same_unaligned(dask_results, val(dt, XS))


@case("plugin operators: unaligned inputs and out=", "Op", "Op.check", "check_op")
def _():
    example = os.environ.get("MXP_EXAMPLE_OPS")
    if not example:
        return  # outside ctest: no example plugin
    ops = mxp.load_ops(example)
    for dt in (np.float32, BF, np.float16):
        same_unaligned(ops.gelu, val(dt, XS))
    same_unaligned(ops.bias_gelu, val(np.float32, XS), val(np.float32, X[0]))
    same_unaligned(lambda x: ops.logsumexp(x, axis=0), val(np.float32, X))
    same_unaligned(ops.cosine_similarity, val(BF, X), val(BF, X[::-1].copy()))
    into(lambda o: ops.gelu(val(np.float32, X), out=o), np.zeros((4, 6), np.float32))
    same_unaligned(lambda x: mxp.check_op(ops.gelu, reference=lambda v: v * 0, signature="f32->f32",
                                          samples=100)[0]["count"], val(np.float32, X))
    assert ops.gelu.check(samples=100)[0].count == 100


# ---- coverage ----------------------------------------------------------------------------

# public names that take no arrays (nothing to misalign): the runtime, results
# and settings; mxp.dask's file readers and writers (their blocks are
# NumPy arrays of their own).
NO_ARRAYS = {"info", "memory_stats", "packed_bytes", "set_num_threads", "get_num_threads", "hugepages", "release_workspaces",
             "Result", "Result.as_dict", "dask.from_zarr", "dask.to_zarr", "dask.from_npy_shards",
             "dask.to_npy_shards", "dask.open_array", "dask.open_quantized", "dask.save_quantized",
             "dask.cast_safetensors",
             "load_ops", "list_ops", "OpLibrary", "CheckReport", "CheckReport.as_dict", "profile", "Profile",
             "Profile.table", "Profile.to_json", "Profile.as_dict", "Profile.save_trace", "Profile.roofline"}

# the profiler: it records the calls, it takes no arrays
NO_ARRAYS |= {"profile", "Profile", "Profile.as_dict", "Profile.reset", "Profile.roofline", "Profile.save_trace",
              "Profile.table", "Profile.to_chrome_trace", "Profile.to_json"}


def test_every_public_name_taking_arrays_has_an_unaligned_case():
    covered = {c for covers, _ in CASES.values() for c in covers}
    names = public_names()
    missing = sorted(names - covered - NO_ARRAYS)
    assert not missing, f"public names without an unaligned case: {missing}"
    stale = sorted(c for c in covered if c not in names and not c.startswith("dask."))
    assert not stale, f"cases cover names mxp lacks: {stale}"
    assert len(covered) >= 80, len(covered)


def test_views_are_unaligned():
    for dt in ALL:
        for kind, v in unaligned_views(val(dt)).items():
            assert np.dtype(dt).itemsize == 1 or not is_aligned(v), (dt, kind)


# ---- the crash guard ----------------------------------------------------------------------

_guard = CrashGuard(("test_unaligned",), "test_unaligned", CASES, timeout=900)


@pytest.mark.parametrize("name", list(CASES))
def test_unaligned(name):
    _guard.run(name)


"""Hostile arguments, continued (see test_hostile.py): mxp.nn.  Wrong
types and dtypes, axes and indices out of range, shapes that differ,
read-only and overlapping out=, every layout equal to a contiguous copy
bit for bit, 0-d, empty, NaN/inf."""
import numpy as np
import pytest

import mxp
import hostile
from hostile import AxisError, case, expect, raises, same_on_layouts, bits_equal
from mxp import nn

BF, E4 = mxp.bfloat16, mxp.float8_e4m3fn
X = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
XS = X.copy()
XS[0, 0], XS[1, 1], XS[2, 2] = np.nan, np.inf, -np.inf
W = np.linspace(0.5, 1.5, 6, dtype=np.float32)
IDX = np.array([[3, -1], [0, 2]])


def readonly(a):
    a = np.array(a)
    a.flags.writeable = False
    return a


# (name, f(x) on a (4, 6) array, f with an extra keyword) of the functions that take one float array
ONE = {
    "softmax": lambda x, **k: nn.softmax(x, **k),
    "log_softmax": lambda x, **k: nn.log_softmax(x, **k),
    "l2_normalize": lambda x, **k: nn.l2_normalize(x, **k),
    "gelu": lambda x, **k: nn.gelu(x, **k),
    "layer_norm": lambda x, **k: nn.layer_norm(x, weight=W, bias=W, **k),
    "rms_norm": lambda x, **k: nn.rms_norm(x, weight=W, **k),
}
for n, f in ONE.items():
    raises(f"nn.{n}(str)", f"nn.{n}", TypeError, f, "abc")
    raises(f"nn.{n}(object array)", f"nn.{n}", TypeError, f, np.array([1.0, None] * 3).reshape(1, 6))
    raises(f"nn.{n}(complex array)", f"nn.{n}", TypeError, f, np.ones((2, 6), np.complex128))
    raises(f"nn.{n}(dtype='abc')", f"nn.{n}", TypeError, f, X, dtype="abc")
    raises(f"nn.{n}(dtype=int8)", f"nn.{n}", TypeError, f, X, dtype=np.int8)
    raises(f"nn.{n}(out= read-only)", f"nn.{n}", ValueError, f, X, out=readonly(X))
    raises(f"nn.{n}(out= of another shape)", f"nn.{n}", ValueError, f, X, out=np.zeros(6, np.float32))
    raises(f"nn.{n}(out= int32)", f"nn.{n}", TypeError, f, X, out=np.zeros((4, 6), np.int32))
    raises(f"nn.{n}(out= a list)", f"nn.{n}", TypeError, f, X, out=[0.0] * 24)
    raises(f"nn.{n}(unknown keyword)", f"nn.{n}", TypeError, f, X, axes=0)

    @case(f"nn.{n}: every layout equals a contiguous copy; out= on every layout", f"nn.{n}")
    def _(f=f):
        for x in (X.astype(BF), XS.astype(E4), XS, XS.astype(np.float16)):
            same_on_layouts(f, x)
            same_on_layouts(lambda v: f(x, out=v, dtype=None), np.zeros((4, 6), np.float32))

    @case(f"nn.{n}: empty, NaN rows, out= the input itself", f"nn.{n}")
    def _(f=f):
        r = f(np.zeros((0, 6), BF))
        assert r.shape == (0, 6) and r.dtype == BF
        r = f(XS)
        assert np.isnan(r[0]).all() or np.isnan(r[0, 0])
        y = X.astype(np.float64)
        want = f(y)
        assert f(y, out=y) is y
        bits_equal(y, want)
        y = X.astype(np.float64)
        f(y[:, ::-1], out=y)  # overlapping other than element for element: through a temporary
        bits_equal(y, f(X.astype(np.float64)[:, ::-1]))

for n in ("softmax", "log_softmax", "l2_normalize"):
    f = getattr(nn, n)
    raises(f"nn.{n}(axis=2)", f"nn.{n}", AxisError, f, X, axis=2)
    raises(f"nn.{n}(axis=2**40)", f"nn.{n}", (AxisError, OverflowError), f, X, axis=2**40)
    raises(f"nn.{n}(axis=1.5)", f"nn.{n}", TypeError, f, X, axis=1.5)
    raises(f"nn.{n}(0-d)", f"nn.{n}", AxisError, f, np.array(1.0, BF))
raises("nn.softmax(mask of another shape)", "nn.softmax", ValueError, nn.softmax, X, mask=np.ones(4, bool))
raises("nn.log_softmax(mask str)", "nn.log_softmax", TypeError, nn.log_softmax, X, mask="x")
raises("nn.l2_normalize(eps=nan)", "nn.l2_normalize", ValueError, nn.l2_normalize, X, eps=float("nan"))
raises("nn.layer_norm(weight of another shape)", "nn.layer_norm", ValueError, nn.layer_norm, X, weight=np.ones(4))
raises("nn.layer_norm(normalized_shape (4, 6, 1))", "nn.layer_norm", ValueError, nn.layer_norm, X, (4, 6, 1))
raises("nn.layer_norm(eps=-1)", "nn.layer_norm", ValueError, nn.layer_norm, X, eps=-1)
raises("nn.rms_norm(eps='x')", "nn.rms_norm", ValueError, nn.rms_norm, X, eps="x")


@case("nn.softmax: masks of every dtype and layout", "nn.softmax", "nn.log_softmax")
def _():
    m = np.array([True, False, True, True, False, True])
    for f in (nn.softmax, nn.log_softmax):
        same_on_layouts(lambda v: f(v, mask=m), X.astype(BF))
        same_on_layouts(lambda v: f(X, mask=v), np.where(m, 0, -np.inf)[None].repeat(4, 0).astype(np.float32))
        bits_equal(f(X, mask=m), f(X, mask=np.where(m, 0.0, -np.inf)))
        assert np.isnan(f(X, mask=np.zeros(6, bool))).all()  # every element masked: NaN, as torch


# ---- backward ---------------------------------------------------------------------------

for n in ("softmax_backward", "log_softmax_backward"):
    f = getattr(nn, n)
    raises(f"nn.{n}(shapes differ)", f"nn.{n}", ValueError, f, X, X.T)
    raises(f"nn.{n}(int y)", f"nn.{n}", TypeError, f, X, X.astype(np.int32))
    raises(f"nn.{n}(axis=5)", f"nn.{n}", AxisError, f, X, X, axis=5)
    raises(f"nn.{n}(out=)", f"nn.{n}", TypeError, f, X, X, out=X)

    @case(f"nn.{n}: every layout equals a contiguous copy", f"nn.{n}")
    def _(f=f):
        same_on_layouts(f, X, nn.softmax(X))
        same_on_layouts(f, X.astype(BF), nn.softmax(X).astype(np.float16))

for n in ("layer_norm_backward", "rms_norm_backward"):
    f = getattr(nn, n)
    raises(f"nn.{n}(shapes differ)", f"nn.{n}", ValueError, f, X, X.T)
    raises(f"nn.{n}(int x)", f"nn.{n}", TypeError, f, X, X.astype(np.int8))
    raises(f"nn.{n}(weight of another shape)", f"nn.{n}", ValueError, f, X, X, weight=np.ones(4))
    raises(f"nn.{n}(eps=inf)", f"nn.{n}", ValueError, f, X, X, eps=float("inf"))

    @case(f"nn.{n}: every layout equals a contiguous copy, empty", f"nn.{n}")
    def _(f=f):
        same_on_layouts(lambda dy, x: f(dy, x, weight=W), XS, X)
        same_on_layouts(lambda dy, x: f(dy, x), X.astype(BF), X)
        r = f(np.zeros((0, 6)), np.zeros((0, 6)), weight=W)
        assert r[0].shape == (0, 6) and r[1].shape == (6,) and not r[1].any()


# ---- gathers and row products -----------------------------------------------------------

raises("nn.take(float indices)", "nn.take", TypeError, nn.take, X, np.array([1.5]))
raises("nn.take(bool indices)", "nn.take", TypeError, nn.take, X, np.array([True]))
raises("nn.take(index 4 of 4)", "nn.take", IndexError, nn.take, X, np.array([4]))
raises("nn.take(index -5 of 4)", "nn.take", IndexError, nn.take, X, np.array([-5]))
raises("nn.take(uint64 2**63)", "nn.take", IndexError, nn.take, X, np.array([2**63], np.uint64))
raises("nn.take(axis=2)", "nn.take", AxisError, nn.take, X, IDX, axis=2)
raises("nn.take(0-d table)", "nn.take", AxisError, nn.take, np.float32(1), IDX)
raises("nn.take(out= read-only)", "nn.take", ValueError, nn.take, X, IDX, out=readonly(np.zeros((2, 2, 6), np.float32)))
raises("nn.take(str indices)", "nn.take", TypeError, nn.take, X, "abc")
raises("nn.embedding(scales of 3 for 4 rows)", "nn.embedding", ValueError, nn.embedding, IDX, X.astype(np.int8),
       np.ones(3, np.float32))
raises("nn.embedding(3-d table with scales)", "nn.embedding", ValueError, nn.embedding, IDX, np.ones((4, 6, 1), np.int8),
       np.ones(4))
raises("nn.embedding(index 9)", "nn.embedding", IndexError, nn.embedding, np.array([9]), X)
raises("nn.embedding(dtype=int8 with scales)", "nn.embedding", TypeError, nn.embedding, IDX, X.astype(np.int8),
       np.ones(4), dtype=np.int8)


@case("nn.take, nn.embedding: every layout of table and indices, nothing written on a bad index", "nn.take",
      "nn.embedding")
def _():
    idx = np.array([[3, 0, -1], [1, 1, 2]])
    for t in (X.astype(BF), XS.astype(E4), XS, X.astype(np.int8)):
        same_on_layouts(lambda v: nn.take(v, idx, axis=0), t)
        same_on_layouts(lambda v: nn.take(v, idx % 6, axis=1), t)
        same_on_layouts(lambda v: nn.take(t, v), idx)
        same_on_layouts(lambda v: nn.embedding(idx, v, np.linspace(0.1, 1, 4)), t)
    out = np.full((2, 3, 6), 7, np.float32)
    expect(IndexError, nn.take, X, np.array([[3, 0, 4], [1, 1, 2]]), out=out)
    assert (out == 7).all()
    assert nn.take(X, np.zeros(0, np.int64)).shape == (0, 6)
    assert nn.take(X, np.int64(2)).shape == (6,)


for n in ("rowdot", "cosine_similarity"):
    f = getattr(nn, n)
    raises(f"nn.{n}(rows of 6 and 4)", f"nn.{n}", ValueError, f, X, X[:, :4])
    raises(f"nn.{n}(outer with 3-d)", f"nn.{n}", ValueError, f, X[None], X, outer=True)
    raises(f"nn.{n}(0-d)", f"nn.{n}", ValueError, f, np.float32(1), np.float32(1))
    raises(f"nn.{n}(leading axes do not broadcast)", f"nn.{n}", ValueError, f, X, X[:3])
    raises(f"nn.{n}(dtype=int32)", f"nn.{n}", TypeError, f, X, X, dtype=np.int32)
    raises(f"nn.{n}(complex)", f"nn.{n}", TypeError, f, X, np.ones((4, 6), np.complex64))
    raises(f"nn.{n}(out= read-only)", f"nn.{n}", ValueError, f, X, X, out=readonly(np.zeros(4, np.float32)))

    @case(f"nn.{n}: every layout, paired and every pair, empty", f"nn.{n}")
    def _(f=f):
        for a in (X.astype(BF), XS, X.astype(np.int8)):
            same_on_layouts(lambda u, v: f(u, v), a, X[::-1].copy())
            same_on_layouts(lambda u, v: f(u, v, outer=True), a, X)
        assert f(np.zeros((0, 6)), X, outer=True).shape == (0, 4)
        out = np.zeros((4, 4), np.float32)
        assert f(X, X, outer=True, out=out) is out
raises("nn.cosine_similarity(eps=-1)", "nn.cosine_similarity", ValueError, nn.cosine_similarity, X, X, eps=-1)


# after every case of this file is registered
@pytest.mark.parametrize("name", hostile.cases_of(__name__))
def test_hostile(name):
    hostile.run_case(name)

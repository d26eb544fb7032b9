"""mxp_matmul against np.matmul, through ctypes on libmxp.so.

NumPy's result shape and dtype for every case (1-d operands, stacks whose
batch axes broadcast with size 1 and size 0, k = 0), and values within
(k + 2) * eps * (|a| @ |b|) of a long-double reference, eps being the unit
roundoff of the accumulator (float64 when an input is float64, float32
otherwise), plus half an ulp of the result's dtype for float16 (half a
subnormal spacing near zero).  Views
(transposes, F order, slices, negative steps, broadcasts, unaligned data)
give the bits of their contiguous copies; output arrays of any layout;
errors where NumPy raises, with mxp's sentence.

Run by ctest (pytest_matmul) with MXP_LIB naming libmxp.so; by hand:
    MXP_LIB=build/libmxp.so /usr/bin/python3 -m pytest -q tests/python/test_matmul_numpy.py
"""
import itertools
import os
import sys
import zlib

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxp_ctypes as mx  # noqa: E402

UNIT_ROUNDOFF = {np.dtype(np.float16): 2.0**-11, np.dtype(np.float32): 2.0**-24, np.dtype(np.float64): 2.0**-53}
# Half the spacing of the subnormals: the rounding error near zero.
HALF_TINY = {np.dtype(np.float16): 2.0**-25, np.dtype(np.float32): 2.0**-150, np.dtype(np.float64): 0.0}


def rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def shape_str(shape):
    return "(%s%s)" % (",".join(map(str, shape)), "," if len(shape) == 1 else "")


def mxp_matmul(a, b):
    return mx.matmul(mx.from_numpy(a), mx.from_numpy(b)).numpy()


def expect_close(got, a, b, what=""):
    """NumPy's dtype and shape; values within the accumulation bound."""
    want = np.matmul(a, b)
    assert got.dtype == want.dtype, "%s: dtype %s, NumPy %s" % (what, got.dtype, want.dtype)
    assert got.shape == want.shape, "%s: shape %s, NumPy %s" % (what, got.shape, want.shape)
    ref = np.matmul(a.astype(np.longdouble), b.astype(np.longdouble))
    mag = np.matmul(np.abs(a).astype(np.longdouble), np.abs(b).astype(np.longdouble))
    k = a.shape[-1]
    acc = np.float64 if np.float64 in (a.dtype, b.dtype) else np.float32
    u_out = UNIT_ROUNDOFF[want.dtype] if want.dtype.itemsize < 4 else 0.0
    tol = (k + 2) * UNIT_ROUNDOFF[np.dtype(acc)] * mag + u_out * np.abs(ref) + HALF_TINY[want.dtype]
    err = np.abs(got.astype(np.longdouble) - ref)
    bad = ~(err <= tol)
    if np.any(bad):
        i = tuple(np.argwhere(np.atleast_1d(bad))[0])
        g, r, t = np.atleast_1d(got)[i], np.atleast_1d(ref)[i], np.atleast_1d(tol)[i]
        raise AssertionError("%s: %d of %d beyond the bound; at %s mxp %r, reference %r, tolerance %g"
                             % (what, np.sum(bad), bad.size, i, g, float(r), float(t)))


def bits_equal(x, y):
    assert x.dtype == y.dtype and x.shape == y.shape
    return np.array_equal(np.ascontiguousarray(x).view(np.uint8), np.ascontiguousarray(y).view(np.uint8))


# ---- shapes and values: a few hundred cases -----------------------------

BATCHES = [((), ()), ((3,), ()), ((), (3,)), ((2,), (2,)), ((1,), (4,)), ((4,), (1,)), ((2, 1), (3,)),
           ((2, 1), (1, 3)), ((0,), ()), ((0,), (1,)), ((2, 0), (1,)), ((1, 2, 1), (3, 1, 2))]


def shape_cases():
    cases = []
    for (ba, bb), m, n, k in itertools.product(BATCHES, (1, 3), (1, 4), (0, 1, 5)):
        cases.append((ba + (m, k), bb + (k, n)))
        if ba == () and m == 1:
            cases.append(((k,), bb + (k, n)))        # 1-d a
        if bb == () and n == 1:
            cases.append((ba + (m, k), (k,)))        # 1-d b
        if ba == () and bb == () and m == 1 and n == 1:
            cases.append(((k,), (k,)))               # dot
    cases += [((7, 33), (33, 19)), ((3, 9, 70), (70, 40)), ((2, 1, 65, 30), (3, 30, 17)), ((300,), (300, 3)),
              ((2, 300), (300,)), ((1, 0), (0, 1)), ((0, 3), (3, 0)), ((5, 0, 3), (3,))]
    return cases


SHAPES = shape_cases()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sa,sb", SHAPES, ids=["%s@%s" % (shape_str(a), shape_str(b)) for a, b in SHAPES])
def test_shapes_and_values(sa, sb, dtype):
    r = rng(sa, sb, dtype)
    a = r.standard_normal(sa).astype(dtype)
    b = r.standard_normal(sb).astype(dtype)
    expect_close(mxp_matmul(a, b), a, b, "%s @ %s %s" % (sa, sb, dtype))


@pytest.mark.parametrize("da,db", list(itertools.product(["float16", "float32", "float64"], repeat=2)))
def test_result_dtypes(da, db):
    r = rng(da, db)
    a = r.standard_normal((2, 3, 7)).astype(da)
    b = r.standard_normal((7, 5)).astype(db)
    expect_close(mxp_matmul(a, b), a, b, "%s @ %s" % (da, db))


# ---- layouts ------------------------------------------------------------


def unaligned(x):
    """A copy of x whose data starts one byte past an aligned address."""
    buf = np.zeros(x.nbytes + 1, dtype=np.uint8)
    y = np.frombuffer(buf.data, dtype=x.dtype, count=x.size, offset=1).reshape(x.shape)
    y[...] = x
    return y


LAYOUTS = {
    "transposed": lambda g, s: g(s[::-1]).T,
    "fortran": lambda g, s: np.asfortranarray(g(s)),
    "rows_step2": lambda g, s: g(s[:-2] + (s[-2] * 2, s[-1]))[..., ::2, :],
    "cols_step2": lambda g, s: g(s[:-1] + (s[-1] * 2,))[..., ::2],
    "reversed": lambda g, s: g(s)[..., ::-1, :],
    "reversed_cols": lambda g, s: g(s)[..., ::-1],
    "broadcast_rows": lambda g, s: np.broadcast_to(g(s[-1:]), s),
    "swapaxes": lambda g, s: np.swapaxes(g(s[:-2] + s[-1:] + s[-2:-1]), -1, -2),
    "batch_permuted": lambda g, s: np.moveaxis(g(s[-2:-1] + s[:-2] + s[-1:]), 0, -2),
    "unaligned": lambda g, s: unaligned(g(s)),
}


VIEW_CASES = [(batch, dtype, layout, side)
              for batch, dtype, layout, side in itertools.product([(), (3,)], ["float32", "float64"], sorted(LAYOUTS),
                                                                  ["a", "b"])
              if batch or layout != "batch_permuted"]


@pytest.mark.parametrize("batch,dtype,layout,side", VIEW_CASES)
def test_views_give_the_bits_of_contiguous_copies(batch, dtype, layout, side):
    r = rng(batch, dtype, layout, side)
    m, k, n = 6, 9, 5
    shape = batch + ((m, k) if side == "a" else (k, n))
    v = LAYOUTS[layout](lambda sh: r.standard_normal(sh).astype(dtype), shape)
    assert v.dtype == dtype and v.shape == shape
    if layout == "unaligned":
        assert v.__array_interface__["data"][0] % v.itemsize
    other = r.standard_normal((k, n) if side == "a" else (m, k)).astype(dtype)
    a, b = (v, other) if side == "a" else (other, v)
    got = mxp_matmul(a, b)
    want = mxp_matmul(np.ascontiguousarray(a), np.ascontiguousarray(b))
    assert bits_equal(got, want), layout
    expect_close(got, a, b, layout)


@pytest.mark.parametrize("order", ["C", "F", "rows_step2", "batch_reversed", "unaligned"])
def test_out_arrays(order):
    r = rng(order)
    a = r.standard_normal((3, 4, 6)).astype(np.float32)
    b = r.standard_normal((6, 5)).astype(np.float32)
    if order in ("C", "F"):
        out = np.full((3, 4, 5), np.nan, dtype=np.float32, order=order)
        view = out
    elif order == "rows_step2":
        out = np.full((3, 8, 5), -7.0, dtype=np.float32)
        view = out[:, ::2]
    elif order == "batch_reversed":
        out = np.full((3, 4, 5), np.nan, dtype=np.float32)
        view = out[::-1]
    else:
        out = view = unaligned(np.full((3, 4, 5), np.nan, dtype=np.float32))
    mx.matmul_into(mx.from_numpy(view), mx.from_numpy(a), mx.from_numpy(b))
    assert bits_equal(view, mxp_matmul(a, b))
    if order == "rows_step2":
        assert np.all(out[:, 1::2] == -7.0)


def test_out_overlapping_an_input():
    r = rng("overlap")
    a = r.standard_normal((5, 5))
    b = r.standard_normal((5, 5))
    want = mxp_matmul(a, b)
    mx.matmul_into(mx.from_numpy(a), mx.from_numpy(a), mx.from_numpy(b))
    assert bits_equal(a, want)
    want = mxp_matmul(b.T.copy(), b)
    mx.matmul_into(mx.from_numpy(b), mx.from_numpy(b.T), mx.from_numpy(b))
    assert bits_equal(b, want)


# ---- errors: where NumPy raises ------------------------------------------


@pytest.mark.parametrize("sa,sb,message", [
    ((2, 3), (4, 5), "matmul: a has shape (2,3) and b (4,5): k 3 != 4"),
    ((3,), (4,), "matmul: a has shape (3,) and b (4,): k 3 != 4"),
    ((2, 3), (4,), "matmul: a has shape (2,3) and b (4,): k 3 != 4"),
    ((4,), (3, 2, 5), "matmul: a has shape (4,) and b (3,2,5): k 4 != 2"),
    ((2, 3, 4), (5, 4, 6), "matmul: a has shape (2,3,4) and b (5,4,6): the batch axes (2,) and (5,) "
                           "are not broadcastable"),
    ((), (3,), "matmul: a is 0-d; matmul needs at least 1 dimension (multiply scalars with mxp_binary)"),
    ((3,), (), "matmul: b is 0-d; matmul needs at least 1 dimension (multiply scalars with mxp_binary)"),
])
def test_errors_where_numpy_raises(sa, sb, message):
    a, b = np.ones(sa, dtype=np.float32), np.ones(sb, dtype=np.float32)
    with pytest.raises(ValueError):
        np.matmul(a, b)
    with pytest.raises(mx.MxpError) as e:
        mxp_matmul(a, b)
    assert e.value.status == mx.ERR_SHAPE
    assert e.value.message == message


def test_out_errors():
    a, b = np.ones((2, 3)), np.ones((3, 4))
    ro = np.zeros((2, 4))
    with pytest.raises(mx.MxpError) as e:
        mx.matmul_into(mx.from_numpy(ro, writeable=False), mx.from_numpy(a), mx.from_numpy(b))
    assert e.value.status == mx.ERR_READONLY
    with pytest.raises(mx.MxpError) as e:
        mx.matmul_into(mx.from_numpy(np.zeros((4, 2))), mx.from_numpy(a), mx.from_numpy(b))
    assert e.value.status == mx.ERR_SHAPE
    assert e.value.message == "matmul: the output array has shape (4,2), the result (2,4)"
    assert np.all(ro == 0)

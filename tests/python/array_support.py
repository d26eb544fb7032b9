"""What the tests of mxp's arrays against NumPy share (test_array_numpy.py,
test_array_ops_numpy.py, test_array_astype_numpy.py): seeded data, the
layouts, and comparisons bit for bit or within an ulp bound."""
import os
import sys
import zlib

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxp_ctypes as mx  # noqa: E402

# ---- helpers ------------------------------------------------------------


def rng(*key):
    """A generator seeded by the test's own parameters: reproducible, and
    different for every case."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def uint_view(a):
    a = np.ascontiguousarray(a)
    return a.view("u%d" % a.dtype.itemsize) if a.dtype.kind == "f" else a


def assert_bits(got, want, what="", zero_sign=True):
    """Same dtype, shape and bits; NaNs need only both be NaN (payloads may
    differ); zero_sign=False also accepts -0.0 for +0.0."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, "%s: dtype %s, NumPy %s" % (what, got.dtype, want.dtype)
    assert got.shape == want.shape, "%s: shape %s, NumPy %s" % (what, got.shape, want.shape)
    if want.dtype.kind == "f":
        same = uint_view(got) == uint_view(want)
        same |= np.isnan(got) & np.isnan(want)
        if not zero_sign:
            same |= (got == 0) & (want == 0)
    else:
        same = got == want
    if not np.all(same):
        got, want, same = np.atleast_1d(got), np.atleast_1d(want), np.atleast_1d(same)
        bad = np.argwhere(~same)[:5]
        rows = ["  at %s: mxp %r, NumPy %r" % (tuple(i), got[tuple(i)], want[tuple(i)]) for i in bad]
        raise AssertionError("%s: %d of %d elements differ\n%s" % (what, np.sum(~same), same.size, "\n".join(rows)))


def ordered(x):
    """Float bits as integers ordered like the values (-0 and +0 both 0)."""
    x = np.ascontiguousarray(x)
    bits = x.dtype.itemsize * 8
    u = x.view("u%d" % x.dtype.itemsize).ravel().tolist()
    sign, mask = 1 << (bits - 1), (1 << (bits - 1)) - 1
    return [-(v & mask) if v & sign else v for v in u]


def ulp_distance(got, want):
    """Per element: how many representable values apart (0 for two NaNs,
    a huge number for NaN against a number)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    d = np.array([abs(g - w) for g, w in zip(ordered(got), ordered(want))], dtype=np.float64).reshape(got.shape)
    gn, wn = np.isnan(got), np.isnan(want)
    d[gn & wn] = 0
    d[gn ^ wn] = np.inf
    return d


def assert_ulp(got, want, max_ulp, what="", inputs=None):
    d = ulp_distance(got, want)
    if np.any(d > max_ulp):
        got, want, d = np.atleast_1d(got), np.atleast_1d(want), np.atleast_1d(d)
        inputs = None if inputs is None else np.atleast_1d(inputs)
        bad = np.argwhere(d > max_ulp)[:6]
        rows = []
        for i in bad:
            i = tuple(i)
            src = "" if inputs is None else "x=%r (%s) " % (inputs[i], float(inputs[i]).hex())
            rows.append("  %smxp %r, want %r (%g ulp)" % (src, got[i], want[i], d[i]))
        raise AssertionError("%s: %d of %d beyond %g ulp\n%s" % (what, np.sum(d > max_ulp), d.size, max_ulp,
                                                                "\n".join(rows)))


def in_buffer(addr, src):
    """Whether addr lies inside the bytes the NumPy array src spans."""
    low, high = mx.byte_extent(src.shape, src.strides, src.itemsize)
    base = src.__array_interface__["data"][0]
    return base + low <= addr < base + high


def shape_str(shape):
    """mxp's spelling of a shape in messages: (3,4), (5,), ()."""
    return "(%s%s)" % (",".join(map(str, shape)), "," if len(shape) == 1 else "")


def raises_mxp(status, fn, *args, **kw):
    with pytest.raises(mx.MxpError) as e:
        fn(*args, **kw)
    assert e.value.status == status, "%s, want %s" % (e.value, mx.lib.mxp_status_str(status).decode())
    return e.value


def arrange(a, layout):
    """a's values with the memory layout named: C, F, T (axes permuted in
    memory: a cyclic shift, so 3-d differs from F) or strided (every other
    element, every axis reversed)."""
    if layout == "C" or a.ndim == 0:
        return np.ascontiguousarray(a)
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "T":
        p = tuple(range(1, a.ndim)) + (0,)
        return np.ascontiguousarray(a.transpose(p)).transpose(np.argsort(p))
    if layout == "strided":
        big = np.zeros(tuple(2 * n + 1 for n in a.shape), a.dtype)
        v = big[tuple(slice(2 * n - 1, None, -2) if n else slice(0, 0) for n in a.shape)]
        assert v.shape == a.shape
        v[...] = a
        return v
    raise ValueError(layout)


LAYOUTS = ["C", "F", "T", "strided"]
SHAPES = {1: (7,), 2: (4, 5), 3: (3, 4, 5)}


def sample(shape, dtype, seed):
    """Distinct, recognizable values: views can be checked element for element."""
    n = int(np.prod(shape))
    return (rng("sample", seed, shape).permutation(n) + 1).astype(dtype).reshape(shape)


# The float dtypes NumPy has.
FLOATS = ["float16", "float32", "float64"]

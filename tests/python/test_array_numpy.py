"""mxp's array semantics against NumPy's, through ctypes on libmxp.so: the
binding, views and copies.

Views (slices, indexing, transpose, reshape, squeeze, expand_dims,
broadcast_to) must give NumPy's elements bit for bit, NumPy's strides and
element-0 address (so they are views, not copies); long rows through the
blocked loops; errors and their sentences.  Elementwise operations and
reductions: test_array_ops_numpy.py; astype and low-precision
accumulators: test_array_astype_numpy.py.

Run by ctest (pytest_arrays) with MXP_LIB naming libmxp.so; by hand:
    MXP_LIB=build/libmxp.so /usr/bin/python3 -m pytest -q tests/python/test_array_numpy.py
"""
import itertools
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxp_ctypes as mx  # noqa: E402
from array_support import (rng, assert_bits, assert_ulp, in_buffer, shape_str, raises_mxp, arrange,  # noqa: E402
                           LAYOUTS, SHAPES, sample)

# NumPy's own warnings for var with ddof >= n and the mean of nothing (the
# values are what is compared).
pytestmark = [pytest.mark.filterwarnings("ignore:Degrees of freedom <= 0:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")]


# ---- the binding itself -------------------------------------------------


def test_dtype_enum_matches_the_header():
    for code, name in mx.DTYPE_NAMES.items():
        assert mx.lib.mxp_dtype_name(code).decode() == name
        assert mx.lib.mxp_dtype_from_name(name.encode()) == code
    assert mx.lib.mxp_dtype_name(0) == b"invalid" and mx.lib.mxp_dtype_name(mx.DTYPE_COUNT) == b"invalid"
    assert [mx.lib.mxp_binary_op_name(i).decode() for i in range(len(mx.BINARY_OPS))] == mx.BINARY_OPS
    assert [mx.lib.mxp_unary_op_name(i).decode() for i in range(len(mx.UNARY_OPS))] == mx.UNARY_OPS
    assert [mx.lib.mxp_reduce_op_name(i).decode() for i in range(len(mx.REDUCE_OPS))] == mx.REDUCE_OPS
    for code in range(mx.ERR_CASTING + 1):
        assert mx.lib.mxp_status_str(code).decode().startswith("MXP_")


@pytest.mark.parametrize("dtype", ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_wrap_round_trip(dtype, layout):
    a = arrange(sample((3, 4, 5), dtype, 1), layout)
    m = mx.from_numpy(a)
    assert m.dtype == mx.dtype_code(a.dtype) and m.shape == a.shape and m.strides == a.strides
    assert m.data == a.__array_interface__["data"][0]  # wrapped, not copied
    assert bool(m.flags & mx.ARRAY_C_CONTIGUOUS) == a.flags.c_contiguous
    assert bool(m.flags & mx.ARRAY_F_CONTIGUOUS) == a.flags.f_contiguous
    assert_bits(mx.to_numpy(m), a, "round trip")
    a[(0,) * a.ndim] = 0  # the wrapper sees writes through NumPy: same memory
    assert mx.to_numpy(m)[(0,) * a.ndim] == 0
    assert mx.from_numpy(a[:0]).size == 0 and mx.to_numpy(mx.from_numpy(a[:0])).shape == (0, 4, 5)


# ---- views --------------------------------------------------------------

FIXED_SLICES = {
    1: [(slice(None),), (slice(1, 5),), (slice(None, None, -1),), (slice(5, 1, -1),), (slice(-3, None),),
        (slice(None, -2),), (slice(-100, 100),), (slice(100, -100, -1),), (slice(100, None, -2),),
        (slice(None, -100, -3),), (slice(3, 3),), (slice(5, 2),), (slice(2, 5, -1),), (slice(0, 7, 10),),
        (slice(6, None, -10),), (slice(-1, -8, -1),), (slice(-8, -1),), (slice(2**62, -2**62, -1),),
        (slice(-2**62, 2**62, 2**40),), (slice(7, None),), (slice(None, 0, -1),), (slice(-7, -7, -1),),
        (slice(2**63 - 1, None, -(2**63 - 1)),)],
    2: [(slice(None, None, -1), slice(None, None, -1)), (slice(1, None, 2),), (slice(None), slice(None, None, -2)),
        (slice(-1, None, -3), slice(1, -1)), (slice(2, 2), slice(None, None, -1)), (slice(10, 20), slice(None)),
        (slice(None, None, 3), slice(4, None, -4)), (slice(-2, None), slice(None, -10))],
    3: [(slice(None), slice(None), slice(None, None, -1)), (slice(None, None, -1), slice(1, 3), slice(None, None, 2)),
        (slice(1, 2), slice(None, None, -3), slice(-2, None, -2)), (slice(2, None, -2),),
        (slice(0, 0), slice(None), slice(1, 3)), (slice(-1, -2, -1), slice(3, None), slice(-100, 100, 100))],
}


def random_slices(ndim, n, seed):
    r = rng("slices", ndim, seed)
    out = []
    for _ in range(n):
        k = int(r.integers(1, ndim + 1))  # the trailing axes are then kept whole
        sl = []
        for ax in range(k):
            size = SHAPES[ndim][ax]
            bound = lambda: None if r.random() < 0.25 else int(r.integers(-size - 3, size + 4))  # noqa: E731
            step = int(r.choice([1, 1, 2, 3, size, size + 1])) * int(r.choice([1, -1]))
            sl.append(slice(bound(), bound(), step))
        out.append(tuple(sl))
    return out


def check_view(v, want, src, what):
    """v (mxp) equals NumPy's view want of src: elements, strides, element 0."""
    got = mx.to_numpy(v)
    assert_bits(got, want, what)
    if want.size:  # (NumPy gives an empty slice step 1; its strides are never used)
        assert v.strides == want.strides, "%s: strides %s, NumPy %s" % (what, v.strides, want.strides)
        assert v.data == want.__array_interface__["data"][0], "%s: element 0 is not NumPy's" % what
        assert in_buffer(v.data, src), "%s: not a view into the source buffer" % what


@pytest.mark.parametrize("group", ["fixed", 0, 1, 2])
@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_slice(layout, ndim, group):
    a = arrange(sample(SHAPES[ndim], np.float32 if ndim != 2 else np.int16, ndim), layout)
    m = mx.from_numpy(a)
    cases = FIXED_SLICES[ndim] if group == "fixed" else random_slices(ndim, 40, group)
    for s in cases:
        check_view(m.slice(*s), a[s], a, "a%s" % (s,))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_slice_of_slice(layout):
    a = arrange(sample((6, 7, 5), np.float64, 3), layout)
    m = mx.from_numpy(a)
    s1, s2 = (slice(None, None, -2), slice(1, None, 3)), (slice(None, None, -1), slice(None), slice(4, 0, -2))
    v = m.slice(*s1)
    w = v.slice(*s2)
    del v  # the view of a view keeps the buffer (mxp refcount + our keep)
    check_view(w, a[s1][s2], a, "a[s1][s2]")
    assert mx.to_numpy(mx.from_numpy(a).slice(slice(None), slice(3, 3))).shape == (6, 0, 5)


@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_index(layout, ndim):
    a = arrange(sample(SHAPES[ndim], np.int32, 5), layout)
    m = mx.from_numpy(a)
    for axis in range(-ndim, ndim):
        n = a.shape[axis]
        for i in range(-n, n):
            key = (slice(None),) * (axis % ndim) + (i, Ellipsis)  # Ellipsis: a 0-d view, not a scalar
            check_view(m.index(axis, i), a[key], a, "index axis %d, %d" % (axis, i))
        for i in (n, -n - 1, 2**40):
            e = raises_mxp(mx.ERR_INDEX, m.index, axis, i)
            assert str(i) in e.message
            with pytest.raises(IndexError):
                a[(slice(None),) * (axis % ndim) + (i,)]
    # Indexing every axis down to a 0-d view.
    v = m
    for _ in range(ndim):
        v = v.index(0, -1)
    assert v.ndim == 0 and mx.to_numpy(v) == a[(-1,) * ndim]


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_transpose(layout, ndim):
    shape = (2, 3, 4, 5)[:ndim]
    a = arrange(sample(shape, np.float16, 7), layout)
    m = mx.from_numpy(a)
    check_view(m.transpose(), a.T, a, "transpose(None)")
    for perm in itertools.permutations(range(ndim)):
        check_view(m.transpose(perm), a.transpose(perm), a, "transpose%s" % (perm,))
        neg = tuple(p - ndim for p in perm)  # negative axes are accepted, as NumPy
        check_view(m.transpose(neg), a.transpose(neg), a, "transpose%s" % (neg,))
    if ndim > 1:
        raises_mxp(mx.ERR_INDEX, m.transpose, (0,) * ndim)  # repeated axis
        raises_mxp(mx.ERR_INDEX, m.transpose, tuple(range(1, ndim + 1)))  # out of range
        with pytest.raises(ValueError):
            a.transpose((0,) * ndim)


RESHAPE_SOURCES = {
    "C": lambda x: x,
    "F": lambda x: np.asfortranarray(x),
    "T": lambda x: np.ascontiguousarray(x.reshape(4, 3, 2).T),
    "step": lambda x: np.repeat(x, 2, axis=1)[:, ::2],
    "rev0": lambda x: x[::-1],
    "rev2": lambda x: x[:, :, ::-1],
    "revall": lambda x: x[::-1, ::-1, ::-1],
    "ones": lambda x: x.reshape(1, 2, 1, 12),
    "ones_T": lambda x: x.reshape(1, 2, 1, 12).transpose(2, 0, 1, 3),
    "swap": lambda x: x.swapaxes(1, 2),
    "bcast": lambda x: np.broadcast_to(x[0, 0], (2, 3, 4)),
    "bcast_col": lambda x: np.broadcast_to(x[:, :1, :], (2, 3, 4)),
    "flat_step": lambda x: np.repeat(x.ravel(), 2)[::2].reshape(2, 3, 4),
}
RESHAPE_TARGETS = [(24,), (2, 12), (12, 2), (3, 8), (8, 3), (4, 6), (6, 4), (2, 3, 4), (4, 3, 2), (2, 2, 6),
                   (6, 2, 2), (3, 2, 4), (2, 4, 3), (1, 24), (24, 1), (2, 1, 12), (1, 2, 3, 4), (2, 3, 4, 1),
                   (2, 3, 1, 4), (-1,), (2, -1), (-1, 4), (2, -1, 2), (1, 1, 24, 1), (2, 2, 2, 3)]


@pytest.mark.parametrize("target", RESHAPE_TARGETS, ids=lambda t: "x".join(map(str, t)))
@pytest.mark.parametrize("source", list(RESHAPE_SOURCES))
def test_reshape_view_exactly_where_numpy_views(source, target):
    a = RESHAPE_SOURCES[source](sample((2, 3, 4), np.float32, 11))
    m = mx.from_numpy(a)
    want = np.reshape(a, target)  # order='C'; NumPy copies silently when it must
    numpy_views = np.shares_memory(want, a)
    try:
        v = m.reshape(target)
    except mx.MxpError as e:
        assert e.status == mx.ERR_SHAPE, str(e)
        assert not numpy_views, "mxp refused a reshape %s -> %s that NumPy does as a view: %s" % (
            a.strides, target, e)
        c = m.reshape_copy(target)
        assert_bits(mx.to_numpy(c), want, "reshape_copy")
        assert c.flags & mx.ARRAY_C_CONTIGUOUS and not in_buffer(c.data, a)
        return
    assert numpy_views, "mxp made a view where NumPy copies (strides %s -> %s)" % (a.strides, target)
    got = mx.to_numpy(v)
    assert_bits(got, want, "reshape")
    assert in_buffer(v.data, a)
    # Strides may differ from NumPy's only on size-1 axes (never used).
    for n, s, t in zip(want.shape, v.strides, want.strides):
        assert n == 1 or s == t, "strides %s, NumPy %s" % (v.strides, want.strides)


@pytest.mark.parametrize("shape,target", [((0, 3), (3, 0)), ((0, 3), (-1,)), ((0, 3), (0, -1, 1)), ((2, 0), (0, 5)),
                                          ((1,), ()), ((), (1, 1)), ((), (-1,))])
def test_reshape_empty_and_scalar(shape, target):
    a = np.zeros(shape, np.float64)
    try:
        want = np.reshape(a, target)
    except ValueError:
        raises_mxp(mx.ERR_SHAPE, mx.from_numpy(a).reshape, target)
        return
    v = mx.from_numpy(a).reshape(target)
    assert v.shape == want.shape
    assert_bits(mx.to_numpy(v), want)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_squeeze_and_expand_dims(layout):
    a = arrange(sample((1, 3, 1, 4), np.uint16, 13), layout)
    m = mx.from_numpy(a)
    check_view(m.squeeze(), np.squeeze(a), a, "squeeze()")
    for axis in (0, 2, -2, -4):
        check_view(m.squeeze(axis), np.squeeze(a, axis), a, "squeeze(%d)" % axis)
    for axis in (1, -1):
        e = raises_mxp(mx.ERR_SHAPE, m.squeeze, axis)
        assert "size" in e.message
        with pytest.raises(ValueError):
            np.squeeze(a, axis)
    for axis in (4, -5):
        raises_mxp(mx.ERR_INDEX, m.squeeze, axis)
    for axis in range(-5, 5):
        want = np.expand_dims(a, axis)
        v = m.expand_dims(axis)
        assert_bits(mx.to_numpy(v), want, "expand_dims(%d)" % axis)
        assert v.data == a.__array_interface__["data"][0]
    for axis in (5, -6):
        raises_mxp(mx.ERR_INDEX, m.expand_dims, axis)
        with pytest.raises(np.AxisError):
            np.expand_dims(a, axis)
    s = mx.from_numpy(np.array(3.5, np.float32))
    assert s.squeeze().ndim == 0 and s.expand_dims(0).shape == (1,) and s.expand_dims(-1).shape == (1,)


BROADCAST_TO = [((3, 1), (2, 3, 4)), ((4,), (3, 4)), ((), (2, 2)), ((1,), (0,)), ((1, 1), (5, 0, 3)),
                ((2, 1, 3), (2, 4, 3)), ((0,), (3, 0)), ((3, 4), (3, 4)), ((1,), ())]


@pytest.mark.parametrize("shape,target", BROADCAST_TO)
@pytest.mark.parametrize("layout", ["C", "strided"])
def test_broadcast_to(layout, shape, target):
    a = arrange(sample(shape, np.int64, 17), layout)
    m = mx.from_numpy(a)
    try:
        want = np.broadcast_to(a, target)
    except ValueError:
        e = raises_mxp(mx.ERR_SHAPE, m.broadcast_to, target)
        assert "broadcast" in e.message
        return
    v = m.broadcast_to(target)
    check_view(v, want, a, "broadcast_to%s" % (target,))
    assert not v.flags & mx.ARRAY_WRITEABLE  # elements repeat


BROADCAST_PAIRS = [((3, 4), (4,)), ((3, 1), (1, 4)), ((0, 4), (1, 4)), ((2, 0, 3), (3,)), ((), (2, 3)),
                   ((1,), (0,)), ((2, 1, 3), (4, 1)), ((5,), (5,)), ((1, 1, 1), (2,)), ((0,), ()),
                   ((3, 4), (5,)), ((2, 3), (3, 2)), ((0,), (2,)), ((2, 1), (3, 3, 3))]


@pytest.mark.parametrize("sa,sb", BROADCAST_PAIRS)
def test_broadcast_shapes(sa, sb):
    try:
        want = np.broadcast_shapes(sa, sb)
    except ValueError:
        e = raises_mxp(mx.ERR_SHAPE, mx.broadcast_shapes, sa, sb)
        assert e.message == "shapes %s and %s are not broadcastable" % (shape_str(sa), shape_str(sb)), e.message
        return
    assert mx.broadcast_shapes(sa, sb) == want


# ---- long rows: the 1024-element blocks of the elementwise and reduction loops


@pytest.mark.parametrize("layout", LAYOUTS)
def test_long_rows(layout):
    r = rng("long", layout)
    x = arrange(r.standard_normal((3, 2600)).astype(np.float32), layout)
    y = arrange(r.standard_normal((3, 1)).astype(np.float16), layout)
    z = arrange(r.standard_normal((1, 2600)), layout)
    mxx, mxy, mxz = mx.from_numpy(x), mx.from_numpy(y), mx.from_numpy(z)
    assert_bits(mx.to_numpy(mx.binary("multiply", mxx, mxy)), x * y, "float32 * float16 (3,1)")
    assert_bits(mx.to_numpy(mx.binary("subtract", mxy, mxz)), y - z, "float16 - float64 (1,2600)")
    assert_bits(mx.to_numpy(mx.binary("less", mxx, mxz)), x < z, "less")
    assert_bits(mx.to_numpy(mx.unary("sqrt", mx.from_numpy(np.abs(x)))), np.sqrt(np.abs(x)), "sqrt")
    assert_bits(mx.to_numpy(mx.from_numpy(x).astype("float16")), x.astype(np.float16), "astype")
    h = arrange(r.uniform(0.5, 1.5, (3, 5000)).astype(np.float16), layout)
    for axis in (None, 1, 0):
        want = np.sum(h.astype(np.float64), axis=axis).astype(np.float16)
        assert_ulp(mx.to_numpy(mx.reduce("sum", mx.from_numpy(h), axis=axis)), np.asarray(want), 1,
                   "float16 sum axis %s" % axis)
        assert_bits(mx.to_numpy(mx.reduce("argmax", mx.from_numpy(h), axis=axis)), np.asarray(np.argmax(h, axis)),
                    "argmax")
    w = arrange(r.integers(-2**62, 2**62, (3, 3000)), layout)
    assert_bits(mx.to_numpy(mx.reduce("sum", mx.from_numpy(w), axis=1)), np.sum(w, axis=1), "int64 sum wraps")


def test_ascontiguous():
    a = sample((3, 4, 5), np.float32, 19)
    for order in ("C", "F"):
        for layout in LAYOUTS:
            src = arrange(a, layout)
            c = mx.from_numpy(src).ascontiguous(order)
            want = np.ascontiguousarray(src) if order == "C" else np.asfortranarray(src)
            assert_bits(mx.to_numpy(c), want, "ascontiguous %s from %s" % (order, layout))
            assert c.strides == want.strides
            same = (src.flags.c_contiguous if order == "C" else src.flags.f_contiguous)
            assert (c.data == src.__array_interface__["data"][0]) == same  # itself when already so


# ---- errors -------------------------------------------------------------


@pytest.mark.parametrize("sa,sb", [((3, 4), (5,)), ((2, 3), (3, 2)), ((0,), (2,)), ((4, 1, 3), (2, 2))])
def test_error_not_broadcastable(sa, sb):
    x, y = np.zeros(sa, np.float32), np.zeros(sb, np.float32)
    with pytest.raises(ValueError):
        x + y
    for op in ("add", "less"):
        e = raises_mxp(mx.ERR_SHAPE, mx.binary, op, mx.from_numpy(x), mx.from_numpy(y))
        assert "%s and %s" % (shape_str(sa), shape_str(sb)) in e.message, e.message
        assert "broadcast" in e.message
        assert e.status_name == "MXP_ERR_SHAPE" and e.message in str(e)


def test_error_axis_out_of_range():
    a = np.zeros((2, 3, 4), np.float32)
    m = mx.from_numpy(a)
    for call in (lambda: mx.reduce("sum", m, axis=3), lambda: mx.reduce("max", m, axis=(0, -4)),
                 lambda: mx.reduce("argmax", m, axis=3), lambda: m.index(3, 0), lambda: m.squeeze(-4),
                 lambda: m.expand_dims(4), lambda: m.transpose((0, 1, 3))):
        e = raises_mxp(mx.ERR_INDEX, call)
        assert "axis" in e.message and "out of range" in e.message, e.message
    with pytest.raises(np.AxisError):
        np.sum(a, axis=3)
    e = raises_mxp(mx.ERR_INDEX, mx.reduce, "sum", m, axis=(1, -2))
    assert "repeated" in e.message
    with pytest.raises(ValueError):
        np.sum(a, axis=(1, -2))
    e = raises_mxp(mx.ERR_INVALID_ARGUMENT, mx.reduce, "argmax", m, axis=(0, 1))
    assert "one axis" in e.message


def test_error_slice_step_zero():
    a = np.arange(5.0)
    with pytest.raises(ValueError, match="step cannot be zero"):
        a[::0]
    e = raises_mxp(mx.ERR_INDEX, mx.from_numpy(a).slice, slice(None, None, 0))
    assert "step cannot be zero" in e.message
    e = raises_mxp(mx.ERR_INDEX, mx.from_numpy(a).slice, slice(None), slice(None))
    assert "2 slices" in e.message  # more slices than dimensions


def test_error_reshape_wrong_size():
    a = np.zeros((3, 4), np.int16)
    m = mx.from_numpy(a)
    for target in [(5,), (2, 7), (13,), (-1, 5)]:
        with pytest.raises(ValueError):
            a.reshape(target)
        e = raises_mxp(mx.ERR_SHAPE, m.reshape, target)
        assert "12" in e.message, e.message
        raises_mxp(mx.ERR_SHAPE, m.reshape_copy, target)
    e = raises_mxp(mx.ERR_SHAPE, m.reshape, (-1, -1))
    assert "-1" in e.message
    raises_mxp(mx.ERR_SHAPE, m.reshape, (-2, -6))
    e = raises_mxp(mx.ERR_SHAPE, mx.from_numpy(a.T).reshape, (12,))
    assert "reshape_copy" in e.message  # says what to do instead


def test_error_message_is_cleared_per_failure():
    """Each failure replaces the last message; a success does not raise."""
    m = mx.from_numpy(np.zeros(4))
    e1 = raises_mxp(mx.ERR_INDEX, m.index, 0, 9)
    e2 = raises_mxp(mx.ERR_SHAPE, m.reshape, (3,))
    assert e1.message != e2.message and "9" in e1.message
    assert m.index(0, 3).ndim == 0

"""mxp.nn's convolution, pooling and batch norm against torch.nn.functional
(float64 as the oracle for every dtype, gradients through autograd), in
both layouts, with out=, dtype=, and the exceptions of bad input."""
import numpy as np
import pytest

import mxp
from mxp import nn

torch = pytest.importorskip("torch")
F = torch.nn.functional

DTYPES = [np.float64, np.float32, mxp.bfloat16, np.float16, mxp.float8_e4m3fn]
EPS = {np.float64: 2.0 ** -52, np.float32: 2.0 ** -23}


def T(a):
    return torch.from_numpy(np.asarray(a).astype(np.float64))


def N(t):
    return t.detach().numpy()


def nhwc(a):
    return np.ascontiguousarray(np.asarray(a).transpose(0, 2, 3, 1))


def nchw(a):
    return np.asarray(a).transpose(0, 3, 1, 2)


def rounding(t):
    """Half an ulp of t, relative (float8: 2^-4)."""
    return {np.float64: 2.0 ** -53, np.float32: 2.0 ** -24, np.float16: 2.0 ** -11}.get(t, 2.0 ** -8 if
                                                                                         t is mxp.bfloat16 else 2.0 ** -4)


CONVS = [  # (n, c, h, w, o, k, stride, padding, dilation, groups)
    (2, 4, 6, 7, 3, (1, 1), 1, 0, 1, 1),
    (1, 3, 9, 8, 5, (3, 3), 1, 1, 1, 1),
    (2, 6, 9, 9, 4, (3, 2), (2, 1), (1, 0), 1, 2),
    (1, 2, 11, 10, 3, (3, 3), 1, 2, 2, 1),
    (2, 5, 8, 8, 5, (3, 3), 1, 1, 1, 5),          # depthwise
    (1, 3, 21, 19, 8, (7, 7), 2, 3, 1, 1),        # the ResNet stem
]


@pytest.mark.parametrize("t", DTYPES)
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_conv2d_against_torch(t, layout):
    rng = np.random.default_rng(1)
    for n, c, h, w, o, k, s, p, d, g in CONVS:
        x = rng.uniform(-2, 2, (n, c, h, w)).astype(t)
        wt = rng.uniform(-1, 1, (o, c // g) + k).astype(t)
        b = rng.uniform(-1, 1, o).astype(t)
        want = N(F.conv2d(T(x), T(wt), T(b), s, p, d, g))
        size = N(F.conv2d(T(x).abs(), T(wt).abs(), T(b).abs(), s, p, d, g))
        xi, wi = (nhwc(x), nhwc(wt)) if layout == "NHWC" else (x, wt)
        got = nn.conv2d(xi, wi, b, s, p, d, g, layout=layout)
        assert got.dtype == np.dtype(t)
        got = got.astype(np.float64)
        if layout == "NHWC":
            got = nchw(got)
        acc = EPS.get(t, 2.0 ** -23) * (c // g * k[0] * k[1] + 1)
        assert np.all(np.abs(got - want) <= 2 * acc * size + rounding(t) * np.abs(want) * 2 + 2.0 ** -9), \
            (t, layout, n, c, k, np.max(np.abs(got - want)))


def test_conv2d_epilogue_out_dtype_and_padding_names():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 4, 7, 7)).astype(np.float32)
    w = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    ref = N(F.conv2d(T(x), T(w), T(b), padding=1))
    got = nn.conv2d(x, w, b, padding="same", activation="relu", clamp=(0, 2), dtype=np.float64)
    assert got.dtype == np.float64
    assert np.allclose(got, np.clip(ref, 0, 2), atol=1e-5)
    out = np.empty((1, 6, 5, 5), mxp.bfloat16)
    r = nn.conv2d(x, w, b, padding="valid", out=out)
    assert r is out
    assert np.allclose(out.astype(np.float64), N(F.conv2d(T(x), T(w), T(b))), rtol=2 ** -7, atol=1e-2)
    silu = nn.conv2d(x, w, None, activation="silu")
    assert np.allclose(silu, N(F.silu(F.conv2d(T(x), T(w)))), atol=1e-5)


@pytest.mark.parametrize("layout", ["NCL", "NLC"])
def test_conv1d_against_torch(layout):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 17))
    w = rng.standard_normal((6, 2, 5))
    want = N(F.conv1d(T(x), T(w), None, 2, 2, 1, 2))
    if layout == "NLC":
        got = nn.conv1d(x.transpose(0, 2, 1), w.transpose(0, 2, 1), stride=2, padding=2, groups=2,
                        layout="NLC").transpose(0, 2, 1)
    else:
        got = nn.conv1d(x, w, stride=2, padding=2, groups=2)
    assert np.allclose(got, want, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("t", [np.float64, np.float32])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_conv2d_backward_against_autograd(t, layout):
    rng = np.random.default_rng(4)
    for n, c, h, w, o, k, s, p, d, g in CONVS:
        x = rng.uniform(-2, 2, (n, c, h, w)).astype(t)
        wt = rng.uniform(-1, 1, (o, c // g) + k).astype(t)
        b = np.zeros(o, t)
        tx, tw, tb = (T(a).requires_grad_() for a in (x, wt, b))
        y = F.conv2d(tx, tw, tb, s, p, d, g)
        dy = rng.uniform(-1, 1, tuple(y.shape)).astype(t)
        y.backward(T(dy))
        if layout == "NHWC":
            dx, dw, db = nn.conv2d_backward(nhwc(dy), nhwc(x), nhwc(wt), s, p, d, g, layout="NHWC")
            dx, dw = nchw(dx), nchw(dw)
        else:
            dx, dw, db = nn.conv2d_backward(dy, x, wt, s, p, d, g)
        tol = 1e-12 if t is np.float64 else 1e-4
        for got, want in ((dx, tx.grad), (dw, tw.grad), (db, tb.grad)):
            assert got.dtype == np.dtype(t)
            assert np.allclose(got, N(want), rtol=tol, atol=tol * 10), (layout, k, np.max(np.abs(got - N(want))))
    dx, dw, db = nn.conv2d_backward(dy, x, wt, s, p, d, g, need=(False, True, False))
    assert dx is None and db is None and dw.shape == wt.shape


POOLS = [  # (kernel, stride, padding, ceil_mode, count_include_pad)
    (2, 2, 0, False, True), (3, 2, 1, False, True), (3, 2, 1, False, False), (3, 2, 1, True, True),
    ((3, 2), (2, 3), (1, 1), True, False), (2, 1, 1, False, True),
]


@pytest.mark.parametrize("t", DTYPES)
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_pooling_against_torch(t, layout):
    rng = np.random.default_rng(5)
    x = np.round(rng.uniform(-4, 4, (2, 3, 9, 8)) * 4).astype(t)  # ties
    xi = nhwc(x) if layout == "NHWC" else x
    back = (lambda a: nchw(a)) if layout == "NHWC" else (lambda a: a)
    for k, s, p, ceil, incl in POOLS:
        want = N(F.max_pool2d(T(x), k, s, p, ceil_mode=ceil))
        got = back(nn.max_pool2d(xi, k, s, p, ceil_mode=ceil, layout=layout))
        assert got.dtype == np.dtype(t) and np.array_equal(got.astype(np.float64), want)
        want = N(F.avg_pool2d(T(x), k, s, p, ceil_mode=ceil, count_include_pad=incl))
        got = back(nn.avg_pool2d(xi, k, s, p, ceil_mode=ceil, count_include_pad=incl, layout=layout))
        assert np.array_equal(got.astype(np.float64), want.astype(t).astype(np.float64))
    assert np.array_equal(back(nn.global_avg_pool2d(xi, layout=layout)).astype(np.float64),
                          N(F.adaptive_avg_pool2d(T(x), 1)).astype(t).astype(np.float64))
    assert np.array_equal(back(nn.global_max_pool2d(xi, layout=layout)).astype(np.float64),
                          N(F.adaptive_max_pool2d(T(x), 1)))
    assert np.array_equal(back(nn.adaptive_avg_pool2d(xi, (3, 4), layout=layout)).astype(np.float64),
                          N(F.adaptive_avg_pool2d(T(x), (3, 4))).astype(t).astype(np.float64))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_pooling_backward_against_autograd(layout):
    rng = np.random.default_rng(6)
    x = np.round(rng.uniform(-4, 4, (2, 3, 9, 8)) * 2)  # ties: the first maximum gets the gradient
    for k, s, p, ceil, incl in POOLS:
        for avg in (False, True):
            tx = T(x).requires_grad_()
            y = F.avg_pool2d(tx, k, s, p, ceil, incl) if avg else F.max_pool2d(tx, k, s, p, ceil_mode=ceil)
            dy = rng.uniform(-1, 1, tuple(y.shape))
            y.backward(T(dy))
            if layout == "NHWC":
                f = nn.avg_pool2d_backward if avg else nn.max_pool2d_backward
                kw = dict(count_include_pad=incl) if avg else {}
                got = nchw(f(nhwc(dy), nhwc(x), k, s, p, ceil, layout="NHWC", **kw))
            elif avg:
                got = nn.avg_pool2d_backward(dy, x, k, s, p, ceil, incl)
            else:
                got = nn.max_pool2d_backward(dy, x, k, s, p, ceil)
            assert np.allclose(got, N(tx.grad), rtol=1e-14, atol=1e-15), (k, s, p, avg)


@pytest.mark.parametrize("t", [np.float64, np.float32, mxp.bfloat16, np.float16])
@pytest.mark.parametrize("axis", [1, -1])
def test_batch_norm_against_torch(t, axis):
    rng = np.random.default_rng(8)
    x = rng.uniform(-2, 3, (4, 3, 5, 6)).astype(t)
    w, b = rng.uniform(0.5, 1.5, 3).astype(t), rng.uniform(-0.5, 0.5, 3).astype(t)
    rm, rv = np.zeros(3, np.float32), np.ones(3, np.float32)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    xi = nhwc(x) if axis == -1 else x
    back = (lambda a: nchw(a)) if axis == -1 else (lambda a: a)
    got = back(nn.batch_norm(xi, rm, rv, w, b, training=True, momentum=0.2, eps=1e-5, axis=axis))
    want = N(F.batch_norm(T(x), trm, trv, T(w), T(b), True, 0.2, 1e-5))
    assert got.dtype == np.dtype(t)
    assert np.all(np.abs(got.astype(np.float64) - want) <= np.abs(want) * 2 * rounding(t) + 1e-12)
    assert np.allclose(rm, N(trm), rtol=1e-6) and np.allclose(rv, N(trv), rtol=1e-6)
    got = back(nn.batch_norm(xi, rm, rv, w, b, training=False, axis=axis, dtype=np.float64))
    want = N(F.batch_norm(T(x), trm, trv, T(w), T(b), False))
    assert np.allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("axis", [1, -1])
def test_batch_norm_backward_against_autograd(axis):
    rng = np.random.default_rng(9)
    x, dy = rng.standard_normal((4, 3, 5, 6)), rng.standard_normal((4, 3, 5, 6))
    w, b = rng.uniform(0.5, 1.5, 3), rng.uniform(-0.5, 0.5, 3)
    tx, tw, tb = (T(a).requires_grad_() for a in (x, w, b))
    F.batch_norm(tx, None, None, tw, tb, True, 0.1, 1e-5).backward(T(dy))
    if axis == -1:
        dx, dw, db = nn.batch_norm_backward(nhwc(dy), nhwc(x), w, 1e-5, axis=-1)
        dx = nchw(dx)
    else:
        dx, dw, db = nn.batch_norm_backward(dy, x, w, 1e-5)
    for got, want in ((dx, tx.grad), (dw, tw.grad), (db, tb.grad)):
        assert np.allclose(got, N(want), rtol=1e-12, atol=1e-12)


def test_fold_batch_norm_matches_conv_then_bn():
    rng = np.random.default_rng(10)
    x, w, b = rng.standard_normal((2, 3, 8, 8)), rng.standard_normal((4, 3, 3, 3)), rng.standard_normal(4)
    g, be, m, v = rng.uniform(0.5, 1.5, 4), rng.standard_normal(4), rng.standard_normal(4), rng.uniform(0.5, 2, 4)
    want = N(F.batch_norm(F.conv2d(T(x), T(w), T(b), padding=1), T(m), T(v), T(g), T(be), False, 0.1, 1e-5))
    wf, bf = nn.fold_batch_norm(w, b, g, be, m, v, 1e-5)
    assert np.allclose(nn.conv2d(x, wf, bf, padding=1), want, rtol=1e-12, atol=1e-12)
    wf, bf = nn.fold_batch_norm(w.astype(mxp.bfloat16), None, g, be, m, v)
    assert wf.dtype == mxp.bfloat16 and bf.dtype == mxp.bfloat16


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("xt", [np.uint8, np.int8])
def test_quantized_conv2d_exact(layout, xt):
    """ConvInteger: the exact sums; QLinearConv: requantized with
    per-channel scales, an int32 bias and zero points (round half even)."""
    rng = np.random.default_rng(11)
    lo = 0 if xt is np.uint8 else -128
    x = rng.integers(lo, lo + 256, (2, 6, 9, 8)).astype(xt)
    w = rng.integers(-128, 128, (4, 3, 3, 3)).astype(np.int8)
    b = rng.integers(-500, 500, 4).astype(np.int32)
    xz, wz = (130 if xt is np.uint8 else -2), 3
    # torch pads x - xz with 0: x padded with its zero point, as mxp
    acc = N(F.conv2d(T(x.astype(np.int64) - xz), T(w.astype(np.int64) - wz), None, 2, 1, 1, 2)).astype(np.int64)
    xi, wi = (nhwc(x), nhwc(w)) if layout == "NHWC" else (x, w)
    back = (lambda a: nchw(a)) if layout == "NHWC" else (lambda a: a)
    kw = dict(stride=2, padding=1, groups=2, layout=layout, x_zero_point=xz, w_zero_point=wz)
    got = back(nn.conv2d(xi, wi, **kw))
    assert got.dtype == np.int32 and np.array_equal(got, acc)
    ws = rng.uniform(0.001, 0.01, 4).astype(np.float32)
    got = back(nn.conv2d(xi, wi, b, dtype=np.uint8, x_scale=0.05, w_scale=ws, y_scale=0.5, y_zero_point=128, **kw))
    q = (0.05 * ws.astype(np.float64)[None, :, None, None] * (acc + b[None, :, None, None])) / 0.5
    want = np.clip(np.rint(q) + 128, 0, 255)
    near_tie = np.abs(q - np.floor(q) - 0.5) < 1e-9
    assert got.dtype == np.uint8 and np.all((got == want) | near_tie)
    got = back(nn.conv2d(xi, wi, b, dtype=np.float32, x_scale=0.05, w_scale=ws, **kw))
    assert np.allclose(got, q * 0.5, rtol=1e-6)


def test_bad_input_raises():
    x, w = np.zeros((1, 4, 5, 5), np.float32), np.zeros((2, 4, 3, 3), np.float32)
    with pytest.raises(ValueError):
        nn.conv2d(x, np.zeros((2, 3, 3, 3), np.float32))  # channels
    with pytest.raises(ValueError):
        nn.conv2d(x, w, groups=3)
    with pytest.raises(ValueError):
        nn.conv2d(x, np.zeros((2, 4, 9, 3), np.float32))  # kernel larger than the input
    with pytest.raises(ValueError):
        nn.conv2d(x, w, stride=0)
    with pytest.raises(ValueError):
        nn.conv2d(x, w, padding=-1)
    with pytest.raises(ValueError):
        nn.conv2d(x, np.zeros((2, 4, 2, 2), np.float32), padding="same")
    with pytest.raises(ValueError):
        nn.conv2d(x, w, layout="CHWN")
    with pytest.raises((TypeError, ValueError)):
        nn.conv2d(x.astype(np.int32), w)
    with pytest.raises(ValueError):
        nn.conv2d(x, w, out=np.zeros((1, 2, 2, 2), np.float32))
    with pytest.raises(ValueError):
        nn.max_pool2d(x, 2, padding=2)
    with pytest.raises(ValueError):
        nn.avg_pool2d(x, 6)
    with pytest.raises(ValueError):
        nn.batch_norm(x, None, None)  # inference without running statistics
    with pytest.raises(ValueError):
        nn.batch_norm(np.zeros((1, 3)), None, None, training=True)  # one value per channel
    with pytest.raises(ValueError):
        nn.batch_norm(x, np.zeros(3), np.ones(3), training=True)  # 3 for 4 channels


@pytest.mark.parametrize("shape", [(7, 9, 40, 3, 1, 1, 1), (7, 9, 40, 3, 1, 2, 1), (6, 5, 70, 3, 2, 1, 1),
                                   (8, 8, 33, 3, 1, 2, 2), (5, 4, 64, 5, 1, 2, 1), (4, 4, 128, 3, 1, 3, 1),
                                   (9, 11, 96, 7, 2, 3, 1)])
def test_depthwise_nhwc_into_a_dirty_out_matches_float64(shape):
    # float32 depthwise without an epilogue sums in the output itself: the
    # windows inside the image in registers, the edge pixels from zero --
    # an out= full of NaN must not leak into either
    h, w, c, k, s, p, d = shape
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal((2, h, w, c)).astype(np.float32)
    wt = rng.standard_normal((c, k, k, 1)).astype(np.float32)
    oh, ow = (h + 2 * p - d * (k - 1) - 1) // s + 1, (w + 2 * p - d * (k - 1) - 1) // s + 1
    out = np.full((2, oh, ow, c), np.nan, np.float32)
    nn.conv2d(x, wt, stride=s, padding=p, dilation=d, groups=c, layout="NHWC", out=out)
    xp = np.pad(x.astype(np.float64), ((0, 0), (p, p), (p, p), (0, 0)))
    ref = np.zeros((2, oh, ow, c))
    for a in range(k):
        for b in range(k):
            ref += xp[:, a * d:a * d + s * (oh - 1) + 1:s, b * d:b * d + s * (ow - 1) + 1:s, :] * wt[:, a, b, 0]
    assert np.abs(out - ref).max() <= 1e-5 * np.abs(ref).max()
    assert np.array_equal(out, nn.conv2d(x, wt, stride=s, padding=p, dilation=d, groups=c, layout="NHWC"))


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_conv2d_winograd_algorithm(layout):
    """algorithm='auto' takes Winograd F(2x2, 3x3) for float32 3x3
    stride-1 products where it pays (here 56 tiles of 64 x 64 channels:
    its bits are 'winograd''s), near
    float64 torch; 'direct' the chain's; 'winograd' elsewhere is a
    TypeError, an unknown name a ValueError."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 64, 14, 15)).astype(np.float32)
    w = (rng.standard_normal((64, 64, 3, 3)) * 0.1).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    want = N(F.conv2d(T(x), T(w), T(b), padding=1))
    xi, wi = (nhwc(x), nhwc(w)) if layout == "NHWC" else (x, w)
    got = {a: nn.conv2d(xi, wi, b, padding=1, layout=layout, algorithm=a) for a in ("auto", "direct", "winograd")}
    if layout == "NHWC":
        got = {a: nchw(v) for a, v in got.items()}
    scale = N(F.conv2d(T(np.abs(x)), T(np.abs(w)), None, padding=1)) + np.abs(b)[None, :, None, None]
    for a, v in got.items():
        assert np.all(np.abs(v - want) <= 2.0 ** -17 * scale), a
    if mxp.info()["isa"] != "scalar":
        assert np.array_equal(got["auto"], got["winograd"])
    assert not np.array_equal(got["direct"], got["winograd"])
    with pytest.raises(TypeError, match="MXP_CONV_WINOGRAD"):
        nn.conv2d(xi, wi, b, stride=2, padding=1, layout=layout, algorithm="winograd")
    with pytest.raises(ValueError, match="algorithm"):
        nn.conv2d(xi, wi, b, padding=1, layout=layout, algorithm="fft")

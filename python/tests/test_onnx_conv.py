"""mxp.nn's convolutions against the ONNX reference implementation
(onnx.reference, opset 21; the shared pieces in onnx_oracle.py): Conv
(2-d and 1-d, float32, float64, bfloat16, float16), ConvInteger and
QLinearConv (exact).  The normalizations, softmax and pooling are in
test_onnx_nn.py, whose docstring says how the two compute, what mxp
lacks and where they differ (QLinearConv rounds t, then adds the zero
point, as onnxruntime does)."""
import numpy as np
import pytest

import mxp
from mxp import nn

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from onnx_oracle import U32, U64, UNIT, TINY, f64, nchw, nhwc, onnx_graph, onnx_run, within  # noqa: E402


# ---- Conv --------------------------------------------------------------------------

# (n, c, h, w, o, (kh, kw), stride, pad, dilation, groups): chosen corners, then random ones
CONVS = [
    (2, 4, 6, 7, 3, (1, 1), 1, 0, 1, 1),              # 1x1: one GEMM on x
    (1, 3, 9, 8, 5, (3, 3), 1, 1, 1, 1),
    (2, 6, 9, 9, 4, (3, 2), (2, 1), (1, 0), 1, 2),    # groups, rectangular kernel and stride
    (1, 2, 11, 10, 3, (3, 3), 1, 2, 2, 1),            # dilation
    (2, 5, 8, 8, 5, (3, 3), 1, 1, 1, 5),              # depthwise
    (1, 4, 9, 9, 8, (3, 3), 2, 1, 1, 4),              # groups == C, 2 outputs a group
    (1, 3, 21, 19, 8, (7, 7), 2, 3, 1, 1),            # the ResNet stem
    (1, 2, 5, 6, 2, (5, 6), 1, 0, 1, 1),              # the kernel covers x: one output
    (1, 4, 3, 3, 4, (3, 3), 2, 3, 1, 4),              # depthwise, padding wider than the window: bias only
]


def random_convs(count, seed):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        g = int(rng.choice([1, 1, 2, 3]))
        c, o = g * int(rng.integers(1, 4)), g * int(rng.integers(1, 4))
        k = tuple(int(v) for v in rng.integers(1, 5, 2))
        d = tuple(int(v) for v in rng.integers(1, 3, 2))
        s = tuple(int(v) for v in rng.integers(1, 4, 2))
        p = tuple(int(rng.integers(0, dd * (kk - 1) + 2)) for kk, dd in zip(k, d))  # up to one past the span
        h, w = (int(v) for v in rng.integers(4, 12, 2))
        if all(size + 2 * pp >= dd * (kk - 1) + 1 for size, pp, dd, kk in zip((h, w), p, d, k)):
            out.append((int(rng.integers(1, 3)), c, h, w, o, k, s, p, d, g))
    return out


def pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv_attrs(k, s, p, d, g):
    p = pair(p)
    return dict(kernel_shape=list(k), strides=list(pair(s)), pads=[p[0], p[1], p[0], p[1]],
                dilations=list(pair(d)), group=g)


def conv_data(rng, case, t):
    n, c, h, w, o, k, s, p, d, g = case
    x = rng.uniform(-2, 2, (n, c, h, w)).astype(t)
    wt = rng.uniform(-1, 1, (o, c // g) + k).astype(t)
    b = rng.uniform(-1, 1, o).astype(t)
    return x, wt, b


def mxp_conv(x, wt, b, s, p, d, g, layout):
    if layout == "NHWC":
        return nchw(nn.conv2d(nhwc(x), nhwc(wt), b, s, p, d, g, layout="NHWC"))
    return nn.conv2d(x, wt, b, s, p, d, g)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_conv_float32(layout):
    """mxp sums the K = C/groups * kh * kw products in float32 (error at
    most K u32 sum|x w|, u32 = 2^-24), adds the bias in float64 and rounds
    once (u32 |y|); the float64 reference is within K u64 sum|x w| of the
    exact value.  The reference's float32 run (BLAS sums in float32, then
    the bias: (K + 1) u32 sum|x w| + u32 |y|) adds its own error."""
    rng = np.random.default_rng(1)
    for case in CONVS + random_convs(12, 100):
        n, c, h, w, o, k, s, p, d, g = case
        x, wt, b = conv_data(rng, case, np.float32)
        attrs = conv_attrs(k, s, p, d, g)
        ref = onnx_run("Conv", {"x": f64(x), "w": f64(wt), "b": f64(b)}, **attrs)[0]
        size = onnx_run("Conv", {"x": np.abs(f64(x)), "w": np.abs(f64(wt)), "b": np.abs(f64(b))}, **attrs)[0]
        got = mxp_conv(x, wt, b, s, p, d, g, layout)
        assert got.dtype == np.float32 and got.shape == ref.shape
        kk = c // g * k[0] * k[1]
        mine = kk * U32 * size + U32 * np.abs(ref) + (kk + 1) * U64 * size
        within(got, ref, mine, ("float64 reference", case))
        theirs = (kk + 1) * U32 * size + U32 * np.abs(ref)
        r32 = onnx_run("Conv", {"x": x, "w": wt, "b": b}, **attrs)[0]
        assert r32.dtype == np.float32
        within(got, f64(r32), mine + theirs, ("float32 reference", case))


@pytest.mark.parametrize("t", [np.float64, mxp.bfloat16, np.float16])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_conv_other_dtypes(t, layout):
    """float64: summed in float64 (K u64 sum|x w| plus one rounding);
    bfloat16 and float16: the reference on the exactly widened values in
    float64, mxp's float32 sums rounded once into t (u_t |y|)."""
    rng = np.random.default_rng(2)
    t = np.dtype(t)
    for case in CONVS + random_convs(6, 200):
        n, c, h, w, o, k, s, p, d, g = case
        x, wt, b = conv_data(rng, case, t)
        attrs = conv_attrs(k, s, p, d, g)
        ref = onnx_run("Conv", {"x": f64(x), "w": f64(wt), "b": f64(b)}, **attrs)[0]
        size = onnx_run("Conv", {"x": np.abs(f64(x)), "w": np.abs(f64(wt)), "b": np.abs(f64(b))}, **attrs)[0]
        got = mxp_conv(x, wt, b, s, p, d, g, layout)
        assert got.dtype == t
        kk = c // g * k[0] * k[1]
        acc = U64 if t == np.float64 else U32
        within(got, ref, (kk + 1) * (acc + U64) * size * (1 + UNIT[t]) + UNIT[t] * np.abs(ref) + TINY[t], (t, case))


def test_conv_asymmetric_pads_by_padding_x():
    """ONNX pads each side on its own (pads = [top, left, bottom, right]);
    mxp's padding is symmetric, so an asymmetric one is np.pad of x and an
    unpadded convolution: the same result."""
    rng = np.random.default_rng(3)
    x, wt, b = conv_data(rng, (2, 3, 8, 9, 4, (3, 3), 1, 0, 1, 1), np.float64)
    for pads in ([0, 1, 2, 0], [2, 0, 1, 2], [1, 2, 0, 1]):
        ref = onnx_run("Conv", {"x": x, "w": wt, "b": b}, kernel_shape=[3, 3], strides=[2, 1], pads=pads)[0]
        xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
        within(nn.conv2d(xp, wt, b, stride=(2, 1)), ref, 40 * U64 * (1 + np.abs(ref)), pads)


@pytest.mark.parametrize("layout", ["NCL", "NLC"])
def test_conv1d(layout):
    """Conv with a 1-d kernel (x [N, C, L]) is mxp's conv1d."""
    rng = np.random.default_rng(4)
    for n, c, length, o, k, s, p, d, g in [(2, 4, 17, 6, 5, 2, 2, 1, 2), (1, 3, 12, 3, 3, 1, 1, 3, 3),
                                           (3, 2, 9, 5, 1, 1, 0, 1, 1), (1, 6, 20, 4, 4, 3, 3, 2, 2)]:
        x = rng.uniform(-2, 2, (n, c, length)).astype(np.float32)
        wt = rng.uniform(-1, 1, (o, c // g, k)).astype(np.float32)
        b = rng.uniform(-1, 1, o).astype(np.float32)
        attrs = dict(kernel_shape=[k], strides=[s], pads=[p, p], dilations=[d], group=g)
        ref = onnx_run("Conv", {"x": f64(x), "w": f64(wt), "b": f64(b)}, **attrs)[0]
        size = onnx_run("Conv", {"x": np.abs(f64(x)), "w": np.abs(f64(wt)), "b": np.abs(f64(b))}, **attrs)[0]
        if layout == "NLC":
            got = nn.conv1d(x.transpose(0, 2, 1), wt.transpose(0, 2, 1), b, s, p, d, g, layout="NLC")
            got = got.transpose(0, 2, 1)
        else:
            got = nn.conv1d(x, wt, b, s, p, d, g)
        assert got.dtype == np.float32 and got.shape == ref.shape
        kk = c // g * k
        within(got, ref, kk * U32 * size + U32 * np.abs(ref) + (kk + 1) * U64 * size, (n, c, length, k, s, p, d, g))
        r32 = onnx_run("Conv", {"x": x, "w": wt, "b": b}, **attrs)[0]
        within(got, f64(r32), (2 * kk + 2) * U32 * size + 2 * U32 * np.abs(ref), "float32 reference")


# ---- ConvInteger, QLinearConv ------------------------------------------------------

QCONVS = [  # (n, c, h, w, o, k, stride, pad, dilation, groups)
    (2, 6, 9, 8, 4, (3, 3), 2, 1, 1, 2),
    (1, 3, 7, 7, 5, (1, 1), 1, 0, 1, 1),
    (1, 4, 8, 9, 4, (3, 3), 1, 1, 1, 4),              # depthwise (through the integer GEMM)
    (1, 2, 10, 9, 3, (3, 2), (1, 2), (2, 1), 2, 1),
    (2, 3, 6, 6, 2, (2, 2), 1, 1, 1, 1),
]


def qdata(rng, case, xt):
    n, c, h, w, o, k, s, p, d, g = case
    info = np.iinfo(xt)
    x = rng.integers(info.min, info.max + 1, (n, c, h, w)).astype(xt)
    x.flat[::11] = info.max  # the extremes
    x.flat[5::13] = info.min
    wt = rng.integers(-128, 128, (o, c // g) + k).astype(np.int8)
    wt.flat[::7] = -128
    return x, wt


def mxp_qconv(x, wt, case, layout, b=None, **kw):
    n, c, h, w, o, k, s, p, d, g = case
    if layout == "NHWC":
        return nchw(nn.conv2d(nhwc(x), nhwc(wt), b, s, p, d, g, layout="NHWC", **kw))
    return nn.conv2d(x, wt, b, s, p, d, g, **kw)


@pytest.mark.parametrize("xt", [np.uint8, np.int8])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_conv_integer_exact(xt, layout):
    """ConvInteger: int32 sums of (x - x_zero_point) (w - w_zero_point),
    padding counting as x_zero_point (ONNX pads x - x_zero_point with 0).
    Equal bit for bit, with and without zero points.  Not in mxp: uint8
    weights and per-output-channel weight zero points (a 1-d
    w_zero_point), both valid ONNX."""
    rng = np.random.default_rng(5)
    info = np.iinfo(xt)
    for case in QCONVS:
        x, wt = qdata(rng, case, xt)
        attrs = conv_attrs(*case[5:])
        for xz, wz in ((None, None), (info.max, -128), (info.min, 127), (int(rng.integers(info.min, info.max)), 3)):
            ins = {"x": x, "w": wt}
            if xz is not None:
                ins.update(xz=np.array(xz, xt), wz=np.array(wz, np.int8))
            want = onnx_run("ConvInteger", ins, **attrs)[0]
            kw = {} if xz is None else dict(x_zero_point=xz, w_zero_point=wz)
            got = mxp_qconv(x, wt, case, layout, **kw)
            assert got.dtype == np.int32 and want.dtype == np.int32
            np.testing.assert_array_equal(got, want, err_msg=str((case, xz, wz)))
    with pytest.raises(TypeError):  # uint8 weights: ONNX has them, mxp does not
        nn.conv2d(x, wt.view(np.uint8))


def quantize_linear_chain(x, wt, xz, wz, b, m, yz, attrs):
    """QLinearConv as the ONNX spec's QuantizeLinear rounds: ConvInteger,
    Cast to float, + bias, * m (per tensor or [1, O, 1, 1]), then
    QuantizeLinear with scale 1 and zero point yz: round half to even,
    then + yz, saturated.  Exact in float32 when m is a power of two and
    |acc + b| < 2^24."""
    feeds = {"x": x, "w": wt, "xz": xz, "wz": wz, "b": b.astype(np.float32), "m": np.asarray(m, np.float32),
             "one": np.float32(1), "yz": yz}
    nodes = [helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["acc"], **attrs),
             helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["accf", "b"], ["sum"]),
             helper.make_node("Mul", ["sum", "m"], ["t"]),
             helper.make_node("QuantizeLinear", ["t", "one", "yz"], ["y"])]
    return onnx_graph(nodes, feeds)[0]


@pytest.mark.parametrize("xt", [np.uint8, np.int8])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_qlinear_conv_exact_with_ties(xt, layout):
    """QLinearConv with power-of-two scales: x_scale w_scale / y_scale is
    exact in float32 (ONNX's multiplier) and in float64 (mxp's), the sums
    and the bias are exact, so the value t = M (acc + b) is exact on both
    sides.  Such a multiplier puts many values on a half, which must go to
    even, and the small y_scale saturates some; per-tensor and per-channel
    w_scale, with and without the int32 bias.

    mxp rounds t, then adds y_zero_point (docs/nn.md), as the spec's
    QuantizeLinear does (y = saturate(round(x / y_scale) + y_zero_point),
    "rounds to the nearest even") and as onnxruntime's requantization
    does: equal bit for bit to ConvInteger -> Cast -> Add -> Mul ->
    QuantizeLinear.  The reference's QLinearConv adds y_zero_point first
    and rounds the sum (np.round(t + y_zero_point)): where t is a half and
    y_zero_point odd, it is one code away from mxp (e.g. t = 198.5, zero
    point 45: mxp 198 + 45 = 243, the reference round(243.5) = 244).
    Everywhere else the two are equal; asserted exactly so."""
    rng = np.random.default_rng(6)
    info = np.iinfo(xt)
    ties = saturated = odd_ties = 0
    for case in QCONVS:
        x, wt = qdata(rng, case, xt)
        o = case[4]
        attrs = conv_attrs(*case[5:])
        for per_channel, with_bias, narrow in ((False, False, False), (True, True, False), (False, True, True),
                                               (True, False, True), (True, True, True)):
            xz = np.array(rng.integers(info.min, info.max + 1), xt)
            yz = np.array(rng.integers(info.min, info.max + 1), xt)
            wz = np.int8(rng.integers(-5, 6))
            n_ws = o if per_channel else 1
            if narrow:  # x near its zero point, small weights: sums of hundreds, M 2^-1 .. 2^-3: many halves
                x = np.clip(int(xz) + rng.integers(-8, 9, x.shape), info.min, info.max).astype(xt)
                wt = (int(wz) + rng.integers(-8, 9, wt.shape)).astype(np.int8)
                xs, ys = np.float32(2.0 ** -4), np.float32(2.0 ** -8)
                ws = (2.0 ** -rng.integers(5, 8, n_ws)).astype(np.float32)
                b = rng.integers(-300, 300, o).astype(np.int32) if with_bias else None
            else:  # the full ranges, sums of tens of thousands, M 2^-6 .. 2^-2: halves and saturation
                x, wt = qdata(rng, case, xt)
                xs, ys = np.float32(2.0 ** -int(rng.integers(2, 6))), np.float32(2.0 ** -int(rng.integers(8, 11)))
                ws = (2.0 ** -rng.integers(6, 10, n_ws)).astype(np.float32)
                b = rng.integers(-3000, 3000, o).astype(np.int32) if with_bias else None
            ws = ws if per_channel else ws[0]
            got = mxp_qconv(x, wt, case, layout, b, dtype=xt, x_zero_point=int(xz), w_zero_point=int(wz),
                            y_zero_point=int(yz), x_scale=xs, w_scale=ws, y_scale=ys)
            assert got.dtype == np.dtype(xt)
            m = (np.float64(xs) * np.asarray(ws, np.float64) / np.float64(ys))  # exact: powers of two
            m = m.reshape(1, -1, 1, 1) if per_channel else m
            bb = np.zeros(o, np.int32) if b is None else b
            chain = quantize_linear_chain(x, wt, xz, wz, bb.reshape(1, -1, 1, 1), m, yz, attrs)
            assert chain.dtype == np.dtype(xt)
            np.testing.assert_array_equal(got, chain, err_msg=str((case, per_channel, with_bias)))
            want = onnx_run("QLinearConv", {"x": x, "xs": xs, "xz": xz, "w": wt, "ws": np.asarray(ws), "wz": wz,
                                            "ys": ys, "yz": yz, "b": b}, **attrs)[0]
            assert want.dtype == np.dtype(xt)
            acc = onnx_run("ConvInteger", {"x": x, "w": wt, "xz": xz, "wz": wz}, **attrs)[0].astype(np.float64)
            t = (acc + bb.reshape(-1, 1, 1)) * m
            half = t - np.floor(t) == 0.5
            swapped = half & (int(yz) % 2 != 0)  # round(t) + z != round(t + z)
            mine = np.clip(np.rint(t) + int(yz), info.min, info.max)
            theirs = np.clip(np.rint(t + int(yz)), info.min, info.max)
            np.testing.assert_array_equal(got, mine)
            np.testing.assert_array_equal(want, theirs)
            np.testing.assert_array_equal(got[~swapped], want[~swapped])
            inside = (t + int(yz) >= info.min) & (t + int(yz) <= info.max)
            ties += int(np.sum(half & inside))
            odd_ties += int(np.sum(swapped & inside & (mine != theirs)))
            saturated += int(np.sum(~inside))
    assert ties > 50 and saturated > 50 and odd_ties > 0, (ties, saturated, odd_ties)  # the data did test them


@pytest.mark.parametrize("xt", [np.uint8, np.int8])
def test_qlinear_conv_general_scales(xt):
    """Any float32 scales: ONNX multiplies the int32 sums by M32 =
    float32(float32(x_scale w_scale) / y_scale), mxp by x_scale / y_scale
    w_scale in float64 (within 2^-51 of the exact M).  The two round the
    same value unless it lies within |acc + b| |M32 - M| of a half, where
    they may be one code apart: asserted exactly so.  mxp itself is the
    exact value rounded half to even (outside 1e-9 of a half).  On these
    data the two never differ: the bands are a few millionths wide."""
    rng = np.random.default_rng(7)
    info = np.iinfo(xt)
    for case in QCONVS:
        x, wt = qdata(rng, case, xt)
        o = case[4]
        attrs = conv_attrs(*case[5:])
        for per_channel in (False, True):
            xs = np.float32(rng.uniform(0.01, 0.1))
            ws = rng.uniform(0.001, 0.02, o if per_channel else 1).astype(np.float32)
            ys = np.float32(rng.uniform(0.05, 0.5))
            xz, yz, wz = np.array(rng.integers(info.min, info.max + 1), xt), np.array(rng.integers(0, 100), xt), \
                np.int8(rng.integers(-5, 6))
            b = rng.integers(-5000, 5000, o).astype(np.int32)
            wsa = ws if per_channel else ws[0]
            want = onnx_run("QLinearConv", {"x": x, "xs": xs, "xz": xz, "w": wt, "ws": np.asarray(wsa), "wz": wz,
                                            "ys": ys, "yz": yz, "b": b}, **attrs)[0]
            got = mxp_qconv(x, wt, case, "NCHW", b, dtype=xt, x_zero_point=int(xz), w_zero_point=int(wz),
                            y_zero_point=int(yz), x_scale=xs, w_scale=wsa, y_scale=ys)
            acc = onnx_run("ConvInteger", {"x": x, "w": wt, "xz": xz, "wz": wz}, **attrs)[0].astype(np.float64)
            acc += b.reshape(-1, 1, 1)
            m_exact = (np.float64(xs) * ws.astype(np.float64) / np.float64(ys)).reshape(-1, 1, 1)
            m32 = ((xs * ws) / ys).astype(np.float64).reshape(-1, 1, 1)  # float32 arithmetic, as the reference
            q = acc * m_exact + int(yz)
            frac = np.abs(q - np.floor(q) - 0.5)
            rounded = np.clip(np.where(frac < 1e-9, got, np.rint(q)), info.min, info.max)
            np.testing.assert_array_equal(got, rounded)  # mxp: the exact value rounded half to even
            diff = got.astype(np.int64) - want.astype(np.int64)
            assert np.all(np.abs(diff) <= 1)
            near = frac <= np.abs(acc) * np.abs(m32 - m_exact) + 1e-9
            assert np.all((diff == 0) | near), (case, per_channel)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_convs_spanning_several_panels(layout):
    """Inputs whose im2col panel is built in several chunks (mxp's 1 MiB
    panels: K pixels elements), float32 and uint8.  The integer one
    against the reference's Conv in float64 of x - x_zero_point and w -
    w_zero_point (ConvInteger's definition; its sums of at most 2^24
    are exact there, and its direct loops would take minutes here), then
    requantized through Cast, Add, Mul and QuantizeLinear as above."""
    rng = np.random.default_rng(17)
    for case in ((1, 32, 40, 44, 8, (3, 3), 1, 1, 1, 1), (2, 16, 30, 31, 6, (3, 3), 1, 1, 1, 2)):
        n, c, h, w, o, k, s, p, d, g = case
        x, wt, b = conv_data(rng, case, np.float32)
        attrs = conv_attrs(k, s, p, d, g)
        ref = onnx_run("Conv", {"x": f64(x), "w": f64(wt), "b": f64(b)}, **attrs)[0]
        size = onnx_run("Conv", {"x": np.abs(f64(x)), "w": np.abs(f64(wt)), "b": np.abs(f64(b))}, **attrs)[0]
        kk = c // g * k[0] * k[1]
        within(mxp_conv(x, wt, b, s, p, d, g, layout), ref, kk * U32 * size + U32 * np.abs(ref) + kk * U64 * size,
               case)
    case = (1, 64, 48, 48, 8, (3, 3), 1, 1, 1, 2)
    x, wt = qdata(rng, case, np.uint8)
    xz, wz, yz = np.uint8(131), np.int8(-3), np.uint8(7)
    attrs = conv_attrs(*case[5:])
    acc = onnx_run("Conv", {"x": f64(x) - int(xz), "w": f64(wt) - int(wz)}, **attrs)[0]
    got = mxp_qconv(x, wt, case, layout, x_zero_point=int(xz), w_zero_point=int(wz))
    np.testing.assert_array_equal(got, acc.astype(np.int32))
    b = rng.integers(-2000, 2000, 8).astype(np.int32)
    xs, ws, ys = np.float32(2.0 ** -5), (2.0 ** -rng.integers(6, 10, 8)).astype(np.float32), np.float32(2.0 ** -9)
    got = mxp_qconv(x, wt, case, layout, b, dtype=np.uint8, x_zero_point=int(xz), w_zero_point=int(wz),
                    y_zero_point=int(yz), x_scale=xs, w_scale=ws, y_scale=ys)
    m = (np.float64(xs) * ws.astype(np.float64) / np.float64(ys)).reshape(1, -1, 1, 1)
    feeds = {"acc": acc.astype(np.float32), "b": b.astype(np.float32).reshape(1, -1, 1, 1),
             "m": m.astype(np.float32), "one": np.float32(1), "yz": yz}
    nodes = [helper.make_node("Add", ["acc", "b"], ["sum"]), helper.make_node("Mul", ["sum", "m"], ["t"]),
             helper.make_node("QuantizeLinear", ["t", "one", "yz"], ["y"])]
    np.testing.assert_array_equal(got, onnx_graph(nodes, feeds)[0])

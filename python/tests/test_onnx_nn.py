"""mxp.nn against the ONNX reference implementation (onnx.reference's
ReferenceEvaluator, opset 21): Conv (2-d and 1-d), ConvInteger,
QLinearConv, BatchNormalization (inference and training_mode),
LayerNormalization, Softmax, LogSoftmax, MaxPool, AveragePool,
GlobalAveragePool and GlobalMaxPool.  DFT is in test_fft.py.

How the two compute.  The reference (onnx 1.23, NumPy) computes each op
in its inputs' dtype: Conv as an im2col matrix product (float32: BLAS's
float32 sums) plus the bias, ConvInteger and QLinearConv as exact integer
window sums, the normalizations, softmax and pooling as NumPy expressions
with a rounding at each step.  mxp rounds once from float32 sums
(convolution) or from a float64 computation (the rest).  So each float32
case is compared twice: with the reference run in float64 on the same
values (nearly exact, so the bound asserted is mxp's own error, derived in
each test) and with the reference run in float32 (the sum of both
errors).  float64 inputs against the float64 reference; bfloat16 and
float16 inputs widened exactly to float64 for the reference, mxp's result
compared after widening.  The integer convolutions are compared exactly.
ONNX's float attributes are float32: mxp is given the same eps and
momentum.

Not in mxp, named where they would be tested: asymmetric pads and
auto_pad (mxp pads symmetrically; the test pads x itself), uint8 weights
and per-channel weight zero points (ConvInteger, QLinearConv), MaxPool's
dilations, storage_order and Indices output, AveragePool's dilations,
LayerNormalization's broadcast Scale/B and its Mean/InvStdDev outputs,
Softmax and LogSoftmax before opset 13 (the flattened 2-d form), 3-d
convolution and pooling.

Differences, each asserted where it shows:
- QLinearConv: mxp rounds the scaled sum t, then adds y_zero_point, as the
  spec's QuantizeLinear and onnxruntime do; the reference rounds t +
  y_zero_point: one code apart where t is a half and the zero point odd.
  With general float32 scales the reference forms x_scale w_scale /
  y_scale in float32, mxp in float64: one code apart where t lies within
  |acc| |M32 - M| of a half.
- BatchNormalization, training_mode: ONNX's running variance takes the
  biased batch variance, mxp's the unbiased one (torch's).
- LogSoftmax in float32: the reference's log(softmax) loses digits where
  exp(x - max) is subnormal and is -inf where it underflows; mxp's (x -
  max) - log(sum) is finite.
- NaN in pooling: the reference drops NaN from a window, mxp propagates
  it (not tested).
Defects of the reference worked around, each probed so that a fixed onnx
is used as it is: MaxPool with every stride 1 reads 2-d pads as [top,
bottom, left, right]; AveragePool with ceil_mode moves every window when
the last one reaches 2 or more past the padding."""
import math

import numpy as np
import pytest

import mxp
from mxp import nn

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

OPSET = 21
U32, U64 = 2.0 ** -24, 2.0 ** -53  # unit roundoff (half an ulp, relative) of float32 and float64
UNIT = {np.dtype(np.float64): U64, np.dtype(np.float32): U32, np.dtype(np.float16): 2.0 ** -11,
        np.dtype(mxp.bfloat16): 2.0 ** -8}
TINY = {np.dtype(np.float64): 0.0, np.dtype(np.float32): 2.0 ** -150, np.dtype(np.float16): 2.0 ** -25,
        np.dtype(mxp.bfloat16): 2.0 ** -134}  # half the smallest subnormal: the absolute rounding floor


def onnx_graph(nodes, feeds, outs=("y",)):
    """The reference's values of outs of a graph of nodes on feeds (name ->
    array)."""
    vi = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
          for k, v in feeds.items()]
    graph = helper.make_graph(nodes, "g", vi, [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
                                               for o in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    with np.errstate(divide="ignore"):  # LogSoftmax's log(0) where float32 exp underflows
        return ReferenceEvaluator(model).run(None, feeds)


def onnx_run(op, inputs, n_out=1, **attrs):
    """The reference's outputs of one node; inputs: name -> array (None:
    an omitted optional input)."""
    names = [k if v is not None else "" for k, v in inputs.items()]
    feeds = {k: np.asarray(v) for k, v in inputs.items() if v is not None}
    outs = [f"y{i}" for i in range(n_out)]
    return onnx_graph([helper.make_node(op, names, outs, **attrs)], feeds, outs)


def attr32(v):
    """An ONNX float attribute's value: attributes are float32, so
    epsilon=1e-5 means float32(1e-5), which mxp is given too."""
    return float(np.float32(v))


def f64(a):
    return np.asarray(a).astype(np.float64)


def nhwc(a):
    return np.ascontiguousarray(np.asarray(a).transpose(0, 2, 3, 1))


def nchw(a):
    return np.asarray(a).transpose(0, 3, 1, 2)


def within(got, want, tol, what):
    err = np.abs(f64(got) - want)
    bad = ~(err <= tol)
    assert not bad.any(), (what, int(bad.sum()), float(err.max()), float(np.max(err - tol)))


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


# ---- BatchNormalization -------------------------------------------------------------

def bn_size(x, s, b, mean, var, eps):
    """A bound of the intermediate values' magnitude: |s| (|x| + |mean|) / sqrt(var + eps) + |b|."""
    r = (1,) * (x.ndim - 2)
    s, b, mean, var = (f64(a).reshape((-1,) + r) for a in (s, b, mean, var))
    return np.abs(s) * (np.abs(f64(x)) + np.abs(mean)) / np.sqrt(var + eps) + np.abs(b)


@pytest.mark.parametrize("t", [np.float32, np.float64, mxp.bfloat16, np.float16])
@pytest.mark.parametrize("axis", [1, -1])
def test_batch_norm_inference(t, axis):
    """training_mode 0 with the running statistics: mxp computes
    s (x - mean) / sqrt(var + eps) + b in float64 and rounds once (u_t |y|);
    the float64 reference rounds at each of its six steps, so it is within
    8 u64 of the size above, the float32 one within 8 u32."""
    rng = np.random.default_rng(8)
    t = np.dtype(t)
    for shape, eps in (((4, 3, 5, 6), 1e-5), ((2, 5, 7, 3), 1e-3), ((3, 4, 1, 1), 0.0), ((2, 6, 4, 4), 0.5)):
        c = shape[1]
        x = rng.uniform(-3, 4, shape).astype(t)
        s, b = rng.uniform(0.5, 1.5, c).astype(t), rng.uniform(-0.5, 0.5, c).astype(t)
        mean, var = rng.uniform(-1, 1, c).astype(t), rng.uniform(0.2, 2, c).astype(t)
        ref = onnx_run("BatchNormalization", {"x": f64(x), "s": f64(s), "b": f64(b), "m": f64(mean), "v": f64(var)},
                       epsilon=eps)[0]
        size = bn_size(x, s, b, mean, var, attr32(eps))
        xi = nhwc(x) if axis == -1 else x
        got = nn.batch_norm(xi, mean, var, s, b, training=False, eps=attr32(eps), axis=axis)
        got = nchw(got) if axis == -1 else got
        assert got.dtype == t
        within(got, ref, UNIT[t] * np.abs(ref) + 8 * U64 * size + TINY[t], (t, shape, eps))
        if t == np.float32:
            r32 = onnx_run("BatchNormalization", {"x": x, "s": s, "b": b, "m": mean, "v": var}, epsilon=eps)[0]
            assert r32.dtype == np.float32
            within(got, f64(r32), U32 * np.abs(ref) + 8 * U32 * size, (shape, eps, "float32 reference"))


@pytest.mark.parametrize("t", [np.float32, np.float64])
def test_batch_norm_training(t):
    """training_mode 1: y normalized with the batch mean and biased
    variance, and the running statistics.  ONNX's momentum m keeps m of the
    old value (running = m old + (1 - m) batch); torch's (mxp's) momentum is
    1 - m.  The running mean agrees; the running variance does not: ONNX
    adds the biased batch variance, mxp the unbiased one (n / (n - 1)
    times it), as torch does.  y: mxp's float64 statistics, one rounding;
    the reference's float64 mean and variance are within n u64 of their
    sizes, so about 2 n u64 of y's size."""
    rng = np.random.default_rng(9)
    for shape, eps, m in (((4, 3, 5, 6), 1e-5, 0.9), ((2, 5, 3, 3), 1e-3, 0.75), ((8, 2, 1, 1), 1e-5, 0.0)):
        c = shape[1]
        n = shape[0] * shape[2] * shape[3]
        eps, m = attr32(eps), attr32(m)
        x = rng.uniform(-3, 4, shape).astype(t)
        s, b = rng.uniform(0.5, 1.5, c).astype(t), rng.uniform(-0.5, 0.5, c).astype(t)
        mean, var = rng.uniform(-1, 1, c), rng.uniform(0.2, 2, c)  # float64: the running statistics compared
        y, rm, rv = onnx_run("BatchNormalization", {"x": f64(x), "s": f64(s), "b": f64(b), "m": mean, "v": var},
                             n_out=3, epsilon=eps, momentum=m, training_mode=1)
        mm, vv = mean.copy(), var.copy()
        got = nn.batch_norm(x, mm, vv, s, b, training=True, momentum=1 - m, eps=eps)
        assert got.dtype == np.dtype(t)
        bm, bv = x.astype(np.float64).mean(axis=(0, 2, 3)), x.astype(np.float64).var(axis=(0, 2, 3))
        size = bn_size(x, s, b, bm, bv, eps)
        within(got, y, UNIT[np.dtype(t)] * np.abs(y) + 4 * n * U64 * size, (shape, "y"))
        within(mm, rm, 4 * n * U64 * (np.abs(mean) + 4), (shape, "running mean"))
        batch_var = (rv - m * var) / (1 - m)  # the reference's biased batch variance
        within(vv, m * var + (1 - m) * batch_var * n / (n - 1), 8 * n * U64 * (var + 16), (shape, "running var"))
        assert np.all(np.abs(vv - rv) > 1e-6 * (1 - m) * bv)  # the listed difference is there
        if t == np.float32:  # the reference in float32: its mean and var each within n u32 of their sizes
            y32 = onnx_run("BatchNormalization", {"x": x, "s": s, "b": b, "m": mean.astype(t), "v": var.astype(t)},
                           n_out=3, epsilon=eps, momentum=m, training_mode=1)[0]
            within(got, f64(y32), 4 * n * U32 * size, (shape, "float32 reference"))


# ---- LayerNormalization -----------------------------------------------------------------

@pytest.mark.parametrize("t", [np.float32, np.float64, mxp.bfloat16, np.float16])
def test_layer_norm(t):
    """Normalized over the axes from axis on (mxp's normalized_shape:
    those sizes), with and without B.  mxp: float64, one rounding (u_t |y|);
    the float64 reference: its sums within log2(n) u64 (pairwise) and about
    eight more roundings, relative to |W| (|x| + |mean|) / std + |B|.
    float32 against the float32 reference: the same count in u32."""
    rng = np.random.default_rng(10)
    t = np.dtype(t)
    for shape, axis, eps in (((3, 4, 5), -1, 1e-5), ((2, 3, 4, 6), -2, 1e-5), ((2, 3, 4, 6), 1, 1e-3),
                             ((5, 64), -1, 1e-6), ((3, 1, 7), -1, 0.1)):
        x = (rng.standard_normal(shape) * 3 + rng.uniform(-2, 2, shape[:1] + (1,) * (len(shape) - 1))).astype(t)
        norm = shape[axis:] if axis >= 0 else shape[len(shape) + axis:]
        w, b = rng.uniform(0.5, 1.5, norm).astype(t), rng.uniform(-1, 1, norm).astype(t)
        count = int(np.prod(norm))
        axes = tuple(range(len(shape) - len(norm), len(shape)))
        eps = attr32(eps)
        xd = f64(x)
        mean, std = xd.mean(axis=axes, keepdims=True), np.sqrt(xd.var(axis=axes, keepdims=True) + eps)
        for bias in (b, None):
            ins = {"x": xd, "w": f64(w), "b": None if bias is None else f64(bias)}
            ref = onnx_run("LayerNormalization", ins, axis=axis, epsilon=eps)[0]
            size = np.abs(f64(w)) * (np.abs(xd) + np.abs(mean)) / std + (0 if bias is None else np.abs(f64(bias)))
            steps = 8 + 2 * math.log2(count)
            got = nn.layer_norm(x, norm, w, bias, eps=eps)
            assert got.dtype == t and got.shape == shape
            within(got, ref, UNIT[t] * np.abs(ref) + steps * U64 * size + TINY[t], (t, shape, axis))
            if t == np.float32:
                r32 = onnx_run("LayerNormalization", {"x": x, "w": w, "b": bias}, axis=axis, epsilon=eps)[0]
                assert r32.dtype == np.float32
                within(got, f64(r32), U32 * np.abs(ref) + steps * U32 * size, (shape, axis, "float32 reference"))


# ---- Softmax, LogSoftmax -------------------------------------------------------------

@pytest.mark.parametrize("t", [np.float32, np.float64, mxp.bfloat16, np.float16])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_and_log_softmax(t, axis):
    """Opset 13's Softmax: along one axis.  mxp: float64, one rounding
    (u_t |y|).  The float64 reference: exp(x - max) has relative error
    about (|x - max| + 2) u64, the sum and division a few u64 more; its
    log(softmax) is within that, absolutely.  The float32 reference: the
    same in u32."""
    rng = np.random.default_rng(11)
    t = np.dtype(t)
    for shape, scale in (((3, 4, 5), 1.0), ((4, 6, 7), 8.0), ((2, 3, 33), 20.0)):
        x = (rng.standard_normal(shape) * scale).astype(t)
        xd = f64(x)
        spread = np.max(xd, axis=axis, keepdims=True) - xd
        n = shape[axis]
        err = (spread + n + 4) * U64
        ref = onnx_run("Softmax", {"x": xd}, axis=axis)[0]
        got = nn.softmax(x, axis=axis)
        assert got.dtype == t
        within(got, ref, UNIT[t] * np.abs(ref) + err * np.abs(ref) + TINY[t], (t, shape, "softmax"))
        ref = onnx_run("LogSoftmax", {"x": xd}, axis=axis)[0]
        got = nn.log_softmax(x, axis=axis)
        assert got.dtype == t
        within(got, ref, UNIT[t] * np.abs(ref) + 2 * err + TINY[t], (t, shape, "log_softmax"))
        if t == np.float32:
            err32 = (spread + n + 4) * U32
            r32 = onnx_run("Softmax", {"x": x}, axis=axis)[0]
            ref = onnx_run("Softmax", {"x": xd}, axis=axis)[0]
            within(nn.softmax(x, axis=axis), f64(r32), (U32 + 2 * err32) * np.abs(ref), (shape, "float32 softmax"))
            r32 = onnx_run("LogSoftmax", {"x": x}, axis=axis)[0]
            ref = onnx_run("LogSoftmax", {"x": xd}, axis=axis)[0]
            got = nn.log_softmax(x, axis=axis)
            assert np.all(np.isfinite(got))
            # the listed difference: float32 exp(x - max) is subnormal below -87.3 (the reference's log of
            # it loses digits) and 0 below -103.97 (log(0) = -inf); compared where it is normal
            assert not np.any(np.isneginf(r32) & (spread < 103.0))
            normal = spread < 87.0
            within(got[normal], f64(r32)[normal], (U32 * np.abs(ref) + 3 * err32)[normal], (shape, "float32 log"))


def test_softmax_with_an_additive_mask_is_softmax_of_the_sum():
    """mxp's mask has no ONNX attribute: an additive mask equals the
    reference's Softmax of Add(x, mask) (the sum is exact in float64)."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 3, 8))
    mask = np.where(rng.random((1, 3, 8)) < 0.3, -1e9, 0.0)
    nodes = [helper.make_node("Add", ["x", "m"], ["s"]), helper.make_node("Softmax", ["s"], ["y"])]
    ref = onnx_graph(nodes, {"x": x, "m": mask})[0]
    within(nn.softmax(x, mask=mask), ref, 64 * U64 * np.abs(ref), "masked")


def test_log_softmax_of_a_wide_row():
    """The listed difference: the reference's LogSoftmax is log(Softmax),
    -inf where exp(x - max) underflows float32 (x - max < -104); mxp's
    (x - max) - log(sum) is finite, and equals the float64 reference there."""
    x = np.array([[0.0, -50.0, -120.0, -200.0, 3.0]], np.float32)
    r32 = onnx_run("LogSoftmax", {"x": x}, axis=-1)[0]
    got = nn.log_softmax(x)
    assert np.isneginf(r32[0, 2]) and np.isneginf(r32[0, 3])
    assert np.all(np.isfinite(got))
    ref = onnx_run("LogSoftmax", {"x": f64(x)}, axis=-1)[0]
    within(got, ref, U32 * np.abs(ref) + 1e-12, "wide row")


# ---- MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool -----------------------------

POOLS = [  # (kernel, stride, pad, ceil_mode); pad at most half the kernel (torch's and mxp's rule)
    ((2, 2), (2, 2), (0, 0), 0),
    ((3, 3), (2, 2), (1, 1), 0),
    ((3, 3), (2, 2), (1, 1), 1),
    ((3, 2), (2, 3), (1, 1), 1),
    ((2, 3), (1, 1), (1, 0), 0),
    ((1, 1), (2, 1), (0, 0), 1),
    ((4, 4), (3, 3), (2, 1), 1),
    ((5, 2), (3, 1), (0, 1), 0),
]


def pool_attrs(k, s, p, ceil):
    return dict(kernel_shape=list(k), strides=list(s), pads=[p[0], p[1], p[0], p[1]], ceil_mode=ceil)


def reference_maxpool_misreads_pads():
    """The reference's MaxPool with every stride and dilation 1 goes
    through onnx/reference/ops/_op_common_pool.py, which reads 2-d pads as
    [top, bottom, left, right] instead of ONNX's [top, left, bottom,
    right] (its strided path and AveragePool read them right).  Probed: x
    3x4, kernel 2x2, pads [1, 0, 1, 0] (rows only) must give 4x3."""
    x = np.arange(12.0).reshape(1, 1, 3, 4)
    y = onnx_run("MaxPool", {"x": x}, kernel_shape=[2, 2], strides=[1, 1], pads=[1, 0, 1, 0])[0]
    return y.shape != (1, 1, 4, 3)


def maxpool_attrs(k, s, p, ceil, misread):
    """pool_attrs, the pads in the order the reference reads them when
    misread (stride 1: see above) so that it pads as ONNX says."""
    attrs = pool_attrs(k, s, p, ceil)
    if misread and tuple(s) == (1, 1):
        attrs["pads"] = [p[0], p[0], p[1], p[1]]
    return attrs


@pytest.mark.parametrize("t", [np.float32, np.float64, mxp.bfloat16, np.float16])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_max_pool(t, layout):
    """Exact: each output is one of the inputs, ceil_mode's last windows
    included.  Not in mxp: dilations (NotImplementedError), storage_order
    and the Indices output.  No NaN: the reference drops NaN from a window
    (it pads with NaN), mxp propagates it.  The reference's stride-1 pads
    are given in the order it misreads them (reference_maxpool_misreads_pads)."""
    rng = np.random.default_rng(13)
    t = np.dtype(t)
    x = np.round(rng.uniform(-4, 4, (2, 3, 10, 9)) * 4).astype(t)  # ties
    xi = nhwc(x) if layout == "NHWC" else x
    misread = reference_maxpool_misreads_pads()
    for k, s, p, ceil in POOLS:
        want = onnx_run("MaxPool", {"x": f64(x)}, **maxpool_attrs(k, s, p, ceil, misread))[0]
        got = nn.max_pool2d(xi, k, s, p, ceil_mode=bool(ceil), layout=layout)
        got = nchw(got) if layout == "NHWC" else got
        assert got.dtype == t and got.shape == want.shape, (k, s, p, ceil, got.shape, want.shape)
        np.testing.assert_array_equal(f64(got), want, err_msg=str((k, s, p, ceil)))
    if t == np.float32:
        want = onnx_run("MaxPool", {"x": x}, kernel_shape=[2, 2], dilations=[2, 2])[0]
        assert want.shape == (2, 3, 8, 7)
        with pytest.raises(NotImplementedError):
            nn.max_pool2d(xi, 2, 1, dilation=2, layout=layout)


def ceil_overhang(size, k, s, p):
    """How far ceil_mode's last window reaches past the padded input (0:
    not at all), with torch's rule (mxp's and ONNX's): no window starts in
    the end padding."""
    out = -(-(size + 2 * p - k) // s) + 1
    if (out - 1) * s >= size + p:
        out -= 1
    return max((out - 1) * s + k - (size + 2 * p), 0)


def reference_avgpool_shifts_ceil_windows():
    """The reference's AveragePool (onnx/reference/ops/op_pool_common.py)
    pads ceil_mode's overhang half at the start of the axis: with an
    overhang of 2 or more every window moves.  Probed: a row 0..7, kernel
    4, stride 3, ceil_mode: windows [0, 4), [3, 7), [6, 8) (overhang 2),
    the first averaging 0 1 2 3 = 1.5."""
    x = np.arange(8.0).reshape(1, 1, 1, 8)
    y = onnx_run("AveragePool", {"x": x}, kernel_shape=[1, 4], strides=[1, 3], pads=[0, 0, 0, 0], ceil_mode=1)[0]
    assert y.shape == (1, 1, 1, 3)
    return y[0, 0, 0, 0] != 1.5


def average_pool_reference(x, k, s, p, ceil, incl, shifted):
    """The reference's AveragePool; where it shifts the windows (above),
    the same windows without ceil_mode: the end padding extended by the
    overhang, which count_include_pad=0 leaves out; count_include_pad=1
    counts the declared padding only, so that one is x padded with zeros
    and pooled with count_include_pad=0."""
    over = [ceil_overhang(x.shape[2 + i], k[i], s[i], p[i]) for i in range(2)] if ceil else [0, 0]
    if not (shifted and max(over) >= 2):
        return onnx_run("AveragePool", {"x": x}, count_include_pad=incl, **pool_attrs(k, s, p, ceil))[0]
    if incl:
        x = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
        p = (0, 0)
    pads = [p[0], p[1], p[0] + over[0], p[1] + over[1]]
    return onnx_run("AveragePool", {"x": x}, count_include_pad=0, kernel_shape=list(k), strides=list(s), pads=pads)[0]


@pytest.mark.parametrize("t", [np.float32, np.float64, mxp.bfloat16, np.float16])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_average_pool(t, layout):
    """count_include_pad both ways, ceil_mode (the windows that reach past
    the padding average what they cover of the padded input, as torch).
    mxp: the float64 sum rounded once (u_t |y|); the float64 reference
    (np.average): kh kw u64 of the mean magnitude; the float32 one the same
    in u32.  Not in mxp: AveragePool's dilations (opset 19).  Where the
    reference's ceil_mode moves the windows (average_pool_reference), the
    same windows without ceil_mode."""
    rng = np.random.default_rng(14)
    t = np.dtype(t)
    x = rng.uniform(-4, 4, (2, 3, 10, 9)).astype(t)
    xi = nhwc(x) if layout == "NHWC" else x
    shifted = reference_avgpool_shifts_ceil_windows()
    for k, s, p, ceil in POOLS:
        for incl in (0, 1):
            ref = average_pool_reference(f64(x), k, s, p, ceil, incl, shifted)
            size = average_pool_reference(np.abs(f64(x)), k, s, p, ceil, incl, shifted)
            got = nn.avg_pool2d(xi, k, s, p, ceil_mode=bool(ceil), count_include_pad=bool(incl), layout=layout)
            got = nchw(got) if layout == "NHWC" else got
            assert got.dtype == t and got.shape == ref.shape, (k, s, p, ceil, incl)
            err = (k[0] * k[1] + 1) * size
            within(got, ref, UNIT[t] * np.abs(ref) + err * U64 + TINY[t], (t, k, s, p, ceil, incl))
            if t == np.float32:
                r32 = average_pool_reference(x, k, s, p, ceil, incl, shifted)
                assert r32.dtype == np.float32
                within(got, f64(r32), U32 * np.abs(ref) + err * U32, (k, s, p, ceil, incl, "float32 reference"))


@pytest.mark.parametrize("t", [np.float32, np.float64, mxp.bfloat16, np.float16])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_global_pools(t, layout):
    """GlobalMaxPool exact; GlobalAveragePool: mxp's float64 mean rounded
    once, the float64 reference within log2(HW) u64 (pairwise), the float32
    one within log2(HW) u32 plus its rounding, of the mean magnitude."""
    rng = np.random.default_rng(15)
    t = np.dtype(t)
    for shape in ((2, 3, 10, 9), (1, 5, 1, 1), (3, 2, 16, 33)):
        x = rng.uniform(-4, 4, shape).astype(t)
        xi = nhwc(x) if layout == "NHWC" else x
        back = nchw if layout == "NHWC" else (lambda a: a)
        want = onnx_run("GlobalMaxPool", {"x": f64(x)})[0]
        got = back(nn.global_max_pool2d(xi, layout=layout))
        assert got.dtype == t and got.shape == want.shape
        np.testing.assert_array_equal(f64(got), want)
        ref = onnx_run("GlobalAveragePool", {"x": f64(x)})[0]
        size = onnx_run("GlobalAveragePool", {"x": np.abs(f64(x))})[0]
        got = back(nn.global_avg_pool2d(xi, layout=layout))
        assert got.dtype == t and got.shape == ref.shape
        steps = 2 + math.log2(shape[2] * shape[3])
        within(got, ref, UNIT[t] * np.abs(ref) + steps * U64 * size + TINY[t], (t, shape))
        if t == np.float32:
            r32 = onnx_run("GlobalAveragePool", {"x": x})[0]
            within(got, f64(r32), U32 * np.abs(ref) + 2 * steps * U32 * size, (shape, "float32 reference"))


def test_one_row_pools_are_1d_pools():
    """MaxPool and AveragePool with a 1-d kernel: mxp pools 2-d only, a 1-d
    pool is the 2-d one of a single row."""
    rng = np.random.default_rng(16)
    x = rng.uniform(-4, 4, (2, 3, 17))
    for k, s, p, ceil in ((3, 2, 1, 0), (4, 3, 2, 1), (2, 1, 0, 0)):
        attrs = dict(kernel_shape=[k], strides=[s], pads=[p, p], ceil_mode=ceil)
        want = onnx_run("MaxPool", {"x": x}, **attrs)[0]
        got = nn.max_pool2d(x[:, :, None], (1, k), (1, s), (0, p), ceil_mode=bool(ceil))[:, :, 0]
        np.testing.assert_array_equal(got, want)
        for incl in (0, 1):
            want = onnx_run("AveragePool", {"x": x}, count_include_pad=incl, **attrs)[0]
            got = nn.avg_pool2d(x[:, :, None], (1, k), (1, s), (0, p), ceil_mode=bool(ceil),
                                count_include_pad=bool(incl))[:, :, 0]
            within(got, want, 16 * U64 * 4, (k, s, p, ceil, incl))

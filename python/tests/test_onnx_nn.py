"""mxp.nn against the ONNX reference implementation (onnx.reference's
ReferenceEvaluator, opset 21): Conv (2-d and 1-d), ConvInteger and
QLinearConv in test_onnx_conv.py; here BatchNormalization (inference and training_mode),
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
from onnx import helper  # noqa: E402

from onnx_oracle import U32, U64, UNIT, TINY, attr32, f64, nchw, nhwc, onnx_graph, onnx_run, within  # noqa: E402


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

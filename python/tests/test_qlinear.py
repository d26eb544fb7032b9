"""mxp.quantize_weight / mxp.qlinear: the quantized linear layer against
a float64 reference of the same integer arithmetic (bit for bit) and
against PyTorch 1.13's dynamic quantized Linear (within a bound that its
float32 arithmetic explains), and bad input."""
import numpy as np
import pytest

import mxp

torch = pytest.importorskip("torch")

F32 = np.float32


def _data(m, k, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m, k)).astype(F32)
    x[::7, ::5] *= 6  # a few large activations
    w = (rng.standard_normal((n, k)) * 0.05).astype(F32)
    w.flat[::97] = 1.0  # outliers: what per-channel scales are for
    b = rng.standard_normal(n).astype(F32)
    return x, w, b


def _sums(x, x_qp, wq):
    """Codes of x (checked against torch's quantize_per_tensor) and the exact
    int64 sums (x - zx) (w - zw)."""
    t = torch.quantize_per_tensor(torch.from_numpy(x), x_qp.scale, x_qp.zero_point, torch.quint8)
    xq = mxp.quantize(x, qparams=x_qp).codes
    np.testing.assert_array_equal(xq, t.int_repr().numpy())
    zw = int(wq.qparams.zero_points[0])
    return (xq.astype(np.int64) - x_qp.zero_point) @ (wq.codes.astype(np.int64) - zw).T


def _combined(x_qp, wq):
    """float32(sx * sw_j): the product of two float32 is exact in float64."""
    return (np.float64(x_qp.scale) * wq.qparams.scales.astype(np.float64)).astype(F32)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_qlinear_equals_the_float64_reference_bit_for_bit(per_channel, with_bias):
    x, w, b = _data(37, 300, 45, 1)
    wq = mxp.quantize_weight(w, per_channel=per_channel)
    assert wq.codes.dtype == np.int8 and (wq.qparams.zero_points == 0).all()
    assert wq.qparams.scales.size == (45 if per_channel else 1)
    bias = b if with_bias else None
    y = mxp.qlinear(x, wq, bias)
    assert y.dtype == F32 and y.shape == (37, 45)
    x_qp = mxp.calibrate(x, "uint8", symmetric=False)  # what qlinear does without x_qparams
    acc = _sums(x, x_qp, wq)
    # |acc| < 2^24 and a 24-bit scale: the float64 product is exact, the
    # bias sum rounds once in float64 as mxp does, then one float32 rounding
    ref = acc * _combined(x_qp, wq).astype(np.float64) + (b.astype(np.float64) if with_bias else 0.0)
    np.testing.assert_array_equal(y, ref.astype(F32))
    y64 = mxp.qlinear(x, wq, bias, out_dtype=np.float64)
    np.testing.assert_array_equal(y64, ref)
    # and the float layer to within the rounding of the codes: |x - x^| <= sx/2,
    # |w - w^| <= sw/2, so |sum x^ w^ - x w| <= sw/2 sum|x| + sx/2 sum|w| + K sx sw/4
    sx, sw = np.float64(x_qp.scale), np.broadcast_to(wq.qparams.scales.astype(np.float64), (45,))
    bound = (np.abs(x).sum(1, dtype=np.float64)[:, None] * sw / 2 + sx / 2 * np.abs(w).sum(1, dtype=np.float64)
             + 300 * sx * sw / 4) * (1 + 1e-6) + 1e-5
    assert (np.abs(ref - (x.astype(np.float64) @ w.T.astype(np.float64) + (b if with_bias else 0))) <= bound).all()


def _torch_weight(wq):
    w = wq.dequantize(np.float32)
    if wq.qparams.scales.size > 1:
        t = torch.quantize_per_channel(torch.from_numpy(w), torch.from_numpy(wq.qparams.scales.astype(np.float64)),
                                       torch.zeros(wq.shape[0], dtype=torch.int64), 0, torch.qint8)
    else:
        t = torch.quantize_per_tensor(torch.from_numpy(w), wq.scale, 0, torch.qint8)
    np.testing.assert_array_equal(t.int_repr().numpy(), wq.codes)  # the same codes
    return t


def _close_to_torch(y, yt, acc, cs, b):
    """PyTorch 1.13 (oneDNN engine here) rounds in float32 several times
    (the scales go through reciprocals, the bias is added to a rounded
    product); mxp rounds once.  Both start from the same int32 sums, so they
    differ by a few units of 2^-24 (|acc * scale| + |bias|): 8 allowed,
    about 3.5 seen."""
    bound = 8 * 2.0 ** -24 * (np.abs(acc * cs.astype(np.float64)) + np.abs(b.astype(np.float64)))
    err = np.abs(y.astype(np.float64) - yt.astype(np.float64))
    assert (err <= bound).all(), (err / bound).max()


@pytest.mark.parametrize("per_channel", [False, True])
def test_qlinear_matches_torch_dynamic_quantized_linear(per_channel):
    """torch.ao.nn.quantized.dynamic.Linear quantizes x to 7 bits
    (reduce_range=True, [0, 127]) with its own parameters; given those same
    parameters, mxp.qlinear computes the same product."""
    x, w, b = _data(64, 256, 96, 2)
    wq = mxp.quantize_weight(w, per_channel=per_channel)
    layer = torch.ao.nn.quantized.dynamic.Linear(256, 96, dtype=torch.qint8)
    layer.set_weight_bias(_torch_weight(wq), torch.from_numpy(b))
    for xs in (x, x.reshape(4, 16, 256)):  # leading axes, as torch's Linear takes them
        yt = layer(torch.from_numpy(xs)).numpy()
        s, z = torch._choose_qparams_per_tensor(torch.from_numpy(xs), True)
        x_qp = mxp.QParams("uint8", F32(s), z, symmetric=False)
        y = mxp.qlinear(xs, wq, b, x_qparams=x_qp)
        assert y.shape == yt.shape
        acc = _sums(xs.reshape(-1, 256), x_qp, wq).reshape(yt.shape)
        _close_to_torch(y, yt, acc, _combined(x_qp, wq), b)


@pytest.mark.parametrize("per_channel", [False, True])
def test_qlinear_reduce_range_is_torchs_dynamic_quantized_linear(per_channel):
    """reduce_range=True calibrates x as torch's dynamic Linear does
    (_choose_qparams_per_tensor(x, True): codes [0, 127]): the same bits as
    with torch's parameters given, the exact float64 reference of those
    sums, and torch's output within its float32 arithmetic."""
    x, w, b = _data(70, 200, 33, 5)
    wq = mxp.quantize_weight(w, per_channel=per_channel)
    layer = torch.ao.nn.quantized.dynamic.Linear(200, 33, dtype=torch.qint8)
    layer.set_weight_bias(_torch_weight(wq), torch.from_numpy(b))
    yt = layer(torch.from_numpy(x)).numpy()
    s, z = torch._choose_qparams_per_tensor(torch.from_numpy(x), True)
    x_qp = mxp.QParams("uint8", F32(s), z, symmetric=False)
    assert z <= 127
    y = mxp.qlinear(x, wq, b, reduce_range=True)
    np.testing.assert_array_equal(y, mxp.qlinear(x, wq, b, x_qparams=x_qp, reduce_range=True))
    acc = _sums(x, x_qp, wq)
    ref = acc * _combined(x_qp, wq).astype(np.float64) + b.astype(np.float64)
    np.testing.assert_array_equal(y, ref.astype(F32))
    _close_to_torch(y, yt, acc, _combined(x_qp, wq), b)
    # given parameters of a narrower range: codes clamp at 127 (torch's quant_max with reduce_range)
    narrow = mxp.QParams("uint8", F32(s / 4), z, symmetric=False)
    xq = np.clip(np.round(x.astype(np.float64) / np.float64(F32(s / 4))) + z, 0, 127)
    acc_n = (xq.astype(np.int64) - z) @ wq.codes.astype(np.int64).T
    ref_n = acc_n * _combined(narrow, wq).astype(np.float64)
    np.testing.assert_array_equal(mxp.qlinear(x, wq, x_qparams=narrow, reduce_range=True), ref_n.astype(F32))
    with pytest.raises(ValueError):
        mxp.qlinear(x, wq, reduce_range=True, x_qparams=mxp.QParams("uint8", F32(0.1), 200, symmetric=False))


def test_qlinear_default_calibration_is_torchs_full_range():
    """Without x_qparams mxp calibrates uint8 over [0, 255]: the scale and
    zero point torch chooses with reduce_range=False, and the product of
    torch.ops.quantized.linear_dynamic(x, w, False)."""
    x, w, b = _data(33, 130, 70, 3)
    wq = mxp.quantize_weight(w)
    ours = mxp.calibrate(x, "uint8", symmetric=False)
    s, z = torch._choose_qparams_per_tensor(torch.from_numpy(x), False)
    assert (ours.scale, ours.zero_point) == (F32(s), z)
    packed = torch.ops.quantized.linear_prepack(_torch_weight(wq), torch.from_numpy(b))
    yt = torch.ops.quantized.linear_dynamic(torch.from_numpy(x), packed, False).numpy()
    y = mxp.qlinear(x, wq, b)
    _close_to_torch(y, yt, _sums(x, ours, wq), _combined(ours, wq), b)


def test_qlinear_dtypes_and_shapes():
    x, w, b = _data(6, 40, 24, 4)
    wq = mxp.quantize_weight(w)
    y = mxp.qlinear(x, wq, b)
    np.testing.assert_array_equal(mxp.qlinear(x[0], wq, b), mxp.qlinear(x[:1], wq, b)[0])
    yb = mxp.qlinear(x, wq, b, out_dtype=mxp.bfloat16)
    assert yb.dtype == mxp.bfloat16
    x_qp = mxp.calibrate(x, "uint8", symmetric=False)
    ref = _sums(x, x_qp, wq) * _combined(x_qp, wq).astype(np.float64) + b  # float64, then one rounding
    np.testing.assert_array_equal(yb.view(np.uint16), ref.astype(mxp.bfloat16).view(np.uint16))
    y16 = mxp.qlinear(x.astype(np.float64), wq, b.astype(np.float16), x_qparams=x_qp)
    np.testing.assert_array_equal(mxp.qlinear(x, wq, b.astype(np.float16)), y16)
    s8 = mxp.calibrate(x, "int8")  # int8 symmetric activations work too
    ys = mxp.qlinear(x, wq, b, x_qparams=s8)
    np.testing.assert_allclose(ys, x @ w.T + b, atol=0.25 * np.abs(x @ w.T + b).max())
    assert mxp.qlinear(np.zeros((0, 40), F32), wq, b).shape == (0, 24)
    # the weight's codes may be any layout: a transposed copy gives the same bits
    wt = mxp.QuantizedTensor(np.asfortranarray(wq.codes), wq.qparams)
    np.testing.assert_array_equal(mxp.qlinear(x, wt, b), y)


def test_qlinear_bad_input():
    x, w, b = _data(3, 8, 4, 5)
    wq = mxp.quantize_weight(w)
    with pytest.raises(TypeError, match="QuantizedTensor"):
        mxp.qlinear(x, w, b)
    with pytest.raises(ValueError, match="in_features"):
        mxp.qlinear(x.T, wq, b)
    with pytest.raises(ValueError, match="bias"):
        mxp.qlinear(x, wq, b[:3])
    with pytest.raises(TypeError, match="float"):
        mxp.qlinear(x.astype(np.int32), wq)
    with pytest.raises(TypeError, match="float"):
        mxp.qlinear(x, wq, out_dtype=np.int8)
    with pytest.raises(TypeError, match="axis 0"):
        mxp.qlinear(x, mxp.quantize(w, axis=1), b)  # per input channel: not a linear layer's scales
    with pytest.raises(TypeError, match="int8"):
        mxp.qlinear(x, mxp.quantize(w, "uint8", symmetric=False), b)
    with pytest.raises(TypeError, match="per tensor"):
        mxp.qlinear(x, wq, b, x_qparams=mxp.calibrate(x, "uint8", symmetric=False, axis=0))
    with pytest.raises(TypeError, match="QParams"):
        mxp.qlinear(x, wq, b, x_qparams=(0.1, 3))
    with pytest.raises(ValueError, match="2-d"):
        mxp.quantize_weight(w[0])


@pytest.mark.parametrize("reduce_range", [False, True])
def test_qlinear_prepacked_weight_gives_the_same_bits(reduce_range):
    """QuantizedTensor.prepack(): the same results as packing per call, over
    calls of several batch sizes (each kernel and blocking kept once); a
    snapshot of the codes (a change is seen after prepack() again)."""
    x, w, b = _data(130, 301, 200, 7)
    plain = mxp.quantize_weight(w)
    kept = mxp.quantize_weight(w)
    assert kept.prepack() is kept
    for m in (130, 5, 130, 64):
        for bias in (None, b):
            want = mxp.qlinear(x[:m], plain, bias, reduce_range=reduce_range)
            got = mxp.qlinear(x[:m], kept, bias, reduce_range=reduce_range)
            np.testing.assert_array_equal(got, want)
    before = mxp.qlinear(x, kept, b, reduce_range=reduce_range)
    kept.codes[:, ::3] = -kept.codes[:, ::3]
    np.testing.assert_array_equal(mxp.qlinear(x, kept, b, reduce_range=reduce_range), before)  # the kept panels
    kept.prepack()
    changed = mxp.QuantizedTensor(kept.codes.copy(), kept.qparams)
    np.testing.assert_array_equal(mxp.qlinear(x, kept, b, reduce_range=reduce_range),
                                  mxp.qlinear(x, changed, b, reduce_range=reduce_range))


def test_prepack_bad_weights():
    x, w, b = _data(3, 8, 4, 5)
    with pytest.raises(TypeError, match="int8"):
        mxp.quantize(w, "uint8", symmetric=False).prepack()
    with pytest.raises(TypeError, match="axis 0"):
        mxp.quantize(w, axis=1).prepack()
    with pytest.raises(ValueError, match="2-d"):
        mxp.quantize(w[0]).prepack()

"""Quantization, observers and MX blocks against PyTorch's quantization
(codes and parameters), the C library's definitions and the OCP MX rules."""
import numpy as np
import pytest

import mxp

torch = pytest.importorskip("torch")


def test_per_tensor_codes_equal_torch_quantize_per_tensor():
    x = np.random.default_rng(0).standard_normal(100000).astype(np.float32) * 3
    for qtype, tdtype, sym in [("int8", torch.qint8, True), ("uint8", torch.quint8, False)]:
        q = mxp.quantize(x, qtype, symmetric=sym)
        t = torch.quantize_per_tensor(torch.from_numpy(x), q.scale, q.zero_point, tdtype)
        assert np.array_equal(q.codes, t.int_repr().numpy())
        assert np.array_equal(mxp.dequantize(q), t.dequantize().numpy())


def test_per_channel_codes_equal_torch_quantize_per_channel():
    w = np.random.default_rng(1).standard_normal((16, 40)).astype(np.float32)
    q = mxp.quantize(w, "int8", axis=0)
    assert q.qparams.scales.shape == (16,) and q.codes.dtype == np.int8
    t = torch.quantize_per_channel(torch.from_numpy(w), torch.from_numpy(q.qparams.scales.astype(np.float64)),
                                   torch.from_numpy(q.qparams.zero_points.astype(np.int64)), 0, torch.qint8)
    assert np.array_equal(q.codes, t.int_repr().numpy())


def test_minmax_and_moving_average_observers_match_torch():
    from torch.ao.quantization.observer import MinMaxObserver, MovingAverageMinMaxObserver
    rng = np.random.default_rng(2)
    batches = [rng.standard_normal(1000).astype(np.float32) * (i + 1) for i in range(4)]
    ours = mxp.MinMaxObserver("uint8", symmetric=False)
    theirs = MinMaxObserver(dtype=torch.quint8, qscheme=torch.per_tensor_affine)
    ours_ma = mxp.MovingAverageObserver("uint8", symmetric=False, momentum=0.9)
    theirs_ma = MovingAverageMinMaxObserver(averaging_constant=0.1, dtype=torch.quint8,
                                            qscheme=torch.per_tensor_affine)
    for b in batches:
        ours.update(b)
        theirs(torch.from_numpy(b))
        ours_ma.update(b)
        theirs_ma(torch.from_numpy(b))
    for o, t in ((ours, theirs), (ours_ma, theirs_ma)):
        s, z = t.calculate_qparams()
        qp = o.qparams()
        assert qp.scale == pytest.approx(float(s), rel=1e-6) and abs(qp.zero_point - int(z)) <= 1


def test_histogram_observers_clip_outliers():
    x = np.random.default_rng(3).standard_normal(200000).astype(np.float32)
    x[:10] = 1000.0
    full = mxp.MinMaxObserver("int8").update(x).qparams().scale
    for obs in (mxp.PercentileObserver("int8", percentile=99.9), mxp.KLObserver("int8")):
        s = obs.update(x[:100000]).update(x[100000:]).qparams().scale
        assert s < full / 10, type(obs).__name__
    # MSE weighs the 10 clipped outliers (error ~1e7) against the rounding
    # of 200000 values: it keeps them here, so its scale is the full range's
    assert mxp.MSEObserver("int8").update(x).qparams().scale <= full
    with pytest.raises(ValueError):
        mxp.KLObserver("int8").qparams()  # nothing seen yet


def test_quantize_into_an_existing_array():
    x = np.random.default_rng(6).standard_normal((4, 100)).astype(np.float32)
    want = mxp.quantize(x, "int8")
    out = np.zeros((4, 100), np.int8)
    got = mxp.quantize(x, qparams=want.qparams, out=out)
    assert got.codes is out and np.array_equal(out, want.codes)
    with pytest.raises(TypeError):
        mxp.quantize(x, qparams=want.qparams, out=np.zeros((4, 100), np.uint8))
    with pytest.raises(ValueError):
        mxp.quantize(x, qparams=want.qparams, out=np.zeros((4, 99), np.int8))


def test_stochastic_quantize_pieces_with_index_offset_equal_the_whole():
    x = np.random.default_rng(4).standard_normal((5, 9)).astype(np.float32)
    for qtype in ("int8", "float8_e4m3fn"):
        whole = mxp.quantize(x, qtype, rounding="stochastic", seed=11)
        rows = [mxp.quantize(x[i], qparams=whole.qparams, rounding="stochastic", seed=11, index_offset=9 * i).codes
                for i in range(5)]
        assert np.array_equal(np.stack(rows).view(np.uint8), whole.codes.view(np.uint8))


def test_histogram_observer_from_pieces_equals_one_batch():
    from mxp import _mxp
    x = np.random.default_rng(5).standard_normal(5000).astype(np.float32)
    x[3] = np.nan
    fin = x[np.isfinite(x)]
    lo, hi = float(fin.min()), float(fin.max())
    counts = _mxp._histogram_abs(x[:1700], max(-lo, hi), 2048) + _mxp._histogram_abs(x[1700:], max(-lo, hi), 2048)
    assert counts.sum() == 4999
    for kind, cls in ((3, mxp.PercentileObserver), (4, mxp.MSEObserver), (5, mxp.KLObserver)):
        want = cls("uint8", symmetric=False).update(x).qparams()
        got = mxp.QParams._from_tuple(_mxp._observer_from_histogram(kind, "uint8", False, 99.99, counts,
                                                                    max(-lo, hi), lo, hi))
        assert got.scales.tobytes() == want.scales.tobytes() and got.zero_point == want.zero_point


def test_fake_quantize_int4_pack_and_float8():
    x = np.linspace(-1, 1, 33).astype(np.float32)
    fq = mxp.fake_quantize(x, "int4")
    q = mxp.quantize(x, "int4")
    assert fq.dtype == np.float32 and np.array_equal(fq, mxp.dequantize(q))
    assert q.codes.min() >= -8 and q.codes.max() <= 7
    packed = mxp.pack_int4(q.codes)
    assert packed.shape == (17,) and np.array_equal(mxp.unpack_int4(packed, 33), q.codes)
    assert mxp.pack_int4(np.array([1, -1, 7], np.int8)).tolist() == [0xF1, 0x07]
    f8 = mxp.quantize(x * 1000, "float8_e4m3fn")
    assert f8.codes.dtype == np.dtype(mxp.float8_e4m3fn) and f8.scale == pytest.approx(1000 / 448)
    g = mxp.quantize(np.ones((4, 64), np.float32), "int8", axis=1, group_size=32)
    assert g.qparams.scales.shape == (8,)


def test_quantize_rows_is_quantize_of_the_scaled_rows():
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((70, 384)) * 2 + 0.3).astype(np.float32)
    x[3] = 0
    x[4, 7] = np.nan
    x[5, 9] = np.inf
    s = (0.2 + rng.random(384)).astype(np.float32)
    for qtype, sym in [("uint8", False), ("int8", True), ("uint8", True), ("int8", False)]:
        for cs in (None, s):
            y = x if cs is None else x * cs  # NumPy's float32 product: the rows quantize_rows sees
            want = mxp.quantize(y, qtype, symmetric=sym, axis=0)
            got = mxp.quantize_rows(x, qtype, symmetric=sym, col_scale=cs)
            assert got.qparams.axis == 0 and got.codes.dtype == want.codes.dtype
            assert np.array_equal(got.codes, want.codes)
            assert np.array_equal(got.qparams.scales, want.qparams.scales)
            assert np.array_equal(got.qparams.zero_points, want.qparams.zero_points)
    # torch's per-channel quantization of the same rows (axis 0) gives the same codes
    y = x[6:] * s
    q = mxp.quantize_rows(x[6:], "uint8", col_scale=s)
    t = torch.quantize_per_channel(torch.from_numpy(y), torch.from_numpy(q.qparams.scales.astype(np.float64)),
                                   torch.from_numpy(q.qparams.zero_points.astype(np.int64)), 0, torch.quint8)
    assert np.array_equal(q.codes, t.int_repr().numpy())
    # bfloat16 rows, and into an existing array
    b = mxp.astype(x, mxp.bfloat16)
    out = np.empty(x.shape, np.uint8)
    got = mxp.quantize_rows(b, col_scale=s, out=out)
    assert got.codes is out
    assert np.array_equal(out, mxp.quantize(b.astype(np.float32) * s, "uint8", symmetric=False, axis=0).codes)
    # any layout: the rows of a strided view as those of its contiguous copy
    v = x[::2, ::3]
    assert np.array_equal(mxp.quantize_rows(v, col_scale=s[::3]).codes,
                          mxp.quantize_rows(np.ascontiguousarray(v), col_scale=s[::3]).codes)


def test_quantize_rows_bad_arguments():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="int8"):
        mxp.quantize_rows(x, "int4")
    with pytest.raises(ValueError, match="col_scale has 2 values for 3 columns"):
        mxp.quantize_rows(x, col_scale=np.ones(2, np.float32))
    with pytest.raises(ValueError, match="2-d"):
        mxp.quantize_rows(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="float32, bfloat16 or float16"):
        mxp.quantize_rows(np.ones((2, 3), np.int32))
    with pytest.raises(ValueError, match="shape"):
        mxp.quantize_rows(x, out=np.empty((3, 2), np.uint8))


def test_quant_bad_arguments():
    with pytest.raises(ValueError, match="qtype"):
        mxp.quantize(np.ones(3), "int3")
    with pytest.raises(ValueError, match="axis"):
        mxp.quantize(np.ones(3), "int8", axis=2)
    with pytest.raises(ValueError, match="rounding"):
        mxp.quantize(np.ones(3), rounding="banker")
    with pytest.raises(TypeError):
        mxp.dequantize(np.ones(3, np.int8))
    with pytest.raises(ValueError):
        mxp.pack_int4(np.array([9], np.int8))


def test_mx_blocks_follow_the_ocp_rules():
    x = np.ones(32, np.float32)
    t = mxp.mx_quantize(x, "mxfp8_e4m3")
    # shared exponent floor(log2(amax)) - emax_elem(8) = -8: E8M0 byte 127 - 8,
    # elements 1 / 2^-8 = 256 = e4m3 0x78 (1.0 x 2^8)
    assert t.nbytes == 33 and t.data[0] == 119 and np.all(t.data[1:] == 0x78)
    assert np.array_equal(mxp.mx_dequantize(t), x)
    y = np.random.default_rng(4).standard_normal((3, 50)).astype(np.float32)
    for fmt, tol in (("mxfp8_e4m3", 2**-3), ("mxfp8_e5m2", 2**-2), ("mxint8", 2**-5), ("mxfp4", 0.5)):
        r = mxp.mx_dequantize(mxp.mx_quantize(y, fmt))
        assert r.shape == y.shape
        amax = np.abs(y).max()
        assert np.all(np.abs(r - y) <= tol * amax + 1e-7), fmt
    assert mxp.mx_quantize(np.ones(64), "mxfp4").nbytes == 2 * 17
    with pytest.raises(ValueError):
        mxp.mx_quantize(y, "mxfp6")


def test_mx_dequantize_of_an_unknown_format_is_a_value_error():
    t = mxp.mx_quantize(np.ones(32, np.float32))
    t.format = "mxfp6"  # issue 24: a KeyError before
    with pytest.raises(ValueError, match="mxfp6"):
        mxp.mx_dequantize(t)
    with pytest.raises(ValueError, match="mxfp6"):
        mxp.mx_quantize(np.ones(3), "mxfp6")



@pytest.mark.parametrize("fmt", ["mxfp8_e4m3", "mxfp8_e5m2", "mxfp4", "mxint8", "mxfp6_e2m3", "mxfp6_e3m2", "nvfp4"])
def test_mx_matmul_is_a_weight_only_linear_layer(fmt):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((300, 2048)).astype(np.float32) * 0.05  # several 1 MiB panels
    x = rng.standard_normal((4, 2048)).astype(np.float32)
    t = mxp.mx_quantize(w, fmt)
    wd = mxp.mx_dequantize(t).astype(np.float64)
    bias = rng.standard_normal(300).astype(np.float32)
    y = mxp.mx_matmul(x, t, bias=bias, activation="relu")
    assert y.dtype == np.float32 and y.shape == (4, 300)
    ref = np.maximum(x.astype(np.float64) @ wd.T + bias, 0)  # float64: the float32 sums are close
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(y, mxp.matmul(x, mxp.mx_dequantize(t).T, bias=bias, activation="relu"))
    # the quantized layer is close to the float32 one (the format's own error)
    full = x.astype(np.float64) @ w.astype(np.float64).T
    rel = np.linalg.norm(x.astype(np.float64) @ wd.T - full) / np.linalg.norm(full)
    assert rel < {"mxfp4": 0.2, "nvfp4": 0.15, "mxfp6_e2m3": 0.05, "mxfp6_e3m2": 0.1, "mxfp8_e5m2": 0.08}.get(fmt, 0.05)

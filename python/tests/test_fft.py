"""mxp.fft against numpy.fft (float64: the oracle), torch.fft (float32) and
the ONNX reference implementation's DFT: every signature, the three
normalizations, lengths with large prime factors, axes, 2-d, 16-bit
inputs and outputs, out=, the GIL released, bad input."""
import threading

import numpy as np
import pytest

import mxp

RNG = np.random.default_rng(0)
LENGTHS = [1, 2, 3, 5, 8, 12, 17, 97, 128, 1000, 1024, 4096]


def rel(got, want):
    return np.abs(got - want).max() / max(np.abs(want).max(), 1e-300)


@pytest.mark.parametrize("n", LENGTHS)
def test_float64_against_numpy(n):
    x = RNG.standard_normal((3, n))
    z = x + 1j * RNG.standard_normal((3, n))
    tol = 1e-14 * (2 + np.log2(n))
    for norm in (None, "ortho", "forward"):
        assert rel(mxp.fft.fft(z, norm=norm), np.fft.fft(z, norm=norm)) < tol
        assert rel(mxp.fft.ifft(z, norm=norm), np.fft.ifft(z, norm=norm)) < tol
        assert rel(mxp.fft.rfft(x, norm=norm), np.fft.rfft(x, norm=norm)) < tol
        c = np.fft.rfft(x)
        assert rel(mxp.fft.irfft(c, n=n, norm=norm), np.fft.irfft(c, n=n, norm=norm)) < tol
    assert mxp.fft.fft(z).dtype == np.complex128 and mxp.fft.rfft(x).shape == (3, n // 2 + 1)


def test_float32_against_torch_and_numpy():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((16, 1000)).astype(np.float32)
    got = mxp.fft.rfft(x)
    assert got.dtype == np.complex64
    want = torch.fft.rfft(torch.from_numpy(x)).numpy()
    exact = np.fft.rfft(x.astype(np.float64))
    # both float32 FFTs are within a few float32 rounding errors of float64's
    assert rel(got, exact) < 2e-6 and rel(want, exact) < 2e-6
    assert rel(got, want) < 4e-6


def test_onnx_reference_dft():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator
    for inverse in (0, 1):
        node = helper.make_node("DFT", ["x", "", "axis"], ["y"], inverse=inverse, onesided=0)
        g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, None),
                                            helper.make_tensor_value_info("axis", TensorProto.INT64, None)],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
        ev = ReferenceEvaluator(helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)]))
        x = RNG.standard_normal((3, 45, 2))
        want = ev.run(None, {"x": x, "axis": np.array(1, np.int64)})[0]
        z = x[..., 0] + 1j * x[..., 1]
        got = (mxp.fft.ifft if inverse else mxp.fft.fft)(z, axis=1)
        assert rel(got, want[..., 0] + 1j * want[..., 1]) < 1e-13
        # the pairs layout ONNX uses is mxp's own: complex_pairs
        got2 = (mxp.fft.ifft if inverse else mxp.fft.fft)(x, axis=1, complex_pairs=True)
        assert rel(got2, want[..., 0] + 1j * want[..., 1]) < 1e-13


def test_axes_lengths_2d():
    x = RNG.standard_normal((6, 10, 9))
    assert rel(mxp.fft.fft(x, axis=0), np.fft.fft(x, axis=0)) < 1e-13
    assert rel(mxp.fft.fft(x, n=16, axis=1), np.fft.fft(x, n=16, axis=1)) < 1e-13  # padded
    assert rel(mxp.fft.fft(x, n=4), np.fft.fft(x, n=4)) < 1e-13  # cut
    for axes in ((-2, -1), (0, 2), (2, 0)):
        assert rel(mxp.fft.fft2(x, axes=axes), np.fft.fft2(x, axes=axes)) < 1e-13
        assert rel(mxp.fft.ifft2(x, axes=axes), np.fft.ifft2(x, axes=axes)) < 1e-13
        assert rel(mxp.fft.rfft2(x, axes=axes), np.fft.rfft2(x, axes=axes)) < 1e-13
        c = np.fft.rfft2(x, axes=axes)
        assert rel(mxp.fft.irfft2(c, s=[x.shape[a] for a in axes], axes=axes), x) < 1e-13
    z = (x + 1j * x[::-1])[:, ::2, ::3]  # strided complex
    assert rel(mxp.fft.fft(z), np.fft.fft(z)) < 1e-13


def test_16_bit_inputs_and_outputs():
    x = RNG.standard_normal((4, 64)).astype(mxp.bfloat16)
    got = mxp.fft.fft(x)  # computed in float32 from the exact widening
    assert got.dtype == np.complex64
    np.testing.assert_array_equal(got, mxp.fft.fft(x.astype(np.float32)))
    h = mxp.fft.fft(x, dtype=np.float16)  # (re, im) pairs, rounded once from float32
    assert h.shape == (4, 64, 2) and h.dtype == np.float16
    pairs = got[..., None].view(np.float32)
    np.testing.assert_array_equal(h, pairs.astype(np.float16))
    back = mxp.fft.ifft(h, complex_pairs=True, dtype=mxp.bfloat16)
    assert back.shape == (4, 64, 2)
    assert np.abs(back[..., 0].astype(np.float32) - x.astype(np.float32)).max() < 0.1
    r = mxp.fft.irfft(mxp.fft.rfft(np.float16(1) * np.ones(8, np.float16)), dtype=np.float16)
    np.testing.assert_array_equal(r, np.ones(8, np.float16))
    # irfft of 16-bit pairs: complex_pairs=True, else the array is real
    hp = mxp.fft.rfft(x, dtype=np.float16)  # (4, 33, 2)
    want = np.fft.irfft(hp[..., 0].astype(np.float64) + 1j * hp[..., 1].astype(np.float64))
    assert rel(mxp.fft.irfft(hp, complex_pairs=True), want) < 1e-6


def test_real_input_to_inverse_transforms_is_real():
    # numpy.fft takes a real array as complex with zero imaginary parts,
    # also when its last axis happens to have length 2
    for a in (np.arange(5.0), RNG.standard_normal((3, 2)), RNG.standard_normal((4, 6))):
        assert rel(mxp.fft.irfft(a), np.fft.irfft(a)) < 1e-14
        assert rel(mxp.fft.ifft(a), np.fft.ifft(a)) < 1e-14
        assert rel(mxp.fft.irfft(a.astype(np.float32)), np.fft.irfft(a)) < 1e-6
    b = RNG.standard_normal((4, 6))
    assert rel(mxp.fft.irfft2(b), np.fft.irfft2(b)) < 1e-14


def test_out_and_threads():
    x = RNG.standard_normal((64, 512))
    out = np.empty((64, 257), np.complex128)
    assert mxp.fft.rfft(x, out=out) is out
    np.testing.assert_allclose(out, np.fft.rfft(x), rtol=0, atol=1e-11)
    with pytest.raises(ValueError, match="shape"):
        mxp.fft.rfft(x, out=np.empty((64, 256), np.complex128))
    want = mxp.fft.fft(x)
    res = [None] * 4

    def work(i):
        res[i] = mxp.fft.fft(x)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for r in res:
        np.testing.assert_array_equal(r, want)


def test_bad_input():
    x = RNG.standard_normal(8)
    with pytest.raises(ValueError, match="Invalid norm"):
        mxp.fft.fft(x, norm="both")
    with pytest.raises(ValueError, match="invalid number of data points"):
        mxp.fft.fft(x, n=0)
    with pytest.raises(IndexError):
        mxp.fft.fft(x, axis=1)
    with pytest.raises(TypeError, match="float"):
        mxp.fft.fft(np.arange(8))
    with pytest.raises(TypeError, match="real array"):
        mxp.fft.rfft(x + 1j)
    with pytest.raises(ValueError, match="two axes"):
        mxp.fft.fft2(x, axes=(0,))
    with pytest.raises(ValueError, match="trailing axis of length 2"):
        mxp.fft.fft(x, complex_pairs=True)
    with pytest.raises(ValueError):
        mxp.fft.irfft(np.ones(1, np.complex128))  # 2 (1 - 1) = 0 points

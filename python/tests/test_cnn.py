"""mxp.models.cnn (docs/cnn.md): the committed digits CNN's checksum, mxp's
float32 forward against torch's of the same weights, folded against
unfolded batch norm, the held-out accuracy the table reports, and every
precision within its goal band (issue 26's: fp16/bf16 within 0.1 pp of
fp32, int8 within 0.5 pp; the others the band docs/cnn.md gives)."""
import hashlib
import os

import numpy as np
import pytest

from mxp.models import cnn

# The held-out images (of 450) the float32 model gets right: docs/cnn.md's table says the same.
FP32_CORRECT = 448
# The largest drop in correct images from fp32 each precision may show (0.1 pp of 450 is 0.45 images,
# 0.5 pp is 2.25); measured when written: fp16, bf16, fp8 448; int8 minmax, moving_average, percentile,
# mse 448; mxfp8 448; mxfp4 447.
BAND = {"fp16": 0, "bf16": 0, "fp8": 2, "mxfp8": 2, "mxfp4": 5,
        **{f"int8-{o}": 2 for o in cnn.OBSERVERS}}


@pytest.fixture(scope="module")
def data():
    return cnn.split()


@pytest.fixture(scope="module")
def weights():
    return cnn.read_weights()


def held_out(model, x):
    return np.concatenate([model.forward(x[i:i + 64]) for i in range(0, len(x), 64)])


def test_checksum():
    path = cnn.weights_path()
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with open(path + ".sha256") as f:
        assert f.read().split() == [digest, os.path.basename(path)]


def test_checksum_mismatch(tmp_path):
    path = tmp_path / "w.safetensors"
    with open(cnn.weights_path(), "rb") as f:
        path.write_bytes(f.read())
    (tmp_path / "w.safetensors.sha256").write_text("0" * 64 + "  w.safetensors\n")
    with pytest.raises(ValueError, match="sha256"):
        cnn.read_weights(str(path))


def test_split(data):
    xtr, ytr, xte, yte = data
    assert xtr.shape == (1347, 1, 8, 8) and xte.shape == (450, 1, 8, 8) and xte.dtype == np.float32
    assert np.bincount(yte, minlength=10).min() > 30  # every digit held out
    assert float(xte.max()) == 1.0 and float(xte.min()) == 0.0


def test_fp32_accuracy(data, weights):
    z = held_out(cnn.CNN(weights, "fp32"), data[2])
    assert int((z.argmax(1) == data[3]).sum()) == FP32_CORRECT


def test_fold_equals_unfolded(data, weights):
    x = data[2][:64]
    a = cnn.CNN(weights, "fp32").forward(x)
    b = cnn.CNN(weights, "fp32", fold=False).forward(x)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-5 * np.abs(b).max())


def test_fp32_equals_torch(data, weights):
    torch = pytest.importorskip("torch")
    x = data[2][:128]
    with torch.no_grad():
        ref = cnn.torch_module(weights)(torch.from_numpy(x)).numpy()
    for fold in (True, False):
        got = cnn.CNN(weights, "fp32", fold=fold).forward(x)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-5 * np.abs(ref).max())


@pytest.mark.parametrize("precision", [p for p in cnn.PRECISIONS if p != "fp32"])
def test_precision_band(data, weights, precision):
    model = cnn.CNN(weights, precision)
    z = held_out(model, data[2])
    assert z.dtype == np.float32 and z.shape == (450, 10)
    correct = int((z.argmax(1) == data[3]).sum())
    assert FP32_CORRECT - BAND[precision] <= correct
    assert cnn.cross_entropy(z, data[3]) < 0.1
    assert 0 < model.nbytes < cnn.CNN(weights, "fp32").nbytes


def test_errors(weights):
    with pytest.raises(ValueError, match="precision"):
        cnn.CNN(weights, "int4")
    with pytest.raises(ValueError, match="fp32 only"):
        cnn.CNN(weights, "bf16", fold=False)
    with pytest.raises(ValueError, match="shape"):
        cnn.CNN(weights, "fp32").forward(np.zeros((2, 8, 8), np.float32))

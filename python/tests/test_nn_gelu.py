"""mxp.nn.gelu (mxp_unary's GELU): every bfloat16 and float16 input, and
float32 samples, equal to the float64 formula rounded once; the tanh
form; dtype= and out= (in place); torch's F.gelu where torch is
installed; bad arguments."""
import math

import numpy as np
import pytest

import mxp
from mxp import nn

ERFC = np.vectorize(math.erfc)


def ref(x, approximate="none"):
    x = np.asarray(x, np.float64)
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * ERFC(-x / math.sqrt(2))  # erfc: no cancellation where gelu is tiny


@pytest.mark.parametrize("t", [mxp.bfloat16, np.float16])
def test_every_16_bit_input(t):
    x = np.arange(2**16, dtype=np.uint16).view(t)
    a = np.abs(x.astype(np.float32))
    # Below 6, float64 erfc is exact enough; above 2^-30, so that float64 keeps the x^2 term (gelu(x) = x/2 +
    # x^2/sqrt(2 pi) + ...: mxp rounds the ties of tiny x/2 up, as the exact value says; docs/ops.md).
    x = x[(a < 6) & ((a > 2.0**-30) | (a == 0))]
    got = nn.gelu(x)
    assert got.dtype == np.dtype(t)
    np.testing.assert_array_equal(got.view(np.uint16), ref(x).astype(t).view(np.uint16))  # one rounding


def test_float32_and_dtype_out():
    x = np.random.default_rng(0).standard_normal(10000).astype(np.float32) * 4
    want = ref(x)
    got = nn.gelu(x)
    assert got.dtype == np.float32
    assert np.abs(got - want).max() <= 2.0**-23 * np.maximum(np.abs(want), 2.0**-20).max()
    np.testing.assert_array_equal(nn.gelu(x, dtype=mxp.bfloat16).view(np.uint16), want.astype(mxp.bfloat16).view(np.uint16))
    y = x.copy()
    assert nn.gelu(y, out=y) is y
    np.testing.assert_array_equal(y, got)
    t = nn.gelu(x, approximate="tanh")
    assert np.abs(t - ref(x, "tanh")).max() <= 1e-6 and np.abs(t - got).max() > 1e-5


def test_torch():
    torch = pytest.importorskip("torch")
    x = np.linspace(-8, 8, 4001, dtype=np.float32)
    for approximate in ("none", "tanh"):
        want = torch.nn.functional.gelu(torch.from_numpy(x), approximate=approximate).numpy()
        assert np.abs(nn.gelu(x, approximate=approximate) - want).max() <= 1e-6


def test_bad_arguments():
    with pytest.raises(ValueError, match="approximate"):
        nn.gelu(np.ones(3), approximate="erf")
    with pytest.raises(TypeError):
        nn.gelu(np.ones(3), dtype=np.int32)
    with pytest.raises(TypeError):
        nn.gelu(np.ones(3), out=np.ones(3, np.int8))
    with pytest.raises(ValueError):
        nn.gelu(np.ones(3, np.float32), out=np.ones(4, np.float32))

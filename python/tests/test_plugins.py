"""Operator plugins from Python: the example plugin (examples/plugins/
example_ops.c, built by CMake; its path in MXP_EXAMPLE_OPS) against NumPy
float64 oracles and mxp's built-in gelu, out=/dtype=/axis=, the GIL
released, precision checks with the three kinds of reference, and plugins
mxp refuses (MXP_TEST_PLUGINS)."""
import math
import os
import threading

import numpy as np
import pytest

import mxp

EXAMPLE = os.environ.get("MXP_EXAMPLE_OPS")
BAD = os.environ.get("MXP_TEST_PLUGINS")
pytestmark = pytest.mark.skipif(not EXAMPLE, reason="MXP_EXAMPLE_OPS not set (ctest sets it)")

_erfc = np.vectorize(math.erfc)


def gelu64(x):
    return 0.5 * x * _erfc(-x / math.sqrt(2.0))


@pytest.fixture(scope="module")
def ops():
    return mxp.load_ops(EXAMPLE)


def test_listing(ops):
    assert sorted(ops) == ["bias_gelu", "cosine_similarity", "gelu", "gelu_tanh", "logsumexp"]
    assert ops.gelu.kind == "elementwise" and ops.logsumexp.kind == "reduction"
    assert ops["cosine_similarity"].signatures == ["float32,float32->float32", "bfloat16,bfloat16->float32"]
    assert ops.gelu.__doc__.startswith("x * Phi(x)")
    names = {d["name"]: d for d in mxp.list_ops()}
    assert names["cosine_similarity"]["check_shapes"] == "64x384,64x384"
    assert mxp.load_ops(EXAMPLE).ops.keys() == ops.ops.keys()  # loading again adds nothing


@pytest.mark.parametrize("dtype", [mxp.bfloat16, np.float16])
def test_gelu_equals_builtin(ops, dtype):
    x = np.arange(1 << 16, dtype=np.uint16).view(dtype)
    got, want = ops.gelu(x), mxp.nn.gelu(x)
    assert got.dtype == np.dtype(dtype)
    nan = np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), nan)  # NaN payloads may differ
    # Subnormal inputs: gelu(x) = x/2 + O(x^2) is a tie in float64, which
    # the plugin's float64 evaluation rounds to even; mxp's built-in sees
    # the O(x^2) term.  One ulp there, bit for bit elsewhere.
    tiny = np.abs(x.astype(np.float64)) < 1e-30
    keep = ~nan & ~tiny
    np.testing.assert_array_equal(got.view(np.uint16)[keep], want.view(np.uint16)[keep])
    diff = got.view(np.int16)[tiny & ~nan].astype(np.int32) - want.view(np.int16)[tiny & ~nan]
    assert np.abs(diff).max() <= 1


def test_gelu_float32_oracle(ops):
    x = np.random.default_rng(1).normal(0, 3, 20000).astype(np.float32)
    np.testing.assert_array_equal(ops.gelu(x), gelu64(x.astype(np.float64)).astype(np.float32))


def test_bias_gelu_broadcast_out_dtype(ops):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 5, 8)).astype(np.float32)
    b = rng.normal(size=8).astype(np.float32)
    want = gelu64(x.astype(np.float64) + b).astype(np.float32)
    np.testing.assert_array_equal(ops.bias_gelu(x, b), want)
    out = np.empty_like(x)
    assert ops.bias_gelu(x, b, out=out) is out
    np.testing.assert_array_equal(out, want)
    y = ops.bias_gelu(x, b, dtype=mxp.bfloat16)
    assert y.dtype == mxp.bfloat16
    np.testing.assert_array_equal(y, want.astype(mxp.bfloat16))
    strided = np.zeros((4, 5, 16), np.float32)[..., ::2]
    ops.bias_gelu(x, b, out=strided)
    np.testing.assert_array_equal(strided, want)
    with pytest.raises(ValueError, match="broadcast"):
        ops.bias_gelu(x, b[:7])
    with pytest.raises(TypeError, match="takes 2 inputs, got 1"):
        ops.bias_gelu(x)


def test_kernel_choice(ops):
    x8 = np.linspace(-3, 3, 50).astype(mxp.float8_e4m3fn)
    y = ops.gelu(x8)  # float8 converts safely to the float32 kernel
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, ops.gelu(x8.astype(np.float32)))
    with pytest.raises(TypeError, match="signatures: float32->float32, bfloat16->bfloat16, float16->float16"):
        ops.gelu(np.arange(3))
    with pytest.raises(TypeError, match="axis and keepdims are for reductions"):
        ops.gelu(x8, axis=0)


def test_logsumexp_axes(ops):
    x = np.random.default_rng(3).normal(size=(3, 4, 5)).astype(np.float32)
    x64 = x.astype(np.float64)

    def lse(a, axis, keepdims=False):
        m = a.max(axis=axis, keepdims=True)
        r = m + np.log(np.exp(a - m).sum(axis=axis, keepdims=True))
        return r if keepdims else np.squeeze(r, axis=axis)

    for axis in (0, 1, 2, -1):
        np.testing.assert_array_equal(ops.logsumexp(x, axis=axis), lse(x64, axis).astype(np.float32))
    assert ops.logsumexp(x).shape == (3, 4)  # the last axis by default
    assert ops.logsumexp(x, axis=1, keepdims=True).shape == (3, 1, 5)
    total = ops.logsumexp(x, axis=None)
    assert total.shape == () and abs(float(total) - float(lse(x64.reshape(-1), 0))) < 1e-5
    with pytest.raises(IndexError):
        ops.logsumexp(x, axis=3)


def test_cosine_similarity(ops):
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(2, 6, 33)).astype(mxp.bfloat16)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = ((a64 * b64).sum(-1) / np.sqrt((a64 * a64).sum(-1) * (b64 * b64).sum(-1))).astype(np.float32)
    got = ops.cosine_similarity(a, b)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ops.cosine_similarity(a.T, b.T).shape, (33,))
    with pytest.raises(ValueError, match="two arrays of one shape"):
        ops.cosine_similarity(a, b.T)


def test_threads_release_the_gil(ops):
    x = np.random.default_rng(5).normal(size=(200, 1000)).astype(np.float32)
    want = ops.logsumexp(x)
    results = [None] * 4

    def work(i):
        results[i] = ops.logsumexp(x)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, want)


def test_check_with_every_reference(ops):
    reports = mxp.check_op(ops.gelu, samples=20000)
    assert [r.signature for r in reports] == ["float32->float32", "bfloat16->bfloat16", "float16->float16"]
    assert all(r.max_ulp <= 1 for r in reports)
    assert reports[1].exhaustive and reports[1].count == 65536 and reports[1].max_ulp == 0
    assert len(reports[0].histogram) == 12 and sum(reports[0].histogram) <= reports[0].count
    # a built-in function as the reference
    r, b16, h16 = mxp.check_op(ops.gelu_tanh, reference="gelu_tanh", samples=20000)
    assert 1 <= r.max_ulp <= 256 and r.mean_ulp < 0.5
    assert b16.exhaustive and h16.exhaustive and b16.max_ulp <= 1 and h16.max_ulp <= 1
    # a Python function of float64 arrays, accurate for x < 0 too

    def gelu_tanh64(x):
        u = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
        with np.errstate(over="ignore", invalid="ignore"):
            return x / (1.0 + np.exp(-2.0 * u))

    (p,) = mxp.check_op(ops.gelu_tanh, reference=gelu_tanh64, signature="f32->f32", samples=20000)
    assert 1 <= p.max_ulp <= 256 and p.mean_ulp < 2
    # a wrong Python reference is seen as wrong
    (w,) = mxp.check_op(ops.gelu_tanh, reference=lambda x: x, signature="f32->f32", samples=2000)
    assert w.max_ulp > 1e6
    (b16,) = mxp.check_op(ops.bias_gelu, signature="bf16,bf16->bf16", samples=20000)
    assert b16.signature == "bfloat16,bfloat16->bfloat16" and b16.max_ulp <= 1
    (lse,) = mxp.check_op(ops.logsumexp, samples=25600)
    assert lse.count == 100 and lse.max_ulp <= 1
    assert len(mxp.check_op("cosine_similarity")) == 2
    with pytest.raises(ValueError, match="only its plugin's reference"):
        mxp.check_op(ops.logsumexp, reference="exp")
    with pytest.raises(ValueError, match="Python reference checks elementwise operators only"):
        mxp.check_op(ops.logsumexp, reference=np.exp)
    assert "max" in str(reports[0])


def test_compare_counts():
    got = np.array([1.0, np.nextafter(np.float32(1), np.float32(2)), 0.0, np.nan], np.float32)
    want = np.array([1.0, 1.0, -0.0, 1.0], np.float32)
    r = mxp._mxp._op_check_compare(got, want)
    assert r["max_ulp"] == 1 and r["nan_mismatch"] == 1 and r["histogram"][:2] == [2, 1]
    with pytest.raises(ValueError, match="one dtype and size"):
        mxp._mxp._op_check_compare(got, want.astype(np.float64))


@pytest.mark.skipif(not BAD, reason="MXP_TEST_PLUGINS not set")
@pytest.mark.parametrize("name, exc, says", [
    ("nosymbol", ValueError, "is not an mxp plugin"),
    ("abi", ValueError, "built for plugin ABI version 99"),
    ("dup", ValueError, "declared twice"),
    ("sig", ValueError, "'float33' is not a dtype name"),
    ("fail", ValueError, "this plugin needs a GPU"),
])
def test_refused(name, exc, says):
    before = len(mxp.list_ops())
    with pytest.raises(exc, match=says):
        mxp.load_ops(os.path.join(BAD, f"libmxp_test_plugin_{name}.so"))
    assert len(mxp.list_ops()) == before


def test_not_a_library(tmp_path):
    p = tmp_path / "libfake.so"
    p.write_text("not ELF")
    with pytest.raises(OSError, match="cannot load plugin"):
        mxp.load_ops(p)
    with pytest.raises(OSError):
        mxp.load_ops(tmp_path / "missing.so")


CLI = os.environ.get("MXP_CLI")


@pytest.mark.skipif(not CLI, reason="MXP_CLI not set (ctest sets it)")
def test_cli_list_and_check():
    import json
    import subprocess

    def run(*args, env=None):
        return subprocess.run([CLI, *args], capture_output=True, text=True, env=env)

    r = run("op", "list", "--plugin", EXAMPLE, "--json")
    assert r.returncode == 0, r.stderr
    listed = {o["name"]: o for o in json.loads(r.stdout)["operators"]}
    assert listed["gelu_tanh"]["kernels"][0] == {"signature": "float32->float32", "isa": "scalar"}
    r = run("check", "op", "gelu", "--samples", "20000", "--json", env={**os.environ, "MXP_PLUGINS": EXAMPLE})
    assert r.returncode == 0, r.stderr
    sigs = json.loads(r.stdout)["signatures"]
    assert [s["signature"] for s in sigs] == ["float32->float32", "bfloat16->bfloat16", "float16->float16"]
    assert all(s["max_ulp"] <= 1 for s in sigs) and sigs[2]["exhaustive"] and sigs[2]["count"] == 65536
    r = run("check", "op", "gelu_tanh", "--plugin", EXAMPLE, "--ref", "gelu_tanh", "--samples", "20000")
    assert r.returncode == 0 and "max " in r.stdout and "ulp:" in r.stdout and "speed: kernel" in r.stdout
    r = run("check", "op", "logsumexp", "--plugin", EXAMPLE, "--ref", "exp")
    assert r.returncode == 1 and "only its plugin's reference" in r.stderr
    if BAD:
        r = run("op", "list", "--plugin", os.path.join(BAD, "libmxp_test_plugin_abi.so"))
        assert r.returncode == 1 and "plugin ABI version 99" in r.stderr
    r = run("check", "op")
    assert r.returncode == 2 and "which operator" in r.stderr

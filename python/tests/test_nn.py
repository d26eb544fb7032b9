"""mxp.nn against float64 NumPy references rounded once into every float
dtype, torch.nn.functional (where torch is installed) and the ONNX
reference implementation (where onnx is installed): softmax, log_softmax,
masks, layer/RMS norm, take/embedding, row products, L2 normalization,
the backward passes, out= and dtype=, and the exceptions of bad input."""
import numpy as np
import pytest

import mxp
from mxp import nn
from mxptest import FLOATS, bits

ALL_FLOATS = [np.float64, np.float32, np.float16] + FLOATS


def ref_softmax(x, axis, log=False):
    x = np.asarray(x, np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return (x - m) - np.log(s) if log else e / s


def same_in_type(got, want, t, ulps=0, floor=0.0):
    """got is want rounded once into t (float64: within ulps of max(|want|, floor))."""
    got = np.asarray(got)
    assert got.dtype == np.dtype(t)
    if np.dtype(t) == np.float64:
        tol = ulps * np.maximum(np.abs(want), floor) * 2.0 ** -52
        assert np.all((np.abs(got - want) <= tol) | (np.isnan(got) & np.isnan(want))), (got, want)
    else:
        w = np.asarray(want, np.float64).astype(t)
        assert np.array_equal(bits(got) if t in FLOATS else got.view(np.uint8), bits(w) if t in FLOATS else w.view(np.uint8)) \
            or np.allclose(got.astype(np.float64), w.astype(np.float64), rtol=0, atol=0, equal_nan=True), (got, w)


@pytest.mark.parametrize("t", ALL_FLOATS)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_rounded_once(t, log):
    x = (np.random.default_rng(0).standard_normal((4, 5, 6)) * 2).astype(t)
    for axis in (0, 1, -1):
        f = nn.log_softmax if log else nn.softmax
        same_in_type(f(x, axis=axis), ref_softmax(x.astype(np.float64), axis, log), t, ulps=8, floor=8 if log else 0)


def test_softmax_edges():
    x = np.array([[1000, 1000], [-np.inf, 3], [-np.inf, -np.inf]], np.float32)
    y = nn.softmax(x)
    assert np.array_equal(y[:2], [[0.5, 0.5], [0, 1]]) and np.isnan(y[2]).all()
    assert nn.softmax(np.zeros((0, 3), mxp.bfloat16)).shape == (0, 3)
    assert nn.softmax(np.arange(3, dtype=np.int16)).dtype == np.float64
    assert nn.softmax(np.ones(3, mxp.bfloat16), dtype=np.float32).dtype == np.float32


def test_softmax_masks():
    x = np.random.default_rng(1).standard_normal((2, 3, 4))
    keep = np.array([True, True, False, True])
    want = ref_softmax(np.where(keep, x, -np.inf), -1)
    assert np.allclose(nn.softmax(x, mask=keep), want, rtol=1e-15, atol=0)
    add = np.where(keep, 0.0, -np.inf).astype(np.float32)
    assert np.allclose(nn.softmax(x, mask=add), want, rtol=1e-15, atol=0)
    with pytest.raises(ValueError):
        nn.softmax(x, mask=np.ones(3, bool))


def test_out_and_in_place():
    x = np.random.default_rng(2).standard_normal((3, 7)).astype(mxp.bfloat16)
    out = np.empty((3, 7), np.float32)
    r = nn.softmax(x, out=out)
    assert r is out
    assert np.array_equal(out, nn.softmax(x, dtype=np.float32))
    y = x.astype(np.float64)
    want = nn.softmax(y)
    assert nn.softmax(y, out=y) is y and np.array_equal(y, want)  # in place
    with pytest.raises(ValueError):
        nn.softmax(x, out=np.empty((7, 3), np.float32))
    with pytest.raises(TypeError):
        nn.softmax(x, out=np.empty((3, 7), np.int32))
    ro = np.empty((3, 7), np.float32)
    ro.setflags(write=False)
    with pytest.raises(ValueError):
        nn.softmax(x, out=ro)


def test_bad_axes_and_dtypes():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(IndexError):  # numpy's AxisError is one
        nn.softmax(x, axis=2)
    with pytest.raises(TypeError):
        nn.softmax(x, dtype=np.int8)
    with pytest.raises(ValueError):
        nn.l2_normalize(x, eps=-1)
    with pytest.raises(ValueError):
        nn.layer_norm(x, weight=np.ones(2, np.float32))
    with pytest.raises(ValueError):
        nn.rowdot(x, np.ones((2, 4), np.float32))


def ref_norm(x, n, w=None, b=None, eps=1e-5, rms=False):
    axes = tuple(range(x.ndim - n, x.ndim))
    m = 0 if rms else x.mean(axis=axes, keepdims=True)
    v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
    y = (x - m) / np.sqrt(v + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


@pytest.mark.parametrize("t", ALL_FLOATS)
def test_norms_rounded_once(t):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((3, 4, 8)) * 2 + 1).astype(t)
    w, b = rng.uniform(0.5, 1.5, (4, 8)).astype(t), rng.uniform(-0.5, 0.5, (4, 8)).astype(t)
    f = {k: v.astype(np.float64) for k, v in dict(x=x, w=w, b=b).items()}
    same_in_type(nn.layer_norm(x, (4, 8), w, b), ref_norm(f["x"], 2, f["w"], f["b"]), t, ulps=16, floor=4)
    same_in_type(nn.layer_norm(x), ref_norm(f["x"], 1), t, ulps=16, floor=4)
    same_in_type(nn.rms_norm(x, weight=w[0], eps=1e-6), ref_norm(f["x"], 1, f["w"][0], eps=1e-6, rms=True), t,
                 ulps=16, floor=4)


def test_take_and_embedding():
    rng = np.random.default_rng(4)
    for t in [np.float32, np.int16, np.uint8, np.bool_] + ALL_FLOATS:
        table = (rng.standard_normal((5, 3, 2)) * 4).astype(t)
        idx = np.array([[4, -1], [0, 2]], np.int32)
        for axis in (0, 1, 2, -1):
            i = idx % table.shape[axis] if axis in (1, 2, -1) else idx
            got = nn.take(table, i, axis=axis)
            want = np.take(table, i, axis=axis)
            assert got.dtype == table.dtype and got.shape == want.shape
            assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
    with pytest.raises(IndexError, match="out of bounds"):
        nn.take(np.ones((3, 2)), np.array([3]))
    with pytest.raises(TypeError):
        nn.take(np.ones((3, 2)), np.array([1.0]))
    codes = rng.integers(-127, 128, (6, 4)).astype(np.int8)
    scales = rng.uniform(0.01, 0.1, 6).astype(np.float32)
    ids = np.array([5, 0, 3])
    got = nn.embedding(ids, codes, scales)
    want = codes[ids].astype(np.float64) * scales[ids].astype(np.float64)[:, None]
    assert got.dtype == np.float32 and np.array_equal(got, want.astype(np.float32))
    assert nn.embedding(ids, codes, scales, dtype=mxp.bfloat16).dtype == mxp.bfloat16
    assert np.array_equal(nn.embedding(ids, codes), codes[ids])


def test_row_products():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((6, 16)), rng.standard_normal((9, 16))
    assert np.allclose(nn.rowdot(a, b, outer=True), a @ b.T, rtol=1e-14, atol=1e-14)
    assert np.allclose(nn.rowdot(a, b[:6]), (a * b[:6]).sum(-1), rtol=1e-14, atol=1e-14)
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    assert np.allclose(nn.cosine_similarity(a, b, outer=True), (a @ b.T) / np.outer(na, nb), rtol=1e-14)
    x = a.astype(mxp.bfloat16)
    c = nn.cosine_similarity(x, x)
    assert c.dtype == mxp.bfloat16 and np.all(c.astype(np.float32) == 1)
    out = np.empty((6, 9), np.float32)
    assert nn.rowdot(a, b, outer=True, out=out) is out
    assert np.array_equal(out, (a @ b.T).astype(np.float32)) or np.allclose(out, a @ b.T, rtol=1e-6)
    y = nn.l2_normalize(a)
    assert np.allclose(np.linalg.norm(y, axis=1), 1, rtol=1e-15)


def test_backward_by_finite_differences():
    rng = np.random.default_rng(6)
    x, dy = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    w, b = rng.uniform(0.5, 1.5, 5), rng.uniform(-0.5, 0.5, 5)
    h = 1e-6

    def numeric(f, p):
        g = np.zeros_like(p)
        for i in np.ndindex(p.shape):
            keep = p[i]
            p[i] = keep + h
            up = (dy * f()).sum()
            p[i] = keep - h
            down = (dy * f()).sum()
            p[i] = keep
            g[i] = (up - down) / (2 * h)
        return g

    for log in (False, True):
        fwd = nn.log_softmax if log else nn.softmax
        back = nn.log_softmax_backward if log else nn.softmax_backward
        assert np.allclose(back(dy, fwd(x)), numeric(lambda: fwd(x), x), atol=1e-7)
    dx, dw, db = nn.layer_norm_backward(dy, x, weight=w)
    ln = lambda: nn.layer_norm(x, weight=w, bias=b)  # noqa: E731
    assert np.allclose(dx, numeric(ln, x), atol=1e-7)
    assert np.allclose(dw, numeric(ln, w), atol=1e-7) and np.allclose(db, numeric(ln, b), atol=1e-7)
    dx, dw = nn.rms_norm_backward(dy, x, weight=w)
    rn = lambda: nn.rms_norm(x, weight=w)  # noqa: E731
    assert np.allclose(dx, numeric(rn, x), atol=1e-7) and np.allclose(dw, numeric(rn, w), atol=1e-7)


# ---- torch.nn.functional ------------------------------------------------------

@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("t", [np.float64, np.float32, mxp.bfloat16, np.float16])
def test_against_torch(torch, t):
    F = torch.nn.functional
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((4, 6, 32)) * 3).astype(t)
    w, b = rng.uniform(0.5, 1.5, 32).astype(t), rng.uniform(-0.5, 0.5, 32).astype(t)
    tt = {np.float64: torch.float64, np.float32: torch.float32, mxp.bfloat16: torch.bfloat16,
          np.float16: torch.float16}[t]

    def T(a, dt=tt):
        return torch.from_numpy(a.astype(np.float64)).to(dt)

    def N(r):
        return r.to(torch.float64).numpy()

    def close(got, op):
        """float32/float64: torch's result within its rounding errors; 16-bit
        types: the float64 result rounded once (one ulp allowed: torch's
        float64 has errors of its own), torch 2's 16-bit result within 8 ulps."""
        got = got.astype(np.float64)
        if t in (np.float64, np.float32):
            want, tol = N(op(T)), 1e-13 if t is np.float64 else 1e-6
            assert np.allclose(got, want, rtol=tol, atol=tol), np.max(np.abs(got - want))
            return
        exact = N(op(lambda a: T(a, torch.float64)))
        ulp = np.spacing(np.abs(exact).astype(t)).astype(np.float64)
        assert np.all(np.abs(got - exact.astype(t).astype(np.float64)) <= ulp), np.max(np.abs(got - exact) / ulp)
        if int(torch.__version__.split(".")[0]) >= 2:  # Debian's torch 1.13 lacks half softmax, rounds bf16 more
            assert np.all(np.abs(got - N(op(T))) <= 8 * ulp)

    for axis in (-1, 1):
        close(nn.softmax(x, axis=axis), lambda T: F.softmax(T(x), dim=axis))
        close(nn.log_softmax(x, axis=axis), lambda T: F.log_softmax(T(x), dim=axis))
    close(nn.layer_norm(x, weight=w, bias=b), lambda T: F.layer_norm(T(x), (32,), T(w), T(b), 1e-5))
    if hasattr(F, "rms_norm"):
        close(nn.rms_norm(x, weight=w, eps=1e-6), lambda T: F.rms_norm(T(x), (32,), T(w), 1e-6))
    close(nn.l2_normalize(x), lambda T: F.normalize(T(x), dim=-1))
    y = x[0]
    close(nn.cosine_similarity(y, x[1]), lambda T: F.cosine_similarity(T(y), T(x[1]), dim=-1))
    ids = np.array([[3, 0], [5, 5]])
    assert np.array_equal(nn.embedding(ids, y).astype(np.float64), N(F.embedding(torch.from_numpy(ids), T(y))))


def test_masked_attention_against_torch(torch):
    F = torch.nn.functional
    rng = np.random.default_rng(8)
    q, k = rng.standard_normal((2, 5, 8)).astype(np.float32), rng.standard_normal((2, 7, 8)).astype(np.float32)
    pad = np.ones((2, 7), bool)
    pad[1, 4:] = False  # the second sequence is padded after 4 tokens
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(8)
    got = nn.softmax(scores, mask=pad[:, None, :])
    want = F.softmax(torch.from_numpy(scores).masked_fill(~torch.from_numpy(pad)[:, None, :], float("-inf")), dim=-1)
    assert np.allclose(got, want.numpy(), rtol=1e-6, atol=1e-7)
    assert np.all(got[1, :, 4:] == 0)


def test_backward_against_torch(torch):
    rng = np.random.default_rng(9)
    x, dy = rng.standard_normal((4, 2, 6)), rng.standard_normal((4, 2, 6))
    w, b = rng.uniform(0.5, 1.5, (2, 6)), rng.uniform(-0.5, 0.5, (2, 6))
    tx, tw, tb = (torch.tensor(v, requires_grad=True) for v in (x, w, b))
    torch.nn.functional.layer_norm(tx, (2, 6), tw, tb, 1e-5).backward(torch.from_numpy(dy))
    dx, dw, db = nn.layer_norm_backward(dy, x, (2, 6), w)
    for got, want in ((dx, tx.grad), (dw, tw.grad), (db, tb.grad)):
        assert np.allclose(got, want.numpy(), rtol=1e-12, atol=1e-12)
    tx = torch.tensor(x, requires_grad=True)
    y = torch.softmax(tx, dim=1)
    y.backward(torch.from_numpy(dy))
    assert np.allclose(nn.softmax_backward(dy, y.detach().numpy(), axis=1), tx.grad.numpy(), rtol=1e-12, atol=1e-14)


# ---- the ONNX reference implementation ------------------------------------------

def test_against_onnx_reference():
    onnx = pytest.importorskip("onnx")
    reference = pytest.importorskip("onnx.reference")
    helper = onnx.helper
    x = np.random.default_rng(10).standard_normal((3, 4, 5)).astype(np.float32)
    w, b = np.full(5, 1.5, np.float32), np.full(5, 0.25, np.float32)
    for node, inputs, ours in (
            (helper.make_node("Softmax", ["x"], ["y"], axis=1), {"x": x}, nn.softmax(x, axis=1)),
            (helper.make_node("LayerNormalization", ["x", "w", "b"], ["y"], axis=-1, epsilon=1e-5),
             {"x": x, "w": w, "b": b}, nn.layer_norm(x, weight=w, bias=b))):
        vi = [helper.make_tensor_value_info(k, onnx.TensorProto.FLOAT, v.shape) for k, v in inputs.items()]
        graph = helper.make_graph([node], "g", vi, [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
        want = reference.ReferenceEvaluator(helper.make_model(graph)).run(None, inputs)[0]
        assert np.allclose(ours, want, rtol=1e-5, atol=1e-6)

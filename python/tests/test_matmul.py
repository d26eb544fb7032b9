"""a @ b, np.matmul and np.dot on the mxp dtypes: mxp_gemm with float32
accumulation and one rounding, NumPy's batch and layout semantics."""
import numpy as np
import pytest

import mxp
from mxptest import FLOATS, bits


def rand(shape, t, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(t)


def reference(a, b, t):
    """The float64 product of the (exact) inputs, rounded once to t."""
    return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(t)


def assert_close_to_reference(c, a, b, t):
    """float32 accumulation: |c - ref| <= 1 ulp of t + k * 2^-23 * sum|a||b| (float32 sums)."""
    assert c.dtype == np.dtype(t)
    exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
    scale = np.matmul(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
    k = a.shape[-1]
    ulp = np.spacing(np.abs(exact).astype(t)).astype(np.float64)
    err = np.abs(c.astype(np.float64) - exact)
    assert np.all(err <= ulp + k * 2.0**-23 * scale + 1e-300), float(np.max(err - ulp))


@pytest.mark.parametrize("t", FLOATS)
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 5, 7), (17, 33, 65), (64, 64, 64), (1, 100, 1), (100, 1, 3)])
def test_matmul_matches_float64_reference(t, m, k, n):
    a, b = rand((m, k), t, 1), rand((k, n), t, 2)
    c = a @ b
    assert_close_to_reference(c, a, b, t)
    assert np.array_equal(bits(np.matmul(a, b)), bits(c))
    # small integers: the float32 sums are exact, so the result is the reference exactly
    ai = np.random.default_rng(3).integers(-3, 4, (m, k)).astype(t)
    bi = np.random.default_rng(4).integers(-3, 4, (k, n)).astype(t)
    assert np.array_equal(bits(ai @ bi), bits(reference(ai, bi, t)))


@pytest.mark.parametrize("t", FLOATS)
def test_zero_sizes(t):
    assert (np.ones((0, 3), t) @ np.ones((3, 4), t)).shape == (0, 4)
    z = np.ones((2, 0), t) @ np.ones((0, 4), t)
    assert z.shape == (2, 4) and np.all(z.astype(np.float32) == 0)


@pytest.mark.parametrize("t", FLOATS)
def test_batched_broadcast_and_vectors(t):
    a, b = rand((4, 1, 5, 6), t, 5), rand((3, 6, 2), t, 6)
    c = a @ b
    assert c.shape == (4, 3, 5, 2)
    for i in range(4):
        for j in range(3):
            assert np.array_equal(bits(c[i, j]), bits(a[i, 0] @ b[j]))
    v = rand(6, t, 7)
    assert (a[0, 0] @ v).shape == (5,) and (v @ b[0]).shape == (2,)
    assert np.array_equal(bits(a[0, 0] @ v), bits((a[0, 0] @ v[:, None])[:, 0]))


@pytest.mark.parametrize("t", FLOATS)
def test_views_transposed_strided_and_negative(t):
    a, b = rand((40, 30), t, 8), rand((30, 20), t, 9)
    want = a @ b
    for aa, bb in [(np.asfortranarray(a), b), (a, np.asfortranarray(b)), (a.T.copy().T, b.T.copy().T)]:
        assert np.array_equal(bits(aa @ bb), bits(want))
    big = rand((80, 60), t, 10)
    sa, sb = big[::2, ::2], big[1:61:2, 1:41:2]  # strided in both axes: copied first
    assert np.array_equal(bits(sa @ sb), bits(np.ascontiguousarray(sa) @ np.ascontiguousarray(sb)))
    ra = a[::-1, ::-1]
    assert np.array_equal(bits(ra @ b[::-1]), bits(np.ascontiguousarray(ra) @ np.ascontiguousarray(b[::-1])))
    out = np.empty((20, 40), t).T  # a column-major output
    np.matmul(a, b, out=out)
    assert np.array_equal(bits(out), bits(want))


def test_matmul_against_torch_bfloat16():
    torch = pytest.importorskip("torch")
    a, b = rand((64, 96), mxp.bfloat16, 11), rand((96, 48), mxp.bfloat16, 12)
    ta = torch.from_numpy(bits(a).view(np.int16).copy()).view(torch.bfloat16)
    tb = torch.from_numpy(bits(b).view(np.int16).copy()).view(torch.bfloat16)
    theirs = (ta @ tb).float().numpy().astype(np.float64)
    ours = (a @ b).astype(np.float64)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    # ours: float32 sums rounded once, within an ulp and a bit of the exact
    # product; torch 1.13's CPU bf16 matmul is further off, never closer overall
    ulp = np.spacing(np.abs(exact).astype(mxp.bfloat16)).astype(np.float64)
    assert np.all(np.abs(ours - exact) <= ulp * 1.01)
    assert np.abs(ours - exact).max() <= np.abs(theirs - exact).max()
    assert np.abs(ours - exact).mean() <= np.abs(theirs - exact).mean()


@pytest.mark.parametrize("t", FLOATS)
def test_dot_accumulates_wide_and_rounds_once(t):
    a, b = rand((7, 9), t, 13), rand((9, 5), t, 14)
    assert np.dot(a, b).dtype == np.dtype(t)
    assert np.array_equal(bits(np.dot(a, b)), bits(reference(a, b, t)))
    v = rand(9, t, 15)
    assert np.array_equal(bits(np.array(np.dot(v, v), t)), bits(np.array(np.dot(v.astype(np.float64), v.astype(np.float64)), t)))


def test_matmul_bad_shapes_raise():
    with pytest.raises(ValueError):
        np.ones((2, 3), mxp.bfloat16) @ np.ones((4, 2), mxp.bfloat16)
    with pytest.raises(ValueError):
        np.ones(3, mxp.bfloat16) @ np.ones((), mxp.bfloat16)


def _f16_acc_loop(a, b):
    """NumPy emulation of a float16-accumulating unit: float32 products,
    the running sum rounded to np.float16 after every addition, k in order."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    acc = np.zeros((a.shape[0], b.shape[1]), np.float16)
    for p in range(a.shape[1]):
        prod = np.outer(a32[:, p], b32[p, :]).astype(np.float32)  # one float32 rounding per product
        acc = (acc.astype(np.float64) + prod.astype(np.float64)).astype(np.float16)
    return acc


@pytest.mark.parametrize("t", [np.float16, np.float32])
def test_compute_float16_is_a_float16_accumulator_bit_for_bit(t):
    a, b = rand((5, 200), t, 1), rand((200, 7), t, 2)
    want = _f16_acc_loop(a, b)
    got = mxp.matmul(a, b, out_dtype=np.float16, compute=np.float16)
    assert got.dtype == np.float16
    assert bits(got).tolist() == bits(want).tolist()
    # float32 accumulation differs on the same data: the float16 sum loses
    c32 = mxp.matmul(a, b, out_dtype=np.float16, compute=np.float32)
    assert bits(c32).tolist() != bits(want).tolist()


def test_compute_float16_stalls_at_2048():
    ones = np.ones((1, 4096), np.float16)
    assert float(mxp.matmul(ones, ones.T, out_dtype=np.float32, compute=np.float16)[0, 0]) == 2048.0
    assert float(mxp.matmul(ones, ones.T, out_dtype=np.float32, compute="bfloat16")[0, 0]) == 256.0
    assert float(mxp.matmul(ones, ones.T, out_dtype=np.float32)[0, 0]) == 4096.0


def test_compute_float8_is_refused():
    a = np.ones((2, 2), np.float32)
    with pytest.raises(Exception, match="accumulator float8_e4m3fn"):
        mxp.matmul(a, a, compute="float8_e4m3fn")

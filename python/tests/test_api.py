"""mxp.astype, matmul, gemm, gemm_safe and the runtime functions against
independent references: the C library through ctypes (same bytes), NumPy
float64, exact integer products."""
import ctypes
import gc
import sys

import numpy as np
import pytest

import mxp
from mxptest import MXP_DTYPE, bits

MODES = ["nearest_even", "nearest_away", "toward_zero", "up", "down", "stochastic"]


class ConvertOpts(ctypes.Structure):  # mxp_convert_opts (include/mxp/convert.h); struct_size 0: docs/abi.md
    _fields_ = [("struct_size", ctypes.c_size_t), ("rounding", ctypes.c_int), ("overflow", ctypes.c_int),
                ("seed", ctypes.c_uint64), ("flags", ctypes.c_void_p), ("index_offset", ctypes.c_uint64)]


def c_convert_mode(lib, x, to, mode, overflow=0, seed=0):
    x = np.ascontiguousarray(x)
    out = np.zeros(x.shape, to)
    opts = ConvertOpts(0, MODES.index(mode), overflow, seed, None, 0)
    src = x.view(np.uint16) if x.dtype == np.dtype(mxp.bfloat16) else x
    dst = out.view(np.uint16) if out.dtype == np.dtype(mxp.bfloat16) else out
    assert lib.mxp_convert(dst.ctypes.data, MXP_DTYPE[np.dtype(to).name], src.ctypes.data, MXP_DTYPE[x.dtype.name],
                           x.size, ctypes.byref(opts)) == 0
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("to", [mxp.bfloat16, mxp.float8_e4m3fn, mxp.float8_e5m2, np.float16, np.int8])
def test_astype_every_mode_equals_the_c_library(libmxp, mode, to):
    x = np.random.default_rng(0).standard_normal(5000) * 50
    ours = mxp.astype(x, to, rounding=mode, seed=7)
    assert ours.dtype == np.dtype(to)
    assert np.array_equal(ours.view(np.uint8), c_convert_mode(libmxp, x, to, mode, seed=7).view(np.uint8))


def test_astype_saturate_out_strided_and_stats():
    x = np.array([1e6, -1e6, 0.1, np.nan, 1e-30])
    assert mxp.astype(x, mxp.float8_e4m3fn, overflow="saturate")[:2].tolist() == [448, -448]
    out = np.zeros((3, 10), mxp.bfloat16)[:, ::2]
    r = mxp.astype(np.arange(15.0).reshape(3, 5), mxp.bfloat16, out=out)
    assert r is out and out.tolist() == np.arange(15.0).reshape(3, 5).tolist()
    y, st = mxp.astype(x, np.float16, stats=True)
    assert st.overflow == 2 and st.inexact >= 3 and st.underflow == 1 and st.invalid == 0
    assert mxp.convert_stats(x, np.float16) == st
    a, b = mxp.astype(x[2:3].repeat(100), mxp.bfloat16, rounding="stochastic", seed=1), \
        mxp.astype(x[2:3].repeat(100), mxp.bfloat16, rounding="stochastic", seed=1)
    assert np.array_equal(bits(a), bits(b)) and len(set(bits(a).tolist())) == 2


def test_stochastic_pieces_with_index_offset_equal_the_whole():
    x = np.random.default_rng(9).standard_normal((6, 7))
    whole = mxp.astype(x, mxp.bfloat16, rounding="stochastic", seed=3)
    rows = [mxp.astype(x[i], mxp.bfloat16, rounding="stochastic", seed=3, index_offset=7 * i) for i in range(6)]
    assert np.array_equal(bits(np.stack(rows)), bits(whole))
    assert not np.array_equal(bits(rows[1]), bits(mxp.astype(x[1], mxp.bfloat16, rounding="stochastic", seed=3)))


def test_astype_bad_arguments():
    with pytest.raises(ValueError, match="rounding"):
        mxp.astype([1.0], mxp.bfloat16, rounding="nearest")
    with pytest.raises(ValueError, match="overflow"):
        mxp.astype([1.0], mxp.bfloat16, overflow="wrap")
    with pytest.raises(TypeError):
        mxp.astype([1.0], "no-such-dtype")
    with pytest.raises(ValueError, match="shape"):
        mxp.astype([1.0, 2.0], mxp.bfloat16, out=np.zeros(3, mxp.bfloat16))
    ro = np.zeros(2, mxp.bfloat16)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        mxp.astype([1.0, 2.0], mxp.bfloat16, out=ro)
    with pytest.raises(TypeError):
        mxp.astype(np.array(["a"]), mxp.bfloat16)
    # with out=, dtype is checked, not ignored (issue 24: bfloat16 asked into a
    # float16 buffer gave float16, 3e5 -> inf)
    f16 = np.zeros(1, np.float16)
    with pytest.raises(ValueError, match="differs"):
        mxp.astype(np.array([3e5]), mxp.bfloat16, out=f16)
    assert f16[0] == 0
    with pytest.raises(TypeError):
        mxp.astype(np.array([1.0]), "no-such-dtype", out=f16)
    assert mxp.astype(np.array([1.5]), np.float16, out=f16) is f16 and f16[0] == 1.5
    assert mxp.astype(np.array([2.5]), None, out=f16)[0] == 2.5


def close_to(c, exact, t, k, scale):
    ulp = np.spacing(np.abs(exact).astype(t)).astype(np.float64)
    return np.all(np.abs(c.astype(np.float64) - exact) <= ulp + k * 2.0**-23 * scale + 1e-300)


@pytest.mark.parametrize("t", [np.float16, mxp.bfloat16, mxp.float8_e4m3fn, np.float32])
def test_matmul_with_epilogue_matches_float64(t):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((33, 40)).astype(t), rng.standard_normal((40, 17)).astype(t)
    bias = rng.standard_normal(17).astype(np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    scale = np.abs(a64) @ np.abs(b64)
    exact = np.clip(np.maximum(a64 @ b64 + bias, 0), -1.0, 2.5)
    c = mxp.matmul(a, b, bias=bias, activation="relu", clamp=(-1.0, 2.5))
    assert c.dtype == np.dtype(t) and close_to(c, exact, t, 40, scale)
    c32 = mxp.matmul(a, b, out_dtype=np.float32)
    assert c32.dtype == np.float32 and np.allclose(c32, a64 @ b64, rtol=1e-5, atol=1e-5)
    c64 = mxp.matmul(a, b, out_dtype=np.float64, compute=np.float64)
    assert np.allclose(c64, a64 @ b64, rtol=1e-12, atol=1e-12)


def test_matmul_float16_batched_and_out():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((3, 8, 16)).astype(np.float16), rng.standard_normal((16, 5)).astype(np.float16)
    c = mxp.matmul(a, b)
    assert c.shape == (3, 8, 5) and c.dtype == np.float16
    for i in range(3):
        assert np.array_equal(c[i], mxp.matmul(a[i], b))
    out = np.empty((3, 8, 5), np.float32)
    assert mxp.matmul(a, b, out=out) is out


def test_matmul_int8_exact_and_requantized():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, (20, 64)).astype(np.uint8)
    b = rng.integers(-128, 128, (64, 24)).astype(np.int8)
    c = mxp.matmul(a, b, a_zero_point=128, b_zero_point=3)
    assert c.dtype == np.int32
    assert np.array_equal(c, (a.astype(np.int64) - 128) @ (b.astype(np.int64) - 3))
    s = np.float32(0.001)
    q = mxp.matmul(a, b, out_dtype=np.int8, scales=[s], c_zero_point=5)
    want = np.clip(np.rint(((a.astype(np.float64)) @ b.astype(np.float64)) * np.float64(s)) + 5, -128, 127)
    assert q.dtype == np.int8 and np.array_equal(q, want)
    d = mxp.matmul(a, b, out_dtype=np.float32, scales=np.full(24, 0.5, np.float32))
    assert np.array_equal(d, (a.astype(np.float64) @ b.astype(np.float64) * 0.5).astype(np.float32))


def test_quantized_operands_in_matmul():
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((16, 64)).astype(np.float32), rng.standard_normal((64, 32)).astype(np.float32)
    qx, qw = mxp.quantize(x, "uint8", symmetric=False), mxp.quantize(w, "int8", axis=1)
    y = mxp.matmul(qx, qw)
    ref = (mxp.dequantize(qx, np.float64) @ mxp.dequantize(qw, np.float64)).astype(np.float32)
    assert y.dtype == np.float32 and np.allclose(y, ref, rtol=1e-5, atol=1e-4)
    assert mxp.compare(x.astype(np.float64) @ w, y).psnr_db > 35


def test_gemm_int8_per_row_zero_points_and_scales():
    """a quantized per row (dynamic per-token activations): row i equals the
    one-row GEMM with its zero point and the scales float32(a_scales[i] *
    scales[j]); the int32 sums exact; bad rows refused; matmul takes none."""
    rng = np.random.default_rng(7)
    m, k, n = 40, 90, 300
    a = rng.integers(0, 256, (m, k)).astype(np.uint8)
    w = rng.integers(-128, 128, (n, k)).astype(np.int8)
    zp = rng.integers(0, 256, m).astype(np.int32)
    sa = (rng.random(m) * 0.05 + 1e-3).astype(np.float32)
    sw = (rng.random(n) * 0.01 + 1e-3).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    for out in (np.float32, mxp.bfloat16):
        got = mxp.gemm(a, w, trans_b=True, out_dtype=out, scales=sw, bias=bias, a_zero_points=zp, a_scales=sa)
        for i in (0, 17, m - 1):
            s = (np.float64(sa[i]) * sw.astype(np.float64)).astype(np.float32)
            want = mxp.gemm(a[i:i + 1], w, trans_b=True, out_dtype=out, scales=s, bias=bias,
                            a_zero_point=int(zp[i]))
            assert np.array_equal(bits(got[i:i + 1]), bits(want))
    sums = mxp.gemm(a, w, trans_b=True, out_dtype=np.int32, a_zero_points=zp)
    assert np.array_equal(sums, (a.astype(np.int64) - zp[:, None]) @ w.astype(np.int64).T)
    with pytest.raises(ValueError, match="a_zero_points"):
        mxp.gemm(a, w, trans_b=True, out_dtype=np.float32, a_zero_points=zp[:-1])
    with pytest.raises(ValueError, match="a_zero_points"):
        mxp.gemm(a, w, trans_b=True, out_dtype=np.float32, a_zero_points=zp + 300)
    with pytest.raises(ValueError, match="a_scales"):
        mxp.gemm(a, w, trans_b=True, out_dtype=np.float32, a_scales=np.full(m, np.nan, np.float32))
    with pytest.raises(TypeError):
        mxp.matmul(a, w.T, a_zero_points=zp)
    empty = mxp.gemm(a[:0], w, trans_b=True, out_dtype=np.float32, a_zero_points=zp[:0], a_scales=sa[:0])
    assert empty.shape == (0, n)


def test_gemm_alpha_beta_transposes():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((12, 7)), rng.standard_normal((9, 12))
    c = rng.standard_normal((7, 9))
    want = 0.5 * a.T @ b.T + 2.0 * c
    got = mxp.gemm(a, b, c.copy(), alpha=0.5, beta=2.0, trans_a=True, trans_b=True)
    assert np.allclose(got, want, rtol=1e-13, atol=1e-13)
    z = mxp.gemm(a.T.astype(mxp.bfloat16), b.T.astype(mxp.bfloat16), out_dtype=np.float32)
    assert z.shape == (7, 9) and z.dtype == np.float32
    with pytest.raises(ValueError):
        mxp.gemm(a, b)  # 12x7 by 9x12
    with pytest.raises(ValueError):
        mxp.gemm(a.T, b.T, np.zeros((9, 7))[:, ::2])


def test_gemm_safe_strategies():
    a = np.full((4, 64), 100.0, np.float32)
    b = np.full((64, 4), 100.0, np.float32)  # 640000 > float16's 65504
    c, r = mxp.gemm_safe(a, b, np.zeros((4, 4), np.float16), strategy="clip")
    assert r.at_risk and r.applied == "clip" and np.all(c == np.float16(65504))
    c, r = mxp.gemm_safe(a, b, np.zeros((4, 4), np.float16), strategy="scale")
    assert r.applied == "scale" and np.all(c.astype(np.float64) * 2.0**r.scale_exponent == 640000)
    p = np.zeros((4, 4), np.float32)
    c, r = mxp.gemm_safe(a, b, np.zeros((4, 4), np.float16), strategy="promote", promote_to=p)
    assert r.applied == "promote" and np.all(p == 640000) and np.all(c == 0)
    with pytest.raises(OverflowError):
        mxp.gemm_safe(a, b, np.zeros((4, 4), np.float16), strategy="refuse")
    c, r = mxp.gemm_safe(a[:, :1] / 100, b[:1] / 100, np.zeros((4, 4), np.float16), strategy="refuse")
    assert not r.at_risk and r.applied == "none" and np.all(c == 1)
    with pytest.raises(ValueError):
        mxp.gemm_safe(a, b, strategy="maybe")


def test_matmul_bad_arguments():
    a = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match="k"):
        mxp.matmul(a, a)
    with pytest.raises(ValueError, match="activation"):
        mxp.matmul(a, a.T, activation="tanh")
    with pytest.raises(ValueError, match="bias"):
        mxp.matmul(a, a.T, bias=np.ones(4))
    with pytest.raises(ValueError, match="rounding"):
        mxp.matmul(a, a.T, rounding="odd")
    with pytest.raises(ValueError):
        mxp.matmul(a, a.T, clamp=(2, 1))
    with pytest.raises(ValueError):
        mxp.matmul(a, a.T, out=np.zeros((4, 4), np.float32))
    with pytest.raises(ValueError):
        mxp.matmul(np.ones(3), np.ones(()))


def test_info_threads_memory():
    i = mxp.info()
    assert i.version == mxp.__version__ and i.isa in ("scalar", "avx2", "avx512", "avx512bf16", "amx")
    assert any(k.startswith("gemm") for k in i.kernels)
    n = mxp.get_num_threads()
    mxp.set_num_threads(1)
    assert mxp.get_num_threads() == 1
    mxp.set_num_threads(0)
    assert mxp.get_num_threads() == n
    with pytest.raises(ValueError):
        mxp.set_num_threads(-1)
    before = mxp.memory_stats().current_bytes
    q = mxp.quantize(np.ones(100000, np.float32))
    assert mxp.memory_stats().current_bytes >= before + 100000
    del q
    gc.collect()
    assert mxp.memory_stats().current_bytes == before


def test_no_reference_leaks_over_repeated_calls():
    a = np.ones((8, 8), np.float32)
    x = np.ones(64, np.float32)
    refs = sys.getrefcount(a), sys.getrefcount(x)
    base = mxp.memory_stats().current_bytes
    for _ in range(2000):
        mxp.matmul(a, a)
        mxp.astype(x, mxp.bfloat16)
        mxp.dequantize(mxp.quantize(x))
        mxp.compare(x, x)
    gc.collect()
    assert (sys.getrefcount(a), sys.getrefcount(x)) == refs
    assert mxp.memory_stats().current_bytes == base


def test_memory_stats_show_kept_workspaces_and_huge_pages():
    a = np.ones((128, 128), np.float32)  # packs (up to 96^3 multiply-adds a product packs nothing)
    mxp.matmul(a, a)
    before = mxp.memory_stats()
    for _ in range(5):
        mxp.matmul(a, a)
    after = mxp.memory_stats()
    assert after.workspace_reuses >= before.workspace_reuses + 5  # GEMM's packing buffers kept
    assert after.workspace_bytes > 0
    for key in ("hugepage_allocations", "hugepage_cache_bytes", "hugepage_cache_hits"):
        assert getattr(after, key) >= 0


def test_hugepages_switch_and_release_workspaces():
    start = mxp.hugepages()
    assert set(start) == {"enabled", "threshold"} and start["threshold"] >= 2 << 20
    try:
        assert mxp.hugepages(enabled=False) == {"enabled": False, "threshold": start["threshold"]}
        before = mxp.memory_stats().hugepage_allocations
        big = mxp.quantize(np.ones(3 << 20, np.float32))  # 3 MiB codes ...
        del big
        assert mxp.memory_stats().hugepage_allocations == before  # ... from malloc when off
        assert mxp.hugepages(enabled=True, threshold=2 << 20) == {"enabled": True, "threshold": 2 << 20}
        big = mxp.quantize(np.ones(3 << 20, np.float32))
        assert mxp.memory_stats().hugepage_allocations == before + 1
        assert mxp.dequantize(big)[-1] == 1.0
        del big
        with pytest.raises(ValueError, match="below one huge page"):
            mxp.hugepages(threshold=4096)
        with pytest.raises(ValueError, match="negative"):
            mxp.hugepages(threshold=-1)
        with pytest.raises(TypeError):
            mxp.hugepages(True)  # keyword-only
    finally:
        mxp.hugepages(enabled=start["enabled"], threshold=start["threshold"])
    a = np.ones((64, 64), np.float32)
    mxp.matmul(a, a)
    assert mxp.memory_stats().workspace_bytes > 0
    mxp.release_workspaces()
    stats = mxp.memory_stats()
    assert stats.workspace_bytes == 0 and stats.hugepage_cache_bytes == 0

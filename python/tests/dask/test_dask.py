"""mxp.dask on a LocalCluster of two worker processes (conftest.py): every
result against single-machine mxp on the same data for several chunkings
-- bit for bit for conversions (stochastic rounding too), quantization with
given parameters, min/max, moving-average and histogram calibration and
the exact metrics, within the documented bounds elsewhere -- then a worker
killed mid-conversion, an array larger than the workers' memory, the
command line and bad input."""
import os
import resource
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import mxp

da = pytest.importorskip("dask.array")
md = pytest.importorskip("mxp.dask")

# whole array, rows, tiles that cut rows, single columns (3-d below)
CHUNKINGS = [(37, 50), (8, 50), (9, 7), (37, 1)]
MXP_TYPES = [mxp.bfloat16, mxp.float8_e4m3fn, mxp.float8_e5m2]


def bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def data(shape=(37, 50), seed=0, scale=3.0):
    x = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)
    x.flat[5], x.flat[11], x.flat[12] = np.nan, np.inf, 1e6   # NaN, inf, overflow for the small types
    return x


# ---- the dtypes on Dask arrays ------------------------------------------------

def test_mxp_dtypes_work_in_dask_arrays(client, tmp_path):
    zarr = pytest.importorskip("zarr")
    xn = data()
    x = da.from_array(xn, chunks=(9, 7))
    b = x.astype(mxp.bfloat16)
    assert b.dtype == mxp.bfloat16 and b._meta.dtype == mxp.bfloat16
    bn = xn.astype(mxp.bfloat16)
    assert np.array_equal(bits(b.compute()), bits(bn))
    half = mxp.bfloat16(0.5)
    for y, want in ((b + b, bn + bn), (np.sqrt(abs(b)), np.sqrt(abs(bn))), (b * half, bn * half)):
        assert y.dtype == mxp.bfloat16 and np.array_equal(bits(y.compute()), bits(want))
    finite = da.from_array(np.nan_to_num(xn, posinf=0).astype(mxp.bfloat16), chunks=(9, 7))
    # Dask's own sum keeps chunk sums in bfloat16; mxp.dask.sum keeps them in float64, one rounding
    assert md.sum(finite).compute() == np.sum(finite.compute())
    assert np.array_equal(bits(md.sum(finite, axis=1).compute()), bits(np.sum(finite.compute(), axis=1)))
    assert md.mean(finite).dtype == mxp.bfloat16
    # zarr: the bits and the dtype's name; .npy shards: mxp.save's files
    md.to_zarr(b, str(tmp_path / "b.zarr"))
    raw = zarr.open_array(str(tmp_path / "b.zarr"), mode="r")
    assert raw.dtype == np.uint16 and raw.attrs["mxp_dtype"] == "bfloat16" and raw.chunks == (9, 7)
    back = md.from_zarr(str(tmp_path / "b.zarr"))
    assert back.dtype == mxp.bfloat16 and back._meta.dtype == mxp.bfloat16 and back.chunks == b.chunks
    assert np.array_equal(bits(back.compute()), bits(bn))
    md.to_npy_shards(b, str(tmp_path / "shards"))              # written by the workers, read back by them
    back = md.from_npy_shards(str(tmp_path / "shards"))
    assert back.dtype == mxp.bfloat16 and np.array_equal(bits(back.compute()), bits(bn))


def test_npy_shards_keep_every_mxp_dtype(threads, tmp_path):
    xn = data()
    x = da.from_array(xn, chunks=(9, 7))
    for t in MXP_TYPES:
        y = x.astype(t)
        md.to_npy_shards(y, str(tmp_path / t.__name__))
        files = sorted(os.listdir(tmp_path / t.__name__))
        assert len(files) == 5
        assert np.array_equal(bits(mxp.load(tmp_path / t.__name__ / files[1])), bits(xn[9:18].astype(t)))
        back = md.from_npy_shards(str(tmp_path / t.__name__))
        assert back.dtype == t and np.array_equal(bits(back.compute()), bits(xn.astype(t)))


# ---- astype ---------------------------------------------------------------------

@pytest.mark.parametrize("chunks", CHUNKINGS)
def test_astype_equals_single_machine_bit_for_bit(threads, chunks):
    xn = data()
    x = da.from_array(xn, chunks=chunks)
    cases = [(t, "stochastic", o) for t in MXP_TYPES + [np.float16] for o in ("inf", "saturate")]
    cases += [(mxp.float8_e4m3fn, r, "saturate") for r in ("nearest_even", "nearest_away", "toward_zero", "up", "down")]
    cases += [(mxp.bfloat16, r, "inf") for r in ("toward_zero", "up")]
    got = da.compute(*[md.astype(x, t, rounding=r, overflow=o, seed=7) for t, r, o in cases])
    for (t, r, o), g in zip(cases, got):
        assert g.dtype == np.dtype(t)
        assert np.array_equal(bits(g), bits(mxp.astype(xn, t, rounding=r, overflow=o, seed=7))), (t, r, o)


def test_stochastic_astype_3d_any_chunking_and_other_seed(threads):
    xn = data((6, 10, 14), seed=3)
    want = mxp.astype(xn, mxp.bfloat16, rounding="stochastic", seed=99)
    for chunks in ((6, 10, 14), (4, 3, 5), (1, 10, 14), (6, 1, 14), (2, 10, 3)):
        got = md.astype(da.from_array(xn, chunks=chunks), "bfloat16", rounding="stochastic", seed=99).compute()
        assert np.array_equal(bits(got), bits(want)), chunks
    other = md.astype(da.from_array(xn, chunks=(4, 3, 5)), mxp.bfloat16, rounding="stochastic", seed=100).compute()
    assert not np.array_equal(bits(other), bits(want))


# ---- calibration and quantization -----------------------------------------------------

LAYOUTS = [dict(), dict(axis=1), dict(axis=0), dict(axis=1, group_size=5), dict(axis=0, group_size=1)]


@pytest.mark.parametrize("chunks", [(37, 50), (8, 10), (9, 25), (37, 5)])
def test_minmax_calibration_and_quantize_equal_single_machine(threads, chunks):
    xn = data()
    x = da.from_array(xn, chunks=chunks)
    for kw in LAYOUTS:
        for qtype, sym in (("int8", True), ("uint4", False), ("float8_e4m3fn", True)):
            want = mxp.calibrate(xn, qtype, symmetric=sym, **kw)
            got = md.calibrate(x, qtype, symmetric=sym, **kw)
            assert (got.axis, got.group_size) == (want.axis, want.group_size)
            assert got.scales.tobytes() == want.scales.tobytes() and np.array_equal(got.zero_points, want.zero_points)
            near, stoch, deq = da.compute(md.quantize(x, qparams=want).codes,
                                          md.quantize(x, qparams=want, rounding="stochastic", seed=5).codes,
                                          md.dequantize(md.quantize(x, qparams=got), mxp.bfloat16))
            w = mxp.quantize(xn, qparams=want)
            assert np.array_equal(bits(near), bits(w.codes)), (kw, qtype)
            w_stoch = mxp.quantize(xn, qparams=want, rounding="stochastic", seed=5).codes
            assert np.array_equal(bits(stoch), bits(w_stoch))
            assert np.array_equal(bits(deq), bits(mxp.dequantize(w, mxp.bfloat16)))


def test_moving_average_is_the_observer_fed_the_row_chunks(threads):
    xn = data(seed=2)
    for chunks, kw in (((8, 50), {}), ((8, 7), dict(axis=1)), ((9, 50), dict(axis=1, group_size=10))):
        xn2 = xn[:36] if kw.get("group_size") else xn   # groups: batches of equal rows, as the observer needs
        for sym, qtype in ((True, "int8"), (False, "uint8")):
            obs = mxp.MovingAverageObserver(qtype, symmetric=sym, momentum=0.75, **kw)
            for s in range(0, xn2.shape[0], chunks[0]):
                obs.update(xn2[s:s + chunks[0]])
            got = md.calibrate(da.from_array(xn2, chunks=chunks), qtype, symmetric=sym, observer="moving_average",
                               momentum=0.75, **kw)
            want = obs.qparams()
            assert got.scales.tobytes() == want.scales.tobytes() and np.array_equal(got.zero_points, want.zero_points)


def test_histogram_observers_equal_one_batch_and_stay_within_their_bound(threads):
    rng = np.random.default_rng(4)
    xn = (rng.laplace(size=(64, 96)) + 0.2).astype(np.float32)
    xn[3, 4], xn[7, 8] = np.nan, -np.inf
    x = da.from_array(xn, chunks=(16, 40))
    classes = {"percentile": mxp.PercentileObserver, "mse": mxp.MSEObserver, "kl": mxp.KLObserver}
    for name, cls in classes.items():
        for qtype, sym in (("int8", True), ("uint8", False), ("int4", True), ("float8_e5m2", True)):
            if name == "kl" and qtype == "int4":
                opts = dict(bins=512)
            else:
                opts = dict(percentile=99.9) if name == "percentile" else {}
            want = cls(qtype, symmetric=sym, **opts).update(xn).qparams()
            got = md.calibrate(x, qtype, symmetric=sym, observer=name, **opts)
            assert got.scales.tobytes() == want.scales.tobytes() and np.array_equal(got.zero_points, want.zero_points)
    # the percentile against the exact one and against an observer fed growing batches (g growths)
    fin = np.abs(xn[np.isfinite(xn)])
    width = fin.max() / 2048
    t = md.calibrate(x, "int8", observer="percentile", percentile=99.0).scale * 127
    assert abs(t - np.percentile(fin, 99.0)) <= width * 1.001
    order = np.argsort(np.abs(np.nan_to_num(xn, neginf=0)).max(axis=1))   # rows by their max: the range grows
    obs, growths, amax = mxp.PercentileObserver("int8", percentile=99.0), 0, 0.0
    for i in order:
        row = xn[i]
        m = np.abs(row[np.isfinite(row)]).max()
        growths += amax > 0 and m > amax
        amax = max(amax, m)
        obs.update(row)
    assert growths > 10
    assert abs(obs.qparams().scale * 127 - t) <= (growths / 2 + 2) * width


# ---- compare ---------------------------------------------------------------------------

EXACT = ("max_abs_error", "max_rel_error", "max_ulp", "worst_index", "nan_mismatches", "inf_mismatches", "count")
SUMMED = ("mean_rel_error", "mse", "rmse", "psnr_db", "snr_db", "cosine_similarity", "mean_ulp")
PCTS = ("p50_rel_error", "p90_rel_error", "p99_rel_error", "p999_rel_error")


@pytest.mark.parametrize("chunks", [(37, 50), (8, 50), (9, 7)])
def test_compare_merges_blocks_like_one_comparison(threads, chunks):
    ref = data(seed=6).astype(np.float64)
    test = ref.astype(mxp.bfloat16)
    test.flat[100], ref.flat[101], ref.flat[200] = np.nan, 0.0, np.inf      # mismatches, a zero reference
    clean_ref, clean_test = np.nan_to_num(ref, nan=1, posinf=1), np.nan_to_num(test, nan=1, posinf=1)
    for r, t in ((ref, test), (clean_ref, clean_test.astype(mxp.float8_e4m3fn))):
        want = mxp.compare(r, t)
        rd, td = da.from_array(r, chunks=chunks), da.from_array(t, chunks=chunks)
        got = md.compare(rd, td)
        for k in EXACT:
            assert got[k] == want[k], k
        assert np.array_equal(got.histogram, want.histogram) and np.array_equal(got.histogram_edges,
                                                                                want.histogram_edges)
        for k in SUMMED:
            assert got[k] == pytest.approx(want[k], rel=1e-12, abs=1e-300), k
        for k in PCTS:   # one pass: within the bucket's span, itself below 2^-5 relative
            assert abs(got[k] - want[k]) <= got.percentile_bounds[k] * (1 + 1e-12)
            assert got.percentile_bounds[k] <= 2 ** -5 * want[k] * 1.0001
        exact = md.compare(rd, td, exact_percentiles=True)
        for k in PCTS:
            assert exact[k] == want[k] and exact.percentile_bounds[k] == 0.0, k


def test_compare_exact_percentiles_with_many_values_in_one_bucket(threads):
    # 300k errors in a handful of buckets: the refinement counts by the next 16 bits before collecting
    ref = np.ones(300_000)
    test = 1 + np.random.default_rng(8).uniform(0.001, 0.0011, ref.size)
    want = mxp.compare(ref, test)
    from mxp.dask import _compare
    saved, _compare.COLLECT = _compare.COLLECT, 1000
    try:
        got = md.compare(da.from_array(ref, chunks=70_000), da.from_array(test, chunks=70_000), exact_percentiles=True)
    finally:
        _compare.COLLECT = saved
    for k in PCTS:
        assert got[k] == want[k], k


# ---- matmul -----------------------------------------------------------------------------

def test_matmul_one_k_block_is_mxp_matmul_and_k_blocks_round_once(threads):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((40, 96)).astype(mxp.bfloat16)
    b = rng.standard_normal((96, 30)).astype(mxp.bfloat16)
    got = md.matmul(da.from_array(a, chunks=(16, 96)), da.from_array(b, chunks=(96, 7))).compute()
    assert got.dtype == mxp.bfloat16 and np.array_equal(bits(got), bits(mxp.matmul(a, b)))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)) * 96 * 2.0 ** -24
    for out, compute in ((np.float32, None), (np.float32, np.float64), (mxp.bfloat16, None)):
        c = md.matmul(da.from_array(a, chunks=(16, 20)), da.from_array(b, chunks=(20, 11)), out_dtype=out,
                      compute=compute).compute()
        assert c.dtype == out
        # the float64 sum of float32 partials, rounded once: within the accumulation bound + half an ulp of out
        assert np.all(np.abs(c.astype(np.float64) - exact) <= bound + np.abs(exact) * mxp.finfo(out).eps / 2 * 1.0001)
    c = md.matmul(da.from_array(a, chunks=(16, 20)), da.from_array(b, chunks=(20, 11)), out_dtype=np.float32,
                  compute=np.float64).compute()
    assert np.array_equal(c, exact.astype(np.float32))   # float64 partials of 20 terms: exact, one rounding


# ---- on the cluster ---------------------------------------------------------------------

def test_every_operation_on_the_cluster_equals_single_machine(client):
    """One case of each, through worker processes (pickled graphs, blocks and merges)."""
    xn = data((40, 60), seed=13)
    x = da.from_array(xn, chunks=(9, 25))
    clean = np.nan_to_num(xn, posinf=0, nan=0)
    c = da.from_array(clean, chunks=(9, 25))
    qp = mxp.calibrate(clean, "int8", axis=1, group_size=5)
    cal = md.calibrate(c, "int8", axis=1, group_size=5)
    assert cal.scales.tobytes() == qp.scales.tobytes()
    pct = md.calibrate(c, "int8", observer="percentile", percentile=99.5)
    want_pct = mxp.PercentileObserver("int8", percentile=99.5).update(clean).qparams()
    assert pct.scales.tobytes() == want_pct.scales.tobytes()
    y, q, s = da.compute(md.astype(x, mxp.float8_e4m3fn, rounding="stochastic", seed=1),
                         md.quantize(c, qparams=qp, rounding="stochastic", seed=2).codes,
                         md.sum(c.astype(mxp.bfloat16)))
    assert np.array_equal(bits(y), bits(mxp.astype(xn, mxp.float8_e4m3fn, rounding="stochastic", seed=1)))
    assert np.array_equal(q, mxp.quantize(clean, qparams=qp, rounding="stochastic", seed=2).codes)
    assert s == np.sum(clean.astype(mxp.bfloat16))
    want = mxp.compare(xn, xn.astype(mxp.bfloat16))
    got = md.compare(x, x.astype(mxp.bfloat16), exact_percentiles=True)
    assert all(got[k] == want[k] for k in EXACT + PCTS)
    a, b = clean[:, :48].astype(mxp.bfloat16), clean[:, :20].repeat(2, axis=0)[:48].astype(mxp.bfloat16)
    m = md.matmul(da.from_array(a, chunks=(9, 48)), da.from_array(b, chunks=(48, 7))).compute()
    assert np.array_equal(bits(m), bits(mxp.matmul(a, b)))


# ---- failures and scale -----------------------------------------------------------------

def _slow(b):
    time.sleep(0.08)
    return b


def test_worker_killed_mid_conversion_is_recomputed(client, tmp_path):
    pytest.importorskip("zarr")
    xn = data((64, 4096), seed=10)
    md.to_zarr(da.from_array(xn, chunks=(2, 4096)), str(tmp_path / "in.zarr"))
    x = md.from_zarr(str(tmp_path / "in.zarr")).map_blocks(_slow, dtype=xn.dtype)   # ~1.3 s of tasks per worker
    y = md.astype(x, mxp.bfloat16, rounding="stochastic", seed=3)
    out = str(tmp_path / "out.zarr")
    future = client.compute(md.to_zarr(y, out, compute=False))
    pids = client.run(os.getpid)
    deadline = time.time() + 30
    while len([f for f in os.listdir(out) if not f.startswith(".")]) < 4 and time.time() < deadline:
        time.sleep(0.01)
    written = len([f for f in os.listdir(out) if not f.startswith(".")])
    assert 4 <= written < 32 and not future.done()
    victim = sorted(pids)[0]
    os.kill(pids[victim], signal.SIGKILL)               # our own worker process, mid-conversion
    future.result(timeout=60)
    client.wait_for_workers(2, timeout=60)
    assert sorted(client.run(os.getpid).values()) != sorted(pids.values())   # the nanny started a new one
    got = md.from_zarr(out).compute()
    assert np.array_equal(bits(got), bits(mxp.astype(xn, mxp.bfloat16, rounding="stochastic", seed=3)))


def test_array_larger_than_the_workers_memory_converts_out_of_core(client, tmp_path):
    zarr = pytest.importorskip("zarr")
    from conftest import WORKER_MEMORY
    rows, cols = 9728, 16384                                   # 637 MB of float32 > 2 x 300 MB
    src = da.arange(rows * cols, dtype=np.float32, chunks=cols * 128).reshape(rows, cols) * np.float32(1.0001e-3)
    md.to_zarr(src, str(tmp_path / "big.zarr"), compressor=None)
    x = md.from_zarr(str(tmp_path / "big.zarr"))                # 76 chunks of 8 MB
    assert x.nbytes > 2 * WORKER_MEMORY and x.chunks[0][0] == 128
    pids = client.run(os.getpid)
    md.to_zarr(md.astype(x, mxp.bfloat16), str(tmp_path / "big-bf16.zarr"), compressor=None)
    assert client.run(os.getpid) == pids                      # no worker was killed or restarted
    peak = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    assert max(peak.values()) < WORKER_MEMORY
    zin, zout = zarr.open_array(str(tmp_path / "big.zarr"), "r"), zarr.open_array(str(tmp_path / "big-bf16.zarr"), "r")
    for r0 in range(0, rows, 1024):
        assert np.array_equal(zout[r0:r0 + 1024], bits(mxp.astype(zin[r0:r0 + 1024], mxp.bfloat16)))


def test_command_line_converts_and_quantizes_on_a_scheduler(client, tmp_path):
    pytest.importorskip("zarr")
    xn = data((300, 64), seed=12)
    xn = np.nan_to_num(xn, posinf=0, nan=0)
    md.to_npy_shards(da.from_array(xn, chunks=(70, 64)), str(tmp_path / "in"))
    env = dict(os.environ)
    run = [sys.executable, "-m", "mxp.dask"]
    addr = client.scheduler.address
    p = subprocess.run(run + ["convert", str(tmp_path / "in"), str(tmp_path / "out.zarr"), "--to", "float8_e5m2",
                              "--rounding", "stochastic", "--seed", "2", "--scheduler", addr],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "100% Completed" in p.stderr and "float8_e5m2" in p.stdout
    got = md.from_zarr(str(tmp_path / "out.zarr")).compute()
    assert np.array_equal(bits(got), bits(mxp.astype(xn, mxp.float8_e5m2, rounding="stochastic", seed=2)))
    p = subprocess.run(run + ["quantize", str(tmp_path / "in"), str(tmp_path / "q"), "--axis", "1", "--qtype",
                              "uint8", "--asymmetric", "--scheduler", addr, "--no-progress"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    q, want = md.open_quantized(str(tmp_path / "q")), mxp.quantize(xn, "uint8", symmetric=False, axis=1)
    assert np.array_equal(q.codes.compute(), want.codes) and q.qparams.scales.tobytes() == want.qparams.scales.tobytes()
    p = subprocess.run(run + ["convert", str(tmp_path / "in"), str(tmp_path / "x.zarr"), "--to", "bfloat17",
                              "--scheduler", addr], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 1 and "unknown dtype 'bfloat17'" in p.stderr


def test_bad_input_gives_a_sentence(threads, tmp_path):
    x = da.from_array(data(), chunks=(9, 7))
    with pytest.raises(TypeError, match="unknown dtype 'bfloat17'"):
        md.astype(x, "bfloat17")
    with pytest.raises(ValueError, match="rounding"):
        md.astype(x, mxp.bfloat16, rounding="nearest")
    with pytest.raises(ValueError, match="chunks differ"):
        md.compare(x, x.rechunk((10, 10)))
    with pytest.raises(ValueError, match="shape"):
        md.compare(x, x[1:])
    a = da.ones((8, 12), chunks=(4, 6), dtype=np.float32)
    with pytest.raises(ValueError, match="column chunks .* differ from b's row chunks"):
        md.matmul(a, da.ones((12, 5), chunks=(4, 5), dtype=np.float32))
    with pytest.raises(ValueError, match="k 12 != 10"):
        md.matmul(a, da.ones((10, 5), dtype=np.float32))
    with pytest.raises(ValueError, match="cut groups of 5"):
        md.quantize(x, "int8", axis=1, group_size=5)
    with pytest.raises(ValueError, match="per tensor only"):
        md.calibrate(x, observer="kl", axis=1)
    with pytest.raises(ValueError, match="observer 'median'"):
        md.calibrate(x, observer="median")
    with pytest.raises(ValueError, match="qtype 'int3'"):
        md.calibrate(x, "int3")
    with pytest.raises(ValueError, match="pairs"):
        md.quantize(x, qparams=mxp.calibrate(np.ones((3, 3)), axis=1))
    with pytest.raises(ValueError, match="regular chunks"):
        md.to_zarr(da.ones(10, chunks=((3, 5, 2),)), str(tmp_path / "r.zarr"))
    os.makedirs(tmp_path / "shards")
    mxp.save(tmp_path / "shards" / "0.npy", np.zeros((2, 3), np.float32))
    mxp.save(tmp_path / "shards" / "1.npy", np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError, match="shards must agree"):
        md.from_npy_shards(str(tmp_path / "shards"))


# ---- a sharded safetensors checkpoint --------------------------------------------

def test_safetensors_shards_cast_on_the_cluster(client, tmp_path):
    """cast_safetensors: each shard's file is mxp.safetensors.cast of it
    alone with its place in the one stochastic stream (the float elements
    of the shards before it), whichever worker ran it; the index's
    total_size is the new bytes, its weight_map and the other files kept;
    python3 -m mxp.dask convert does the same on a folder."""
    import json
    import mxp.safetensors as st
    src, dst, one = tmp_path / "src", tmp_path / "dst", tmp_path / "one.safetensors"
    src.mkdir()
    rng = np.random.default_rng(9)
    shards = {"model-00001-of-00003.safetensors": {"a.weight": rng.standard_normal((30, 17)).astype(np.float32),
                                                   "pos": np.arange(5, dtype=np.int64)},
              "model-00002-of-00003.safetensors": {"b.weight": rng.standard_normal(1000).astype(np.float16)},
              "model-00003-of-00003.safetensors": {"c.weight": rng.standard_normal((8, 8)).astype(np.float32),
                                                   "c.bias": rng.standard_normal(8).astype(np.float32)}}
    weight_map = {}
    for name, tensors in shards.items():
        st.save(src / name, tensors, metadata={"format": "pt"})
        weight_map.update({k: name for k in tensors})
    (src / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 1},
                                                                  "weight_map": weight_map}))
    (src / "config.json").write_text('{"hidden_size": 8}')
    done = md.cast_safetensors(src, dst, mxp.bfloat16, rounding="stochastic", seed=4)
    assert done == {"model-00001-of-00003.safetensors": (1, 510), "model-00002-of-00003.safetensors": (1, 1000),
                    "model-00003-of-00003.safetensors": (2, 72)}
    offset = 0
    for name, tensors in shards.items():
        st.cast(src / name, one, mxp.bfloat16, "stochastic", "inf", 4, offset)
        assert (dst / name).read_bytes() == one.read_bytes()
        offset += sum(a.size for a in tensors.values() if a.dtype.kind == "f")
    index = json.loads((dst / "model.safetensors.index.json").read_text())
    assert index["weight_map"] == weight_map
    assert index["metadata"]["total_size"] == 2 * (510 + 1000 + 72) + 8 * 5
    assert (dst / "config.json").read_text() == '{"hidden_size": 8}'
    p = subprocess.run([sys.executable, "-m", "mxp.dask", "convert", str(src), str(tmp_path / "cli"), "--to",
                        "bfloat16", "--rounding", "stochastic", "--seed", "4", "--scheduler",
                        client.scheduler.address], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "3 safetensors shards" in p.stdout
    for name in shards:
        assert (tmp_path / "cli" / name).read_bytes() == (dst / name).read_bytes()

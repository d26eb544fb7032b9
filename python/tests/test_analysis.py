"""compare / roundtrip / recommend_dtype against NumPy float64 metrics, the
plots (files written without a display) and the tour."""
import os
import re
import struct
import subprocess
import sys

import numpy as np
import pytest

import mxp


def test_compare_metrics_match_numpy():
    rng = np.random.default_rng(0)
    ref = rng.standard_normal(10000) + 3
    test = ref.astype(mxp.bfloat16)
    r = mxp.compare(ref, test)
    t = test.astype(np.float64)
    err = np.abs(t - ref)
    assert r.max_abs_error == err.max() and r.count == 10000
    assert r.max_rel_error == pytest.approx((err / np.abs(ref)).max(), rel=1e-12)
    assert r.mse == pytest.approx(np.mean(err**2), rel=1e-12)
    assert r.psnr_db == pytest.approx(10 * np.log10(np.abs(ref).max() ** 2 / np.mean(err**2)), rel=1e-12)
    assert r.cosine_similarity == pytest.approx(ref @ t / np.linalg.norm(ref) / np.linalg.norm(t), rel=1e-12)
    assert r.p50_rel_error == pytest.approx(np.percentile(err / np.abs(ref), 50), rel=1e-9)
    assert r.histogram.sum() == r.count and r.histogram_edges.shape == (33,)
    assert set(r.as_dict()) >= {"psnr_db", "snr_db", "max_ulp", "nan_mismatches", "histogram"}
    with pytest.raises(ValueError):
        mxp.compare(np.ones(3), np.ones(4))


def test_roundtrip_rows_equal_compare_of_the_cast():
    x = np.random.default_rng(1).standard_normal(5000) * 100
    rows = mxp.roundtrip(x, ["float16", mxp.bfloat16, "float8_e4m3fn"])
    assert [r.dtype for r in rows] == ["float16", "bfloat16", "float8_e4m3fn"]
    for r in rows:
        c = mxp.compare(x, x.astype(np.dtype(r.dtype) if r.dtype == "float16" else getattr(mxp, r.dtype)))
        assert r.max_rel_error == c.max_rel_error and r.psnr_db == c.psnr_db
    assert rows[0].bytes == 10000 and "float16" in str(rows)


def test_recommend_dtype():
    x = np.random.default_rng(2).standard_normal(10000)
    assert mxp.recommend_dtype(x, "psnr>=30").dtype == "float8_e4m3fn"
    assert mxp.recommend_dtype(x * 1e4, "no-overflow").dtype == "float8_e5m2"
    assert mxp.recommend_dtype(x * 1e5, "no-overflow").dtype == "bfloat16"  # beyond float16's 65504 too
    a = mxp.recommend_dtype(x, "relerr<=1e-6")
    assert a.dtype == "float32" and "float32" in a.reason and a.row.max_rel_error <= 1e-6
    for bad in ("psnr=40", "psnr<=40", "speed>=1", 40):
        with pytest.raises(ValueError):
            mxp.recommend_dtype(x, bad)


ALL = ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e4m3fn", "float8_e4m3", "float8_e4m3fnuz",
       "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e3m4", "float16", "bfloat16", "float32",
       "float64")


def test_recommend_dtype_among_candidates():
    assert mxp._mxp._advisor_candidates_all() == ALL  # mxp_advisor_candidates_all: smallest first, no e8m0
    # values float4 holds exactly: float4 wins among all
    a = mxp.recommend_dtype(np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -6, -0.5]), "psnr>=40", candidates="all")
    assert a.dtype == "float4_e2m1fn" and a.row.dtype == "float4_e2m1fn" and a.row.bytes == 5
    assert a.reason == "float4_e2m1fn holds the range with PSNR inf dB >= 40 dB"
    # storage bits, not bytes: float4's 36.1 dB beats the exact float6/float8 (a byte each in memory)
    x = np.array([1, 2, 3, 4, 6, 0.5, 1.25], np.float32)
    assert mxp.recommend_dtype(x, "psnr>=30", candidates="all").dtype == "float4_e2m1fn"
    a = mxp.recommend_dtype(x, "psnr>=40", candidates="all")
    assert a.reason == "float4_e2m1fn's PSNR 36.1 dB < 40 dB; float6_e2m3fn holds the range with PSNR inf dB >= 40 dB"
    # float6's range: beyond float4's 6 and float6_e2m3fn's 7.5 (they saturate: overflow)
    x = np.array([28, 24, 20, 16, 12, -10, 1, 0.5, 0.25, 1.5, 0], np.float32)
    for req in ("psnr>=40", "no-overflow"):
        a = mxp.recommend_dtype(x, req, candidates="all")
        assert a.dtype == "float6_e3m2fn"
        assert a.reason.startswith("max |x| = 28 exceeds float4_e2m1fn's 6, float6_e2m3fn's 7.5; float6_e3m2fn holds")
    # beyond every float8: 16 bits; names, NumPy and mxp dtypes, any order
    a = mxp.recommend_dtype(np.array([64000, 1, -2, 0.5]), "no-overflow",
                            candidates=[np.float64, "float8_e5m2", np.dtype(np.float16), mxp.float8_e4m3fn, "bf16"])
    assert a.dtype == "float16"
    assert a.reason == ("max |x| = 6.4e+04 exceeds float8_e5m2's 57344, float8_e4m3fn's 448; "
                        "float16 holds the range (max |x| = 6.4e+04) with PSNR inf dB")
    # equal bits: the better metric (float8_e3m4's PSNR on normal data)
    r = np.random.default_rng(2).standard_normal(10000)
    rows = {t.dtype: t for t in mxp.roundtrip(r, list(ALL))}
    a = mxp.recommend_dtype(r, "psnr>=42", candidates="all")
    assert a.dtype == "float8_e3m4" and a.row.psnr_db == rows["float8_e3m4"].psnr_db
    assert max(t.psnr_db for t in rows.values() if t.dtype.startswith("float8")) == a.row.psnr_db
    # None and the six given as a list: today's advisor, the same sentence
    for req in ("psnr>=30", "no-overflow", "relerr<=1e-3"):
        want = mxp.recommend_dtype(r * 100, req)
        for cand in (None, list(mxp._mxp.ADVISOR_CANDIDATES), tuple(mxp._mxp.ADVISOR_CANDIDATES)):
            got = mxp.recommend_dtype(r * 100, req, candidates=cand)
            assert (got.dtype, got.reason) == (want.dtype, want.reason)


def test_recommend_dtype_among_none_meets_and_bad_candidates():
    r = np.random.default_rng(2).standard_normal(10000)
    rows = mxp.roundtrip(r, ["float4_e2m1fn", "float8_e5m2"])
    want = (f"float4_e2m1fn's PSNR {rows[0].psnr_db:.1f} dB < 60 dB; float8_e5m2's PSNR {rows[1].psnr_db:.1f} dB"
            f" < 60 dB; no candidate meets PSNR >= 60 dB; the closest is float8_e5m2 (PSNR {rows[1].psnr_db:.1f} dB)")
    with pytest.raises(ValueError) as e:
        mxp.recommend_dtype(r, "psnr>=60", candidates=["float8_e5m2", "float4_e2m1fn"])
    assert str(e.value) == "recommend dtype: " + want
    with pytest.raises(ValueError, match=r"no candidate holds the range \(max \|x\| = 1e\+03\); the closest is "
                                         r"float6_e2m3fn \(2 values overflow or turn into NaN\)"):
        mxp.recommend_dtype([1000.0, 100, 1, 0.5], "no-overflow", candidates=["float6_e2m3fn", "float4_e2m1fn"])
    for bad, exc, msg in ((["float16", "int8"], TypeError, "candidate 1 (int8) is not a float dtype"),
                          ([mxp.int4], TypeError, "not a float dtype"),
                          (["abc"], TypeError, "abc"), ([np.complex64], TypeError, "complex64"),
                          ([], ValueError, "1 to 64 candidates, not 0"),
                          (["float16", np.float16], ValueError, "candidate 1 (float16) repeats candidate 0"),
                          ("float16", ValueError, "expected None, 'all' or a sequence of dtypes"),
                          (3, TypeError, "expected None"), (np.float16, TypeError, "expected None")):
        with pytest.raises(exc, match=re.escape(msg)):
            mxp.recommend_dtype(r, "psnr>=20", candidates=bad)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_plots_are_written_without_a_display(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.delenv("DISPLAY", raising=False)
    rng = np.random.default_rng(3)
    x = rng.standard_normal(2000)
    from mxp import plot
    plot.error_histogram(x, x.astype(mxp.bfloat16), path=tmp_path / "e.png")
    plot.roundtrip(x, path=tmp_path / "r.png")
    plot.quantization(x, "int8", path=tmp_path / "q.png")
    assert png_size(tmp_path / "e.png") == (700, 400)
    assert png_size(tmp_path / "r.png") == (800, 400)
    assert png_size(tmp_path / "q.png") == (700, 400)
    assert all(os.path.getsize(tmp_path / f) > 5000 for f in ("e.png", "r.png", "q.png"))


def test_tour_runs_and_writes_its_figures(tmp_path):
    pytest.importorskip("matplotlib")
    env = dict(os.environ)
    env.pop("DISPLAY", None)
    r = subprocess.run([sys.executable, "-m", "mxp", "--out", str(tmp_path / "tour"), "--n", "64"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    for word in ("bfloat16", "stochastic", "PSNR", "float8_e5m2", "figures"):
        assert word in r.stdout
    assert len(os.listdir(tmp_path / "tour")) == 3


def test_training_figure_from_mxp_train_json(tmp_path):
    pytest.importorskip("matplotlib")
    cli = os.environ.get("MXP_CLI")
    if not cli:
        pytest.skip("MXP_CLI not set (ctest sets it)")
    r = subprocess.run([cli, "train", "--epochs", "1", "--configs", "fp32,fp16_scaled", "--json"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (tmp_path / "t.json").write_text(r.stdout)
    from mxp import plot
    plot.training(tmp_path / "t.json", path=tmp_path / "t.png")
    assert png_size(tmp_path / "t.png") == (900, 400)
    with pytest.raises(ValueError):
        plot.training({"nothing": 1})


def test_overflow_never_ranks_above_a_dtype_that_holds_the_range():
    """A NaN or inf mismatch is an infinite error: MSE +inf, PSNR -inf."""
    x = np.random.default_rng(3).standard_normal(10000) * 3
    x[::500] = 1000.0  # float8_e4m3fn: NaN (max 448); float8_e5m2 holds it
    table = mxp.roundtrip(x, dtypes=["float8_e4m3fn", "float8_e5m2"])
    rows = {r.dtype: r for r in table}
    e4, e5 = rows["float8_e4m3fn"], rows["float8_e5m2"]
    assert e4.nan_mismatches == 20 and e4.psnr_db == -np.inf and e4.mse == np.inf
    assert np.isfinite(e5.psnr_db) and e5.psnr_db > e4.psnr_db
    c = mxp.compare(np.array([1.0, 2.0]), np.array([1.0, np.nan]))
    assert c.psnr_db == -np.inf and c.snr_db == -np.inf and c.rmse == np.inf and c.count == 1

"""mxp_compare's precision metrics against NumPy, through ctypes on libmxp.so.

The reference here follows docs/analysis.md (and src/analysis/compare.c)
step by step in float64: the statistics cover the pairs where both values
are finite; a pair with exactly one NaN, or with differing infinities, is a
mismatch that makes the maxima +inf.  Relative error is |t - r| / |r|, or
|t - r| / (the test dtype's smallest normal) where r == 0.

Maxima, counts, the worst index, the ULP maximum, the histogram and the
percentiles (sorted, linear interpolation at q (n - 1), as np.percentile's
default) are elementwise or order-free: they must match exactly.  Sums
(mean relative error, MSE, RMSE, PSNR, SNR, cosine, mean ULP) are
accumulated left to right in C and pairwise in NumPy: relative 1e-12.

Run by ctest (pytest_compare) with MXP_LIB naming libmxp.so; by hand:
    MXP_LIB=build/libmxp.so /usr/bin/python3 -m pytest -q tests/python/test_compare_numpy.py
"""
import math
import os
import sys
import zlib

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxp_ctypes as mx  # noqa: E402

RTOL = 1e-12
# (mantissa bits, minimum exponent 1 - bias) of the float test dtypes
FLOAT_LAYOUT = {np.dtype(np.float16): (10, -14), np.dtype(np.float32): (23, -126), np.dtype(np.float64): (52, -1022)}


def rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def ulp_at(r, test_dtype):
    mant, emin = FLOAT_LAYOUT[test_dtype]
    e = np.full(r.shape, emin, dtype=np.int64)
    nz = r != 0
    _, ex = np.frexp(r[nz])  # |r| = m 2^ex, m in [0.5, 1)
    e[nz] = np.maximum(ex.astype(np.int64) - 1, emin)
    return np.ldexp(1.0, e - mant)


def bin_of(rel):
    """The histogram bin, with C's log10 (math.log10) as compare.c uses it."""
    if not rel > 1e-12:
        return 0
    b = math.floor((math.log10(rel) + 12.0) * mx.COMPARE_BINS / 15.0)
    return min(max(b, 0), mx.COMPARE_BINS - 1)


def percentile(sorted_vals, q):
    n = len(sorted_vals)
    pos = q * (n - 1)
    lo = math.floor(pos)
    hi = lo + 1 if lo + 1 < n else lo
    f = pos - lo
    return sorted_vals[lo] + f * (sorted_vals[hi] - sorted_vals[lo])


def db(power_ratio):
    return -math.inf if power_ratio == 0 else 10 * math.log10(power_ratio)


def numpy_report(ref, test):
    """The report's fields from NumPy, in float64."""
    r = np.ascontiguousarray(ref, dtype=np.float64).ravel()
    t = np.ascontiguousarray(test, dtype=np.float64).ravel()
    rn, tn = np.isnan(r), np.isnan(t)
    nan_mismatch = rn != tn
    no_nan = ~rn & ~tn
    inf_pair = no_nan & (np.isinf(r) | np.isinf(t))
    inf_mismatch = inf_pair & (r != t)
    finite = no_nan & ~inf_pair
    mismatch = nan_mismatch | inf_mismatch
    idx = np.flatnonzero(finite)
    a, b = r[finite], t[finite]
    d = np.abs(b - a)
    tiny = float(np.finfo(test.dtype).tiny)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(a != 0, d / np.abs(a), d / tiny)
    out = {
        "count": len(a),
        "nan_mismatches": int(nan_mismatch.sum()),
        "inf_mismatches": int(inf_mismatch.sum()),
    }
    if mismatch.any():
        out["worst_index"] = int(np.flatnonzero(mismatch)[0])
        out["max_abs_error"] = out["max_rel_error"] = math.inf
    else:
        out["worst_index"] = int(idx[np.argmax(d)]) if len(a) else -1
        out["max_abs_error"] = float(d.max()) if len(a) else 0.0
        out["max_rel_error"] = float(rel.max()) if len(a) else 0.0
    if len(a) == 0:
        if mismatch.any():
            out.update(mse=math.inf, rmse=math.inf, psnr_db=-math.inf, snr_db=-math.inf)
        return out, np.zeros(0)
    u = d / ulp_at(a, test.dtype)
    srt = np.sort(rel)
    mse = float(np.mean(d * d))
    sum_sq, sum_r2, sum_t2 = float(np.sum(d * d)), float(np.sum(a * a)), float(np.sum(b * b))
    if sum_r2 == 0 and sum_t2 == 0:
        cos = 1.0
    elif sum_r2 == 0 or sum_t2 == 0:
        cos = 0.0
    else:
        cos = float(np.dot(a, b) / (np.sqrt(sum_r2) * np.sqrt(sum_t2)))
    out.update({
        "mean_rel_error": float(np.mean(rel)),
        "p50_rel_error": percentile(srt, 0.5), "p90_rel_error": percentile(srt, 0.9),
        "p99_rel_error": percentile(srt, 0.99), "p999_rel_error": percentile(srt, 0.999),
        "mse": mse, "rmse": math.sqrt(mse),
        "psnr_db": math.inf if sum_sq == 0 else db(float(np.max(np.abs(a))) ** 2 / mse),
        "snr_db": math.inf if sum_sq == 0 else db(sum_r2 / sum_sq),
        "cosine_similarity": cos,
        "max_ulp": float(u.max()), "mean_ulp": float(np.mean(u)),
    })
    if mismatch.any():  # an infinite error: no ranking by MSE or PSNR hides it
        out.update(mse=math.inf, rmse=math.inf, psnr_db=-math.inf, snr_db=-math.inf)
    return out, rel


EXACT = ["count", "nan_mismatches", "inf_mismatches", "worst_index", "max_abs_error", "max_rel_error", "max_ulp",
         "p50_rel_error", "p90_rel_error", "p99_rel_error", "p999_rel_error"]
SUMS = ["mean_rel_error", "mse", "rmse", "psnr_db", "snr_db", "cosine_similarity", "mean_ulp"]


def check_against_numpy(ref, test):
    rep = mx.compare(mx.from_numpy(ref), mx.from_numpy(test))
    want, rel = numpy_report(ref, test)
    for name in EXACT:
        if name in want:
            assert getattr(rep, name) == want[name], "%s: mxp %r, NumPy %r" % (name, getattr(rep, name), want[name])
    for name in SUMS:
        if name not in want:
            continue
        got, w = getattr(rep, name), want[name]
        if math.isinf(w):
            assert got == w, "%s: mxp %r, NumPy %r" % (name, got, w)
        else:
            assert got == pytest.approx(w, rel=RTOL, abs=0), "%s: mxp %r, NumPy %r" % (name, got, w)
    # the percentiles also agree with np.percentile's own arithmetic
    if len(rel):
        np_p = np.percentile(rel, [50, 90, 99, 99.9])
        got_p = [rep.p50_rel_error, rep.p90_rel_error, rep.p99_rel_error, rep.p999_rel_error]
        assert got_p == pytest.approx(list(np_p), rel=RTOL, abs=1e-300)
    # histogram: edges 10^(-12 + 15 i / 32), counts per bin summing to count
    edges = [rep.histogram_edges[i] for i in range(mx.COMPARE_BINS + 1)]
    assert edges == pytest.approx([10.0 ** (-12 + 15 * i / 32) for i in range(33)], rel=RTOL)
    hist = np.zeros(mx.COMPARE_BINS, dtype=np.int64)
    for e in rel:
        hist[bin_of(float(e))] += 1
    assert list(rep.histogram) == list(hist)
    assert sum(rep.histogram) == rep.count
    return rep


# ---- random arrays: the rounding error of a narrower dtype, and noise ------

SIZES = [1, 7, 1000, 4099]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("narrow", [np.float16, np.float32])
def test_compare_f64_reference_against_its_rounding(n, narrow):
    x = rng("round", n, np.dtype(narrow).name).standard_normal(n) * 3.0
    check_against_numpy(x, x.astype(narrow))


@pytest.mark.parametrize("n", SIZES)
def test_compare_f32_reference_against_f16(n):
    x = (rng("f32-f16", n).standard_normal(n) * 100).astype(np.float32)
    rep = check_against_numpy(x, x.astype(np.float16))
    assert rep.max_ulp <= 0.5  # float16 rounding is correct (below its overflow)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("n", SIZES)
def test_compare_noise(n, dtype):
    g = rng("noise", n, np.dtype(dtype).name)
    x = g.uniform(-2, 2, n).astype(dtype)
    y = (x.astype(np.float64) * (1 + g.standard_normal(n) * 1e-3) + g.standard_normal(n) * 1e-4).astype(dtype)
    check_against_numpy(x, y)


def test_compare_2d_views():
    g = rng("views")
    x = g.standard_normal((64, 48)).astype(np.float32)
    y = (x + g.standard_normal((64, 48)).astype(np.float32) * 0.01).astype(np.float32)
    check_against_numpy(x.T, y.T)  # transposes: non-contiguous, C order of the view
    check_against_numpy(x[::-3, 5:40:2], y[::-3, 5:40:2])


def test_compare_zeros_in_reference():
    x = np.array([0.0, 0.0, 1.5, -2.0, 0.0, 3.0], dtype=np.float32)
    y = np.array([0.0, 1e-3, 1.5, -2.5, -1e-30, 3.0], dtype=np.float32)
    rep = check_against_numpy(x, y)
    assert rep.max_rel_error == float(np.float32(1e-3)) / float(np.finfo(np.float32).tiny)
    y16 = np.array([0.0, 1e-3, 1.5, -2.5, 0.0, 3.0], dtype=np.float16)
    check_against_numpy(x, y16)


def test_compare_nan_and_inf():
    x = np.array([1.0, np.nan, np.nan, np.inf, np.inf, -np.inf, 2.0, 4.0], dtype=np.float32)
    y = np.array([1.25, np.nan, 1.0, np.inf, -np.inf, 5.0, np.nan, 3.0], dtype=np.float32)
    rep = check_against_numpy(x, y)
    assert (rep.nan_mismatches, rep.inf_mismatches, rep.count, rep.worst_index) == (2, 2, 2, 2)
    assert math.isinf(rep.max_abs_error) and math.isinf(rep.max_rel_error)
    # mismatches are infinite errors; the finite pairs' means stay
    assert math.isinf(rep.mse) and rep.mse > 0 and math.isinf(rep.psnr_db) and rep.psnr_db < 0
    assert rep.mean_rel_error == pytest.approx((0.25 + 0.25) / 2, rel=1e-15)


def test_compare_identical_and_all_zero():
    x = rng("same").standard_normal(100).astype(np.float32)
    rep = check_against_numpy(x, x.copy())
    assert rep.mse == 0 and math.isinf(rep.psnr_db) and math.isinf(rep.snr_db)
    assert rep.cosine_similarity == 1.0  # equal norms: dot / sum, exactly 1
    z = np.zeros(10, dtype=np.float32)
    rep = check_against_numpy(z, z.copy())
    assert rep.cosine_similarity == 1.0
    rep = check_against_numpy(z, np.full(10, 1e-3, dtype=np.float32))
    assert rep.cosine_similarity == 0.0 and rep.snr_db == -math.inf


def test_compare_errors():
    a = mx.from_numpy(np.zeros(3, dtype=np.float32))
    b = mx.from_numpy(np.zeros(4, dtype=np.float32))
    with pytest.raises(mx.MxpError) as e:
        mx.compare(a, b)
    assert e.value.status == mx.ERR_SHAPE
    empty = mx.from_numpy(np.zeros(0, dtype=np.float32))
    with pytest.raises(mx.MxpError) as e:
        mx.compare(empty, empty)
    assert e.value.status == mx.ERR_INVALID_ARGUMENT and "empty" in e.value.message

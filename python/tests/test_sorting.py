"""Sorting and searching on the mxp dtypes -- np.sort (every kind),
argsort, unique, median, percentile, searchsorted, argmax/argmin along
axes -- against the same calls on the exactly widened float64 values, with
NaNs, +-0 and infinities; the C library's radix sort and comparison table
behind them (tests/ops/test_sort.c has every bit pattern)."""
import numpy as np
import pytest

import mxp
from mxptest import FLOATS, all_values, bits


def sample(t, n=5000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 4
    x[::97] = np.nan
    x[::101] = 0.0
    x[::103] = -0.0
    if np.dtype(t) != np.dtype(mxp.float8_e4m3fn):
        x[::107] = np.inf
        x[::109] = -np.inf
    return x.astype(t)


@pytest.mark.parametrize("t", FLOATS)
@pytest.mark.parametrize("kind", ["quicksort", "heapsort", "stable"])
def test_sort_equals_float64_sort(t, kind):
    x = sample(t)
    got = np.sort(x, kind=kind)
    want = np.sort(x.astype(np.float64), kind="stable")
    assert got.dtype == np.dtype(t)
    w = got.astype(np.float64)
    assert np.array_equal(np.isnan(w), np.isnan(want))  # NaNs last
    assert np.array_equal(w[~np.isnan(w)], want[~np.isnan(want)])


@pytest.mark.parametrize("t", FLOATS)
def test_stable_argsort_equals_float64(t):
    x = sample(t, seed=1)
    assert np.array_equal(np.argsort(x, kind="stable"), np.argsort(x.astype(np.float64), kind="stable"))
    # a 2-d array along both axes, and a strided view
    y = sample(t, 6000, seed=2).reshape(60, 100)
    for axis in (0, 1, -1):
        assert np.array_equal(np.argsort(y, axis=axis, kind="stable"),
                              np.argsort(y.astype(np.float64), axis=axis, kind="stable"))
    v = y[::2, ::-3]
    assert np.array_equal(np.argsort(v, kind="stable"), np.argsort(v.astype(np.float64), kind="stable"))
    s = v.copy()
    s.sort(axis=0)
    assert np.array_equal(s.astype(np.float64), np.sort(v.astype(np.float64), axis=0), equal_nan=True)


@pytest.mark.parametrize("t", FLOATS)
def test_every_pattern_sorts(t):
    v = all_values(t)
    rng = np.random.default_rng(3)
    x = v[rng.permutation(v.size)]
    got = np.sort(x).astype(np.float64)
    want = np.sort(x.astype(np.float64))
    assert np.array_equal(got, want, equal_nan=True)


@pytest.mark.parametrize("t", FLOATS)
def test_unique_median_percentile_searchsorted(t):
    x = sample(t, seed=4)
    f = x.astype(np.float64)
    u = np.unique(x)
    assert u.dtype == np.dtype(t)
    # NumPy folds NaNs into one only for dtype.kind 'f' (ml_dtypes' types, kind
    # 'V' like these, keep every NaN too; docs/python.md)
    uf = u.astype(np.float64)
    assert np.array_equal(uf[~np.isnan(uf)], np.unique(f[~np.isnan(f)]))
    assert np.isnan(uf).sum() == np.isnan(f).sum()
    finite = x[np.isfinite(f)]
    ff = finite.astype(np.float64)
    assert float(np.median(finite)) == float(np.array(np.median(ff), t))
    for q in (5, 50, 95):
        assert float(np.percentile(finite, q, method="lower")) == np.percentile(ff, q, method="lower")
    s = np.sort(finite)
    queries = sample(t, 300, seed=5)
    for side in ("left", "right"):
        assert np.array_equal(np.searchsorted(s, queries, side=side),
                              np.searchsorted(s.astype(np.float64), queries.astype(np.float64), side=side))


@pytest.mark.parametrize("t", FLOATS)
def test_argmax_argmin_first_nan_first_extreme(t):
    x = np.array([1.0, -0.0, 3.0, 0.0, 3.0, -2.0], t)
    assert np.argmax(x) == 2 and np.argmin(x) == 5
    assert np.argmax(np.array([-0.0, 0.0], t)) == 0 and np.argmin(np.array([0.0, -0.0], t)) == 0
    x[3] = np.nan
    assert np.argmax(x) == 3 and np.argmin(x) == 3
    y = sample(t, 6000, seed=6).reshape(100, 60)
    f = y.astype(np.float64)
    for axis in (None, 0, 1):
        assert np.array_equal(np.argmax(y, axis=axis), np.argmax(f, axis=axis))
        assert np.array_equal(np.argmin(y, axis=axis), np.argmin(f, axis=axis))
    with pytest.raises(ValueError):
        np.argmax(np.array([], t))
    big = np.random.default_rng(7).standard_normal(100003).astype(t)  # many blocks
    assert np.argmax(big) == np.argmax(big.astype(np.float64))
    assert np.argmin(big[::-1]) == np.argmin(big[::-1].astype(np.float64))


def test_sorting_keeps_the_bits():
    x = np.array([0.5, -0.0, 0.0, -0.0, 1.0], mxp.bfloat16)
    s = np.sort(x, kind="stable")
    assert bits(s).tolist() == bits(x[[1, 2, 3, 0, 4]]).tolist()  # -0 == +0: the input's order


@pytest.mark.parametrize("t", FLOATS)
def test_histogram_isclose_allclose(t):
    x = sample(t, 4000, seed=8)
    x = x[np.isfinite(x.astype(np.float64))]
    f = x.astype(np.float64)
    edges = [-2.0, -0.5, 0.0, 0.5, 2.0]
    assert np.array_equal(np.histogram(x, bins=edges)[0], np.histogram(f, bins=edges)[0])
    h, e = np.histogram(x, bins=10)
    assert h.sum() == x.size and e.dtype == np.dtype(t)  # edges in the input's type, as NumPy does for float16
    assert np.isclose(x, f).all() and np.allclose(x, f)
    assert not np.isclose(x[:1], f[:1] + 1).any()
    np.testing.assert_allclose(x, f)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(x, f + 1)

"""mxp.sum/mean/prod/var/std along any axes: a wide accumulator and one
rounding, against float64 results rounded once -- where NumPy's own
np.sum(x, axis=0) on these dtypes rounds each row's partial sum."""
import numpy as np
import pytest

import mxp
from mxptest import FLOATS, bits


def rounded(v, t):
    return np.asarray(v, np.float64).astype(t)


def close_in_type(got, want, t, ulps=1):
    """got within `ulps` units of the type of want rounded once."""
    g, w = np.asarray(got).astype(np.float64), np.asarray(want, np.float64)
    spacing = np.spacing(np.abs(w).astype(t)).astype(np.float64)
    assert np.all(np.abs(g - rounded(w, t).astype(np.float64)) <= ulps * spacing), (g, w)


@pytest.mark.parametrize("t", FLOATS)
def test_sum_and_mean_along_every_axis(t):
    scale = 0.05 if t is mxp.float8_e4m3fn else 1.0
    x = (np.random.default_rng(1).standard_normal((300, 7, 5)) * scale).astype(t)
    f = x.astype(np.float64)
    for axis in (None, 0, 1, 2, (0, 2), -1):
        s = mxp.sum(x, axis=axis)
        assert np.asarray(s).dtype == np.dtype(t)
        close_in_type(s, f.sum(axis=axis), t)  # float32 pairwise sums: within one ulp of the exact
        close_in_type(mxp.mean(x, axis=axis), f.mean(axis=axis), t)
    assert mxp.sum(x, axis=1, keepdims=True).shape == (300, 1, 5)
    assert mxp.sum(x, axis=0, dtype=np.float32).dtype == np.float32
    exact = mxp.sum(x, axis=0, acc="float64")
    assert np.array_equal(bits(exact), bits(rounded(f.sum(axis=0), t)))  # float64 sums of these are exact
    if t is mxp.bfloat16:  # NumPy's axis-0 sum drifts; mxp's does not
        col = np.random.default_rng(2).standard_normal((4096, 4)).astype(t)
        truth = col.astype(np.float64).sum(axis=0)
        ours = np.abs(mxp.sum(col, axis=0).astype(np.float64) - truth)
        numpys = np.abs(np.sum(col, axis=0).astype(np.float64) - truth)
        assert ours.max() <= numpys.max()
        assert ours.max() <= float(np.spacing(np.array(np.abs(truth).max(), t)))


@pytest.mark.parametrize("t", FLOATS)
def test_var_std_prod_are_wide(t):
    x = np.random.default_rng(3).standard_normal(2000).astype(t)
    f = x.astype(np.float64)
    close_in_type(mxp.var(x), f.var(), t)
    close_in_type(mxp.std(x, ddof=1), f.std(ddof=1), t)
    if t is mxp.float8_e4m3fn:  # NumPy squares and sums in float8: the sum overflows 448 to NaN
        with np.errstate(all="ignore"):
            assert np.isnan(float(np.std(x)))
        assert np.isfinite(float(mxp.std(x)))
    p = np.array([1.5, 2.0, -0.5, 3.0], t)
    assert float(mxp.prod(p)) == float(rounded(np.prod(p.astype(np.float64)), t))
    m = np.arange(12, dtype=np.float32).reshape(3, 4).astype(t)
    close_in_type(mxp.var(m, axis=0), m.astype(np.float64).var(axis=0), t)


def test_reductions_refuse_bad_input():
    x = np.ones((2, 3), mxp.bfloat16)
    axis_error = getattr(np, "exceptions", np).AxisError  # ValueError and IndexError both, as NumPy's
    with pytest.raises(axis_error, match="axis"):
        mxp.sum(x, axis=2)
    with pytest.raises(ValueError):
        mxp.mean(x, axis=-3)
    with pytest.raises(TypeError):
        mxp.sum(np.array(["a"]))
    with pytest.raises(TypeError):
        mxp.sum(x, dtype="not a dtype")
    with pytest.raises(ValueError):
        mxp._mxp._reduce(x, "median", None, False, 0, None, None)
    assert float(mxp.sum(np.zeros(0, mxp.bfloat16))) == 0.0

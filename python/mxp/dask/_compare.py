"""mxp.dask.compare: mxp.compare's metrics of two Dask arrays, computed
block by block (mxp_compare_piece) and merged in a tree (mxp_compare_merge).

Counts, maxima, the histogram and worst_index merge exactly; the means and
ratios come from merged float64 sums through mxp_compare_finish (equal to
mxp.compare up to float64 reassociation).  Percentiles of the relative
error: the C library's select over the pieces (mxp_compare_select, its
buckets counted per block by mxp_compare_buckets and merged in the tree by
mxp_compare_buckets_merge): one pass counts the errors' bit patterns by
their top 16 bits (every value lies in its bucket's [smallest, largest], a
relative width below 2^-5); exact_percentiles=True refines the buckets that
hold the wanted ranks in further passes until the ranks are exact."""
import numpy as np
import dask

from .. import _mxp
from .._analysis import CompareResult
from ._blocks import as_dask

PERCENTILES = ("p50_rel_error", "p90_rel_error", "p99_rel_error", "p999_rel_error")
COLLECT = 0  # the errors counted one bucket per value at most: 0, the library's default (2^19)
FAN_IN = 8


# ---- one block pair, and the merges ----------------------------------------------

def _global_index(local, bshape, start, shape):
    idx = np.unravel_index(int(local), bshape)
    return int(np.ravel_multi_index(tuple(i + s for i, s in zip(idx, start)), shape))


def _buckets(rel, groups, shift):
    return [_mxp._compare_buckets(rel, prefix, prefix_shift, shift) for prefix, prefix_shift in groups]


def _first_pass(r, t, start, shape, groups, shift):
    """The block's report and sums (worst_index counted in the whole) and
    its buckets of pass 0."""
    rep, sums, rel = _mxp._compare_piece(r, t, True)
    if rep["worst_index"] >= 0:
        rep["worst_index"] = _global_index(rep["worst_index"], r.shape, start, shape)
    return (rep, sums), _buckets(rel, groups, shift)


def _refine_pass(r, t, groups, shift):
    return _buckets(_mxp._compare_piece(r, t, True)[2], groups, shift)


def _merge_refine(parts):
    return [_mxp._compare_buckets_merge([p[g] for p in parts]) for g in range(len(parts[0]))]


def _merge_first(parts):
    return _mxp._compare_merge([p[0] for p in parts]), _merge_refine([p[1] for p in parts])


def _tree(leaves, merge):
    """Delayed merges of the leaves, FAN_IN at a time, down to one."""
    while len(leaves) > 1:
        leaves = [dask.delayed(merge)(leaves[i:i + FAN_IN]) if len(leaves[i:i + FAN_IN]) > 1 else leaves[i]
                  for i in range(0, len(leaves), FAN_IN)]
    return leaves[0]


# ---- compare ---------------------------------------------------------------------

def _pairs(reference, test):
    import dask.array as da
    if isinstance(reference, da.Array) and isinstance(test, np.ndarray) and test.shape == reference.shape:
        test = da.from_array(test, chunks=reference.chunks)     # a NumPy side is chunked like the Dask one
    if isinstance(test, da.Array) and isinstance(reference, np.ndarray) and test.shape == reference.shape:
        reference = da.from_array(reference, chunks=test.chunks)
    r, t = as_dask(reference, "compare: reference"), as_dask(test, "compare: test")
    if r.shape != t.shape:
        raise ValueError(f"compare: reference has shape {r.shape}, test {t.shape}")
    if r.chunks != t.chunks:
        raise ValueError(f"compare: the chunks differ (reference {r.chunks}, test {t.chunks}); "
                         "rechunk one like the other, e.g. test.rechunk(reference.chunks)")
    if r.size == 0:
        raise ValueError("compare: the arrays are empty")
    starts = [np.cumsum((0,) + c)[:-1] for c in r.chunks]
    rb, tb = r.to_delayed().reshape(-1), t.to_delayed().reshape(-1)
    origins = [tuple(int(starts[d][i]) for d, i in enumerate(idx)) for idx in np.ndindex(*r.numblocks)]
    return r, t, list(zip(rb, tb, origins))


def compare(reference, test, *, exact_percentiles=False):
    """mxp.compare(reference, test) for Dask arrays of one shape and one
    chunking (any dtypes; a NumPy array is chunked like the other) ->
    mxp.CompareResult with every metric of mxp.compare, plus
    percentile_bounds: how far each percentile may be from the exact one
    (0.0 where it is exact).  exact_percentiles=True makes them exact with
    more passes over the data (usually one)."""
    r, t, pairs = _pairs(reference, test)
    shape = r.shape
    select = _mxp._compare_select(bool(exact_percentiles), COLLECT)
    groups, shift = _mxp._compare_select_groups(select)
    first = dask.delayed(_first_pass)
    (rep, sums), buckets = dask.compute(_tree([first(rb, tb, o, shape, groups, shift) for rb, tb, o in pairs],
                                              _merge_first))[0]
    _mxp._compare_select_step(select, buckets)
    groups, shift = _mxp._compare_select_groups(select)
    while groups:
        step = dask.delayed(_refine_pass)
        leaves = [step(rb, tb, groups, shift) for rb, tb, _ in pairs]
        _mxp._compare_select_step(select, dask.compute(_tree(leaves, _merge_refine))[0])
        groups, shift = _mxp._compare_select_groups(select)
    rep, bounds = _mxp._compare_report(rep, sums, select)
    result = CompareResult(rep)
    result["percentile_bounds"] = dict(zip(PERCENTILES, bounds))
    return result

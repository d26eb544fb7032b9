"""mxp.dask.compare: mxp.compare's metrics of two Dask arrays, computed
block by block (mxp_compare_piece) and merged in a tree.

Counts, maxima, the histogram and worst_index merge exactly; the means and
ratios come from merged float64 sums through mxp_compare_finish (equal to
mxp.compare up to float64 reassociation).  Percentiles of the relative
error: the errors' bit patterns are counted by their top 16 bits in one
pass (every value lies in its bucket's [smallest, largest], a relative
width below 2^-5); exact_percentiles=True refines the buckets that hold
the wanted ranks in further passes (collecting them once they are few, as
mxp_compare's own select does) until the ranks are exact."""
import functools

import numpy as np
import dask

from .. import _mxp
from .._analysis import METRICS, CompareResult
from ._blocks import as_dask

QUANTILES = (0.5, 0.9, 0.99, 0.999)
PERCENTILES = ("p50_rel_error", "p90_rel_error", "p99_rel_error", "p999_rel_error")
FIRST_SHIFT = 47          # pass 0: bits 62..47 of the non-negative doubles
NEXT_SHIFTS = (31, 15, 0)  # then 16 bits at a time
COLLECT = 1 << 19          # collect the values once the wanted buckets hold this many
FAN_IN = 8


# ---- buckets: (keys, counts, smallest, largest), keys sorted ------------------

def _buckets(bits, shift):
    if bits.size == 0:
        e = np.zeros(0, np.uint64)
        return e, np.zeros(0, np.int64), e, e
    s = np.sort(bits)
    keys, first, counts = np.unique(s >> np.uint64(shift), return_index=True, return_counts=True)
    return keys, counts.astype(np.int64), s[first], s[first + counts - 1]


def _merge_buckets(parts):
    parts = [p for p in parts if p[0].size]
    if not parts:
        return _buckets(np.zeros(0, np.uint64), 0)
    if len(parts) == 1:
        return parts[0]
    keys = np.concatenate([p[0] for p in parts])
    uk, inv = np.unique(keys, return_inverse=True)
    counts = np.zeros(uk.size, np.int64)
    lo = np.full(uk.size, np.iinfo(np.uint64).max, np.uint64)
    hi = np.zeros(uk.size, np.uint64)
    np.add.at(counts, inv, np.concatenate([p[1] for p in parts]))
    np.minimum.at(lo, inv, np.concatenate([p[2] for p in parts]))
    np.maximum.at(hi, inv, np.concatenate([p[3] for p in parts]))
    return uk, counts, lo, hi


# ---- one block pair ------------------------------------------------------------

def _global_index(local, bshape, start, shape):
    idx = np.unravel_index(int(local), bshape)
    return int(np.ravel_multi_index(tuple(i + s for i, s in zip(idx, start)), shape))


def _rel_bits(r, t):
    _, _, rel = _mxp._compare_piece(r, t, True)
    return rel.view(np.uint64)


def _first_pass(r, t, start, shape):
    rep, sums, rel = _mxp._compare_piece(r, t, True)
    mismatch = rep["nan_mismatches"] + rep["inf_mismatches"] > 0
    worst = rep["worst_index"]
    worst = _global_index(worst, r.shape, start, shape) if worst >= 0 else -1
    return dict(count=rep["count"], nan=rep["nan_mismatches"], inf=rep["inf_mismatches"],
                first_mismatch=worst if mismatch else None,
                max_abs=0.0 if mismatch else rep["max_abs_error"], worst=-1 if mismatch else worst,
                max_rel=0.0 if mismatch else rep["max_rel_error"], max_ulp=rep["max_ulp"],
                hist=rep["histogram"], sums=list(sums), buckets=_buckets(rel.view(np.uint64), FIRST_SHIFT))


def _merge_first(parts):
    out = dict(parts[0])
    out["sums"] = list(out["sums"])
    for p in parts[1:]:
        for k in ("count", "nan", "inf"):
            out[k] += p[k]
        fm = [v for v in (out["first_mismatch"], p["first_mismatch"]) if v is not None]
        out["first_mismatch"] = min(fm) if fm else None
        if p["worst"] >= 0 and (out["worst"] < 0 or p["max_abs"] > out["max_abs"] or
                                (p["max_abs"] == out["max_abs"] and p["worst"] < out["worst"])):
            out["worst"] = p["worst"]
        out["max_abs"] = max(out["max_abs"], p["max_abs"])
        out["max_rel"] = max(out["max_rel"], p["max_rel"])
        out["max_ulp"] = max(out["max_ulp"], p["max_ulp"])
        out["hist"] = out["hist"] + p["hist"]
        out["sums"] = [a + b for a, b in zip(out["sums"][:6], p["sums"][:6])] + [max(out["sums"][6], p["sums"][6])]
    out["buckets"] = _merge_buckets([p["buckets"] for p in parts])
    return out


def _refine_pass(r, t, groups, shift, collect):
    """For each wanted (prefix, prefix_shift): the values with that prefix,
    sorted (collect), or their buckets by the bits above `shift`."""
    bits = _rel_bits(r, t)
    out = []
    for prefix, pshift in groups:
        sel = bits[(bits >> np.uint64(pshift)) == np.uint64(prefix)]
        out.append(np.sort(sel) if collect else _buckets(sel, shift))
    return out


def _merge_refine(parts, collect):
    n = len(parts[0])
    if collect:
        return [np.sort(np.concatenate([p[g] for p in parts])) for g in range(n)]
    return [_merge_buckets([p[g] for p in parts]) for g in range(n)]


def _tree(leaves, merge):
    """Delayed merges of the leaves, FAN_IN at a time, down to one."""
    while len(leaves) > 1:
        leaves = [dask.delayed(merge)(leaves[i:i + FAN_IN]) if len(leaves[i:i + FAN_IN]) > 1 else leaves[i]
                  for i in range(0, len(leaves), FAN_IN)]
    return leaves[0]


# ---- the percentiles -------------------------------------------------------------

def _ranks(m):
    ranks = []
    for qv in QUANTILES:
        lo = int(np.floor(qv * float(m - 1)))
        ranks += [lo, lo + 1 if lo + 1 < m else lo]
    return ranks


def _locate(buckets, rank):
    """(bucket index, rank inside it) of a rank in sorted buckets."""
    cum = np.cumsum(buckets[1])
    i = int(np.searchsorted(cum, rank, side="right"))
    return i, rank - (int(cum[i - 1]) if i else 0)


def _as_double(bits):
    return float(np.array([bits], np.uint64).view(np.float64)[0])


def _percentiles(m, buckets, refine, exact):
    """The four percentiles from the pass-0 buckets (refine(groups, shift,
    collect) runs another pass) and, per percentile, the bound on its error
    (0 when exact)."""
    ranks = _ranks(m)
    value, width = {}, {}
    pending = {}   # rank -> (prefix, prefix_shift, rank inside, bucket count)
    for rk in set(ranks):
        i, inside = _locate(buckets, rk)
        lo, hi = int(buckets[2][i]), int(buckets[3][i])
        if lo == hi:
            value[rk], width[rk] = _as_double(lo), 0.0
        elif exact:
            pending[rk] = (int(buckets[0][i]), FIRST_SHIFT, inside, int(buckets[1][i]))
        else:  # linear inside the bucket's observed range
            flo, fhi = _as_double(lo), _as_double(hi)
            value[rk] = flo + (fhi - flo) * (inside + 0.5) / int(buckets[1][i])
            width[rk] = fhi - flo
    shifts = list(NEXT_SHIFTS)
    while pending:
        groups = sorted({(p[0], p[1]) for p in pending.values()})
        sizes = {(p[0], p[1]): p[3] for p in pending.values()}
        collect = sum(sizes[g] for g in groups) <= COLLECT or not shifts
        shift = None if collect else shifts.pop(0)
        result = refine(groups, shift, collect)
        nxt = {}
        for rk, (prefix, pshift, inside, _) in pending.items():
            got = result[groups.index((prefix, pshift))]
            if collect:
                value[rk], width[rk] = float(got[inside:inside + 1].view(np.float64)[0]), 0.0
                continue
            i, inside2 = _locate(got, inside)
            lo, hi = int(got[2][i]), int(got[3][i])
            if lo == hi:
                value[rk], width[rk] = _as_double(lo), 0.0
            else:
                nxt[rk] = (int(got[0][i]), shift, inside2, int(got[1][i]))
        pending = nxt
    out, bounds = [], []
    for qi, qv in enumerate(QUANTILES):
        pos = qv * float(m - 1)
        lo, hi = value[ranks[2 * qi]], value[ranks[2 * qi + 1]]
        out.append(lo + (pos - np.floor(pos)) * (hi - lo))
        bounds.append(max(width[ranks[2 * qi]], width[ranks[2 * qi + 1]]))
    return out, bounds


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
    first = dask.delayed(_first_pass)
    res = dask.compute(_tree([first(rb, tb, o, shape) for rb, tb, o in pairs], _merge_first))[0]

    def refine(groups, shift, collect):
        step = dask.delayed(_refine_pass)
        leaves = [step(rb, tb, groups, shift, collect) for rb, tb, _ in pairs]
        return dask.compute(_tree(leaves, functools.partial(_merge_refine, collect=collect)))[0]

    m = res["count"]
    mismatch = res["first_mismatch"] is not None
    out = dict(max_abs_error=np.inf if mismatch else res["max_abs"],
               max_rel_error=np.inf if mismatch else res["max_rel"])
    out.update(_mxp._compare_finish(m, tuple(res["sums"]), res["nan"] + res["inf"]))
    if m > 0:
        pct, bounds = _percentiles(m, res["buckets"], refine, exact_percentiles)
    else:
        pct, bounds = [0.0] * 4, [0.0] * 4
    out.update(zip(PERCENTILES, pct))
    out.update(max_ulp=res["max_ulp"], worst_index=res["first_mismatch"] if mismatch else res["worst"],
               nan_mismatches=res["nan"], inf_mismatches=res["inf"], count=m)
    result = CompareResult((k, out[k]) for k in METRICS)
    result["histogram"] = res["hist"]
    result["histogram_edges"] = _mxp._compare(np.zeros(1), np.zeros(1))["histogram_edges"]
    result["percentile_bounds"] = dict(zip(PERCENTILES, bounds))
    return result

"""Calibration as tree reductions over blocks and quantization block by
block.

min/max (and a moving average over the chunks along axis 0): per-pair
finite minima and maxima merged exactly, turned into qparams by mxp's own
observer.  percentile, MSE, KL: two passes, the finite range first, then
fixed-bin histograms of |x| over [0, max |x|] counted per block
(mxp_histogram_abs) and summed; the threshold comes from the sum
(mxp_observer_qparams_from_histogram): the qparams of one observer fed the
whole array in one batch, bit for bit (docs/quant.md, docs/scale-out.md)."""
import numpy as np
import dask
from dask.base import tokenize

from .. import _mxp
from .. import _quant as q
from .._api import ROUNDINGS, _seed
from ._blocks import as_dask, check_groups, meta, origin, piece_qparams, runs

OBSERVERS = ("minmax", "moving_average", "percentile", "mse", "kl")
_KIND = {"percentile": _mxp.CALIB_PERCENTILE, "mse": _mxp.CALIB_MSE, "kl": _mxp.CALIB_KL}
_CODE_DTYPE = _mxp.QTYPE_CODES  # the dtype of each qtype's codes (int8 for int4 ...)


# ---- ranges ------------------------------------------------------------------

def _lo_block(b):
    f = np.asarray(b, np.float64)
    return np.where(np.isfinite(f), f, np.inf)


def _hi_block(b):
    f = np.asarray(b, np.float64)
    return np.where(np.isfinite(f), f, -np.inf)


def _group_reduce(b, axis, group, fn):
    s = b.shape
    return fn(b.reshape(s[:axis] + (s[axis] // group, group) + s[axis + 1:]), axis=axis + 1)


def _ranges(x, axis, group):
    """Dask arrays of each pair's finite min and max (+inf and -inf where a
    pair has no finite value): 0-d per tensor, (len,) per channel, x's shape
    with axis divided by group per group."""
    lo = x.map_blocks(_lo_block, dtype=np.float64, meta=meta(x.ndim, np.float64))
    hi = x.map_blocks(_hi_block, dtype=np.float64, meta=meta(x.ndim, np.float64))
    if axis is None:
        return lo.min(), hi.max()
    if not group:
        others = tuple(d for d in range(x.ndim) if d != axis)
        return lo.min(axis=others), hi.max(axis=others)
    chunks = tuple(tuple(c // group for c in cs) if d == axis else cs for d, cs in enumerate(x.chunks))
    return (lo.map_blocks(_group_reduce, axis, group, np.min, chunks=chunks, dtype=np.float64),
            hi.map_blocks(_group_reduce, axis, group, np.max, chunks=chunks, dtype=np.float64))


def _synthetic(lo, hi, shape, axis, group):
    """A small batch whose per-pair finite ranges are [lo, hi] (no finite
    value where lo > hi) and the observer layout that reads it: (batch,
    axis, group_size).  mxp's observers use nothing of a batch but these
    ranges, so feeding them the batch gives what the data would."""
    lo, hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
    if axis is None:
        return np.array([lo, hi]).reshape(2), None, None
    if not group:
        return np.stack([lo, hi]), 1, None
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    n = shape[axis] // group
    syn = np.stack([lo.reshape(outer, n, inner), hi.reshape(outer, n, inner)], axis=2)
    return syn.reshape(outer, 2 * n, inner), 1, 2


def _qparams_as(qp, axis, group):
    return q.QParams(qp.qtype, qp.scales, qp.zero_points, symmetric=qp.symmetric, axis=axis, group_size=group)


def _norm(x, qtype, axis, group_size, what):
    if qtype not in q.QTYPES:
        raise ValueError(f"{what}: qtype {qtype!r} is not one of {', '.join(q.QTYPES)}")
    axis = q._norm_axis(axis, x.ndim)
    group = int(group_size or 0) or None
    if group is not None:
        if axis is None:
            raise ValueError(f"{what}: group_size needs an axis")
        if group < 1 or x.shape[axis] % group:
            raise ValueError(f"{what}: group_size {group} does not divide axis {axis}'s length {x.shape[axis]}")
        check_groups(x.chunks, axis, group, what)
    if x.size == 0:
        raise ValueError(f"{what}: the array is empty")
    return axis, group


# ---- calibrate ---------------------------------------------------------------

def calibrate(x, qtype="int8", *, symmetric=True, axis=None, group_size=None, observer="minmax", momentum=0.9,
              percentile=99.99, bins=2048):
    """Calibrates the Dask array x -> mxp.QParams, as mxp's observers would.

    observer:
      "minmax"          per tensor, per channel (axis) or per group: equal
                        to mxp.calibrate(x) on the whole array, bit for bit;
      "moving_average"  the batches are x's chunks along axis 0, in order:
                        equal to mxp.MovingAverageObserver(momentum) fed
                        x[chunk] for each of them (axis must not be 0);
      "percentile", "mse", "kl"  per tensor: two passes (the range, then
                        histograms of |x| with `bins` bins summed over the
                        blocks); equal to the mxp observer fed all of x in
                        one batch, bit for bit.
    """
    x = as_dask(x, "calibrate")
    if observer not in OBSERVERS:
        raise ValueError(f"calibrate: observer {observer!r} is not one of {', '.join(OBSERVERS)}")
    axis, group = _norm(x, qtype, axis, group_size, "calibrate")
    kw = dict(symmetric=symmetric)
    if observer in _KIND:
        if axis is not None:
            raise ValueError(f"calibrate: the {observer} observer is per tensor only (axis=None)")
        cls = {"percentile": q.PercentileObserver, "mse": q.MSEObserver, "kl": q.KLObserver}[observer]
        cls(qtype, bins=bins, **(dict(percentile=percentile) if observer == "percentile" else {}), **kw)  # checks
        return _calibrate_histogram(x, qtype, symmetric, observer, percentile, bins)
    if observer == "minmax":
        obs = q.MinMaxObserver(qtype, **kw, **_obs_layout(x.shape, axis, group))
        lo, hi = dask.compute(*_ranges(x, axis, group))
        batches = [(lo, hi)]
    else:
        if axis == 0:
            raise ValueError("calibrate: moving_average's batches are the chunks along axis 0, so axis must not be 0")
        obs = q.MovingAverageObserver(qtype, momentum=momentum, **kw, **_obs_layout(x.shape, axis, group))
        starts = np.cumsum((0,) + x.chunks[0])
        pieces = [x[starts[i]:starts[i + 1]] for i in range(len(x.chunks[0]))]
        batches = dask.compute(*[_ranges(p, axis, group) for p in pieces])
    for (lo, hi), shape in zip(batches, [x.shape] if observer == "minmax" else [p.shape for p in pieces]):
        syn, _, _ = _synthetic(lo, hi, shape, axis, group)
        obs.update(syn)
    return _qparams_as(obs.qparams(), axis, group)


def _obs_layout(shape, axis, group):
    """The observer's axis and group_size for the synthetic batches."""
    if axis is None:
        return {}
    return dict(axis=1, group_size=2) if group else dict(axis=1)


def _hist_block(b, hmax, bins):
    return _mxp._histogram_abs(b, hmax, bins).reshape((1,) * b.ndim + (bins,))


def _calibrate_histogram(x, qtype, symmetric, observer, percentile, bins):
    lo, hi = (float(v) for v in dask.compute(*_ranges(x, None, None)))
    hmax = max(-lo, hi) if lo <= hi else 0.0
    chunks = tuple((1,) * len(c) for c in x.chunks) + ((bins,),)
    h = x.map_blocks(_hist_block, hmax, bins, chunks=chunks, new_axis=x.ndim, dtype=np.float64,
                     meta=meta(x.ndim + 1, np.float64))
    counts = np.ascontiguousarray(h.sum(axis=tuple(range(x.ndim))).compute(), np.float64)
    t = _mxp._observer_from_histogram(_KIND[observer], qtype, symmetric=bool(symmetric), percentile=float(percentile),
                                      counts=counts, hmax=hmax, lo=lo, hi=hi)
    return q.QParams._from_tuple(t)


# ---- quantize / dequantize ------------------------------------------------------

def _quantize_block(b, qp, rounding, seed, block_info=None):
    start, shape = origin(block_info)
    if rounding != "stochastic":
        pqp = piece_qparams(qp, shape, (), [(s, s + n) for s, n in zip(start, b.shape)])
        return q.quantize(b, qparams=pqp, rounding=rounding).codes
    lead, offsets = runs(b.shape, start, shape)
    out = np.empty(b.shape, _CODE_DTYPE[qp.qtype])
    if b.size == 0:
        return out
    fixed = [()] if lead == 0 else \
        (np.indices(b.shape[:lead]).reshape(lead, -1).T + np.array(start[:lead], np.int64)).tolist()
    ranges = [(s, s + n) for s, n in zip(start[lead:], b.shape[lead:])]
    pin, pout = b.reshape((-1,) + b.shape[lead:]), out.reshape((-1,) + b.shape[lead:])
    for p, off in enumerate(offsets.tolist()):
        pqp = piece_qparams(qp, shape, tuple(fixed[p]), ranges)
        q.quantize(pin[p], qparams=pqp, rounding="stochastic", seed=seed, index_offset=off, out=pout[p])
    return out


def _shipped(qp):
    """qp as one key of the graph: sent to each worker once, not with every
    task (per-group scales can be megabytes)."""
    token = tokenize(qp.qtype, qp.symmetric, qp.axis, qp.group_size, qp.scales, qp.zero_points)
    return dask.delayed(qp, name="mxp-qparams-" + token, traverse=False)


def _check_qparams(x, qp, what):
    if not isinstance(qp, q.QParams):
        raise TypeError(f"{what}: qparams must be an mxp.QParams")
    axis, group = _norm(x, qp.qtype, qp.axis, qp.group_size, what)
    need = 1 if axis is None else x.shape[axis] if not group else x.size // group
    if qp.scales.size != need:
        raise ValueError(f"{what}: qparams hold {qp.scales.size} pairs, x needs {need}")
    return _qparams_as(qp, axis, group)


def quantize(x, qtype="int8", *, symmetric=True, axis=None, group_size=None, rounding="nearest_even", seed=0,
             qparams=None, observer="minmax", **observer_options):
    """The Dask array x quantized block by block -> mxp.QuantizedTensor
    whose codes are a Dask array (of x's chunks).  Without qparams they come
    from calibrate(x, qtype, symmetric=, axis=, group_size=, observer=,
    **observer_options) first (another pass over x).  The codes equal
    mxp.quantize(whole x, qparams=...) bit for bit for every rounding,
    stochastic included (each piece knows its index in the whole array)."""
    x = as_dask(x, "quantize")
    if rounding not in ROUNDINGS:
        raise ValueError(f"quantize: rounding {rounding!r} is not one of {', '.join(ROUNDINGS)}")
    if qparams is None:
        qparams = calibrate(x, qtype, symmetric=symmetric, axis=axis, group_size=group_size, observer=observer,
                            **observer_options)
    qp = _check_qparams(x, qparams, "quantize")
    dt = np.dtype(_CODE_DTYPE[qp.qtype])
    codes = x.map_blocks(_quantize_block, _shipped(qp), rounding, _seed(seed), dtype=dt, meta=meta(x.ndim, dt))
    return q.QuantizedTensor(codes, qp)


def _dequantize_block(c, qp, dtype, block_info=None):
    start, shape = origin(block_info)
    pqp = piece_qparams(qp, shape, (), [(s, s + n) for s, n in zip(start, c.shape)])
    return q.dequantize(c, dtype, qparams=pqp)


def dequantize(t, dtype=np.float32, qparams=None):
    """(codes - zero_point) * scale block by block, rounded once to dtype:
    t a QuantizedTensor with Dask codes (what quantize returns), or Dask
    codes with qparams."""
    if isinstance(t, q.QuantizedTensor):
        codes, qparams = t.codes, t.qparams
    elif qparams is not None:
        codes = t
    else:
        raise TypeError("dequantize: pass a QuantizedTensor, or codes and qparams")
    codes = as_dask(codes, "dequantize")
    qp = _check_qparams(codes, qparams, "dequantize")
    dt = np.dtype(dtype)
    return codes.map_blocks(_dequantize_block, _shipped(qp), dt, dtype=dt, meta=meta(codes.ndim, dt))

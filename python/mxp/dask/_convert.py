"""mxp.dask.astype (every rounding mode; stochastic rounding gives the
bits of one whole conversion whatever the chunking) and sums rounded once."""
import numpy as np

from .. import _api
from ._blocks import as_dask, meta, origin, resolve_dtype, runs


def _astype_block(b, dtype, rounding, overflow, seed):
    return _api.astype(b, dtype, rounding=rounding, overflow=overflow, seed=seed)


def _astype_stochastic_block(b, dtype, overflow, seed, block_info=None):
    """Each run of the block contiguous in the whole array is converted with
    its own index_offset, so every element draws from the position of the
    stream its index in the whole array names."""
    out = np.empty(b.shape, dtype)
    if b.size == 0:
        return out
    start, shape = origin(block_info)
    lead, offsets = runs(b.shape, start, shape)
    pieces_in = b.reshape((-1,) + b.shape[lead:])
    pieces_out = out.reshape((-1,) + b.shape[lead:])
    for p, off in enumerate(offsets.tolist()):
        _api.astype(pieces_in[p], dtype, rounding="stochastic", overflow=overflow, seed=seed, out=pieces_out[p],
                    index_offset=off)
    return out


def astype(x, dtype, rounding="nearest_even", overflow="inf", seed=0):
    """x (a Dask array) converted to dtype block by block, as mxp.astype
    converts the whole array: rounding nearest_even (default),
    nearest_away, toward_zero, up, down or stochastic; overflow "inf" or
    "saturate".  Stochastic rounding gives the bits of mxp.astype(whole x,
    seed=seed) for any chunking: each block converts its runs with their
    index in the whole array (fastest when chunks are whole rows)."""
    x = as_dask(x, "astype")
    dt = resolve_dtype(dtype, "astype")
    # The arguments and the pair of dtypes, checked here rather than on a worker.
    _api.astype(np.zeros(1, x.dtype), dt, rounding=rounding, overflow=overflow, seed=seed)
    if rounding == "stochastic":
        return x.map_blocks(_astype_stochastic_block, dt, overflow, _api._seed(seed), dtype=dt,
                            meta=meta(x.ndim, dt))
    return x.map_blocks(_astype_block, dt, rounding, overflow, seed, dtype=dt, meta=meta(x.ndim, dt))


def _round_once(b, dtype):
    return _api.astype(b, dtype)


def sum(x, axis=None, keepdims=False, split_every=None):
    """x summed with float64 partial sums, rounded once into x's dtype.

    Dask's own x.sum() works on mxp dtypes, but it keeps each chunk's sum
    in x's dtype and adds those again (one more rounding per level of its
    tree); this keeps them in float64.  Integer and float64 x: x.sum()."""
    x = as_dask(x, "sum")
    if x.dtype.kind in "biu" or x.dtype == np.float64:
        return x.sum(axis=axis, keepdims=keepdims, split_every=split_every)
    s = x.sum(axis=axis, dtype=np.float64, keepdims=keepdims, split_every=split_every)
    return s.map_blocks(_round_once, x.dtype, dtype=x.dtype, meta=meta(s.ndim, x.dtype))


def mean(x, axis=None, keepdims=False, split_every=None):
    """The mean in float64, rounded once into x's dtype (as sum)."""
    x = as_dask(x, "mean")
    if x.dtype.kind in "biu" or x.dtype == np.float64:
        return x.mean(axis=axis, keepdims=keepdims, split_every=split_every)
    m = x.mean(axis=axis, dtype=np.float64, keepdims=keepdims, split_every=split_every)
    return m.map_blocks(_round_once, x.dtype, dtype=x.dtype, meta=meta(m.ndim, x.dtype))

"""Where a block sits in its array: dtype names, block origins, the runs
of a block that are contiguous in the whole array's C order (for the
stochastic stream's element index), and the quantization parameters that
apply to a piece of the array."""
import math

import numpy as np
import dask.array as da

from .. import _mxp
from .._quant import QParams

MXP_DTYPES = {t.__name__: np.dtype(t) for t in (_mxp.bfloat16, _mxp.float8_e4m3fn, _mxp.float8_e5m2)}


def resolve_dtype(dtype, what):
    """A NumPy dtype from a dtype, a type or a name (mxp's names too)."""
    if isinstance(dtype, str) and dtype in MXP_DTYPES:
        return MXP_DTYPES[dtype]
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{what}: unknown dtype {dtype!r} (a NumPy dtype, or one of "
                        f"{', '.join(MXP_DTYPES)})") from None


def as_dask(x, what):
    """x as a Dask array (NumPy arrays and sequences are wrapped, one chunk per ~128 MiB)."""
    if isinstance(x, da.Array):
        return x
    if isinstance(x, (np.ndarray, list, tuple)) or np.isscalar(x):
        return da.from_array(np.asarray(x))
    raise TypeError(f"{what}: expected a dask.array.Array or a NumPy array, got {type(x).__name__}")


def meta(ndim, dtype):
    return np.empty((0,) * ndim, dtype)


def origin(block_info, i=0):
    """(start of the block along each axis, the whole array's shape)."""
    info = block_info[i]
    return tuple(int(s) for s, _ in info["array-location"]), tuple(int(n) for n in info["shape"])


def runs(bshape, start, shape):
    """The block as pieces block[idx] over its first `lead` axes, each a run of
    consecutive elements of the whole array in C order: (lead, offsets), the
    C-order index of each piece's first element, pieces in C order.

    The last axis where the block is not the whole array (t) splits it; the
    axes after t are whole, so block[i_0, ..., i_{t-1}] is one run."""
    nd = len(shape)
    partial = [k for k in range(nd) if bshape[k] != shape[k]]
    lead = partial[-1] if partial else 0
    strides = [math.prod(shape[k + 1:]) for k in range(nd)]
    base = sum(start[k] * strides[k] for k in range(lead, nd))
    if lead == 0:
        return 0, np.array([base], np.int64)
    grid = np.indices(bshape[:lead], dtype=np.int64).reshape(lead, -1)
    offsets = ((grid + np.array(start[:lead], np.int64)[:, None]) *
               np.array(strides[:lead], np.int64)[:, None]).sum(0) + base
    return lead, offsets


def check_groups(chunks, axis, group, what):
    """Block boundaries along axis must fall on group boundaries."""
    if not group:
        return
    edges = np.cumsum((0,) + tuple(chunks[axis]))
    bad = edges[edges % group != 0]
    if bad.size:
        raise ValueError(f"{what}: the chunks along axis {axis} {tuple(chunks[axis])} cut groups of {group} "
                         f"(boundary {int(bad[0])}); rechunk that axis to multiples of {group}")


def piece_qparams(qp, shape, fixed, ranges):
    """The QParams for the piece x[fixed..., ranges...] of an array of this
    shape quantized with qp: fixed are indices into its first len(fixed)
    axes (dropped from the piece), ranges (start, stop) along the others."""
    if qp.axis is None:
        return qp
    lead, k, g = len(fixed), qp.axis, qp.group_size
    kw = dict(symmetric=qp.symmetric)
    if not g:
        if k < lead:
            return QParams(qp.qtype, qp.scales[fixed[k]], qp.zero_points[fixed[k]], **kw)
        s, e = ranges[k - lead]
        return QParams(qp.qtype, qp.scales[s:e], qp.zero_points[s:e], axis=k - lead, **kw)
    pshape = tuple(n // g if d == k else n for d, n in enumerate(shape))
    box = tuple(i // g if d == k else i for d, i in enumerate(fixed))
    box += tuple(slice(s // g, e // g) if d + lead == k else slice(s, e) for d, (s, e) in enumerate(ranges))
    scales, zps = qp.scales.reshape(pshape)[box].ravel(), qp.zero_points.reshape(pshape)[box].ravel()
    if k < lead:  # the piece holds no whole group: a pair per element
        return QParams(qp.qtype, scales, zps, axis=0, group_size=1, **kw)
    return QParams(qp.qtype, scales, zps, axis=k - lead, group_size=g, **kw)

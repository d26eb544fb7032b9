"""mxp.dask.matmul: a (M, K) by (K, N) product of Dask arrays on mxp's
GEMM, block by block: each (i, k) x (k, j) product accumulated by
mxp_gemm in the compute dtype (float32, or float64), the k-partials
summed in float64 and rounded once into out_dtype."""
import numpy as np

from .. import _api
from ._blocks import as_dask, meta, resolve_dtype

import dask.array as da


def _partial(a, b, acc, compute):
    return _api.matmul(a, b, out_dtype=acc, compute=compute)[:, :, None]


def _round_once(c, dtype):
    return _api.astype(c, dtype)


def matmul(a, b, *, out_dtype=None, compute=None):
    """a @ b for 2-d Dask arrays of float dtypes (float8, bfloat16,
    float16, float32, float64), with a's column chunks equal to b's row
    chunks.  out_dtype: default NumPy's result type of a and b.  compute:
    the GEMM's accumulator, float32 (default for inputs up to 32 bits) or
    float64.  Each block of the result is the float64 sum of its k-block
    products (each one mxp_gemm accumulating in compute), rounded once into
    out_dtype (nearest even).  With one chunk along k the result is
    mxp.matmul's, bit for bit."""
    a, b = as_dask(a, "matmul: a"), as_dask(b, "matmul: b")
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"matmul: a and b must be 2-d (got {a.ndim}-d and {b.ndim}-d)")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape}: k {a.shape[1]} != {b.shape[0]}")
    if a.chunks[1] != b.chunks[0]:
        raise ValueError(f"matmul: a's column chunks {a.chunks[1]} differ from b's row chunks {b.chunks[0]}; "
                         f"rechunk one, e.g. b.rechunk({{0: a.chunks[1]}})")
    for name, x in (("a", a), ("b", b)):
        if x.dtype.kind in "biu":
            raise TypeError(f"matmul: {name} is {x.dtype}: mxp.dask.matmul takes float operands "
                            "(quantize per block with mxp.matmul for integers)")
    out = resolve_dtype(out_dtype, "matmul") if out_dtype is not None else _api.result_type(a.dtype, b.dtype)
    wide = np.float64 in (a.dtype, b.dtype) or (compute is not None and np.dtype(compute) == np.float64)
    acc = np.dtype(np.float64 if wide else np.float32)
    _api.matmul(np.zeros((1, 1), a.dtype), np.zeros((1, 1), b.dtype), out_dtype=out, compute=compute)  # checks
    parts = da.blockwise(_partial, "ijk", a, "ik", b, "kj", acc, None, compute, None, dtype=acc, adjust_chunks={"k": 1},
                         meta=meta(3, acc))
    c = parts.sum(axis=2, dtype=np.float64)
    if out == np.float64:
        return c
    return c.map_blocks(_round_once, out, dtype=out, meta=meta(2, out))

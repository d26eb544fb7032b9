"""mxp on Dask arrays: the same conversions, quantization, calibration,
comparisons and products as mxp, computed block by block by any Dask
scheduler (threads, a LocalCluster, or dask-scheduler/dask-worker on
several machines), with results equal to single-machine mxp on the whole
array (docs/scale-out.md says how exactly, function by function).

    import dask.array as da, mxp, mxp.dask
    x = mxp.dask.from_zarr("weights.zarr")                 # float32, chunked
    y = mxp.dask.astype(x, mxp.bfloat16, rounding="stochastic", seed=1)
    mxp.dask.to_zarr(y, "weights-bf16.zarr")                # uint16 bits + the dtype's name
    qp = mxp.dask.calibrate(x, "int8", observer="percentile", percentile=99.99)
    q = mxp.dask.quantize(x, qparams=qp)                    # q.codes: a Dask array
    r = mxp.dask.compare(x, y)                              # an mxp.CompareResult
    c = mxp.dask.matmul(a, b, out_dtype=mxp.bfloat16)       # float32 partial sums, one rounding

``python3 -m mxp.dask convert IN OUT --to bfloat16`` converts a zarr
array or a folder of .npy shards out of core, and a folder of safetensors
shards (a checkpoint) shard by shard (``cast_safetensors``).  Needs dask (Debian:
python3-dask; python3-distributed for clusters, python3-zarr for zarr);
``import mxp`` alone never imports it.
"""
try:
    import dask.array  # noqa: F401  (the import is the check)
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError("mxp.dask needs Dask: apt-get install python3-dask python3-distributed python3-zarr "
                      "(or pip install 'dask[array]' distributed zarr)") from e

from ._convert import astype, sum, mean
from ._io import to_zarr, from_zarr, to_npy_shards, from_npy_shards, open_array, save_quantized, open_quantized
from ._quant import OBSERVERS, calibrate, quantize, dequantize
from ._compare import compare
from ._matmul import matmul
from ._safetensors import cast_safetensors

__all__ = ["astype", "sum", "mean", "to_zarr", "from_zarr", "to_npy_shards", "from_npy_shards", "open_array",
           "save_quantized", "open_quantized", "OBSERVERS",
           "calibrate", "quantize", "dequantize", "compare", "matmul", "cast_safetensors"]

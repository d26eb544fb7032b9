"""Chunked storage that keeps mxp's dtypes: zarr arrays and folders of
.npy shards.

zarr (2.x) has no bfloat16 or float8: it would store them as raw void
bytes ('|V2') that read back as void.  to_zarr stores the bits as
uint16/uint8 and the dtype's name in the array's attributes
("mxp_dtype": "bfloat16"); from_zarr restores the view.  Without mxp the
bits stay readable: zarr.open(path)[...].view(ml_dtypes.bfloat16).

A folder of .npy shards is a Dask array split along axis 0: one file per
block, names in natural order (0.npy, 1.npy ... 10.npy, or zero-padded);
bfloat16/float8 shards are the one-field structured files mxp.save writes
(docs/npy.md)."""
import os
import re

import numpy as np
import dask
import dask.array as da
from dask.base import tokenize

from .. import _npy
from ._blocks import MXP_DTYPES, as_dask, meta

ATTR = "mxp_dtype"


def _bits_dtype(dt):
    return np.dtype(np.uint16 if dt.itemsize == 2 else np.uint8)


def _view(b, dtype):
    return b.view(dtype)


def _check_regular(x, what):
    for axis, c in enumerate(x.chunks):
        if len(c) > 1 and (len(set(c[:-1])) > 1 or c[-1] > c[0]):
            raise ValueError(f"{what}: zarr needs regular chunks, but axis {axis} has {c}; "
                             f"rechunk first, e.g. x.rechunk({{{axis}: {c[0]}}})")


def to_zarr(x, url, component=None, overwrite=False, compute=True, **kwargs):
    """Stores the Dask array x in a zarr array at url (a path or a store;
    component: the array's path inside a group) with x's chunks; mxp
    dtypes as their bits plus the attribute mxp_dtype.  kwargs go to
    zarr.create (compressor=..., ...).  compute=False returns the
    delayed store instead of running it."""
    import zarr
    x = as_dask(x, "to_zarr")
    _check_regular(x, "to_zarr")
    dt = x.dtype
    name = next((n for n, d in MXP_DTYPES.items() if d == dt), None)
    if name is not None:
        bits = _bits_dtype(dt)
        x = x.map_blocks(_view, bits, dtype=bits, meta=meta(x.ndim, bits))
    chunks = tuple(c[0] if c else 1 for c in x.chunks)
    z = zarr.create(shape=x.shape, chunks=chunks, dtype=x.dtype, store=url, path=component, overwrite=overwrite,
                    **kwargs)
    if name is not None:
        z.attrs[ATTR] = name
    return da.store(x, z, lock=False, compute=compute)


def from_zarr(url, component=None, chunks=None):
    """The zarr array at url as a Dask array with its dtype (an mxp dtype
    when the attribute mxp_dtype names one); chunks default to zarr's."""
    import zarr
    z = url if isinstance(url, zarr.Array) else zarr.open_array(url, mode="r", path=component)
    x = da.from_zarr(z, chunks=chunks if chunks is not None else z.chunks)
    name = z.attrs.get(ATTR)
    if name is None:
        return x
    if name not in MXP_DTYPES:
        raise ValueError(f"from_zarr: attribute {ATTR}={name!r} names no mxp dtype ({', '.join(MXP_DTYPES)})")
    dt = MXP_DTYPES[name]
    if z.dtype != _bits_dtype(dt):
        raise ValueError(f"from_zarr: {name} is stored as {_bits_dtype(dt)}, this array holds {z.dtype}")
    return x.map_blocks(_view, dt, dtype=dt, meta=meta(x.ndim, dt))


# ---- folders of .npy shards ---------------------------------------------------

def _natural_key(name):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def _open_npy(path):
    """A read-only memory map of the file, mxp dtypes viewed as such."""
    a = np.load(path, mmap_mode="r", allow_pickle=False)
    v = _npy._mxp_view(a)
    return a if v is None else v


class _NpyShard:
    """One .npy file, opened on the worker that reads a block of it (only
    the path travels with the task graph)."""

    def __init__(self, path):
        a = _open_npy(path)
        self.path, self.shape, self.dtype, self.ndim = path, a.shape, a.dtype, a.ndim

    def __getitem__(self, key):
        return np.array(_open_npy(self.path)[key])


def shard_files(folder):
    files = sorted((f for f in os.listdir(folder) if f.endswith(".npy")), key=_natural_key)
    return [os.path.join(folder, f) for f in files]


def from_npy_shards(folder, rows_per_chunk=None):
    """The .npy files of a folder, concatenated along axis 0, as one Dask
    array (each file one block, or blocks of rows_per_chunk rows)."""
    files = shard_files(folder)
    if not files:
        raise ValueError(f"from_npy_shards: no .npy file in {folder}")
    shards = [_NpyShard(f) for f in files]
    first = shards[0]
    for s in shards:
        if s.ndim == 0 or s.shape[1:] != first.shape[1:] or s.dtype != first.dtype:
            raise ValueError(f"from_npy_shards: {os.path.basename(s.path)} has shape {s.shape} and dtype {s.dtype}, "
                             f"{os.path.basename(first.path)} {first.shape} and {first.dtype}: shards must agree "
                             "but along axis 0")
    parts = []
    for s in shards:
        rows = rows_per_chunk or max(s.shape[0], 1)
        st = os.stat(s.path)
        name = "npy-shard-" + tokenize(s.path, st.st_mtime_ns, st.st_size, rows)
        parts.append(da.from_array(s, chunks=(rows,) + s.shape[1:], name=name, lock=False, asarray=True,
                                   meta=meta(s.ndim, s.dtype)))
    return da.concatenate(parts, axis=0)


def _save_shard(block, path):
    _npy.save(path, block)
    return path


def to_npy_shards(x, folder, compute=True):
    """One .npy file per block along axis 0 (0000.npy, 0001.npy ...; the
    other axes are made one chunk), written with mxp.save (atomic, mxp
    dtypes kept).  compute=False returns the delayed writes."""
    x = as_dask(x, "to_npy_shards")
    if x.ndim == 0:
        raise ValueError("to_npy_shards: a 0-d array has no axis 0 to split")
    x = x.rechunk({k: -1 for k in range(1, x.ndim)})
    os.makedirs(folder, exist_ok=True)
    blocks = x.to_delayed().reshape(-1)
    width = max(4, len(str(len(blocks) - 1)))
    writes = [dask.delayed(_save_shard)(b, os.path.join(folder, f"{i:0{width}d}.npy")) for i, b in enumerate(blocks)]
    return dask.compute(*writes) if compute else writes


# ---- paths as arrays (the command line) ------------------------------------------

def is_zarr(path):
    return str(path).rstrip("/").endswith(".zarr") or os.path.exists(os.path.join(path, ".zarray")) or \
        os.path.exists(os.path.join(path, ".zgroup"))


def open_array(path, rows_per_chunk=None):
    """A zarr array, a folder of .npy shards or one .npy file as a Dask array."""
    if is_zarr(path):
        x = from_zarr(path)
        return x.rechunk({0: rows_per_chunk}) if rows_per_chunk else x
    if os.path.isdir(path):
        return from_npy_shards(path, rows_per_chunk)
    if path.endswith(".npy") and os.path.isfile(path):
        s = _NpyShard(path)
        rows = rows_per_chunk or max(s.shape[0] if s.ndim else 1, 1)
        chunks = (rows,) + s.shape[1:] if s.ndim else ()
        st = os.stat(path)
        return da.from_array(s, chunks=chunks, name="npy-" + tokenize(path, st.st_mtime_ns, st.st_size, rows),
                             lock=False, asarray=True, meta=meta(s.ndim, s.dtype))
    raise ValueError(f"{path}: not a zarr array (NAME.zarr), a folder of .npy shards or a .npy file")


def store_array(x, path, overwrite=True):
    """The delayed writes of x to path: zarr when it ends in .zarr, else a
    folder of .npy shards."""
    if str(path).rstrip("/").endswith(".zarr"):
        return [to_zarr(x, path, overwrite=overwrite, compute=False)]
    return to_npy_shards(x, path, compute=False)


def save_quantized(t, path):
    """The delayed writes of a QuantizedTensor with Dask codes: a zarr group
    (path ending .zarr: arrays codes, scales, zero_points; the layout in
    codes' attributes) or a folder (codes/ as .npy shards, scales.npy,
    zero_points.npy, qparams.json)."""
    import json
    qp = t.qparams
    layout = dict(qtype=qp.qtype, symmetric=qp.symmetric, axis=qp.axis, group_size=qp.group_size)
    if str(path).rstrip("/").endswith(".zarr"):
        import zarr
        g = zarr.open_group(path, mode="w")
        g.array("scales", qp.scales)
        g.array("zero_points", qp.zero_points)
        writes = [to_zarr(t.codes, path, component="codes", overwrite=True, compute=False)]
        zarr.open_array(path, mode="r+", path="codes").attrs.update(layout)
        return writes
    os.makedirs(path, exist_ok=True)
    _npy.save(os.path.join(path, "scales.npy"), qp.scales)
    _npy.save(os.path.join(path, "zero_points.npy"), qp.zero_points)
    with open(os.path.join(path, "qparams.json"), "w") as f:
        json.dump(layout, f)
    return to_npy_shards(t.codes, os.path.join(path, "codes"), compute=False)


def open_quantized(path):
    """What save_quantized wrote, as a QuantizedTensor with Dask codes."""
    import json
    from .._quant import QParams, QuantizedTensor
    if is_zarr(path):
        import zarr
        g = zarr.open_group(path, mode="r")
        layout = dict(g["codes"].attrs)
        codes, scales, zps = from_zarr(g["codes"]), g["scales"][...], g["zero_points"][...]
    else:
        with open(os.path.join(path, "qparams.json")) as f:
            layout = json.load(f)
        codes = from_npy_shards(os.path.join(path, "codes"))
        scales, zps = np.load(os.path.join(path, "scales.npy")), np.load(os.path.join(path, "zero_points.npy"))
    qp = QParams(layout["qtype"], scales, zps, symmetric=layout["symmetric"], axis=layout["axis"],
                 group_size=layout["group_size"])
    return QuantizedTensor(codes, qp)

"""A sharded safetensors checkpoint (a folder of *.safetensors files, as
transformers saves large models, with its model.safetensors.index.json)
cast shard by shard on Dask workers."""
import json
import os
import shutil
import struct

import dask

from .. import _mxp
from .. import safetensors as _st

INDEX = "model.safetensors.index.json"


def _float_elements(path):
    """The floating-point elements of a file (the ones a cast converts), from its header."""
    total = 0
    for _name, _dname, shape, dtype in _mxp._st_entries(_mxp._st_open(path)):
        if dtype is not None and _mxp._traits(dtype)["kind"] == "f":
            n = 1
            for d in shape:
                n *= d
            total += n
    return total


def _data_bytes(path):
    with open(path, "rb") as f:
        return os.path.getsize(path) - 8 - struct.unpack("<Q", f.read(8))[0]


def _cast_one(src, dst, dtype, rounding, overflow, seed, offset):
    return _st.cast(src, dst, dtype, rounding, overflow, seed, offset)


def cast_safetensors(src, dst, dtype, rounding="nearest_even", overflow="inf", seed=0, compute=True):
    """Every *.safetensors file of folder src cast into folder dst (created)
    by mxp.safetensors.cast, one Dask task a shard (each worker holds a
    6 MiB chunk, whatever the shard's size), every other file (config,
    tokenizer) copied, and model.safetensors.index.json's total_size set to
    the new tensors' bytes (its weight_map is unchanged: names and shards
    stay).  Stochastic rounding draws one stream across the shards in name
    order (each shard starts at the float elements of the shards before it,
    counted from their headers), so the files do not depend on which worker
    runs which shard.  compute=False returns the Dask tasks (the index is
    then written by the last of them: dask.compute them together).
    Returns {shard: (tensors converted, elements)}."""
    src, dst = os.fspath(src), os.fspath(dst)
    if not os.path.isdir(src):
        raise OSError(f"cast_safetensors: {src}: not a folder")
    shards = sorted(f for f in os.listdir(src) if f.endswith(".safetensors"))
    if not shards:
        raise ValueError(f"cast_safetensors: {src}: no .safetensors files")
    os.makedirs(dst, exist_ok=True)
    offsets, at = {}, 0
    for s in shards:  # the stream's start of each shard
        offsets[s] = at
        at += _float_elements(os.path.join(src, s))
    tasks = {s: dask.delayed(_cast_one, pure=False)(os.path.join(src, s), os.path.join(dst, s), dtype, rounding,
                                                    overflow, int(seed), offsets[s]) for s in shards}

    def finish(results):
        for f in os.listdir(src):
            p = os.path.join(src, f)
            if f == INDEX:
                with open(p) as fh:
                    index = json.load(fh)
                index.setdefault("metadata", {})["total_size"] = sum(_data_bytes(os.path.join(dst, s))
                                                                     for s in shards)
                with open(os.path.join(dst, f), "w") as fh:
                    json.dump(index, fh, indent=2)
                    fh.write("\n")
            elif not f.endswith(".safetensors") and os.path.isfile(p):
                shutil.copy2(p, os.path.join(dst, f))
        return dict(zip(shards, results))

    done = dask.delayed(finish)(list(tasks.values()))
    return done.compute() if compute else done

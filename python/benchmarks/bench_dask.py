"""mxp.dask out of core: a float32 zarr array several times larger than
one worker's memory limit converted to bfloat16 on a LocalCluster of 1 and
2 worker processes, beside Dask's own astype(np.float16) of the same array
and beside reading the array alone (the I/O bound).

Every pass reads the whole input from zarr (uncompressed, so the figures
are conversion and I/O, not compression) and, except the read, writes a
zarr array of the result chunk by chunk.  Figures are input bytes per
second; the ratios are the stable part on a shared machine.  The input
is written first and stays in the page cache if memory allows (23 GiB
here: it does), so "read" is the page cache's and zarr's speed, not a
disk's.  Usage:
  PYTHONPATH=build/python python3 python/benchmarks/bench_dask.py [--gib 2] [--memory-limit 512MiB]
      [--chunk-mib 16] [--workers 1,2] [--dir /tmp/mxp-bench-dask]
"""
import argparse
import os
import shutil
import time

import numpy as np
import dask
import dask.array as da
from distributed import Client, LocalCluster

import mxp
import mxp.dask as md


def _touch(b):
    return np.zeros((1,) * b.ndim, np.float32)


def read_only(x):
    """Reads every chunk and keeps nothing (one float per chunk)."""
    return x.map_blocks(_touch, chunks=tuple((1,) * len(c) for c in x.chunks), dtype=np.float32).sum()


def timed(fn, reps):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return sorted(ts)[len(ts) // 2]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gib", type=float, default=2.0, help="input size in GiB (default 2)")
    p.add_argument("--memory-limit", default="512MiB", help="per worker (default 512MiB)")
    p.add_argument("--chunk-mib", type=int, default=16, help="input chunk size (default 16 MiB)")
    p.add_argument("--workers", default="1,2")
    p.add_argument("--reps", type=int, default=3, help="median of this many runs per figure (default 3)")
    p.add_argument("--dir", default="/tmp/mxp-bench-dask")
    a = p.parse_args()
    cols = 8192
    rows_per_chunk = a.chunk_mib * 2**20 // (4 * cols)
    rows = int(a.gib * 2**30 // (4 * cols)) // rows_per_chunk * rows_per_chunk
    src, dst = os.path.join(a.dir, "in.zarr"), os.path.join(a.dir, "out.zarr")
    shutil.rmtree(a.dir, ignore_errors=True)
    os.makedirs(a.dir)
    print(f"input: {rows} x {cols} float32 = {rows * cols * 4 / 2**30:.2f} GiB in chunks of {a.chunk_mib} MiB "
          f"({rows // rows_per_chunk} chunks), uncompressed zarr; workers of {a.memory_limit}, 1 thread each")
    results = {}
    try:
        for n in [int(w) for w in a.workers.split(",")]:
            with LocalCluster(n_workers=n, threads_per_worker=1, memory_limit=a.memory_limit, processes=True,
                              dashboard_address=":0") as cluster, Client(cluster):
                if not os.path.exists(src):
                    g = da.random.RandomState(0).standard_normal((rows, cols), chunks=(rows_per_chunk, cols))
                    md.to_zarr(g.astype(np.float32), src, compressor=None)
                x = md.from_zarr(src)
                limit = dask.utils.parse_bytes(a.memory_limit)
                passes = {
                    "read only (I/O bound)": lambda: read_only(x).compute(),
                    "mxp.dask.astype -> bfloat16": lambda: md.to_zarr(md.astype(x, mxp.bfloat16), dst,
                                                                      overwrite=True, compressor=None),
                    "mxp.dask.astype stochastic": lambda: md.to_zarr(
                        md.astype(x, mxp.bfloat16, rounding="stochastic", seed=1), dst, overwrite=True,
                        compressor=None),
                    "dask astype(np.float16)": lambda: md.to_zarr(x.astype(np.float16), dst, overwrite=True,
                                                                   compressor=None),
                }
                print(f"\n{n} worker{'s' if n > 1 else ''} (input = {x.nbytes / limit:.1f}x one worker's limit)")
                for name, fn in passes.items():
                    t = timed(fn, a.reps)
                    results[n, name] = x.nbytes / t / 1e9
                    print(f"  {name:<30} {t:7.2f} s  {results[n, name]:6.2f} GB/s")
                read = results[n, "read only (I/O bound)"]
                mxp_bf16, f16 = results[n, "mxp.dask.astype -> bfloat16"], results[n, "dask astype(np.float16)"]
                print(f"  bfloat16 / read {mxp_bf16 / read:.2f}x   bfloat16 / dask float16 {mxp_bf16 / f16:.2f}x")
    finally:
        shutil.rmtree(a.dir, ignore_errors=True)
    ns = sorted({n for n, _ in results})
    if len(ns) > 1:
        name = "mxp.dask.astype -> bfloat16"
        print(f"\n{ns[-1]} workers / {ns[0]}: {results[ns[-1], name] / results[ns[0], name]:.2f}x for {name}")


if __name__ == "__main__":
    main()

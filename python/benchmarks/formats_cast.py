"""Casts into the 0.2 formats (float8_e3m4 ... float4_e2m1fn, and the sub-byte
integers int4, uint4, int2, uint2: a byte each) from float32,
bfloat16 and float16, into an existing array, against memcpy of the same
bytes (timed in alternation with each cast) and ml_dtypes 0.6's astype, in
one process; JSON on stdout (goals.py reads it).  One thread; medians of
--reps; 4M elements (16 MiB of float32).

usage: PYTHONPATH=build/python-venv build/venv/bin/python python/benchmarks/formats_cast.py [--n N] [--reps R]
"""
import argparse
import json
import time

import numpy as np

import mxp

FORMATS = ["float8_e3m4", "float8_e4m3", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz",
           "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "int4", "uint4", "int2", "uint2"]


def median_seconds(fn, reps):
    fn()  # warm: pages, tables
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return sorted(ts)[len(ts) // 2]


def paired_medians(fa, fb, reps):
    """Medians of fa and fb timed in alternation (the first of each pair
    alternating): the memcpy beside each cast sees the machine the cast saw.
    One memcpy a source had read 16.5 GB/s for bfloat16's 8 MiB and 33.7 for
    float16's in the same run (AMD EPYC Zen 4 VM, 2026-12-07), flipping
    every float16 line against the same kernel speeds."""
    fa()
    fb()
    ta, tb = [], []
    for r in range(reps):
        for f, ts in ((fa, ta), (fb, tb)) if r % 2 == 0 else ((fb, tb), (fa, ta)):
            t = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t)
    return sorted(ta)[len(ta) // 2], sorted(tb)[len(tb) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 22)
    ap.add_argument("--reps", type=int, default=9)
    a = ap.parse_args()
    try:
        import ml_dtypes
    except ImportError:
        ml_dtypes = None
    mxp.set_num_threads(1)
    x32 = np.random.default_rng(0).standard_normal(a.n).astype(np.float32)
    sources = {"float32": x32, "bfloat16": x32.astype(mxp.bfloat16), "float16": x32.astype(np.float16)}
    results = []
    for sname, x in sources.items():
        raw, copy = x.view(np.uint8), np.empty(x.nbytes, np.uint8)  # bytes: NumPy's memcpy for every dtype
        ml_x = x if sname != "bfloat16" or ml_dtypes is None else x.view(np.uint16).view(ml_dtypes.bfloat16)
        for f in FORMATS:
            out = np.empty(a.n, getattr(mxp, f))
            memcpy, ours = paired_medians(lambda: np.copyto(copy, raw), lambda: np.copyto(out, x, casting="unsafe"),
                                          a.reps)
            peer = None
            if ml_dtypes is not None:
                with np.errstate(all="ignore"):
                    peer = median_seconds(lambda: ml_x.astype(getattr(ml_dtypes, f)), a.reps)
            results.append({"source": sname, "format": f, "mxp_gbps": x.nbytes / ours / 1e9,
                            "memcpy_gbps": x.nbytes / memcpy / 1e9,
                            "ml_dtypes_gbps": None if peer is None else x.nbytes / peer / 1e9,
                            "vs_memcpy": memcpy / ours, "vs_ml_dtypes": None if peer is None else peer / ours})
    print(json.dumps({"n": a.n, "reps": a.reps, "ml_dtypes": getattr(ml_dtypes, "__version__", None),
                      "results": results}))


if __name__ == "__main__":
    main()

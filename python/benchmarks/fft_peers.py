#!/usr/bin/env python3
"""mxp.fft against numpy.fft, scipy.fft and torch.fft, one thread each
(mxp.set_num_threads(1), scipy's workers=1, torch.set_num_threads(1)), in
one process on the same arrays: 2^20 points in rows of n, fft and rfft
along the last axis, float32 (complex64 out) and float64 (complex128 out).

Issue 26's FFT goal is against the library mxp calls (KISS FFT): `mxp bench
fft` holds it.  These peers are vectorized libraries (pocketfft in NumPy and
SciPy, torch's own); the ratios are printed for reference, without a goal.
Each line: the transform, n, the dtype, mxp's median ms, then each peer's ms
and peer / mxp (above 1: mxp is faster).  NumPy's fft computes float32 in
float64 before NumPy 2.0.

  PYTHONPATH=build/python-venv build/venv/bin/python python/benchmarks/fft_peers.py [--reps R] [--json]
"""
import argparse
import json
import sys

import numpy as np
from timing import median_ms

import mxp

SIZES = [64, 1000, 1024, 4096]
TOTAL = 1 << 20


def peers():
    """name -> (fft, rfft) callables taking (x); absent libraries skipped."""
    out = {"numpy": (lambda x: np.fft.fft(x), lambda x: np.fft.rfft(x))}
    try:
        import scipy.fft as sf
        out["scipy"] = (lambda x: sf.fft(x, workers=1), lambda x: sf.rfft(x, workers=1))
    except ImportError:
        pass
    try:
        import torch
        torch.set_num_threads(1)
        out["torch"] = (lambda x: torch.fft.fft(torch.from_numpy(x)),
                        lambda x: torch.fft.rfft(torch.from_numpy(x)))
    except ImportError:
        pass
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    mxp.set_num_threads(1)
    libs = peers()
    rng = np.random.default_rng(0)
    rows = []
    for dt in (np.float32, np.float64):
        for n in SIZES:
            real = rng.uniform(-1, 1, (TOTAL // n, n)).astype(dt)
            cplx = (real + 1j * rng.uniform(-1, 1, real.shape)).astype(np.complex64 if dt == np.float32
                                                                       else np.complex128)
            for kind, x, fm in (("fft", cplx, mxp.fft.fft), ("rfft", real, mxp.fft.rfft)):
                row = {"op": kind, "n": n, "dtype": np.dtype(dt).name, "mxp_ms": median_ms(lambda: fm(x), a.reps)}
                for name, (pf, pr) in libs.items():
                    f = pf if kind == "fft" else pr
                    row[name + "_ms"] = median_ms(lambda: f(x), a.reps)
                rows.append(row)
    if a.json:
        print(json.dumps({"numpy": np.__version__, "peers": list(libs), "threads": 1, "reps": a.reps,
                          "results": rows}))
        return 0
    print(f"# {', '.join(libs)}; one thread each, 2^20 points, median of {a.reps}; peer/mxp > 1: mxp faster")
    head = "".join(f" {name + ' ms':>10s} {name + '/mxp':>10s}" for name in libs)
    print(f"{'op':5s} {'n':>5s} {'dtype':8s} {'mxp ms':>8s}{head}")
    for r in rows:
        cells = "".join(f" {r[name + '_ms']:10.3f} {r[name + '_ms'] / r['mxp_ms']:10.2f}" for name in libs)
        print(f"{r['op']:5s} {r['n']:5d} {r['dtype']:8s} {r['mxp_ms']:8.3f}{cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

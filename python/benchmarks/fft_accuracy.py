#!/usr/bin/env python3
"""docs/nn.md's FFT accuracy table: mxp.fft.fft's max |error| / max |X|
per length and input dtype, against a direct DFT in long double (x86's
80-bit; angles reduced exactly as k t mod n) of the same input widened
exactly.  Inputs are complex, re and im uniform in [-1, 1), rounded to the
dtype; the output is complex64 (complex128 for float64).

  PYTHONPATH=build/python-venv build/venv/bin/python python/benchmarks/fft_accuracy.py
"""
import sys

import numpy as np

import mxp

SIZES = [1, 2, 3, 5, 7, 8, 12, 17, 64, 97, 128, 1000, 1024, 4096]
DTYPES = [("float64", np.float64), ("float32", np.float32), ("bfloat16", mxp.bfloat16), ("float16", np.float16)]


def dft(x):
    """X[k] = sum_t x[t] exp(-2 pi i k t / n) in long double, 256 rows at a time."""
    n = len(x)
    ld = np.longdouble
    xr, xi = x.real.astype(ld), x.imag.astype(ld)
    t = np.arange(n, dtype=np.int64)
    out = np.empty(n, np.complex128)
    for k0 in range(0, n, 256):
        k = np.arange(k0, min(n, k0 + 256), dtype=np.int64)[:, None]
        a = (ld(-2) * ld(np.pi) * ((k * t) % n).astype(ld)) / ld(n)
        c, s = np.cos(a), np.sin(a)
        out[k0:k0 + len(k)] = (c @ xr - s @ xi).astype(np.float64) + 1j * (s @ xr + c @ xi).astype(np.float64)
    return out


def main():
    rng = np.random.default_rng(0)
    print("| n | " + " | ".join(name for name, _ in DTYPES) + " |")
    print("|---:|" + "---:|" * len(DTYPES))
    for n in SIZES:
        cells = []
        for _, dt in DTYPES:
            pairs = rng.uniform(-1, 1, (n, 2)).astype(dt)
            wide = pairs.astype(np.float64)
            want = dft(wide[:, 0] + 1j * wide[:, 1])
            got = mxp.fft.fft(pairs, complex_pairs=True).astype(np.complex128)
            cells.append(f"{np.max(np.abs(got - want)) / np.max(np.abs(want)):.1e}")
        print(f"| {n} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""python3 -m mxp [--out DIR]: a short tour of mxp in Python -- dtypes,
rounding modes, a bfloat16 matmul beside NumPy float32, a quantized matmul
with its PSNR, the dtype advisor -- writing its figures to DIR (default
./mxp-tour)."""
import argparse
import os
import time

import numpy as np

import mxp


def timed(fn, reps=5):
    fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m mxp", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="mxp-tour", help="folder for the figures (default: ./mxp-tour)")
    p.add_argument("--n", type=int, default=512, help="matrix size for the matmul demos (default 512)")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(0)
    info = mxp.info()
    print(f"mxp {info.version} on {info.cpu.strip()} (ISA {info.isa}, {info.threads} threads)\n")

    print("1. dtypes NumPy lacks, with ml_dtypes' names")
    for t in (mxp.bfloat16, mxp.float8_e4m3fn, mxp.float8_e5m2):
        fi = mxp.finfo(t)
        print(f"   {t.__name__:<14} {fi.bits:>2} bits  max {fi.max!r:<10} eps {fi.eps!r:<8} "
              f"smallest subnormal {float(fi.smallest_subnormal):.3g}")
    mixed = np.ones(2, mxp.bfloat16) + np.ones(2, np.float16)
    print(f"   bfloat16 + float16 -> {mixed.dtype}; bfloat16 * 0.5 -> {(np.ones(2, mxp.bfloat16) * 0.5).dtype}\n")

    print("2. one value, six rounding modes (0.1 to bfloat16)")
    for r in mxp._mxp.ROUNDINGS:
        v = mxp.astype(np.array([0.1]), mxp.bfloat16, rounding=r, seed=1)
        print(f"   {r:<13} {float(v[0]):.10f}")
    x = np.full(10000, 0.1, np.float32)
    print(f"   mean of 10000 stochastic roundings of 0.1: "
          f"{mxp.astype(x, mxp.bfloat16, rounding='stochastic').astype(np.float64).mean():.6f}\n")

    n = args.n
    print(f"3. bfloat16 matmul, n = {n}, beside NumPy float32")
    a32, b32 = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
    a16, b16 = a32.astype(mxp.bfloat16), b32.astype(mxp.bfloat16)
    t_mxp, t_np = timed(lambda: a16 @ b16), timed(lambda: a32 @ b32)
    c = mxp.compare(a32.astype(np.float64) @ b32.astype(np.float64), a16 @ b16)
    print(f"   mxp bfloat16 @: {2 * n**3 / t_mxp / 1e9:6.1f} GFLOPS   NumPy float32 @: {2 * n**3 / t_np / 1e9:6.1f}"
          f" GFLOPS   PSNR vs float64 {c.psnr_db:.1f} dB")
    print(f"   half the bytes: {a16.nbytes} vs {a32.nbytes}\n")

    print("4. int8: quantize, multiply, dequantize")
    qa = mxp.quantize(a32, "uint8", symmetric=False)
    qb = mxp.quantize(b32, "int8", axis=1)
    y = mxp.matmul(qa, qb)  # int8 GEMM, float32 out with the combined scales
    ref = a32.astype(np.float64) @ b32.astype(np.float64)
    print(f"   {qa.qparams}\n   {qb.qparams}")
    print(f"   PSNR of the int8 product vs float64: {mxp.compare(ref, y).psnr_db:.1f} dB\n")

    print("5. which dtype is enough? (activations with outliers)")
    act = rng.standard_normal(100000) * 3
    act[::997] *= 4000
    for req in ("psnr>=40", "relerr<=1e-3", "no-overflow"):
        adv = mxp.recommend_dtype(act, req)
        print(f"   {req:<13} -> {adv.dtype:<14} {adv.reason}")
    print()
    print(mxp.roundtrip(act))

    try:
        import matplotlib  # noqa: F401  (mxp.plot draws with it)
    except ImportError:
        print("\nfigures: skipped, matplotlib is not installed (pip install 'mxp[plot]')")
        return
    from mxp import plot
    paths = [os.path.join(args.out, f) for f in ("error_histogram.png", "roundtrip.png", "quantization.png")]
    plot.error_histogram(ref, y, path=paths[0], title="int8 matmul: relative error vs float64")
    plot.roundtrip(act, path=paths[1])
    plot.quantization(a32, "int8", path=paths[2])
    print(f"\nfigures: {', '.join(paths)}")


if __name__ == "__main__":
    main()

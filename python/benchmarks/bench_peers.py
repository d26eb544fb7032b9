"""make bench's comparison with today's Python peers, in one process: mxp's
dtypes on NumPy 2 beside ml_dtypes and PyTorch (build/venv, versions
printed).  One thread everywhere (mxp, torch, NumPy's BLAS), 2^24 values,
medians of warm calls, new arrays and out=, and each goal with "holds" or
"falls short":

  astype float32 -> bfloat16, new array   >= 2x ml_dtypes, >= 1x torch .to()
  bfloat16 a + b, new array               >= 2x ml_dtypes, >= 1x torch
  bfloat16 a @ b, n = 1024                >= 1x ml_dtypes' @ (float32 BLAS inside), result bfloat16
  np.dot / np.einsum of bfloat16          within 1.1x of @
  np.sum of 2^24 bfloat16                 within 1 ulp of the exact sum
  sort, argmax, median, comparisons       within 2x of ml_dtypes

"cold" is the first call of a kind in the process.  Usage:
python bench_peers.py [--quick]
"""
import math
import os
import sys

os.environ.setdefault("MXP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import timing  # noqa: E402

import mxp  # noqa: E402

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None
try:
    import torch
    torch.set_num_threads(1)
except ImportError:
    torch = None

QUICK = "--quick" in sys.argv
REPS = 5 if QUICK else 11
N = 1 << (22 if QUICK else 24)
results = []


def median_ms(fn, reps=REPS):
    return timing.median_ms(fn, reps)


def goal(name, ours, peer_name, peer, want):
    """One line: mxp's time, the peer's, the ratio (peer / mxp) and the goal."""
    if peer is None:
        print(f"  {name:<44} {ours:9.3f} ms   {peer_name}: not installed")
        return
    ratio = peer / ours
    verdict = "holds" if ratio >= want else "falls short"
    results.append(verdict)
    print(f"  {name:<44} {ours:9.3f} ms   {peer_name} {peer:9.3f} ms   {ratio:6.2f}x  (goal >= {want:g}x: {verdict})")


def bf16_tensor(a):
    return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)


def bench_astype(x):
    print(f"astype float32 -> bfloat16, 2^{N.bit_length() - 1} values")
    cold = timing.cold_ms(lambda: x.astype(mxp.bfloat16))
    ours = median_ms(lambda: x.astype(mxp.bfloat16))
    out = np.empty(x.shape, mxp.bfloat16)
    ours_out = median_ms(lambda: np.copyto(out, x, casting="unsafe"))
    ml = median_ms(lambda: x.astype(ml_dtypes.bfloat16)) if ml_dtypes else None
    ml_out = None
    if ml_dtypes:
        o2 = np.empty(x.shape, ml_dtypes.bfloat16)
        ml_out = median_ms(lambda: np.copyto(o2, x, casting="unsafe"))
    th = median_ms(lambda: torch.from_numpy(x).to(torch.bfloat16)) if torch else None
    goal(f"x.astype(bfloat16), new array (cold {cold:.1f} ms)", ours, "ml_dtypes", ml, 2.0)
    goal("x.astype(bfloat16), new array", ours, "torch .to()", th, 1.0)
    goal("np.copyto(out, x) into bfloat16", ours_out, "ml_dtypes", ml_out, 2.0)


def bench_add(x):
    print(f"bfloat16 a + b, 2^{N.bit_length() - 1} values")
    a, b = x.astype(mxp.bfloat16), x[::-1].astype(mxp.bfloat16)
    cold = timing.cold_ms(lambda: a + b)
    ours = median_ms(lambda: a + b)
    out = np.empty_like(a)
    ours_out = median_ms(lambda: np.add(a, b, out=out))
    ml = ml_out = None
    if ml_dtypes:
        ma, mb = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
        ml = median_ms(lambda: ma + mb)
        mo = np.empty_like(ma)
        ml_out = median_ms(lambda: np.add(ma, mb, out=mo))
    th = th_out = None
    if torch:
        ta, tb, to = bf16_tensor(a), bf16_tensor(b), bf16_tensor(out)
        th = median_ms(lambda: ta + tb)
        th_out = median_ms(lambda: torch.add(ta, tb, out=to))
    goal(f"a + b, new array (cold {cold:.1f} ms)", ours, "ml_dtypes", ml, 2.0)
    goal("a + b, new array", ours, "torch", th, 1.0)
    goal("np.add(a, b, out=)", ours_out, "ml_dtypes", ml_out, 2.0)
    goal("np.add(a, b, out=)", ours_out, "torch add(out=)", th_out, 1.0)


def bench_matmul():
    n = 512 if QUICK else 1024
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(mxp.bfloat16)
    b = rng.standard_normal((n, n)).astype(mxp.bfloat16)
    cold = timing.cold_ms(lambda: a @ b)
    ours = median_ms(lambda: a @ b)
    print(f"bfloat16 a @ b, n = {n}: {2 * n**3 / (ours * 1e6):.0f} GFLOPS, result {(a @ b).dtype}, cold {cold:.1f} ms")
    ml = None
    if ml_dtypes:
        ma, mb = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
        ml = median_ms(lambda: ma @ mb, reps=3)
        print(f"  (ml_dtypes' @ returns {(ma @ mb).dtype})")
    goal("a @ b", ours, "ml_dtypes", ml, 1.0)
    th = median_ms(lambda: bf16_tensor(a) @ bf16_tensor(b), reps=3) if torch else None
    goal("a @ b", ours, "torch bfloat16 @", th, 1.0)
    m = 128 if QUICK else 256
    small_a, small_b = a[:m, :m].copy(), b[:m, :m].copy()
    at = median_ms(lambda: small_a @ small_b)
    dot = median_ms(lambda: np.dot(small_a, small_b), reps=3)
    print(f"np.dot and np.einsum of bfloat16, n = {m} (NumPy calls one dot function per output element)")
    goal("np.dot(a, b) [goal: within 1.1x of a @ b]", dot, "a @ b", at, 1 / 1.1)
    try:
        ein = median_ms(lambda: np.einsum("ij,jk->ik", small_a, small_b), reps=3)
        goal("np.einsum('ij,jk->ik') [within 1.1x of @]", ein, "a @ b", at, 1 / 1.1)
    except TypeError as e:
        results.append("falls short")
        print(f"  np.einsum: {type(e).__name__}: {e} (falls short)")


def bench_sum(x):
    a = x.astype(mxp.bfloat16)
    exact = math.fsum(a.astype(np.float64))
    s = np.sum(a)
    ulp = float(np.spacing(np.array([exact], mxp.bfloat16))[0])
    off = abs(float(s) - exact) / ulp
    ours = median_ms(lambda: np.sum(a))
    verdict = "holds" if off <= 1 else "falls short"
    results.append(verdict)
    line = f"np.sum of 2^{N.bit_length() - 1} bfloat16: {float(s)!r}, exact {exact:.6g}, {off:.2f} ulp (goal <= 1: {verdict}); {ours:.2f} ms"
    if ml_dtypes:
        m = a.astype(ml_dtypes.bfloat16)
        ms = np.sum(m)
        line += f"; ml_dtypes {float(ms)!r} ({abs(float(ms) - exact) / ulp:.0f} ulp), {median_ms(lambda: np.sum(m)):.2f} ms"
    print(line)


def bench_sorting(x):
    n = 1 << 20
    a = x[:n].astype(mxp.bfloat16)
    print(f"sorting and searching, 2^20 bfloat16 (float8_e4m3fn beside)")
    for t_ours, t_ml in ((mxp.bfloat16, getattr(ml_dtypes, "bfloat16", None)),
                         (mxp.float8_e4m3fn, getattr(ml_dtypes, "float8_e4m3fn", None))):
        ours_a = x[:n].astype(t_ours)
        theirs = x[:n].astype(t_ml) if t_ml is not None else None
        for name, fn in (("np.sort", np.sort), ("np.argsort", np.argsort), ("np.argmax", np.argmax),
                         ("np.median", np.median), ("np.unique", np.unique), ("a < b", lambda v: v < v[::-1]),
                         ("np.isnan", np.isnan)):
            ours = median_ms(lambda: fn(ours_a), reps=5)
            peer = median_ms(lambda: fn(theirs), reps=5) if theirs is not None else None
            goal(f"{name} ({np.dtype(t_ours).name}) [within 2x]", ours, "ml_dtypes", peer, 0.5)
    del a


def main():
    info = mxp.info()
    versions = [f"NumPy {np.__version__}"]
    versions.append(f"ml_dtypes {ml_dtypes.__version__}" if ml_dtypes else "ml_dtypes: not installed")
    versions.append(f"torch {torch.__version__}" if torch else "torch: not installed")
    print(f"mxp {mxp.__version__} beside {', '.join(versions)}; {info.cpu.strip()} (ISA {info.isa}), "
          f"{mxp.get_num_threads()} mxp thread; ratios > 1: mxp is faster")
    x = np.random.default_rng(1).standard_normal(N).astype(np.float32)
    bench_astype(x)
    bench_add(x)
    bench_matmul()
    bench_sum(x)
    bench_sorting(x)
    print(f"goals: {results.count('holds')} hold, {results.count('falls short')} fall short")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""conv2d, pooling and batch norm: mxp.nn against torch.nn.functional, one
thread each (torch.set_num_threads(1), mxp.set_num_threads(1)), in one
process on the same arrays.  Issue 26's goals: conv2d float32 on
ResNet-style shapes >= 1.0x torch's time (bfloat16 against torch's
bfloat16); pooling and batch norm are held against memcpy by
`mxp bench nn` (their ratio to torch is printed here for reference).

Each line: the operation, mxp's and torch's median milliseconds, torch /
mxp (above 1: mxp is faster) and, for conv2d, "holds" or "falls short".

  PYTHONPATH=build/python-venv build/venv/bin/python python/benchmarks/conv_torch.py [--reps R] [--json]
"""
import argparse
import json
import os
import sys

# One thread for every library in the process, NumPy's own BLAS included: its idle workers
# otherwise spin beside the engine being timed on a 2-core machine.
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

from timing import median_ms

# (name, N, C, H, O, k, stride, padding, groups)
CONVS = [
    ("1x64x56x56 3x3 64", 1, 64, 56, 64, 3, 1, 1, 1),
    ("1x256x14x14 3x3 256", 1, 256, 14, 256, 3, 1, 1, 1),
    ("1x3x224x224 7x7 s2 64", 1, 3, 224, 64, 7, 2, 3, 1),
    ("1x64x56x56 1x1 256", 1, 64, 56, 256, 1, 1, 0, 1),
    ("1x128x56x56 dw3x3", 1, 128, 56, 128, 3, 1, 1, 128),
    ("8x64x56x56 3x3 64", 8, 64, 56, 64, 3, 1, 1, 1),
    ("8x256x14x14 3x3 256", 8, 256, 14, 256, 3, 1, 1, 1),
]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    try:
        import numpy as np
        import torch
        import mxp
        from mxp import nn
    except ImportError as e:
        print(json.dumps({"torch": None, "why": str(e)}) if a.json else f"skipped: {e}")
        return 0
    torch.set_num_threads(1)
    mxp.set_num_threads(1)
    F = torch.nn.functional
    rng = np.random.default_rng(0)
    rows = []

    def add(op, layout, dtype, t_mxp, t_torch, goal):
        rows.append({"op": op, "layout": layout, "dtype": dtype, "mxp_ms": t_mxp, "torch_ms": t_torch,
                     "torch_over_mxp": t_torch / t_mxp, "goal": goal,
                     "holds": None if goal is None else t_torch / t_mxp >= goal})

    with torch.no_grad():
        for name, n, c, h, o, k, s, p, g in CONVS:
            for layout in ("NCHW", "NHWC"):
                for dt, tdt in ((np.float32, torch.float32), (mxp.bfloat16, torch.bfloat16)):
                    if dt is not np.float32 and name != CONVS[0][0]:
                        continue
                    x = rng.standard_normal((n, c, h, h)).astype(np.float32)
                    w = (rng.standard_normal((o, c // g, k, k)) * 0.1).astype(np.float32)
                    tx, tw = torch.from_numpy(x).to(tdt), torch.from_numpy(w).to(tdt)
                    if layout == "NHWC":
                        tx = tx.to(memory_format=torch.channels_last)
                        tw = tw.to(memory_format=torch.channels_last)
                        x, w = x.transpose(0, 2, 3, 1).copy(), w.transpose(0, 2, 3, 1).copy()
                    x, w = x.astype(dt), w.astype(dt)
                    y = nn.conv2d(x, w, None, s, p, 1, g, layout=layout)
                    tm = median_ms(lambda: nn.conv2d(x, w, None, s, p, 1, g, layout=layout, out=y), a.reps)
                    tt = median_ms(lambda: F.conv2d(tx, tw, None, s, p, 1, g), a.reps)
                    add(f"conv2d {name}", layout, np.dtype(dt).name, tm, tt, 1.0)
        x = rng.standard_normal((8, 64, 56, 56)).astype(np.float32)
        tx = torch.from_numpy(x)
        rm, rv, w = np.zeros(64, np.float32), np.ones(64, np.float32), np.ones(64, np.float32)
        trm, trv, tw = torch.zeros(64), torch.ones(64), torch.ones(64)
        others = [
            ("max_pool2d 3x3 s2 p1", lambda: nn.max_pool2d(x, 3, 2, 1), lambda: F.max_pool2d(tx, 3, 2, 1)),
            ("avg_pool2d 2x2", lambda: nn.avg_pool2d(x, 2), lambda: F.avg_pool2d(tx, 2)),
            ("global avg pool", lambda: nn.global_avg_pool2d(x), lambda: F.adaptive_avg_pool2d(tx, 1)),
            ("batch_norm train", lambda: nn.batch_norm(x, rm, rv, w, w, True),
             lambda: F.batch_norm(tx, trm, trv, tw, tw, True)),
            ("batch_norm infer", lambda: nn.batch_norm(x, rm, rv, w, w, False),
             lambda: F.batch_norm(tx, trm, trv, tw, tw, False)),
        ]
        for name, fm, ft in others:
            add(name + " 8x64x56x56", "NCHW", "float32", median_ms(fm, a.reps), median_ms(ft, a.reps), None)
    if a.json:
        print(json.dumps({"torch": torch.__version__, "threads": 1, "reps": a.reps, "results": rows}))
        return 0
    print(f"# torch {torch.__version__}, one thread each, median of {a.reps}; torch/mxp > 1: mxp faster")
    print(f"{'op':38s} {'layout':6s} {'dtype':9s} {'mxp ms':>8s} {'torch ms':>9s} {'torch/mxp':>9s}  goal")
    for r in rows:
        verdict = "" if r["goal"] is None else ("holds" if r["holds"] else "falls short")
        print(f"{r['op']:38s} {r['layout']:6s} {r['dtype']:9s} {r['mxp_ms']:8.3f} {r['torch_ms']:9.3f} "
              f"{r['torch_over_mxp']:9.2f}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

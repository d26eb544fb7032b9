#!/usr/bin/env python3
"""Issues 23, 25 and 26's goals, one line each, measured on this machine by mxp's own
benchmarks (`mxp bench ... --json`, `mxp train --json`, `mxp info --json`).

Each line: the goal, the figure (mxp's and the peer's, from the same run),
the ratio the goal needs, and "holds" or "falls short (by X%)"; a goal
whose peer or run is missing says so instead.  A summary follows: how many
hold, and those that fall short with their margins.  One thread unless the
goal says otherwise (MXP_NUM_THREADS=1 for the children); medians.

MXP_ISA=scalar|avx2|avx512|avx512bf16|amx picks the tier evaluated.  With it set,
the peers are capped to the same tier (ONEDNN_MAX_CPU_ISA, OPENBLAS_CORETYPE,
unless those are set) so that an AVX2 run compares AVX2 code with AVX2
code; --peers-isa native leaves them at the machine's best.

  python/benchmarks/goals.py [--mxp build/mxp] [--quick] [--save-json DIR]
  python/benchmarks/goals.py --from-json DIR     (recorded runs: no benchmarks)

Only the standard library: runs with /usr/bin/python3.
"""
import argparse
import json
import os
import subprocess
import sys

SQUARES = (256, 512, 1024, 2048)
TALL = (1, 16, 128)  # M, with N = K = 4096
SMALL = (32, 64, 128)

# The peers at the tier MXP_ISA names: oneDNN's ISA cap, OpenBLAS's core,
# torch's ATen kernels (ATEN_CPU_CAPABILITY).
PEER_TIERS = {  # oneDNN, OpenBLAS, ATen, MKL (torch's 1x1 convolutions and matmuls go through MKL)
    "avx2": ("AVX2", "Haswell", "avx2", "AVX2"),
    "avx512": ("AVX512_CORE", "SkylakeX", "avx512", "AVX512"),
    "avx512bf16": ("AVX512_CORE_BF16", "Cooperlake", "avx512", "AVX512_E1"),
    "amx": ("AVX512_CORE_AMX", "Cooperlake", "avx512", "AVX512_E4"),  # OpenBLAS 0.3.21 has no Sapphire Rapids core
}
# torch's MLP epoch (a Python peer), run with this interpreter
TORCH_MLP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_mlp.py")
# conv2d against torch (issue 26), run like formats_cast.py
CONV_TORCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conv_torch.py")
# casts into the 0.2 formats against ml_dtypes (issue 25), run with the build's
# first venv (it has ml_dtypes) and the module built for it
FORMATS_CAST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "formats_cast.py")


# ---- the runs ------------------------------------------------------------

def runs(quick):
    """name -> (argv after the mxp binary, extra environment).  --quick: small
    reps and sizes, about 2 minutes in all on a quiet 2-core machine."""
    reps = ["--reps", "3"] if quick else []
    alt_reps = ["--reps", "11"] if quick else []
    sq = lambda n: ["--m", str(n), "--n", str(n), "--k", str(n)]  # noqa: E731
    return {
        "info": (["info", "--json"], {}),
        "peak": (["bench", "peak", "--json"] + (["--reps", "5"] if quick else []), {}),
        "gemm_standard": (["bench", "gemm", "--set", "standard", "--json"] + reps, {}),
        "gemm_small": (["bench", "gemm", "--set", "small", "--json"] + reps, {}),
        "gemm_alternate_f32": (["bench", "gemm"] + sq(512) + ["--alternate", "--json"] + alt_reps, {}),
        "gemm_alternate_f64": (["bench", "gemm", "--dtype", "f64"] + sq(512) + ["--alternate", "--json"] + alt_reps,
                               {}),
        "gemm_threads2_f32": (["bench", "gemm", "--set", "standard", "--dtype", "f32", "--threads", "2", "--json"]
                              + reps, {}),
        "gemm_threads2_f64": (["bench", "gemm", "--set", "standard", "--dtype", "f64", "--threads", "2", "--json"]
                              + reps, {}),
        "gemm_f16": (["bench", "gemm", "--dtype", "f16"] + sq(1024) + ["--json"] + reps, {}),
        "gemm_e4m3": (["bench", "gemm", "--dtype", "e4m3"] + sq(1024) + ["--json"] + reps, {}),
        "convert": (["bench", "convert", "--json"] + (["--n", "4M", "--reps", "3"] if quick else []), {}),
        "ops": (["bench", "ops", "--json"] + (["--n", "2M", "--reps", "3"] if quick else []), {}),
        "quant": (["bench", "quant", "--json"] + (["--n", "2M", "--reps", "3"] if quick else []), {}),
        "nn": (["bench", "nn", "--json"] + (["--n", "1M", "--reps", "3"] if quick else []), {}),
        "fft": (["bench", "fft", "--json"] + reps, {}),
        "train": (["train", "--hidden", "256", "--configs", "fp32,bf16_master", "--json",
                   "--epochs", "3" if quick else "10"], {}),
    }


def peer_env(mode):
    """The environment for the children, and a line about the peers' ISA."""
    env = dict(os.environ)
    env.setdefault("MXP_NUM_THREADS", "1")
    isa = os.environ.get("MXP_ISA")
    if mode == "native" or not isa or isa not in PEER_TIERS:
        return env, "native (the machine's best)"
    dnnl, core, aten, mkl = PEER_TIERS[isa]
    if "ONEDNN_MAX_CPU_ISA" not in env and "DNNL_MAX_CPU_ISA" not in env:
        env["ONEDNN_MAX_CPU_ISA"] = dnnl
    if "OPENBLAS_CORETYPE" not in env:
        env["OPENBLAS_CORETYPE"] = core
    env.setdefault("ATEN_CPU_CAPABILITY", aten)
    env.setdefault("MKL_ENABLE_INSTRUCTIONS", mkl)
    cap = env.get("ONEDNN_MAX_CPU_ISA", env.get("DNNL_MAX_CPU_ISA"))
    return env, (f"capped to the {isa} tier (ONEDNN_MAX_CPU_ISA={cap}, OPENBLAS_CORETYPE={env['OPENBLAS_CORETYPE']}, "
                 f"ATEN_CPU_CAPABILITY={env['ATEN_CPU_CAPABILITY']}, "
                 f"MKL_ENABLE_INSTRUCTIONS={env['MKL_ENABLE_INSTRUCTIONS']})")


def run_all(mxp, quick, env, save_dir):
    """Runs every benchmark; name -> parsed JSON (None when it failed)."""
    out = {}
    for name, (argv, extra) in runs(quick).items():
        print(f"  running mxp {' '.join(argv)}", file=sys.stderr, flush=True)
        try:
            p = subprocess.run([mxp] + argv, env={**env, **extra}, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, universal_newlines=True, check=False)
            out[name] = json.loads(p.stdout) if p.returncode == 0 else None
        except (OSError, ValueError) as e:
            print(f"  mxp {' '.join(argv)}: {e}", file=sys.stderr)
            out[name] = None
        if save_dir and out[name] is not None:
            with open(os.path.join(save_dir, name + ".json"), "w") as f:
                json.dump(out[name], f)
    epochs = "3" if quick else "10"
    out["torch_mlp"] = run_python("torch_mlp", [sys.executable, TORCH_MLP, "--epochs", epochs], env, save_dir)
    build = os.path.dirname(os.path.abspath(mxp))
    py = os.environ.get("MXP_BENCH_PYTHON", os.path.join(build, "venv", "bin", "python"))
    argv = [py, FORMATS_CAST] + (["--n", "1048576", "--reps", "3"] if quick else [])
    out["formats_cast"] = run_python("formats_cast", argv, {**env, "PYTHONPATH": os.path.join(build, "python-venv")},
                                     save_dir)
    argv = [py, CONV_TORCH, "--json", "--reps", "3" if quick else "7"]
    out["conv_torch"] = run_python("conv_torch", argv, {**env, "PYTHONPATH": os.path.join(build, "python-venv")},
                                   save_dir)
    return out


def run_python(name, argv, env, save_dir):
    """A Python peer's JSON (None when it failed), saved as DIR/<name>.json."""
    print(f"  running {' '.join(os.path.basename(a) for a in argv[1:])}", file=sys.stderr, flush=True)
    try:
        p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True,
                           check=False)
        doc = json.loads(p.stdout) if p.returncode == 0 else None
    except (OSError, ValueError) as e:
        print(f"  {argv[1]}: {e}", file=sys.stderr)
        doc = None
    if save_dir and doc is not None:
        with open(os.path.join(save_dir, name + ".json"), "w") as f:
            json.dump(doc, f)
    return doc


def load_all(directory, quick):
    """The recorded runs: DIR/<name>.json for each run (absent: None)."""
    out = {}
    for name in list(runs(quick)) + ["torch_mlp", "formats_cast", "conv_torch"]:
        path = os.path.join(directory, name + ".json")
        try:
            with open(path) as f:
                out[name] = json.load(f)
        except FileNotFoundError:
            out[name] = None
    return out


# ---- goals ---------------------------------------------------------------

class Goals:
    """The goal lines, printed as they come, and the tally for the summary."""

    def __init__(self):
        self.held, self.short, self.unmeasured = [], [], []

    def ratio(self, text, figure, ratio, need, at_most=False, percent=False):
        """A goal on a ratio: ratio >= need (at_most: ratio <= need); percent:
        the ratio shown as a percentage (of a peak)."""
        ok = ratio <= need if at_most else ratio >= need
        digits = 0 if percent else 2
        fmt = (lambda x, d: f"{100 * x:.{d}f}%") if percent else (lambda x, d: f"{x:.{d}f}x")  # noqa: E731
        want = f"need {'<=' if at_most else '>='} {fmt(need, digits)}"
        if not ok and fmt(ratio, digits) == fmt(need, digits):
            digits += 2  # a miss the rounding would hide
        shown = fmt(ratio, digits)
        if ok:
            verdict = "holds"
            self.held.append(text)
        else:
            by = 100 * (ratio / need - 1 if at_most else 1 - ratio / need)
            by = f"{by:.1f}%" if by >= 0.05 else "<0.1%"
            verdict = f"falls short (by {by})"
            self.short.append(f"{text}: {shown}, {want} (by {by})")
        print(f"  {text:<56} {figure + ': ' + shown:<52} {want:<14} {verdict}")

    def missing(self, text, why):
        self.unmeasured.append(f"{text}: {why}")
        print(f"  {text:<56} {why}")

    def summary(self):
        total = len(self.held) + len(self.short) + len(self.unmeasured)
        print(f"\nsummary: {len(self.held)} of {total} goals hold, {len(self.short)} fall short, "
              f"{len(self.unmeasured)} not measured")
        if self.short:
            print("falls short:")
            for s in self.short:
                print(f"  {s}")
        if self.unmeasured:
            print("not measured:")
            for s in self.unmeasured:
                print(f"  {s}")


def rows(doc, **match):
    """The result rows of a gemm run matching the fields given."""
    if not doc:
        return []
    return [r for r in doc.get("results", []) if all(r.get(k) == v for k, v in match.items())]


def row(doc, **match):
    found = rows(doc, **match)
    return found[0] if found else None


def timed(r):
    return r is not None and r.get("available") and r.get("gflops")


PEER_NAMES = {"openblas_sgemm": "OpenBLAS", "openblas_dgemm": "OpenBLAS", "onednn_sgemm": "oneDNN",
              "onednn_bf16_matmul": "oneDNN", "onednn_gemm_u8s8s32": "oneDNN", "mxp_f32": "mxp f32",
              "mxp": "mxp"}


def shape_name(m, n, k):
    return f"{m}^3" if m == n == k else f"M={m} N=K={n}" if n == k else f"{m}x{n}x{k}"


def vs_peers(g, doc, run, dtype, m, n, k, text, need, impls, unit="GFLOPS"):
    """mxp's rate against the best of impls at one shape."""
    if doc is None:
        return g.missing(text, f"not measured (run {run} missing or failed)")
    ours = row(doc, dtype=dtype, m=m, n=n, k=k, impl="mxp")
    peers = [r for r in (row(doc, dtype=dtype, m=m, n=n, k=k, impl=i) for i in impls) if timed(r)]
    if not timed(ours):
        return g.missing(text, "not measured (no mxp row)")
    if not peers:
        return g.missing(text, "not measured (peer missing)")
    best = max(peers, key=lambda r: r["gflops"])
    figure = f"mxp {ours['gflops']:.1f} {unit}, {PEER_NAMES.get(best['impl'], best['impl'])} {best['gflops']:.1f}"
    g.ratio(text, figure, ours["gflops"] / best["gflops"], need)


def goal_gemm_peers(g, d):
    """f32 and f64 squares and M = 1, 16, 128 against the best peer."""
    doc = d.get("gemm_standard")
    for dtype, impls, names in (("f32", ("openblas_sgemm", "onednn_sgemm"), "best of OpenBLAS, oneDNN"),
                                ("f64", ("openblas_dgemm",), "OpenBLAS")):
        for s in SQUARES:
            vs_peers(g, doc, "gemm_standard", dtype, s, s, s, f"{dtype} GEMM {s}^3 >= 1.0x {names}", 1.0, impls)
        for m in TALL:
            vs_peers(g, doc, "gemm_standard", dtype, m, 4096, 4096,
                     f"{dtype} GEMM M={m} N=K=4096 >= 1.0x {names}", 1.0, impls)


def goal_gemm_peak(g, d):
    """f32 and f64 squares from 512 up against the measured FMA peak."""
    doc, peak = d.get("gemm_standard"), d.get("peak")
    for dtype in ("f32", "f64"):
        p = None
        if peak:
            p = next((r for r in peak.get("results", []) if r.get("op") == f"{dtype}_fma"), None)
        for s in SQUARES[1:]:
            text = f"{dtype} GEMM {s}^3 >= 90% of the FMA peak"
            ours = row(doc, dtype=dtype, m=s, n=s, k=s, impl="mxp")
            if peak is None:
                g.missing(text, "not measured (run peak missing or failed)")
            elif p is None:
                g.missing(text, f"not measured (no peak loop at the {peak.get('isa')} level)")
            elif not timed(ours):
                g.missing(text, "not measured (run gemm_standard missing or failed)")
            else:
                g.ratio(text, f"mxp {ours['gflops']:.1f} of {p['gflops']:.1f} GFLOPS peak",
                        ours["gflops"] / p["gflops"], 0.90, percent=True)


def goal_gemm_small(g, d):
    """32^3, 64^3, 128^3 against oneDNN."""
    for s in SMALL:
        vs_peers(g, d.get("gemm_small"), "gemm_small", "f32", s, s, s, f"f32 GEMM {s}^3 >= 0.8x oneDNN", 0.8,
                 ("onednn_sgemm",))


def goal_gemm_cold(g, d):
    """512^3 called cold, call by call, against the best peer."""
    for dtype, impls in (("f32", ("openblas_sgemm", "onednn_sgemm")), ("f64", ("openblas_dgemm",))):
        run = f"gemm_alternate_{dtype}"
        text = f"{dtype} GEMM 512^3 cold, call by call >= 0.95x best peer"
        doc = d.get(run)
        ours = row(doc, dtype=dtype, m=512, n=512, k=512, impl="mxp")
        peers = [r for r in (row(doc, dtype=dtype, m=512, n=512, k=512, impl=i) for i in impls) if timed(r)]
        if doc is None:
            g.missing(text, f"not measured (run {run} missing or failed)")
        elif not timed(ours):
            g.missing(text, "not measured (no mxp row)")
        elif not peers:
            g.missing(text, "not measured (peer missing)")
        else:
            best = min(peers, key=lambda r: r["seconds"])
            g.ratio(text, f"mxp {1e3 * ours['seconds']:.2f} ms, {PEER_NAMES[best['impl']]} "
                    f"{1e3 * best['seconds']:.2f} ms", best["seconds"] / ours["seconds"], 0.95)


def goal_gemm_threads(g, d):
    """Two threads against one from 512^3 up (mxp against itself)."""
    one = d.get("gemm_standard")
    for dtype in ("f32", "f64"):
        run = f"gemm_threads2_{dtype}"
        two = d.get(run)
        for s in SQUARES[1:]:
            text = f"{dtype} GEMM {s}^3 two threads >= 1.9x one"
            r1 = row(one, dtype=dtype, m=s, n=s, k=s, impl="mxp")
            r2 = row(two, dtype=dtype, m=s, n=s, k=s, impl="mxp")
            if not timed(r1):
                g.missing(text, "not measured (run gemm_standard missing or failed)")
            elif not timed(r2):
                g.missing(text, f"not measured (run {run} missing or failed)")
            else:
                g.ratio(text, f"2 threads {r2['gflops']:.1f} GFLOPS, 1 thread {r1['gflops']:.1f}",
                        r2["gflops"] / r1["gflops"], 1.9)


def goal_gemm_narrow(g, d, isa):
    """bf16, f16, e4m3 at 1024^3: against mxp's f32 GEMM where the level has no
    instruction for them, against oneDNN's bf16 where it has (avx512bf16, amx)."""
    std = d.get("gemm_standard")
    if isa in ("avx512bf16", "amx"):
        vs_peers(g, std, "gemm_standard", "bf16", 1024, 1024, 1024,
                 "bf16 GEMM 1024^3 >= 1.0x oneDNN bf16 (native dot)", 1.0, ("onednn_bf16_matmul",))
    else:
        text = f"bf16 GEMM 1024^3 >= 0.95x mxp f32 (no bf16 dot at {isa})"
        ours = row(std, dtype="bf16", m=1024, n=1024, k=1024, impl="mxp")
        f32 = row(std, dtype="f32", m=1024, n=1024, k=1024, impl="mxp")
        if not (timed(ours) and timed(f32)):
            g.missing(text, "not measured (run gemm_standard missing or failed)")
        else:
            g.ratio(text, f"mxp bf16 {ours['gflops']:.1f} GFLOPS, f32 {f32['gflops']:.1f}",
                    ours["gflops"] / f32["gflops"], 0.95)
    for dtype in ("f16", "e4m3"):
        # the f32 row: mxp_gemm on the same A and B widened beforehand, same run
        run = f"gemm_{dtype}"
        vs_peers(g, d.get(run), run, dtype, 1024, 1024, 1024, f"{dtype} GEMM 1024^3 >= 0.95x mxp f32", 0.95,
                 ("mxp_f32",))


def goal_gemm_u8s8(g, d):
    """u8s8 at the standard shapes against oneDNN."""
    doc = d.get("gemm_standard")
    for s in SQUARES:
        vs_peers(g, doc, "gemm_standard", "u8s8", s, s, s, f"u8s8 GEMM {s}^3 >= 1.0x oneDNN", 1.0,
                 ("onednn_gemm_u8s8s32",), unit="GOPS")
    for m in TALL:
        vs_peers(g, doc, "gemm_standard", "u8s8", m, 4096, 4096, f"u8s8 GEMM M={m} N=K=4096 >= 1.0x oneDNN", 1.0,
                 ("onednn_gemm_u8s8s32",), unit="GOPS")


def goal_convert(g, d):
    """Every pair and mode of the default set against memcpy, one thread;
    nearest even >= 0.9x, others >= 0.75x; new arrays >= 0.8 x 0.75."""
    doc = d.get("convert")
    if doc is None:
        return g.missing("conversions >= 0.75x memcpy", "not measured (run convert missing or failed)")
    for r in doc.get("results", []):
        if r.get("threads", 1) != 1:
            continue
        if r["new_array"]:
            text, need = f"convert {r['pair']} {r['mode']}, new array >= 0.6x memcpy", 0.8 * 0.75
        else:
            need = 0.9 if r["mode"] == "nearest_even" else 0.75
            text = f"convert {r['pair']} {r['mode']} >= {need:g}x memcpy"
        g.ratio(text, f"mxp {r['mxp_gbps']:.2f} GB/s, memcpy {r['memcpy_gbps']:.2f}", r["ratio"], need)


def goal_formats(g, d):
    """Issue 25: casts from float32/bfloat16/float16 into each 0.2 format and
    sub-byte integer, into an existing array: >= 0.9x memcpy and >= 4x
    ml_dtypes' astype.  Where ml_dtypes itself runs within 4x of memory
    speed (its bfloat16 -> int4 cast reads 0.7x memcpy), 4x it is past what
    memory allows: the need is then what 0.9x memcpy is against ml_dtypes,
    and at least 1x (docs/dtypes.md)."""
    doc = d.get("formats_cast")
    if doc is None:
        return g.missing("casts into the 0.2 formats >= 0.9x memcpy, >= 4x ml_dtypes",
                         "not measured (python/benchmarks/formats_cast.py missing or failed)")
    for r in doc.get("results", []):
        pair = f"{r['source']} -> {r['format']}"
        g.ratio(f"cast {pair} >= 0.9x memcpy", f"mxp {r['mxp_gbps']:.2f} GB/s, memcpy {r['memcpy_gbps']:.2f}",
                r["vs_memcpy"], 0.9)
        text = f"cast {pair} >= 4x ml_dtypes astype"
        if r.get("vs_ml_dtypes") is None:
            g.missing(text, "ml_dtypes not installed")
        else:
            need = max(1.0, min(4.0, 0.9 * r["memcpy_gbps"] / r["ml_dtypes_gbps"]))
            capped = " (4x is past 0.9x memcpy)" if need < 4.0 else ""
            g.ratio(text, f"mxp {r['mxp_gbps']:.2f} GB/s, ml_dtypes {doc.get('ml_dtypes')} {r['ml_dtypes_gbps']:.2f}"
                    f"{capped}", r["vs_ml_dtypes"], need)


def goal_gelu(g, d):
    """float16/bfloat16 gelu and gelu_tanh against NumPy's float32 tanh form,
    in elements per second (the same N)."""
    doc = d.get("ops")
    for dtype in ("float16", "bfloat16"):
        for op in ("gelu", "gelu_tanh"):
            text = f"{dtype} {op} >= 3x NumPy float32 tanh form"
            if doc is None:
                g.missing(text, "not measured (run ops missing or failed)")
                continue
            ours = next((r for r in doc["results"] if r["dtype"] == dtype and r["op"] == op), None)
            peer = next((r for r in doc["results"] if r["dtype"] == "float32" and r["op"] == op), None)
            if ours is None or not ours.get("mxp_gbps"):
                g.missing(text, "not measured (no mxp row)")
            elif peer is None or not peer.get("numpy_gbps"):
                g.missing(text, "not measured (peer missing)")
            else:
                size = 2 if dtype in ("float16", "bfloat16") else 4
                ours_e = ours["mxp_gbps"] / (2 * size)  # G elements/s: read + write
                np_e = peer["numpy_gbps"] / 8
                g.ratio(text, f"mxp {ours_e:.3f} Gelem/s, NumPy f32 {np_e:.3f}", ours_e / np_e, 3.0)


def goal_quant(g, d):
    """qlinear against torch's dynamic quantized Linear (one thread each):
    mxp_qlinear (x to 8 bits) and mxp_qlinear_reduce_range (x to 7 bits,
    codes [0, 127], the arithmetic torch's layer does on x86)."""
    doc = d.get("quant")
    lin = (doc or {}).get("linear") or {}
    shape = "x".join(map(str, lin.get("shape", [])))
    texts = (f"qlinear {shape} >= 1.0x torch dynamic qLinear" if doc else
             "qlinear >= 1.0x torch dynamic quantized Linear",
             f"qlinear_reduce_range {shape} >= 1.0x torch dynamic qLinear" if doc else
             "qlinear_reduce_range >= 1.0x torch dynamic quantized Linear")
    peer = next((r for r in lin.get("rows", []) if r["operation"].startswith("torch")), None)
    for text, prefix, note in zip(texts, ("mxp_qlinear (", "mxp_qlinear_reduce_range"), ("", " (x to 7 bits both)")):
        ours = next((r for r in lin.get("rows", []) if r["operation"].startswith(prefix)), None)
        if doc is None:
            g.missing(text, "not measured (run quant missing or failed)")
        elif not doc.get("torch") or peer is None:
            g.missing(text, "not measured here (see bench_peers.py)")
        elif ours is None:
            g.missing(text, "not measured (no mxp row)")
        else:
            g.ratio(text, f"mxp {ours['gops']:.1f} GOPS, torch {doc['torch']} ({lin.get('torch_threads')} thr) "
                    f"{peer['gops']:.1f}{note}", ours["gops"] / peer["gops"], 1.0)


def goal_train(g, d):
    """The MLP epoch: fp32 against torch (python/benchmarks/torch_mlp.py:
    the same network, data, batch and optimizer), bf16 against mxp's own
    fp32 (mxp train, one thread)."""
    doc = d.get("train")
    t = {r["key"]: r for r in (doc or {}).get("training", [])}
    text = "MLP epoch fp32 (64-256-256-10) <= torch's"
    peer = d.get("torch_mlp")
    if "fp32" not in t:
        g.missing(text, "not measured (run train missing or failed)")
    elif peer is None:
        g.missing(text, "not measured (run torch_mlp missing or failed)")
    elif not peer.get("torch"):
        g.missing(text, "not measured (torch not importable by this Python)")
    else:
        ours = t["fp32"]["epoch_seconds"]
        g.ratio(text, f"mxp {1e3 * ours:.1f} ms, torch {peer['torch']} ({peer.get('threads')} thr) "
                f"{1e3 * peer['epoch_seconds']:.1f} ms", ours / peer["epoch_seconds"], 1.0, at_most=True)
    text = "MLP epoch bf16 <= 0.8x mxp fp32 (64-256-256-10)"
    if "fp32" not in t or "bf16_master" not in t:
        return g.missing(text, "not measured (run train missing or failed)")
    fp32, bf16 = t["fp32"]["epoch_seconds"], t["bf16_master"]["epoch_seconds"]
    g.ratio(text, f"bf16 {1e3 * bf16:.1f} ms, fp32 {1e3 * fp32:.1f} ms", bf16 / fp32, 0.8, at_most=True)


def goal_nn(g, d):
    """Issue 26: softmax, norms, pooling and batch norm >= 0.8x memcpy of
    their traffic (mxp bench nn); conv2d >= 1.0x torch's (conv_torch.py, one
    thread each, torch's same-precision path); FFT within 1.5x of KISS FFT
    (mxp bench fft)."""
    doc = d.get("nn")
    if doc is None:
        g.missing("nn operations >= 0.8x memcpy", "not measured (run nn missing or failed)")
    else:
        for r in doc.get("results", []) + doc.get("pool_bn", []):
            name = f"{r['dtype']} {r['op']}" if "dtype" in r else f"float32 {r['op']}"
            g.ratio(f"{name} >= 0.8x memcpy", f"mxp {r['mxp_gbps']:.2f} GB/s, memcpy {r['memcpy_gbps']:.2f}",
                    r["mxp_over_memcpy"], 0.8)
    doc = d.get("conv_torch")
    if doc is None or not doc.get("torch"):
        g.missing("conv2d >= 1.0x torch", "not measured (conv_torch.py failed or torch not importable)")
    else:
        for r in doc.get("results", []):
            if r.get("goal") is None:
                continue
            g.ratio(f"{r['dtype']} {r['op']} {r['layout']} >= 1.0x torch",
                    f"mxp {r['mxp_ms']:.3f} ms, torch {doc['torch']} {r['torch_ms']:.3f}", r["torch_over_mxp"],
                    r["goal"])
    doc = d.get("fft")
    if doc is None:
        return g.missing("fft within 1.5x KISS FFT", "not measured (run fft missing or failed)")
    for r in doc.get("results", []):
        g.ratio(f"float32 {r['kind']} n={r['n']} <= 1.5x KISS FFT", f"mxp {r['mxp_ms']:.2f} ms, KISS {r['kiss_ms']:.2f}",
                r["ratio"], doc.get("goal", 1.5), at_most=True)


# ---- the machine ---------------------------------------------------------

def print_machine(d, peers_line):
    info = d.get("info") or {}
    cpu = info.get("cpu", {})
    if cpu:
        print(f"cpu        {cpu.get('vendor')} family 0x{cpu.get('family', 0):x} model 0x{cpu.get('model', 0):x} "
              f"({cpu.get('uarch')}), {cpu.get('brand')}")
        print(f"isa level  {cpu.get('isa')} in use (this machine supports up to {cpu.get('isa_supported')}; "
              "MXP_ISA caps it)")
    else:
        print("cpu        unknown (mxp info failed)")
    found = {}
    for r in rows(d.get("gemm_standard"), dtype="f32"):
        if r["impl"] in ("openblas_sgemm", "onednn_sgemm") and r["impl"] not in found:
            found[r["impl"]] = r["detail"] if r["available"] else f"missing: {r['detail']}"
    print(f"OpenBLAS   {found.get('openblas_sgemm', 'not run')}")
    print(f"oneDNN     {found.get('onednn_sgemm', 'not run')}")
    print(f"peers' isa {peers_line}")
    return cpu.get("isa", "unknown")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Issues 23, 25 and 26's goals, measured here: one line each, then a summary.")
    ap.add_argument("--mxp", default=os.environ.get("MXP_CLI", "build/mxp"),
                    help="the mxp binary (default: $MXP_CLI or build/mxp)")
    ap.add_argument("--quick", action="store_true", default=os.environ.get("MXP_GOALS_QUICK") == "1",
                    help="small reps and sizes, about 2 minutes (or MXP_GOALS_QUICK=1)")
    ap.add_argument("--from-json", metavar="DIR", help="read recorded runs DIR/<run>.json instead of running")
    ap.add_argument("--save-json", metavar="DIR", help="also write each run's JSON to DIR/<run>.json")
    ap.add_argument("--peers-isa", choices=("tier", "native"), default="tier",
                    help="with MXP_ISA set: cap the peers to that tier (default) or not")
    a = ap.parse_args(argv)
    env, peers_line = peer_env(a.peers_isa)
    if a.from_json:
        d = load_all(a.from_json, a.quick)
        peers_line = "as recorded"
    else:
        if a.save_json:
            os.makedirs(a.save_json, exist_ok=True)
        d = run_all(a.mxp, a.quick, env, a.save_json)
    print("the goals (issues 23, 25, 26) on this machine (one thread unless said; medians; peers in the same run)\n")
    isa = print_machine(d, peers_line)
    print()
    g = Goals()
    for family in (goal_gemm_peers, goal_gemm_peak, goal_gemm_small, goal_gemm_cold, goal_gemm_threads):
        family(g, d)
    goal_gemm_narrow(g, d, isa)
    for family in (goal_gemm_u8s8, goal_convert, goal_formats, goal_gelu, goal_quant, goal_train, goal_nn):
        family(g, d)
    g.summary()
    return 0


if __name__ == "__main__":
    sys.exit(main())

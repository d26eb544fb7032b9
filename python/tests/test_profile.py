"""mxp.profile(): known work (a matmul's FLOPs and bytes, a cast's bytes),
the report's formats (JSON, Chrome trace events, the roofline PNG),
misuse, a plugin operator as a kind of its own, and MXP_PROFILE=1 around
a whole process (Python and the mxp command)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import mxp


@pytest.fixture(autouse=True)
def fixed_roofline(monkeypatch):
    # 20 GB/s, 100 GFLOPS a core, 2 us a page fault: no half-second measurement
    monkeypatch.setenv("MXP_PROFILE_MACHINE", "20,100,2")


def test_known_work():
    a = np.ones((64, 32), np.float32)
    b = np.ones((32, 48), np.float32)
    x = np.arange(1000, dtype=np.float32)
    with mxp.profile() as p:
        for _ in range(3):
            mxp.matmul(a, b)
        mxp.astype(x, mxp.bfloat16)
    m = p["matmul"]
    assert m.calls == 3
    assert m.flops == 3 * 2 * 64 * 48 * 32
    assert m.bytes == 3 * (64 * 32 + 32 * 48 + 64 * 48) * 4
    c = p["astype"]
    assert c.calls == 1 and c.bytes == 1000 * (4 + 2) and c.flops == 0
    assert "gemm" not in [e.op for e in p.entries]  # the GEMM inside matmul is the matmul's
    assert p.machine.memory_gbps == 20 and p.machine.source == "MXP_PROFILE_MACHINE"
    d = p.as_dict()
    assert d["peak_gflops"] == 100 and {e["op"] for e in d["entries"]} == {"matmul", "astype"}
    assert p.table().startswith("mxp profile: ") and "matmul" in p.table()


def test_verdicts_in_python():
    x = np.zeros(1 << 22, np.float32)
    out = np.empty(x.shape, mxp.bfloat16)
    t = np.zeros(4, np.float32)
    np.copyto(out, x, casting="unsafe")  # out's pages touched before the profile
    with mxp.profile() as p:
        for _ in range(3):
            np.copyto(out, x, casting="unsafe")  # NumPy's cast loop is mxp_convert
    assert p["convert"].verdict == "memory-bound"
    # wall time: a tiny call preempted on a loaded machine looks long, so
    # the overhead case gets 5 tries (a wrong rule fails all of them)
    for _ in range(5):
        with mxp.profile() as p:
            for _ in range(500):
                mxp.nn.gelu(t)
        if p["gelu"].verdict == "overhead-bound":
            break
    assert p["gelu"].verdict == "overhead-bound" and "batch" in p["gelu"].advice


def test_trace_and_files(tmp_path):
    with mxp.profile() as p:
        mxp.matmul(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32))
        mxp.nn.softmax(np.ones((4, 5), np.float32))
    p.save_trace(tmp_path / "trace.json")
    trace = json.loads((tmp_path / "trace.json").read_text())
    events = trace["traceEvents"]
    assert [e["name"] for e in events] == ["matmul", "softmax"]
    for e in events:
        assert e["ph"] == "X" and e["dur"] >= 0 and e["ts"] >= 0 and e["pid"] == os.getpid()
    assert events[0]["args"]["flops"] == 2 * 8 * 8 * 8
    assert events[1]["ts"] >= events[0]["ts"] + events[0]["dur"] - 1e-3
    with mxp.profile():
        pass
    with pytest.raises(RuntimeError, match="later profile"):
        p.save_trace(tmp_path / "old.json")


def test_misuse():
    with mxp.profile():
        with pytest.raises(ValueError, match="already running"):
            with mxp.profile():
                pass
    p = mxp.profile()
    with pytest.raises(RuntimeError, match="still running"):
        p.table()
    with pytest.raises(KeyError):
        with mxp.profile() as q:
            pass
        q["gemm"]


def test_reset_leaves_out_a_warm_up(tmp_path):
    a = np.ones((16, 16), np.float32)
    with mxp.profile() as p:
        mxp.matmul(a, a)  # warm-up
        p.reset()
        mxp.matmul(a, a)
    assert p["matmul"].calls == 1
    p.to_chrome_trace(tmp_path / "t.json")
    assert len(json.loads((tmp_path / "t.json").read_text())["traceEvents"]) == 1
    with pytest.raises(RuntimeError, match="inside the with block"):
        p.reset()


def test_roofline_png(tmp_path):
    pytest.importorskip("matplotlib")
    a = np.ones((256, 256), np.float32)
    with mxp.profile() as p:
        mxp.matmul(a, a)
        mxp.astype(np.ones(1 << 20, np.float32), mxp.bfloat16)
        mxp.nn.gelu(np.ones(1 << 20, np.float32))
    fig = p.roofline(tmp_path / "roofline.png")
    assert (tmp_path / "roofline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert any("matmul" in t.get_text() for t in ax.texts)


@pytest.mark.skipif(not os.environ.get("MXP_EXAMPLE_OPS"), reason="MXP_EXAMPLE_OPS not set (ctest sets it)")
def test_plugin_operator_kind():
    ops = mxp.load_ops(os.environ["MXP_EXAMPLE_OPS"])
    x = np.ones(100, np.float32)
    with mxp.profile() as p:
        ops.gelu(x)
        ops.logsumexp(x.reshape(10, 10))
    assert p["op:gelu"].calls == 1 and p["op:gelu"].bytes == 800
    assert p["op:logsumexp"].bytes == 400 + 40


def test_mxp_profile_environment(tmp_path):
    code = ("import numpy as np, mxp\n"
            "a = np.ones((64, 64), np.float32)\n"
            "for _ in range(4): mxp.matmul(a, a)\n")
    env = {**os.environ, "MXP_PROFILE": "1", "MXP_PROFILE_JSON": str(tmp_path / "p.json"),
           "MXP_PROFILE_TRACE": str(tmp_path / "t.json")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "mxp profile:" in r.stderr and "matmul" in r.stderr
    d = {e["op"]: e for e in json.loads((tmp_path / "p.json").read_text())["entries"]}
    assert d["matmul"]["calls"] == 4
    names = [e["name"] for e in json.loads((tmp_path / "t.json").read_text())["traceEvents"]]
    assert names.count("matmul") == 4
    r = subprocess.run([sys.executable, "-c", "import mxp"], capture_output=True, text=True,
                       env={**os.environ, "MXP_PROFILE": "yes"})
    assert "MXP_PROFILE='yes' is not 0 or 1; ignored" in r.stderr


@pytest.mark.skipif(not os.environ.get("MXP_CLI"), reason="MXP_CLI not set (ctest sets it)")
def test_mxp_profile_cli():
    r = subprocess.run([os.environ["MXP_CLI"], "quant-gemm", "--m", "64", "--n", "64", "--k", "64"],
                       capture_output=True, text=True, env={**os.environ, "MXP_PROFILE": "1"})
    assert r.returncode == 0, r.stderr
    table = r.stderr[r.stderr.index("mxp profile:"):]
    assert "gemm" in table and "verdict" in table

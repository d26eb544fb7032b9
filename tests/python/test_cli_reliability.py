"""The CLI on the failures docs/reliability.md promises to survive.

Atomic writes: `mxp cast IN OUT` replaces OUT through a temporary file and
a rename, so OUT == IN works, and a write that fails (a file size limit
here) leaves the input byte for byte with no temporary file behind;
/dev/null as OUT is written, never removed.

Run by ctest (pytest_cli_reliability) with MXP_CLI naming the mxp binary.
"""
import os
import resource
import signal
import subprocess
import tempfile

import numpy as np
import pytest

MXP = os.environ.get("MXP_CLI")
pytestmark = pytest.mark.skipif(not MXP, reason="MXP_CLI is not set (run through ctest)")


def run(*args, limit_file_size=None, stdin=None):
    """Runs mxp; returns (CompletedProcess, the rusage of that child alone)."""
    def limits():
        if limit_file_size is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() fails with EFBIG instead
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_size, limit_file_size))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([MXP, *map(str, args)], stdin=stdin, stdout=out, stderr=err, preexec_fn=limits)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(p.args, p.returncode, out.read().decode(), err.read().decode()), usage


def test_cast_in_place_replaces_the_input(tmp_path):
    x = np.random.default_rng(1).standard_normal((40, 30)).astype(np.float32)
    path = tmp_path / "x.npy"
    np.save(path, x)
    r, _ = run("cast", path, path, "--to", "float64")
    assert r.returncode == 0, r.stderr
    y = np.load(path)
    assert y.dtype == np.float64 and np.array_equal(y, x.astype(np.float64))
    assert os.listdir(tmp_path) == ["x.npy"]


def test_cast_that_fails_leaves_the_input_byte_for_byte(tmp_path):
    x = np.random.default_rng(2).integers(0, 256, 1 << 16, dtype=np.uint8)
    path = tmp_path / "x.npy"
    np.save(path, x)
    before = path.read_bytes()
    # float64 is 512 KiB: over the 256 KiB limit, as a full disk would be
    r, _ = run("cast", path, path, "--to", "float64", limit_file_size=256 << 10)
    assert r.returncode == 1
    assert "File too large" in r.stderr
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["x.npy"]


def test_cast_to_dev_null_writes_it_and_keeps_it(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, np.arange(10, dtype=np.float32))
    r, _ = run("cast", path, "/dev/null", "--to", "bf16")
    assert r.returncode == 0, r.stderr
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")

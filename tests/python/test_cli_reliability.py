"""The CLI on the failures docs/reliability.md promises to survive.

Atomic writes: `mxp cast IN OUT` replaces OUT through a temporary file and
a rename, so OUT == IN works, and a write that fails (a file size limit
here) leaves the input byte for byte with no temporary file behind;
/dev/null as OUT is written, never removed.

Memory bounds: a stream on a pipe that declares 8 GiB in a few bytes is
refused having held about 1 MiB; `mxp stat` of a sparse file (its holes are
zeros a read delivers) peaks near the file's data size, not at 3x it in
float64 copies.  Peak RSS is skipped under the sanitizers (shadow memory).

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
SANITIZED = os.environ.get("MXP_SANITIZE", "").upper() in ("ON", "1", "TRUE", "YES")
MiB = 1 << 20
pytestmark = pytest.mark.skipif(not MXP, reason="MXP_CLI is not set (run through ctest)")


def run(*args, limit_file_size=None, stdin=None):
    """Runs mxp; returns (CompletedProcess, the rusage of that child alone)."""
    def limits():
        if limit_file_size is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() fails with EFBIG instead
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_size, limit_file_size))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([MXP, *map(str, args)], stdin=stdin, stdout=out, stderr=err, preexec_fn=limits)
        if stdin is not None:
            stdin.close()  # the child has its own copy
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


def npy_header(descr, shape):
    """A version 1.0 preamble and header, padded to 64 bytes as np.save does."""
    text = "{'descr': '%s', 'fortran_order': False, 'shape': (%s,), }" % (descr, shape)
    text += " " * (63 - (10 + len(text)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode()


def peak_rss(usage):
    return usage.ru_maxrss * 1024  # Linux: KiB


def test_stat_of_a_stream_declaring_8_gib_fails_in_bounded_memory(tmp_path):
    image = npy_header("<f8", 1 << 30) + bytes(16)
    assert len(image) == 144
    read_end, write_end = os.pipe()
    os.write(write_end, image)
    os.close(write_end)
    r, usage = run("stat", "/dev/stdin", stdin=os.fdopen(read_end, "rb"))
    assert r.returncode == 1
    assert "the stream ended after 16 data bytes, shape (1073741824,) float64 needs 8589934592" in r.stderr
    if not SANITIZED:
        assert peak_rss(usage) < 32 * MiB


def test_stat_of_a_sparse_file_stays_near_its_data_size(tmp_path):
    path = tmp_path / "sparse.npy"
    data = 64 * MiB  # float32 zeros: holes on disk
    with open(path, "wb") as f:
        f.write(npy_header("<f4", data // 4))
        f.truncate(f.tell() + data)
    assert os.stat(path).st_blocks * 512 < MiB
    r, usage = run("stat", path)
    assert r.returncode == 0, r.stderr
    s = dict(line.split(None, 1) for line in r.stdout.strip().splitlines())
    assert (s["elements"], s["zero"], s["max"], s["std"]) == (str(data // 4), str(data // 4), "0", "0")
    if not SANITIZED:  # was 64 MiB + a 128 MiB float64 copy
        assert peak_rss(usage) < data + 24 * MiB

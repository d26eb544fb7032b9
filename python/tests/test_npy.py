"""mxp.save / mxp.load keep the dtype, read what the C library writes, and
never leave a truncated file."""
import os
import subprocess

import numpy as np
import pytest

import mxp
from mxptest import FLOATS, bits


@pytest.mark.parametrize("t", FLOATS)
def test_round_trip_keeps_the_dtype(tmp_path, t):
    a = np.random.default_rng(0).standard_normal((3, 5)).astype(t)
    mxp.save(tmp_path / "a.npy", a)
    b = mxp.load(tmp_path / "a.npy")
    assert b.dtype == np.dtype(t) and np.array_equal(bits(a), bits(b))
    raw = np.load(tmp_path / "a.npy")  # NumPy alone: the one-field structured dtype
    assert raw.dtype.names == (t.__name__,)
    assert np.array_equal(raw[t.__name__].view(t), a)


def test_plain_arrays_and_zero_d(tmp_path):
    mxp.save(tmp_path / "f", np.arange(4.0))
    assert mxp.load(tmp_path / "f.npy").tolist() == [0, 1, 2, 3]
    mxp.save(tmp_path / "z.npy", np.array(1.5, mxp.bfloat16))
    z = mxp.load(tmp_path / "z.npy")
    assert z.shape == () and z.dtype == np.dtype(mxp.bfloat16) and float(z) == 1.5


def test_files_of_the_c_library_load(tmp_path):
    cli = os.environ.get("MXP_CLI")
    if not cli:
        pytest.skip("MXP_CLI not set (ctest sets it)")
    x = np.random.default_rng(1).standard_normal(100).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    subprocess.run([cli, "cast", str(tmp_path / "x.npy"), str(tmp_path / "y.npy"), "--to", "bf16"], check=True,
                   capture_output=True)
    y = mxp.load(tmp_path / "y.npy")
    assert y.dtype == np.dtype(mxp.bfloat16) and np.array_equal(bits(y), bits(x.astype(mxp.bfloat16)))
    mxp.save(tmp_path / "w.npy", y)
    assert (tmp_path / "w.npy").read_bytes() == (tmp_path / "y.npy").read_bytes()


def test_failed_save_leaves_the_old_file(tmp_path):
    p = tmp_path / "keep.npy"
    np.save(p, np.arange(3))
    before = p.read_bytes()

    with pytest.raises(ValueError):
        mxp.save(p, np.array([object()], dtype=object))  # refused while writing: no pickles
    assert p.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["keep.npy"]


def test_bad_field_type_is_refused(tmp_path):
    np.save(tmp_path / "bad.npy", np.zeros(2, dtype=[("bfloat16", "<f4")]))
    with pytest.raises(ValueError):
        mxp.load(tmp_path / "bad.npy")


def test_save_keeps_links_modes_and_devices(tmp_path):
    """The C saver's guarantees (issue 24 item 3): a symbolic link is followed
    and stays a link, an existing file keeps its mode, a device is written
    in place, and the process umask is never touched."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3).astype(mxp.bfloat16)
    target = tmp_path / "target.npy"
    np.save(target, np.zeros(1))
    os.chmod(target, 0o600)
    link = tmp_path / "link.npy"
    os.symlink(target, link)
    mask = os.umask(0o022)
    os.umask(mask)
    for arr in (a, np.array([1 + 2j, 3 - 4j])):  # mxp's dtype (C saver) and NumPy's (its bytes, C writer)
        mxp.save(link, arr)
        assert link.is_symlink() and os.readlink(link) == str(target)
        assert os.stat(target).st_mode & 0o777 == 0o600
        back = mxp.load(target)
        assert back.dtype == arr.dtype and np.array_equal(back.astype(np.complex128), arr.astype(np.complex128))
    null_link = tmp_path / "null.npy"
    os.symlink("/dev/null", null_link)
    mxp.save(null_link, a)
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null") and null_link.is_symlink()
    assert os.umask(mask) == mask  # unchanged by save
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.npy", "null.npy", "target.npy"]


def test_save_refuses_bad_input_and_keeps_the_old_file(tmp_path):
    p = tmp_path / "keep.npy"
    np.save(p, np.arange(3))
    before = p.read_bytes()
    with pytest.raises(ValueError):
        mxp.save(p, np.array([object()], dtype=object))
    with pytest.raises(OSError):
        mxp.save(tmp_path / "no-such-folder" / "x.npy", np.arange(3))
    assert p.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["keep.npy"]

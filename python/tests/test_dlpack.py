"""DLPack with PyTorch: zero copy both ways, shared writes, lifetimes, no
leaks, bad input."""
import gc
import sys

import numpy as np
import pytest

import mxp
from mxptest import bits

torch = pytest.importorskip("torch")
import torch.utils.dlpack as tdl  # noqa: E402


@pytest.mark.parametrize("tdtype,ndtype", [(torch.bfloat16, mxp.bfloat16), (torch.float32, np.float32),
                                          (torch.float16, np.float16), (torch.int8, np.int8),
                                          (torch.uint8, np.uint8), (torch.float64, np.float64),
                                          (torch.int64, np.int64)])
def test_from_torch_is_a_view(tdtype, ndtype):
    t = torch.arange(12).reshape(3, 4).to(tdtype)
    a = mxp.from_dlpack(t)
    assert a.dtype == np.dtype(ndtype) and a.shape == (3, 4)
    assert a.ctypes.data == t.data_ptr()
    assert a.astype(np.float64).tolist() == t.double().tolist()
    a[1, 2] = 100
    assert float(t[1, 2]) == 100
    t[0, 0] = 7
    assert float(a[0, 0]) == 7


def test_from_capsule_and_from_non_contiguous():
    t = torch.arange(20, dtype=torch.float32).reshape(4, 5).to(torch.bfloat16)
    a = mxp.from_dlpack(tdl.to_dlpack(t.t()))
    assert a.shape == (5, 4) and a.strides == (2, 10) and a.ctypes.data == t.data_ptr()
    assert a.astype(np.float32).tolist() == t.t().float().tolist()


def test_to_torch_is_a_view():
    a = np.arange(6, dtype=np.float32).reshape(2, 3).astype(mxp.bfloat16)
    t = tdl.from_dlpack(mxp.to_dlpack(a))
    assert t.dtype == torch.bfloat16 and tuple(t.shape) == (2, 3) and t.data_ptr() == a.ctypes.data
    t[1, 1] = 42
    assert float(a[1, 1]) == 42
    a[0, 2] = -1
    assert float(t[0, 2]) == -1
    s = a[:, ::2]
    ts = tdl.from_dlpack(mxp.to_dlpack(s))
    assert ts.stride() == (3, 2) and ts.float().tolist() == s.astype(np.float32).tolist()


def test_lifetimes_either_side_first():
    t = torch.ones(1000, dtype=torch.bfloat16)
    a = mxp.from_dlpack(t)
    del t
    gc.collect()
    assert float(a.astype(np.float32).sum()) == 1000  # a keeps torch's memory alive
    a = np.ones(1000, mxp.bfloat16)
    ref = sys.getrefcount(a)
    t = tdl.from_dlpack(mxp.to_dlpack(a))
    assert sys.getrefcount(a) == ref + 1
    del a
    gc.collect()
    assert float(t.float().sum()) == 1000  # t keeps the array alive
    del t
    gc.collect()


def test_unused_capsule_releases_the_array():
    a = np.ones(10, mxp.bfloat16)
    ref = sys.getrefcount(a)
    c = mxp.to_dlpack(a)
    assert sys.getrefcount(a) == ref + 1
    del c
    assert sys.getrefcount(a) == ref


def test_no_leak_over_many_round_trips():
    a = np.ones(16, mxp.bfloat16)
    t = torch.ones(16, dtype=torch.bfloat16)
    ra, rt = sys.getrefcount(a), sys.getrefcount(t)
    for _ in range(100_000):
        tdl.from_dlpack(mxp.to_dlpack(a))
        mxp.from_dlpack(t)
    gc.collect()
    assert sys.getrefcount(a) == ra and sys.getrefcount(t) == rt


def test_bad_inputs():
    with pytest.raises(TypeError):
        mxp.from_dlpack(object())
    with pytest.raises(TypeError):
        mxp.to_dlpack([1, 2])
    c = tdl.to_dlpack(torch.ones(3))
    mxp.from_dlpack(c)
    with pytest.raises(ValueError):
        mxp.from_dlpack(c)  # a capsule is consumed once
    ro = np.ones(3, mxp.bfloat16)
    ro.flags.writeable = False
    with pytest.raises(BufferError):
        mxp.to_dlpack(ro)
    with pytest.raises(TypeError):
        mxp.to_dlpack(np.array(["a"]))
    with pytest.raises(TypeError):
        mxp.from_dlpack(torch.ones(2, dtype=torch.complex32) if hasattr(torch, "complex32") else object())


def test_negative_strides_are_refused_or_copied():
    """PyTorch aborts the process on a DLPack tensor with negative strides
    (issue 24): to_dlpack refuses them; mxp.dlpack copies them."""
    r = np.arange(5.0)[::-1]
    with pytest.raises(BufferError, match="negative stride"):
        mxp.to_dlpack(r)
    with pytest.raises(BufferError):
        mxp.to_dlpack(np.arange(12, dtype=np.float32).reshape(3, 4).astype(mxp.bfloat16)[:, ::-2])
    t = torch.from_dlpack(mxp.dlpack(r))  # a copy, in order
    assert t.tolist() == [4.0, 3.0, 2.0, 1.0, 0.0] and t.data_ptr() != r.ctypes.data
    with pytest.raises(BufferError):
        mxp.dlpack(r).__dlpack__(copy=False)
    one = np.ones((1, 3), mxp.bfloat16)[::-1]  # a negative stride on a length-1 axis moves nothing
    assert tdl.from_dlpack(mxp.to_dlpack(one)).float().tolist() == [[1.0, 1.0, 1.0]]

"""mxp's safetensors files against the safetensors library itself (the
oracle): the bytes mxp writes equal the library's for the same tensors
and metadata, files the library writes (torch's float8 e8m0 and float4
included) open in mxp with the same bytes per tensor, and the library
loads what mxp writes.  Needs safetensors, ml_dtypes and torch (build/venv);
skipped without them.  The C-level rules are tests/io/test_safetensors.c.
"""
import ctypes
import os
import struct
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxp_ctypes as mx  # noqa: E402

st_numpy = pytest.importorskip("safetensors.numpy")
ml_dtypes = pytest.importorskip("ml_dtypes")
lib = mx.lib

# NumPy dtypes and the mxp dtype of their bits
BITS = [(np.bool_, mx.BOOL), (np.int8, mx.S8), (np.int16, mx.S16), (np.int32, mx.S32), (np.int64, mx.S64),
        (np.uint8, mx.U8), (np.uint16, mx.U16), (np.uint32, mx.U32), (np.uint64, mx.U64), (np.float16, mx.F16),
        (ml_dtypes.bfloat16, mx.BF16), (np.float32, mx.F32), (np.float64, mx.F64),
        (ml_dtypes.float8_e4m3fn, mx.E4M3), (ml_dtypes.float8_e5m2, mx.E5M2)]


def tensors(seed):
    rng = np.random.default_rng(seed)
    out = {}
    for i, (dt, _) in enumerate(BITS):
        shape = [(3, 4), (5,), (), (2, 0), (1, 2, 3)][i % 5]
        x = rng.standard_normal(shape) * 10
        out["w.%d.%s" % (i, np.dtype(dt).name)] = np.asarray(x).astype(dt)
    return out


def mxp_array(a):
    code = dict((np.dtype(dt), c) for dt, c in BITS)[a.dtype]
    bits = a.view(np.uint8 if a.dtype.itemsize == 1 else {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])
    return mx.from_numpy(np.require(bits, requirements="C"), dtype=code)  # (ascontiguousarray makes 0-d 1-d)


def mxp_save(named, metadata=None):
    names = list(named)
    arrays = [mxp_array(named[n]) for n in names]
    meta = list((metadata or {}).items())
    c_names = (ctypes.c_char_p * max(1, len(names)))(*[n.encode() for n in names])
    c_arrays = (ctypes.c_void_p * max(1, len(arrays)))(*[a.ptr for a in arrays])
    keys = (ctypes.c_char_p * max(1, len(meta)))(*[k.encode() for k, _ in meta])
    values = (ctypes.c_char_p * max(1, len(meta)))(*[v.encode() for _, v in meta])
    data, size = ctypes.c_void_p(), ctypes.c_size_t()
    mx.check(lib.mxp_safetensors_save_buffer(ctypes.byref(data), ctypes.byref(size), len(names), c_names, c_arrays,
                                             len(meta), keys, values), "mxp_safetensors_save_buffer")
    try:
        return ctypes.string_at(data, size.value)
    finally:
        lib.mxp_free(data)


class Opened:
    """mxp_safetensors_open_buffer over bytes: {name: (dtype name, shape, bytes)} and the metadata."""

    def __init__(self, blob):
        st = ctypes.c_void_p()
        mx.check(lib.mxp_safetensors_open_buffer(ctypes.byref(st), blob, len(blob)), "mxp_safetensors_open_buffer")
        try:
            self.tensors, self.order = {}, []
            for i in range(lib.mxp_safetensors_count(st)):
                name = lib.mxp_safetensors_name(st, i).decode()
                nd = lib.mxp_safetensors_ndim(st, i)
                shape = tuple(lib.mxp_safetensors_shape(st, i)[k] for k in range(nd))
                n = ctypes.c_size_t()
                p = lib.mxp_safetensors_data(st, i, ctypes.byref(n))
                self.tensors[name] = (lib.mxp_safetensors_dtype_name(st, i).decode(), shape,
                                      ctypes.string_at(p, n.value) if n.value else b"")
                self.order.append(name)
            self.metadata = {lib.mxp_safetensors_metadata_key(st, j).decode():
                             lib.mxp_safetensors_metadata_value(st, j).decode()
                             for j in range(lib.mxp_safetensors_metadata_count(st))}
        finally:
            lib.mxp_safetensors_close(st)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("metadata", [None, {"format": "np"}, {"note": 'quote " backslash \\ tab \t \u00e9 \x01'}])
def test_mxp_writes_the_library_bytes(seed, metadata):
    named = tensors(seed)
    assert mxp_save(named, metadata) == st_numpy.save(named, metadata=metadata)


def test_names_sort_as_the_library_sorts():
    # same dtype: by name (bytes); non-ASCII and escapes in names
    named = {n: np.zeros(2, np.float32) for n in ["b", "a", "\u00e9", "A", "a.10", "a.9", "q\"", "tab\t"]}
    assert mxp_save(named) == st_numpy.save(named)


def test_mxp_reads_the_library_files():
    named = tensors(5)
    blob = st_numpy.save(named, metadata={"k": "v"})
    f = Opened(blob)
    assert f.metadata == {"k": "v"}
    n = struct.unpack("<Q", blob[:8])[0]
    for name, a in named.items():
        dtype, shape, data = f.tensors[name]
        assert shape == a.shape
        assert data == a.tobytes()
    # mxp lists tensors in the order of their data, as the header's offsets give it
    offsets = sorted((info["data_offsets"], k) for k, info in __import__("json").loads(blob[8:8 + n]).items()
                     if k != "__metadata__")
    assert f.order == [k for _, k in offsets]


def test_library_reads_mxp_files():
    named = tensors(7)
    blob = mxp_save(named, {"a": "b"})
    # its NumPy reader has no BF16 or F8: those through torch
    native = {k: v for k, v in named.items() if v.dtype.kind in "biuf" and v.dtype.type.__module__ == "numpy"}
    back = st_numpy.load(mxp_save(native, {"a": "b"}))
    assert set(back) == set(native)
    for name, a in native.items():
        assert back[name].dtype == a.dtype and back[name].shape == a.shape
        assert back[name].tobytes() == a.tobytes()
    st_torch = pytest.importorskip("safetensors.torch")
    back = st_torch.load(blob)
    for name, a in named.items():
        assert tuple(back[name].shape) == a.shape
        assert back[name].contiguous().view(-1).view(__import__("torch").uint8).numpy().tobytes() == a.tobytes()


def test_torch_formats_mxp_lacks_are_listed():
    torch = pytest.importorskip("torch")
    st_torch = pytest.importorskip("safetensors.torch")
    named = {"scale": torch.full((4,), 2.0).to(torch.float8_e8m0fnu), "c": torch.zeros(2, dtype=torch.complex64)}
    if hasattr(torch, "float4_e2m1fn_x2"):
        named["f4"] = torch.zeros(3, dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    f = Opened(st_torch.save(named))
    assert f.tensors["scale"][0] == "F8_E8M0" and f.tensors["scale"][2] == bytes([128] * 4)
    assert f.tensors["c"][0] == "C64" and len(f.tensors["c"][2]) == 16
    if "f4" in named:
        assert f.tensors["f4"][:2] == ("F4", (6,))

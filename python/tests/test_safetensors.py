"""mxp.safetensors: round trips of every dtype, the safetensors library's
own files and bytes (when installed: build/venv), conversions on load as
mxp converts, and the documented exceptions."""
import os

import numpy as np
import pytest

import mxp
import mxp.safetensors as st
from mxptest import FLOATS, bits

NUMPY_TYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
               np.float16, np.float32, np.float64]


def sample():
    rng = np.random.default_rng(0)
    out = {}
    for i, t in enumerate(NUMPY_TYPES + list(FLOATS)):
        shape = [(3, 4), (5,), (), (2, 0), (1, 2, 3)][i % 5]
        out["t%d.%s" % (i, np.dtype(t).name)] = np.asarray(rng.standard_normal(shape) * 8).astype(t)
    out["strided"] = np.arange(24.0, dtype=np.float32).reshape(4, 6)[:, ::2]
    return out


def test_round_trip_of_every_dtype(tmp_path):
    w = sample()
    st.save(tmp_path / "m.safetensors", w, metadata={"format": "np", "note": "\u00e9 \"q\""})
    back = st.load(tmp_path / "m.safetensors")
    assert set(back) == set(w)
    for k, a in w.items():
        assert back[k].dtype == a.dtype and back[k].shape == a.shape
        assert back[k].tobytes() == np.asarray(a).tobytes()  # C order
    with st.safe_open(tmp_path / "m.safetensors") as f:
        assert f.metadata() == {"format": "np", "note": "\u00e9 \"q\""}
        assert len(f) == len(w) and "strided" in f
        assert f.dtype_name("t10.float32") == "F32" and f.shape("t10.float32") == (3, 4)
        assert f.dtype_name("t12.bfloat16") == "BF16" and f.dtype("t12.bfloat16") == np.dtype(mxp.bfloat16)
    assert st.load_bytes(st.save_bytes(w)).keys() == back.keys()


@pytest.mark.parametrize("rounding", ["nearest_even", "toward_zero", "up", "stochastic"])
@pytest.mark.parametrize("to", [mxp.bfloat16, mxp.float8_e4m3fn, np.float16])
def test_load_converts_as_mxp_converts(rounding, to):
    a = np.random.default_rng(1).standard_normal((7, 9)) * 100
    got = st.load_bytes(st.save_bytes({"a": a}), dtype=to, rounding=rounding, overflow="saturate", seed=5)["a"]
    want = mxp.astype(a, to, rounding=rounding, overflow="saturate", seed=5)
    assert got.dtype == np.dtype(to) and np.array_equal(bits(got), bits(want))


def test_the_library_bytes_and_files():
    ref = pytest.importorskip("safetensors.numpy")
    w = {k: np.require(a, requirements="C") for k, a in sample().items() if a.dtype.type in NUMPY_TYPES}
    for meta in (None, {"format": "np"}):
        assert st.save_bytes(w, meta) == ref.save(w, metadata=meta)
    back = st.load_bytes(ref.save(w))
    assert all(np.array_equal(back[k], w[k]) for k in w)


def test_torch_files_with_bfloat16_and_float8():
    torch = pytest.importorskip("torch")
    stt = pytest.importorskip("safetensors.torch")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this torch has no float8")
    x = torch.linspace(-300, 300, 50)
    blob = stt.save({"bf": x.to(torch.bfloat16), "e4": x.to(torch.float8_e4m3fn), "e5": x.to(torch.float8_e5m2)})
    back = st.load_bytes(blob)
    for k, t in (("bf", torch.bfloat16), ("e4", torch.float8_e4m3fn), ("e5", torch.float8_e5m2)):
        assert np.array_equal(back[k].astype(np.float32), x.to(t).float().numpy())
    assert stt.load(st.save_bytes(back))["e4"].dtype == torch.float8_e4m3fn


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="shorter than the 8-byte header length"):
        st.load_bytes(b"abc")
    with pytest.raises(ValueError, match="data_offsets hold 4 bytes"):
        h = b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}'
        st.load_bytes(len(h).to_bytes(8, "little") + h + b"\0" * 4)
    with pytest.raises(OSError, match="cannot open"):
        st.load(tmp_path / "missing.safetensors")
    with pytest.raises(OSError):
        st.save(tmp_path / "no" / "dir.safetensors", {"a": np.zeros(2)})
    with pytest.raises(TypeError, match="tensors must be a dict"):
        st.save_bytes([np.zeros(2)])
    with pytest.raises(TypeError, match="metadata must map str to str"):
        st.save_bytes({"a": np.zeros(2)}, {"k": 1})
    with pytest.raises(ValueError, match="__metadata__"):
        st.save_bytes({"__metadata__": np.zeros(2)})
    h = b'{"s":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}}'
    f = st.safe_open(len(h).to_bytes(8, "little") + h + bytes(8))
    assert f.dtype("s") is None and f.dtype_name("s") == "C64"
    with pytest.raises(TypeError, match="C64, which mxp has no type for yet"):
        f.get_tensor("s")
    with pytest.raises(KeyError, match="no tensor named 'x'"):
        f.get_tensor("x")
    with pytest.raises(ValueError, match="rounding"):
        st.load_bytes(st.save_bytes({"a": np.zeros(2)}), rounding="sideways")
    f.close()
    with pytest.raises(ValueError, match="closed"):
        f.get_tensor("s")


def test_failed_save_keeps_the_old_file(tmp_path):
    p = tmp_path / "m.safetensors"
    st.save(p, {"a": np.arange(3.0)})
    before = p.read_bytes()
    os.chmod(p, 0o640)
    with pytest.raises(ValueError):
        st.save(p, {"a\udcff": np.zeros(2)})  # not UTF-8: refused before anything is written
    with pytest.raises(TypeError):
        st.save(p, {"a": np.zeros(2, dtype=np.complex64)})
    assert p.read_bytes() == before and (os.stat(p).st_mode & 0o777) == 0o640


def test_packed_float4_and_float6():
    # F4 and F6 tensors are stored packed, element 0 in the low bits; mxp's
    # arrays hold a byte per element
    h = b'{"s":{"dtype":"F6_E2M3","shape":[4],"data_offsets":[0,3]},"q":{"dtype":"F4","shape":[2,2],"data_offsets":[3,5]}}'
    t = st.load_bytes(len(h).to_bytes(8, "little") + h + b"\x7f\x80\x01\x7c\x21")
    assert t["s"].dtype == mxp.float6_e2m3fn and t["q"].dtype == mxp.float4_e2m1fn
    assert t["s"].astype(np.float32).tolist() == [-7.5, 0.125, 4.0, 0.0]
    assert t["q"].astype(np.float32).tolist() == [[-2.0, 6.0], [0.5, 1.0]]
    codes = np.arange(64, dtype=np.uint8).view(mxp.float6_e3m2fn)
    back = st.load_bytes(st.save_bytes({"c": codes}))["c"]
    assert back.dtype == mxp.float6_e3m2fn and back.view(np.uint8).tolist() == list(range(64))
    with pytest.raises(ValueError, match="3 elements of F4 are not whole bytes"):
        st.save_bytes({"odd": np.zeros(3, mxp.float4_e2m1fn)})


def test_float4_files_as_torch_writes_them():
    torch = pytest.importorskip("torch")
    stt = pytest.importorskip("safetensors.torch")
    if not hasattr(torch, "float4_e2m1fn_x2"):
        pytest.skip("this torch has no float4_e2m1fn_x2")
    rng = np.random.default_rng(4)
    packed = rng.integers(0, 256, (3, 8), dtype=np.uint8)
    blob = stt.save({"w": torch.from_numpy(packed).view(torch.float4_e2m1fn_x2)})
    w = st.load_bytes(blob)["w"]
    assert w.dtype == mxp.float4_e2m1fn and w.shape == (3, 16)
    codes = w.view(np.uint8)
    assert (codes[:, 0::2] == packed & 15).all() and (codes[:, 1::2] == packed >> 4).all()
    assert st.save_bytes({"w": w}) == blob  # byte for byte what the library writes


def test_cast_is_load_convert_save(tmp_path):
    """mxp.safetensors.cast: the file save() writes for the tensors loaded
    converted, byte for byte (the stochastic stream across tensors:
    tests/io/test_safetensors.c); the counts; a dtype that is not a float
    refused; dst may be src."""
    rng = np.random.default_rng(2)
    tensors = {"w": rng.standard_normal((64, 33)).astype(np.float32), "h": rng.standard_normal(70).astype(np.float16),
               "ids": np.arange(4, dtype=np.int64)}
    src, dst, want = tmp_path / "in.safetensors", tmp_path / "out.safetensors", tmp_path / "want.safetensors"
    st.save(src, tensors, metadata={"k": "v"})
    for to, overflow in ((mxp.float8_e4m3fn, "saturate"), (mxp.bfloat16, "inf")):
        assert st.cast(src, dst, to, "nearest_even", overflow) == (2, 64 * 33 + 70)
        with st.safe_open(src) as f:
            conv = {k: f.get_tensor(k, to if k != "ids" else None, "nearest_even", overflow) for k in f.keys()}
        st.save(want, conv, metadata={"k": "v"})
        assert dst.read_bytes() == want.read_bytes()
    assert st.load(dst)["w"].tobytes() == tensors["w"].astype(mxp.bfloat16).tobytes()
    with pytest.raises(TypeError, match="not a floating-point dtype"):
        st.cast(src, dst, np.int8)
    st.cast(src, src, "float16")
    assert st.load(src)["w"].dtype == np.float16

"""mxp next to the current peers in one process (make check's NumPy 2
environment has them; elsewhere these tests skip): ml_dtypes' dtypes cast
both ways bit for bit and mxp's functions take its arrays; DLPack with JAX
(zero copy both ways) and torch's float8 types."""
import numpy as np
import pytest

import mxp
from mxptest import FLOATS, all_values, bits

NAMES = [np.dtype(t).name for t in FLOATS]


def aligned(n, dtype, align=64):
    """An uninitialised 1-d array of n elements whose data is align-aligned
    (XLA takes a DLPack buffer without a copy only then)."""
    size = n * np.dtype(dtype).itemsize
    buf = np.empty(size + align, np.uint8)
    off = (-buf.ctypes.data) % align
    return buf[off:off + size].view(dtype)


@pytest.fixture(scope="module")
def ml_dtypes():
    return pytest.importorskip("ml_dtypes")


@pytest.mark.parametrize("name", NAMES)
def test_casts_with_ml_dtypes_are_bit_copies_both_ways(ml_dtypes, name):
    ours, theirs = getattr(mxp, name), getattr(ml_dtypes, name)
    v = all_values(ours)
    there = v.astype(theirs)
    assert there.dtype == np.dtype(theirs) and np.array_equal(bits(there), bits(v))
    back = there.astype(ours)
    assert back.dtype == np.dtype(ours) and np.array_equal(bits(back), bits(v))
    assert np.asarray(there, dtype=ours).dtype == np.dtype(ours)
    assert np.can_cast(theirs, ours, "safe") and np.can_cast(ours, theirs, "safe")
    # their values, read through float32 by each package, agree
    finite = np.isfinite(v.astype(np.float32))
    assert np.array_equal(there.astype(np.float32)[finite], v.astype(np.float32)[finite])


@pytest.mark.parametrize("name", NAMES)
def test_mxp_functions_take_ml_dtypes_arrays(ml_dtypes, name):
    theirs = getattr(ml_dtypes, name)
    x = np.array([1.0, -2.5, 0.25, 3.0], theirs)
    assert mxp.astype(x, np.float32).tolist() == [1.0, -2.5, 0.25, 3.0]
    y = mxp.astype(np.array([0.1, 1e9]), theirs, rounding="toward_zero", overflow="saturate")
    assert y.dtype == np.dtype(getattr(mxp, name))  # mxp answers in its own type
    assert np.array_equal(bits(y), bits(mxp.astype(np.array([0.1, 1e9]), getattr(mxp, name), rounding="toward_zero",
                                                    overflow="saturate")))
    c = mxp.compare(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0], theirs))
    assert c.max_rel_error == 0


def test_dtype_names_go_to_ml_dtypes_once_it_is_loaded(ml_dtypes):
    # ml_dtypes registers its names unconditionally; mxp only where free.
    assert np.dtype("bfloat16").type is ml_dtypes.bfloat16
    assert np.concatenate([np.ones(2, mxp.bfloat16), np.ones(2, ml_dtypes.bfloat16)]).astype(np.float32).tolist() == \
        [1.0] * 4


LATE_IMPORT = """
import sys
import numpy as np
{first}
assert ("ml_dtypes" in sys.modules) == {eager}, "import mxp must not import ml_dtypes"
{second}
x = np.array([1.0, -2.5, 0.25], ml_dtypes.bfloat16)
y = x.astype(mxp.bfloat16)
assert y.dtype == np.dtype(mxp.bfloat16) and y.view(np.uint16).tolist() == x.view(np.uint16).tolist()
assert np.can_cast(ml_dtypes.float8_e4m3fn, mxp.float8_e4m3fn, "safe")
assert mxp.astype(x, np.float32).tolist() == [1.0, -2.5, 0.25]
print("ok")
"""


@pytest.mark.parametrize("order", ["mxp first", "ml_dtypes first"])
def test_ml_dtypes_registered_whichever_is_imported_first(ml_dtypes, order):
    # import mxp leaves ml_dtypes alone (its import costs ~0.7 s); importing
    # it later registers its types then, as importing it first does
    import subprocess
    import sys
    first, second = "import mxp", "import ml_dtypes"
    if order != "mxp first":
        first, second = second, first
    code = LATE_IMPORT.format(first=first, second=second, eager=order != "mxp first")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_foreign_registration_refuses_bad_input(ml_dtypes):
    from mxp import _mxp
    with pytest.raises(ValueError):
        _mxp._register_foreign(np.dtype(ml_dtypes.bfloat16), "float8_e5m2")  # 2 bytes against 1
    with pytest.raises(ValueError):
        _mxp._register_foreign(np.dtype(np.float16), "bfloat16")  # not a user dtype
    with pytest.raises(ValueError):
        _mxp._register_foreign(np.dtype(mxp.bfloat16), "bfloat16")  # mxp's own
    with pytest.raises(ValueError):
        _mxp._register_foreign(np.dtype(ml_dtypes.bfloat16), "float32")  # mxp's name, NumPy's type
    assert _mxp._register_foreign(np.dtype(ml_dtypes.bfloat16), "bfloat16") is False  # already done


@pytest.fixture(scope="module")
def jnp():
    pytest.importorskip("jax")
    import jax.numpy
    return jax.numpy


JAX_TYPES = ["bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"]


def mxp_type(name):
    return getattr(mxp, name, None) or np.dtype(name).type


@pytest.mark.parametrize("name", JAX_TYPES)
def test_from_jax_is_a_view(jnp, name):
    x = jnp.arange(-8, 8).astype(getattr(jnp, name)).reshape(4, 4)
    a = mxp.from_dlpack(x)
    assert a.dtype == np.dtype(mxp_type(name)) and a.shape == (4, 4)
    assert a.ctypes.data == x.unsafe_buffer_pointer()
    assert a.astype(np.float32).tolist() == np.asarray(x.astype(jnp.float32)).tolist()
    del x  # the view keeps the buffer alive
    assert a.astype(np.float32)[3, 3] == 7


@pytest.mark.parametrize("name", JAX_TYPES)
def test_to_jax_is_a_view(jnp, name):
    t = mxp_type(name)
    a = aligned(16, t)
    a[:] = np.arange(-8, 8, dtype=np.float32).astype(t)
    j = jnp.from_dlpack(mxp.dlpack(a))
    assert j.dtype == getattr(jnp, name) and j.shape == (16,)
    assert j.unsafe_buffer_pointer() == a.ctypes.data
    assert np.asarray(j.astype(jnp.float32)).tolist() == list(range(-8, 8))
    a[0] = 5  # JAX arrays are immutable on its side; mxp's writes show through the shared buffer
    assert float(j[0]) == 5.0
    del a
    assert float(j.astype(jnp.float32).sum()) == sum(range(-8, 8)) + 13


def test_dlpack_object_refuses_bad_input():
    with pytest.raises(TypeError):
        mxp.dlpack([1, 2, 3])
    with pytest.raises(BufferError):
        mxp.dlpack(np.arange(4.0)[::-1].astype(mxp.bfloat16)[::2]).__dlpack__(stream=1)


@pytest.mark.parametrize("tname,name", [("float8_e4m3fn", "float8_e4m3fn"), ("float8_e5m2", "float8_e5m2")])
def test_torch_float8_both_ways(tname, name):
    torch = pytest.importorskip("torch")
    import torch.utils.dlpack as tdl
    if not hasattr(torch, tname):
        pytest.skip(f"torch {torch.__version__} has no {tname}")
    t = torch.tensor([1.0, -2.0, 0.5, 448.0]).to(getattr(torch, tname))
    a = mxp.from_dlpack(t)
    assert a.dtype == np.dtype(getattr(mxp, name)) and a.ctypes.data == t.data_ptr()
    assert a.astype(np.float32).tolist() == t.float().tolist()
    a[1] = 3
    assert float(t[1]) == 3.0
    b = np.array([0.25, 6.0], getattr(mxp, name))
    u = tdl.from_dlpack(mxp.to_dlpack(b))
    assert u.dtype == getattr(torch, tname) and u.data_ptr() == b.ctypes.data and u.float().tolist() == [0.25, 6.0]


def test_safetensors_files_round_trip_byte_identical():
    """A file that safetensors writes from torch tensors (BF16, F16, F8)
    loads into mxp arrays (through torch and DLPack: safetensors' NumPy
    reader knows no BF16/F8) and safetensors.numpy writes the same bytes
    back from them."""
    torch = pytest.importorskip("torch")
    st = pytest.importorskip("safetensors.torch")
    sn = pytest.importorskip("safetensors.numpy")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip(f"torch {torch.__version__} has no float8")
    rng = np.random.default_rng(9)
    src = {
        "w.bf16": torch.from_numpy(rng.standard_normal((8, 5)).astype(np.float32)).to(torch.bfloat16),
        "w.f16": torch.from_numpy(rng.standard_normal(7).astype(np.float32)).to(torch.float16),
        "w.e4m3": torch.from_numpy((rng.standard_normal(9) * 50).astype(np.float32)).to(torch.float8_e4m3fn),
        "w.e5m2": torch.from_numpy((rng.standard_normal(4) * 1e4).astype(np.float32)).to(torch.float8_e5m2),
        "b.f32": torch.from_numpy(rng.standard_normal(3).astype(np.float32)),
    }
    blob = st.save(src)
    arrays = {k: mxp.from_dlpack(v) for k, v in st.load(blob).items()}
    want = {"w.bf16": mxp.bfloat16, "w.f16": np.float16, "w.e4m3": mxp.float8_e4m3fn, "w.e5m2": mxp.float8_e5m2,
            "b.f32": np.float32}
    for k, a in arrays.items():
        assert a.dtype == np.dtype(want[k]), k
        assert a.astype(np.float32).tolist() == src[k].float().tolist(), k
    assert sn.save(arrays) == blob
    assert sn.save({k: np.ascontiguousarray(v) for k, v in arrays.items()}, metadata={"m": "x"}) != blob

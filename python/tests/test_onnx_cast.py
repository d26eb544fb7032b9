"""mxp's conversions against the ONNX reference implementation's Cast
(onnx.reference, opset 23+: saturate on and off) for the float8, float6,
float4, int4/uint4 and int2/uint2 targets.  Bit for bit, with two listed
differences: float8_e5m2 NaN payloads (mxp keeps the top payload bits,
quiet; ONNX gives 0x7e/0xfe) and integers beyond the target's range (ONNX
wraps them, as NumPy/ml_dtypes casts do; mxp saturates, docs/conversions.md).
ONNX casts floats to integers by truncation: compared with mxp's
toward_zero."""
import numpy as np
import pytest

import mxp

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

FLOATS = {"float8_e4m3fn": "FLOAT8E4M3FN", "float8_e4m3fnuz": "FLOAT8E4M3FNUZ", "float8_e5m2": "FLOAT8E5M2",
          "float8_e5m2fnuz": "FLOAT8E5M2FNUZ", "float4_e2m1fn": "FLOAT4E2M1", "float6_e2m3fn": "FLOAT6E2M3",
          "float6_e3m2fn": "FLOAT6E3M2"}
INTS = {"int4": "INT4", "uint4": "UINT4", "int2": "INT2", "uint2": "UINT2"}


def onnx_cast(x, to_name, saturate):
    to = getattr(TensorProto, to_name, None)
    if to is None:
        pytest.skip(f"this onnx has no {to_name}")
    X = helper.make_tensor_value_info("X", TensorProto.FLOAT, [None])
    Y = helper.make_tensor_value_info("Y", to, [None])
    node = helper.make_node("Cast", ["X"], ["Y"], to=to, saturate=saturate)
    model = helper.make_model(helper.make_graph([node], "cast", [X], [Y]))
    with np.errstate(all="ignore"):
        return ReferenceEvaluator(model).run(None, {"X": x})[0]


def inputs():
    """Every float16 pattern as float32, float32 edges and 2^17 random float32 patterns."""
    h = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)
    edges = np.array([np.inf, -np.inf, 3.4e38, -3.4e38, 1e-40, -1e-45, 448, 449, 464, 57344, 61440, 240, 248,
                      6, 6.5, 7.5, 7.75, 28, 30, 0.0, -0.0], np.float32)
    r = np.random.default_rng(23).integers(0, 1 << 32, 1 << 17, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([h, edges, r])


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("saturate", [1, 0])
def test_float_targets_equal_onnx_cast(name, saturate):
    x = inputs()
    want = onnx_cast(x, FLOATS[name], saturate).view(np.uint8)
    got = mxp.astype(x, getattr(mxp, name), overflow="saturate" if saturate else "inf").view(np.uint8)
    keep = ~np.isnan(x) if name == "float8_e5m2" else np.ones(x.size, bool)  # NaN payloads: listed difference
    bad = np.nonzero((want != got) & keep)[0]
    assert bad.size == 0, [(float(x[i]), hex(want[i]), hex(got[i])) for i in bad[:5]]
    if name == "float8_e5m2":  # the difference is only the payload: both NaN
        assert np.all(np.isnan(got[~keep].view(mxp.float8_e5m2).astype(np.float32)))


@pytest.mark.parametrize("name", INTS)
def test_integer_targets_equal_onnx_cast_in_range(name):
    x = inputs()
    x = x[np.isfinite(x)]
    info = mxp.iinfo(getattr(mxp, name))
    want = onnx_cast(x, INTS[name], 1).astype(np.int64)
    got = mxp.astype(x, getattr(mxp, name), rounding="toward_zero").astype(np.int64)
    inside = (x > int(info.min) - 1) & (x < int(info.max) + 1)  # truncates into the range
    np.testing.assert_array_equal(got[inside], want[inside])
    # beyond it mxp saturates where ONNX (as NumPy/ml_dtypes) wraps
    np.testing.assert_array_equal(got[~inside], np.where(x[~inside] < 0, int(info.min), int(info.max)))
    assert np.any(want[~inside] != got[~inside])

"""What the tests of mxp.nn against the ONNX reference implementation
(onnx.reference's ReferenceEvaluator, opset 21; test_onnx_conv.py,
test_onnx_nn.py) share: running one node or a graph, the unit roundoffs
and the comparison with a bound.  Import it after
pytest.importorskip("onnx")."""
import numpy as np

import mxp
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
OPSET = 21
U32, U64 = 2.0 ** -24, 2.0 ** -53  # unit roundoff (half an ulp, relative) of float32 and float64
UNIT = {np.dtype(np.float64): U64, np.dtype(np.float32): U32, np.dtype(np.float16): 2.0 ** -11,
        np.dtype(mxp.bfloat16): 2.0 ** -8}
TINY = {np.dtype(np.float64): 0.0, np.dtype(np.float32): 2.0 ** -150, np.dtype(np.float16): 2.0 ** -25,
        np.dtype(mxp.bfloat16): 2.0 ** -134}  # half the smallest subnormal: the absolute rounding floor


def onnx_graph(nodes, feeds, outs=("y",)):
    """The reference's values of outs of a graph of nodes on feeds (name ->
    array)."""
    vi = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
          for k, v in feeds.items()]
    graph = helper.make_graph(nodes, "g", vi, [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
                                               for o in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    with np.errstate(divide="ignore"):  # LogSoftmax's log(0) where float32 exp underflows
        return ReferenceEvaluator(model).run(None, feeds)


def onnx_run(op, inputs, n_out=1, **attrs):
    """The reference's outputs of one node; inputs: name -> array (None:
    an omitted optional input)."""
    names = [k if v is not None else "" for k, v in inputs.items()]
    feeds = {k: np.asarray(v) for k, v in inputs.items() if v is not None}
    outs = [f"y{i}" for i in range(n_out)]
    return onnx_graph([helper.make_node(op, names, outs, **attrs)], feeds, outs)


def attr32(v):
    """An ONNX float attribute's value: attributes are float32, so
    epsilon=1e-5 means float32(1e-5), which mxp is given too."""
    return float(np.float32(v))


def f64(a):
    return np.asarray(a).astype(np.float64)


def nhwc(a):
    return np.ascontiguousarray(np.asarray(a).transpose(0, 2, 3, 1))


def nchw(a):
    return np.asarray(a).transpose(0, 3, 1, 2)


def within(got, want, tol, what):
    err = np.abs(f64(got) - want)
    bad = ~(err <= tol)
    assert not bad.any(), (what, int(bad.sum()), float(err.max()), float(np.max(err - tol)))

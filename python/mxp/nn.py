"""Neural-network operations on NumPy arrays through the C library's
mxp/nn.h: softmax and log_softmax (with a bool or additive mask), layer
norm and RMS norm, take / embedding rows (int8 or float8 tables with
per-row scales dequantized on the way), row dot products, cosine
similarity, L2 normalization, GELU (mxp_unary's, erf or tanh form), and
the backward passes of softmax, log_softmax, layer_norm and rms_norm.

Every input dtype (bfloat16 and float8 included) is widened exactly,
computed in float64 and rounded once into the result's dtype: ``dtype=``
or, by default, the input's float dtype (float64 for integers).  ``out=``
writes into an existing array of the result's shape, in its dtype.  The
GIL is released during the computation.  Bad input raises ValueError
(shapes), IndexError / numpy's AxisError (axes, indices) or TypeError
(dtypes).  See docs/nn.md."""
import operator

import numpy as np

from . import _mxp

__all__ = ["softmax", "log_softmax", "softmax_backward", "log_softmax_backward", "layer_norm", "rms_norm",
           "layer_norm_backward", "rms_norm_backward", "take", "embedding", "rowdot", "cosine_similarity",
           "l2_normalize", "gelu"]


def _arr(x):
    return None if x is None else np.asarray(x)


def _normalized(normalized_shape, weight):
    """normalized_shape as a tuple (the C side checks it against x), or
    None (the last axis); weight's shape when only weight is given."""
    if normalized_shape is None:
        return None if weight is None else tuple(np.shape(weight))
    if isinstance(normalized_shape, (int, np.integer)):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


def softmax(x, axis=-1, mask=None, dtype=None, out=None):
    """exp(x - max) / sum(exp(x - max)) along axis.  mask broadcasts to x:
    bool keeps where true (false counts as -inf), any other dtype is added
    to x.  A row of all -inf (fully masked) gives NaN, as torch does."""
    return _mxp._softmax(np.asarray(x), operator.index(axis), _arr(mask), False, out, dtype)


def log_softmax(x, axis=-1, mask=None, dtype=None, out=None):
    """(x - max) - log(sum(exp(x - max))) along axis; mask as softmax."""
    return _mxp._softmax(np.asarray(x), operator.index(axis), _arr(mask), True, out, dtype)


def softmax_backward(dy, y, axis=-1, dtype=None):
    """The gradient of softmax's input from dy and the forward output y:
    y * (dy - sum(dy * y))."""
    return _mxp._softmax_backward(np.asarray(dy), np.asarray(y), operator.index(axis), False, dtype)


def log_softmax_backward(dy, y, axis=-1, dtype=None):
    """The gradient of log_softmax's input from dy and the forward output
    y: dy - exp(y) * sum(dy)."""
    return _mxp._softmax_backward(np.asarray(dy), np.asarray(y), operator.index(axis), True, dtype)


def layer_norm(x, normalized_shape=None, weight=None, bias=None, eps=1e-5, dtype=None, out=None):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last axes
    (normalized_shape: those axes' sizes, torch's argument; None: the last
    axis; or the shape of weight when it is given)."""
    weight, bias = _arr(weight), _arr(bias)
    return _mxp._norm(np.asarray(x), _normalized(normalized_shape, weight), weight, bias, float(eps), False, out,
                      dtype)


def rms_norm(x, normalized_shape=None, weight=None, eps=1e-6, dtype=None, out=None):
    """x / sqrt(mean(x**2) + eps) * weight over the last axes."""
    weight = _arr(weight)
    return _mxp._norm(np.asarray(x), _normalized(normalized_shape, weight), weight, None, float(eps), True, out, dtype)


def layer_norm_backward(dy, x, normalized_shape=None, weight=None, eps=1e-5):
    """(dx, dweight, dbias): the gradients of layer_norm from dy, the
    forward input x and weight (None: 1); dweight and dbias have the
    normalized shape and weight's dtype (x's without a weight)."""
    weight = _arr(weight)
    return _mxp._norm_backward(np.asarray(dy), np.asarray(x), _normalized(normalized_shape, weight), weight,
                               float(eps), False)


def rms_norm_backward(dy, x, normalized_shape=None, weight=None, eps=1e-6):
    """(dx, dweight): the gradients of rms_norm."""
    weight = _arr(weight)
    dx, dw, _ = _mxp._norm_backward(np.asarray(dy), np.asarray(x), _normalized(normalized_shape, weight), weight,
                                    float(eps), True)
    return dx, dw


def gelu(x, approximate="none", dtype=None, out=None):
    """x/2 (1 + erf(x / sqrt 2)) elementwise (torch's F.gelu; approximate=
    "tanh": the tanh form), mxp_unary's correctly rounded GELU: one
    rounding into dtype (default: x's float dtype) or out (which may be x)."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', not {approximate!r}")
    for d in (dtype, out.dtype if isinstance(out, np.ndarray) else None):
        if d is not None and _mxp._traits(d)["kind"] != "f":  # as the other operations: a float result
            raise TypeError(f"gelu: the result must have a float dtype, not {np.dtype(d)}")
    return _mxp._unary(np.asarray(x), "gelu" if approximate == "none" else "gelu_tanh", out, dtype)


def take(table, indices, axis=0, dtype=None, out=None):
    """numpy.take(table, indices, axis) for every dtype: negative indices
    count from the end; one out of range raises IndexError before anything
    is written.  dtype: the table's (a bit copy) or another, each element
    converted once."""
    return _mxp._take(np.asarray(table), np.asarray(indices), operator.index(axis), None, out, dtype)


def embedding(indices, table, scales=None, dtype=None, out=None):
    """Rows of a 2-d table: table[indices] (torch's F.embedding argument
    order).  With scales (one per table row), a quantized table (int8,
    float8 ...) is dequantized on the way: table[i] * scales[i], float32
    by default."""
    table = np.asarray(table)
    if scales is None:
        return _mxp._take(table, np.asarray(indices), 0, None, out, dtype)
    return _mxp._take(table, np.asarray(indices), 0, np.asarray(scales), out, dtype)


def rowdot(a, b, outer=False, dtype=None, out=None):
    """Dot products of rows (the last axis), accumulated in float64: paired
    (leading axes broadcast) or, outer=True, every row of a [n, d] with
    every row of b [m, d] -> [n, m]."""
    return _mxp._rowdot(np.asarray(a), np.asarray(b), bool(outer), False, 0.0, out, dtype)


def cosine_similarity(a, b, outer=False, eps=1e-8, dtype=None, out=None):
    """a.b / (max(|a|, eps) * max(|b|, eps)) of rows; shapes as rowdot."""
    return _mxp._rowdot(np.asarray(a), np.asarray(b), bool(outer), True, float(eps), out, dtype)


def l2_normalize(x, axis=-1, eps=1e-12, dtype=None, out=None):
    """x / max(|x|, eps) along axis (torch's F.normalize, p = 2)."""
    return _mxp._l2_normalize(np.asarray(x), operator.index(axis), float(eps), out, dtype)

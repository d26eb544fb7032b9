"""Neural-network operations on NumPy arrays through the C library's
mxp/nn.h: softmax and log_softmax (with a bool or additive mask), layer
norm and RMS norm, take / embedding rows (int8 or float8 tables with
per-row scales dequantized on the way), row dot products, cosine
similarity, L2 normalization, GELU (mxp_unary's, erf or tanh form), and
the backward passes of softmax, log_softmax, layer_norm and rms_norm.

Every input dtype (bfloat16 and float8 included) is widened exactly,
computed in float64 and rounded once into the result's dtype: ``dtype=``
or, by default, the input's float dtype (float64 for integers).  Softmax,
log_softmax, the norms and l2_normalize into bfloat16 from bfloat16 or
float32 compute in float32 with float64 sums instead (within half an ulp
+ 2^-16 of the exact result; docs/nn.md).  ``out=``
writes into an existing array of the result's shape, in its dtype.  The
GIL is released during the computation.  Bad input raises ValueError
(shapes), IndexError / numpy's AxisError (axes, indices) or TypeError
(dtypes).  See docs/nn.md.

Convolution (conv1d, conv2d, NCHW or NHWC) accumulates in float32 (float64
with a float64 operand) and rounds once; on uint8/int8 inputs it gives
ONNX's ConvInteger / QLinearConv results.  Max and average pooling (global
too), batch norm (torch's running statistics), fold_batch_norm and their
backward passes follow the float64 rule above."""
import operator

import numpy as np

from . import _mxp

__all__ = ["softmax", "log_softmax", "softmax_backward", "log_softmax_backward", "layer_norm", "rms_norm",
           "layer_norm_backward", "rms_norm_backward", "take", "embedding", "rowdot", "cosine_similarity",
           "l2_normalize", "gelu"]


def _arr(x):
    return None if x is None else np.asarray(x)


def _f32_vector(v):
    """v as a 1-d, contiguous, aligned float32 array: v itself when it is
    one (per-channel scales a layer passes on every call), else a copy."""
    if isinstance(v, np.ndarray) and v.dtype == np.float32 and v.ndim == 1 and v.flags.c_contiguous \
            and v.flags.aligned:
        return v
    return np.array(np.atleast_1d(v), np.float32)


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


# ---- convolution, pooling, batch norm ------------------------------------------

__all__ += ["conv2d", "conv1d", "conv2d_backward", "max_pool2d", "avg_pool2d", "max_pool2d_backward",
            "avg_pool2d_backward", "global_avg_pool2d", "global_max_pool2d", "adaptive_avg_pool2d", "batch_norm",
            "batch_norm_backward", "fold_batch_norm"]

_LAYOUTS = {"NCHW": 0, "NHWC": 1, "NCL": 0, "NLC": 1}
_ACTIVATIONS = {None: 0, "none": 0, "relu": 1, "gelu": 2, "gelu_tanh": 3, "silu": 4}


def _layout(layout):
    try:
        return _LAYOUTS[layout]
    except (KeyError, TypeError):
        raise ValueError(f"layout must be 'NCHW' or 'NHWC' ('NCL' or 'NLC' for conv1d), not {layout!r}") from None


def _pair(v, name, minimum):
    """An int or a pair of ints as a 2-tuple, each >= minimum."""
    if type(v) is int and v >= minimum:  # the common case, without the general path's calls (a few us a conv)
        return (v, v)
    t = (v, v) if isinstance(v, (int, np.integer)) else tuple(v)
    if len(t) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, not {v!r}")
    t = tuple(operator.index(i) for i in t)
    if any(i < minimum for i in t):
        raise ValueError(f"{name} {t} must be >= {minimum}")
    return t


def _conv_padding(padding, kernel, dilation, stride):
    """torch's padding: ints, or 'valid' (0) / 'same' (stride 1, an even
    total padding d (k - 1) per axis: mxp pads symmetrically)."""
    if padding == "valid":
        return (0, 0)
    if padding == "same":
        if stride != (1, 1):
            raise ValueError("padding='same' needs stride 1")
        total = tuple(d * (k - 1) for d, k in zip(dilation, kernel))
        if any(t % 2 for t in total):
            raise ValueError("padding='same' with an even kernel would pad one side more: give the padding")
        return tuple(t // 2 for t in total)
    return _pair(padding, "padding", 0)


def _conv_args(weight, stride, padding, dilation, groups, layout):
    nhwc = _layout(layout)
    if weight.ndim != 4:
        raise ValueError(f"weight must be 4-d, not {weight.ndim}-d")
    kernel = weight.shape[1:3] if nhwc else weight.shape[2:4]
    stride, dilation = _pair(stride, "stride", 1), _pair(dilation, "dilation", 1)
    padding = _conv_padding(padding, kernel, dilation, stride)
    groups = operator.index(groups)
    if groups < 1:
        raise ValueError(f"groups {groups} must be >= 1")
    return stride, padding, dilation, groups, nhwc


_CONV_ALGORITHMS = {"auto": 0, "direct": 1, "winograd": 2}


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *, layout="NCHW", activation=None,
           clamp=None, dtype=None, out=None, x_zero_point=0, w_zero_point=0, y_zero_point=0, x_scale=None,
           w_scale=None, y_scale=None, algorithm="auto"):
    """torch.nn.functional.conv2d on NumPy arrays: NCHW input with OIHW
    weights, or layout='NHWC' with OHWI weights ([O, kh, kw, C/groups]).
    stride, padding (ints, 'valid' or 'same'), dilation: an int or a pair;
    padding is symmetric.  activation ('relu', 'gelu', 'gelu_tanh',
    'silu') and clamp ((lo, hi)) run after the bias, fused.  Any float
    dtypes (bfloat16, float8 included), accumulated in float32 (float64
    with a float64 operand), rounded once into dtype (default: input's).

    uint8/int8 input with int8 weights (ONNX's ConvInteger/QLinearConv):
    exact int32 sums of (x - x_zero_point) (w - w_zero_point), returned as
    int32 by default; dtype=uint8/int8 requantizes them, round(x_scale *
    w_scale / y_scale * (acc + bias)) + y_zero_point saturated (w_scale a
    float or one per output channel, bias int32), a float dtype
    dequantizes: x_scale * w_scale * (acc + bias).

    algorithm: 'auto' (Winograd F(2x2, 3x3) for float32 3x3 stride-1
    convolutions where it pays: 16 or more channels in and out, 48 or
    more 2x2 tiles, docs/nn.md; else direct), 'direct'
    (each output one chain of float32 fused multiply-adds) or 'winograd'
    (TypeError where it does not apply); see docs/nn.md, "Winograd"."""
    weight = np.asarray(weight)
    if algorithm not in _CONV_ALGORITHMS:
        raise ValueError(f"algorithm must be one of {sorted(_CONV_ALGORITHMS)}, not {algorithm!r}")
    stride, padding, dilation, groups, nhwc = _conv_args(weight, stride, padding, dilation, groups, layout)
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(k for k in _ACTIVATIONS if k)} or None")
    clamp = None if clamp is None else (float(clamp[0]), float(clamp[1]))
    quant = None
    for name, v in (("x_zero_point", x_zero_point), ("w_zero_point", w_zero_point), ("y_zero_point", y_zero_point)):
        if type(v) is not int and np.ndim(v) != 0:
            raise TypeError(f"{name} must be one integer (per-channel zero points are not supported), "
                            f"not an array of shape {np.shape(v)}")
    if any(v for v in (x_zero_point, w_zero_point, y_zero_point)) or any(
            v is not None for v in (x_scale, w_scale, y_scale)):
        for name, v in (("x_scale", x_scale), ("y_scale", y_scale)):
            if v is not None and not float(v) > 0:
                raise ValueError(f"{name} {v} must be positive")
        ws = None if w_scale is None else _f32_vector(w_scale)
        quant = (operator.index(x_zero_point), operator.index(w_zero_point), operator.index(y_zero_point),
                 0.0 if x_scale is None else float(x_scale), 0.0 if y_scale is None else float(y_scale), ws)
    return _mxp._conv2d(np.asarray(input), weight, _arr(bias), stride, padding, dilation, groups, nhwc,
                        _ACTIVATIONS[activation], clamp, out, dtype, quant, _CONV_ALGORITHMS[algorithm])


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *, layout="NCL", activation=None,
           clamp=None, dtype=None, out=None):
    """torch.nn.functional.conv1d: input [N, C, L] with weight [O, C/groups,
    K] (layout 'NCL'), or [N, L, C] with [O, K, C/groups] ('NLC'): conv2d
    of one row (views, no copies)."""
    nhwc = _layout(layout)
    axis = 1 if nhwc else 2
    x, w = np.expand_dims(np.asarray(input), axis), np.expand_dims(np.asarray(weight), axis)
    one = lambda v: v if isinstance(v, str) else (1, operator.index(v[0] if isinstance(v, (tuple, list)) else v))
    pad = padding if isinstance(padding, str) else (0, operator.index(padding[0] if isinstance(padding, (tuple, list))
                                                                     else padding))
    o = None if out is None else np.expand_dims(out, axis)
    r = conv2d(x, w, bias, one(stride), pad, one(dilation), groups, layout="NHWC" if nhwc else "NCHW",
               activation=activation, clamp=clamp, dtype=dtype, out=o)
    return out if out is not None else np.squeeze(r, axis)


def conv2d_backward(dy, input, weight, stride=1, padding=0, dilation=1, groups=1, *, layout="NCHW",
                    need=(True, True, True)):
    """(dx, dweight, dbias): the gradients of conv2d (no activation) from
    dy, the forward input and weight; need: which of the three to compute
    (the others are None).  dx has input's dtype, dweight and dbias
    weight's."""
    weight = np.asarray(weight)
    stride, padding, dilation, groups, nhwc = _conv_args(weight, stride, padding, dilation, groups, layout)
    return _mxp._conv2d_backward(np.asarray(dy), np.asarray(input), weight, stride, padding, dilation, groups, nhwc,
                                 tuple(bool(n) for n in need))


def _pool_args(kernel_size, stride, padding, layout):
    kernel = _pair(kernel_size, "kernel_size", 1)
    stride = kernel if stride is None or (not isinstance(stride, (int, np.integer)) and len(stride) == 0) \
        else _pair(stride, "stride", 1)
    return kernel, stride, _pair(padding, "padding", 0), _layout(layout)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, *, layout="NCHW", dtype=None,
               out=None):
    """torch.nn.functional.max_pool2d (dilation 1 only, no indices): a NaN
    in a window gives NaN, the padding never wins.  Any dtype widened
    exactly; the result in dtype (default: input's float dtype)."""
    if _pair(dilation, "dilation", 1) != (1, 1):
        raise NotImplementedError("max_pool2d: dilation other than 1")
    k, s, p, nhwc = _pool_args(kernel_size, stride, padding, layout)
    return _mxp._pool2d(np.asarray(input), False, k, s, p, bool(ceil_mode), False, nhwc, out, dtype)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None, *, layout="NCHW", dtype=None, out=None):
    """torch.nn.functional.avg_pool2d (no divisor_override): the sum in
    float64 divided by the window's size, padding counted unless
    count_include_pad=False; rounded once."""
    if divisor_override is not None:
        raise NotImplementedError("avg_pool2d: divisor_override")
    k, s, p, nhwc = _pool_args(kernel_size, stride, padding, layout)
    return _mxp._pool2d(np.asarray(input), True, k, s, p, bool(ceil_mode), not count_include_pad, nhwc, out, dtype)


def max_pool2d_backward(dy, input, kernel_size, stride=None, padding=0, ceil_mode=False, *, layout="NCHW"):
    """The gradient of max_pool2d's input: each dy to its window's first
    maximum (torch's choice), in input's dtype."""
    k, s, p, nhwc = _pool_args(kernel_size, stride, padding, layout)
    return _mxp._pool2d_backward(np.asarray(dy), np.asarray(input), False, k, s, p, bool(ceil_mode), False, nhwc)


def avg_pool2d_backward(dy, input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, *,
                        layout="NCHW"):
    """The gradient of avg_pool2d's input: dy / divisor to every element of
    each window."""
    k, s, p, nhwc = _pool_args(kernel_size, stride, padding, layout)
    return _mxp._pool2d_backward(np.asarray(dy), np.asarray(input), True, k, s, p, bool(ceil_mode),
                                 not count_include_pad, nhwc)


def global_avg_pool2d(input, *, layout="NCHW", dtype=None, out=None):
    """The mean of each (n, c) plane: shape [N, C, 1, 1] (NHWC: [N, 1, 1, C])."""
    return _mxp._pool2d(np.asarray(input), True, (0, 0), (0, 0), (0, 0), False, False, _layout(layout), out, dtype)


def global_max_pool2d(input, *, layout="NCHW", dtype=None, out=None):
    """The maximum of each (n, c) plane."""
    return _mxp._pool2d(np.asarray(input), False, (0, 0), (0, 0), (0, 0), False, False, _layout(layout), out, dtype)


def adaptive_avg_pool2d(input, output_size, *, layout="NCHW", dtype=None, out=None):
    """torch's adaptive_avg_pool2d where its windows are uniform: output
    sizes that divide the input's (1: global pooling)."""
    x = np.asarray(input)
    nhwc = _layout(layout)
    h, w = (x.shape[1], x.shape[2]) if nhwc else (x.shape[2], x.shape[3])
    oh, ow = _pair(output_size, "output_size", 1)
    if h % oh or w % ow:
        raise NotImplementedError(f"adaptive_avg_pool2d: output {oh}x{ow} does not divide the input {h}x{w}")
    k = (h // oh, w // ow)
    return _mxp._pool2d(x, True, k, k, (0, 0), False, False, nhwc, out, dtype)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5, *,
               axis=1, dtype=None, out=None):
    """torch.nn.functional.batch_norm: channels along axis (1; -1 for
    NHWC), statistics in float64.  training: the batch's mean and biased
    variance, and running_mean / running_var (None: not kept) updated in
    place with momentum (the variance unbiased, as torch); otherwise the
    running statistics are used."""
    return _mxp._batch_norm(np.asarray(input), operator.index(axis), running_mean, running_var, _arr(weight),
                            _arr(bias), bool(training), float(momentum), float(eps), out, dtype)


def batch_norm_backward(dy, input, weight=None, eps=1e-5, *, axis=1):
    """(dx, dweight, dbias) of training-mode batch_norm (the batch
    statistics recomputed from input)."""
    return _mxp._batch_norm_backward(np.asarray(dy), np.asarray(input), operator.index(axis), _arr(weight),
                                     float(eps))


def fold_batch_norm(weight, bias, gamma, beta, mean, var, eps=1e-5):
    """(weight', bias') of a convolution (or any layer with output channels
    on weight's axis 0) followed by an inference batch norm: s = gamma /
    sqrt(var + eps), weight' = weight * s, bias' = (bias - mean) * s +
    beta, in float64 and rounded once (bias None: 0; gamma, beta None: 1, 0)."""
    return _mxp._fold_batch_norm(np.asarray(weight), _arr(bias), _arr(gamma), _arr(beta), np.asarray(mean),
                                 np.asarray(var), float(eps))

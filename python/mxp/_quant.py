"""Quantization on NumPy arrays: affine int8/uint8/int4/uint4/float8 with
scales and zero points (per tensor, per channel, per group), observers fed
batch by batch, int4 packing and OCP MX blocks.  Formulas and policies:
docs/quant.md and docs/mx.md; the work is the C library's."""
import numpy as np

from . import _mxp
from ._api import ROUNDINGS, _seed

QTYPES = _mxp.QTYPES  # the C library's quantized types: int8, uint8, int4, uint4, float8_e4m3fn, float8_e5m2


class QParams:
    """Quantization parameters: q = clamp(round(x / scale) + zero_point).

    qtype, symmetric, axis (None: per tensor), group_size (None: none),
    scales (float32) and zero_points (int32), one pair per tensor, channel
    or group.
    """

    def __init__(self, qtype, scales, zero_points=None, *, symmetric=True, axis=None, group_size=None):
        if qtype not in QTYPES:
            raise ValueError(f"qtype {qtype!r} is not one of {', '.join(QTYPES)}")
        self.qtype, self.symmetric = qtype, bool(symmetric)
        self.axis, self.group_size = axis, group_size
        # contiguous and aligned: the C layer reads them through raw pointers
        self.scales = np.require(np.atleast_1d(np.asarray(scales, np.float32)), requirements=("C", "A"))
        zp = np.zeros(self.scales.shape, np.int32) if zero_points is None else zero_points
        self.zero_points = np.require(np.atleast_1d(np.asarray(zp, np.int32)), requirements=("C", "A"))
        if self.scales.ndim != 1 or self.scales.shape != self.zero_points.shape:
            raise ValueError("QParams: scales and zero_points must be 1-d of one length")

    @property
    def scale(self):
        """The per-tensor scale (a float); ValueError when there are several."""
        if self.scales.size != 1:
            raise ValueError(f"{self.scales.size} scales (per channel); use .scales")
        return float(self.scales[0])

    @property
    def zero_point(self):
        if self.zero_points.size != 1:
            raise ValueError(f"{self.zero_points.size} zero points (per channel); use .zero_points")
        return int(self.zero_points[0])

    def _tuple(self):
        axis = -1 if self.axis is None else int(self.axis)
        return (self.qtype, self.symmetric, axis, int(self.group_size or 0), self.scales, self.zero_points)

    @classmethod
    def _from_tuple(cls, t):
        qtype, symmetric, axis, group, scales, zps = t
        return cls(qtype, scales, zps, symmetric=symmetric, axis=None if axis < 0 else axis,
                   group_size=group or None)

    def __repr__(self):
        where = "per tensor" if self.axis is None else f"axis {self.axis}" + (
            f", groups of {self.group_size}" if self.group_size else "")
        if self.scales.size == 1:
            return f"QParams({self.qtype}, {where}, scale={self.scale:.6g}, zero_point={self.zero_point})"
        return f"QParams({self.qtype}, {where}, {self.scales.size} scales)"


class QuantizedTensor:
    """Codes plus the QParams that made them: what mxp.quantize returns and
    mxp.dequantize / mxp.matmul accept.  int4/uint4 codes are unpacked (one
    per int8/uint8); pack them with mxp.pack_int4."""

    def __init__(self, codes, qparams):
        self.codes, self.qparams = codes, qparams
        self._packed = None

    def prepack(self):
        """Keeps this weight packed for mxp.qlinear, as PyTorch's quantized
        Linear keeps its weight prepacked: from the next call on, W^T is
        packed once per GEMM kernel and blocking and reused (the same
        results, bit for bit; about 5% of a 128x1024x1024 layer's time).  A
        snapshot: changes to the codes afterwards are not seen until
        prepack() again.  Costs about the codes' size again (twice it at
        AVX2).  int8 weights per tensor or per output channel only (as
        mxp.qlinear).  Returns self."""
        self._packed = _mxp._qtensor_prepacked(self.codes, self.qparams._tuple())
        return self

    shape = property(lambda self: self.codes.shape)
    qtype = property(lambda self: self.qparams.qtype)
    scale = property(lambda self: self.qparams.scale)
    zero_point = property(lambda self: self.qparams.zero_point)

    def dequantize(self, dtype=np.float32):
        return dequantize(self, dtype)

    def __repr__(self):
        return f"QuantizedTensor(shape={self.codes.shape}, {self.qparams!r})"


def _norm_axis(axis, ndim):
    if axis is None:
        return None
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for {ndim} dimensions")
    return axis % ndim


def _check_rounding(rounding):
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding {rounding!r} is not one of {', '.join(ROUNDINGS)}")


def calibrate(x, qtype="int8", *, symmetric=True, axis=None, group_size=None):
    """Min/max calibration of x (NaN and infinities ignored) -> QParams."""
    if qtype not in QTYPES:
        raise ValueError(f"qtype {qtype!r} is not one of {', '.join(QTYPES)}")
    x = np.asarray(x)
    axis = _norm_axis(axis, x.ndim)
    t = _mxp._calibrate(x, qtype, bool(symmetric), -1 if axis is None else axis, int(group_size or 0))
    return QParams._from_tuple(t)


def quantize(x, qtype="int8", *, symmetric=True, axis=None, group_size=None, rounding="nearest_even", seed=0,
             qparams=None, out=None, index_offset=0):
    """x quantized to qtype -> QuantizedTensor (codes + QParams).

    Without qparams, they come from min/max calibration of x itself (per
    tensor, or per channel along axis, or per group_size along axis).
    rounding: as mxp.astype (stochastic is reproducible with seed).
    out: an existing codes array (x's shape, the code dtype) to write into:
    no new pages per call, which on large tensors cost more than the
    quantization itself.
    index_offset: stochastic rounding treats element 0 of x as element
    index_offset of a larger C-order array (pieces quantized apart get the
    codes of one whole quantization)."""
    _check_rounding(rounding)
    x = np.asarray(x)
    qp = qparams if qparams is not None else calibrate(x, qtype, symmetric=symmetric, axis=axis,
                                                       group_size=group_size)
    if not isinstance(qp, QParams):
        raise TypeError("quantize: qparams must be an mxp.QParams")
    codes = _mxp._quantize(x, qp._tuple(), rounding=rounding, seed=_seed(seed), fake=False, out=out,
                           index_offset=_seed(index_offset))
    return QuantizedTensor(codes, qp)


def quantize_rows(x, qtype="uint8", *, symmetric=False, col_scale=None, out=None):
    """Dynamic per-row (per-token) quantization of a 2-d x (float32,
    bfloat16 or float16) in one pass -> QuantizedTensor (axis 0).

    Each row, times col_scale (None, or one float32 factor per column,
    the product rounded to float32: SmoothQuant's 1/s), is quantized with
    its own min/max: the codes and QParams of quantize(x * col_scale,
    qtype, symmetric=symmetric, axis=0), reading x once, rows split over
    mxp's threads (any other layout of x through a contiguous copy).
    qtype "int8" or "uint8".  out: an existing codes array (x's shape, the
    code dtype) to write into."""
    if qtype not in ("int8", "uint8"):
        raise ValueError(f"quantize_rows: qtype must be 'int8' or 'uint8', not {qtype!r}")
    x = np.asarray(x)
    if x.ndim == 2 and not (x.flags.c_contiguous and x.flags.aligned):
        x = np.ascontiguousarray(x)  # the one pass reads whole aligned rows: any other layout through a copy
    if isinstance(out, np.ndarray) and not out.flags.c_contiguous:  # through a contiguous array of its kind
        q = quantize_rows(x, qtype, symmetric=symmetric, col_scale=col_scale, out=np.empty(out.shape, out.dtype))
        out[...] = q.codes  # ValueError when out is read-only
        return QuantizedTensor(out, q.qparams)
    codes, scales, zps = _mxp._quantize_rows(x, qtype, bool(symmetric), col_scale, out)
    return QuantizedTensor(codes, QParams(qtype, scales, zps, symmetric=symmetric, axis=0))


def dequantize(q, dtype=np.float32, qparams=None):
    """(codes - zero_point) * scale, exact in float64, rounded once to dtype.
    q: a QuantizedTensor, or codes with qparams."""
    if isinstance(q, QuantizedTensor):
        codes, qp = q.codes, q.qparams
    elif qparams is not None:
        codes, qp = np.asarray(q), qparams
    else:
        raise TypeError("dequantize: pass a QuantizedTensor, or codes and qparams")
    return _mxp._dequantize(codes, qp._tuple(), dtype)


def fake_quantize(x, qtype="int8", *, symmetric=True, axis=None, group_size=None, rounding="nearest_even", seed=0,
                  qparams=None):
    """dequantize(quantize(x)) in x's dtype: the values quantization keeps."""
    _check_rounding(rounding)
    x = np.asarray(x)
    qp = qparams if qparams is not None else calibrate(x, qtype, symmetric=symmetric, axis=axis,
                                                       group_size=group_size)
    return _mxp._quantize(x, qp._tuple(), rounding=rounding, seed=_seed(seed), fake=True, out=None)


def pack_int4(codes):
    """Two int4/uint4 codes per byte along the last axis, element 2j in the
    low nibble of byte j (docs/quant.md)."""
    codes = np.asarray(codes)
    if codes.ndim == 0 and codes.dtype in (np.dtype(np.int8), np.dtype(np.uint8)):
        raise ValueError("pack_int4: a 0-d array has no last axis to pack along")
    return _mxp._pack_int4(codes)


def unpack_int4(packed, n, signed=True):
    """The inverse of pack_int4: n codes per row, int8 (signed) or uint8."""
    return _mxp._unpack_int4(np.asarray(packed), int(n), bool(signed))


def pack(a):
    """The elements of a sub-byte array (float4_e2m1fn, float6_*, int4/uint4,
    int2/uint2, int1/uint1: a byte each, as ml_dtypes stores them) packed
    along the last axis: uint8 of shape (..., ceil(n * bits / 8)), element i
    of a row at bits [i*bits, (i+1)*bits) of the row's bytes read as a
    little-endian bit string (two float4/int4 to a byte, the first in the low
    nibble; four float6 in three bytes).  Each row starts on a whole byte;
    pack a.reshape(-1) for one bit string (safetensors' F4/F6 layout)."""
    return _mxp._pack(np.asarray(a))


def unpack(packed, dtype, n):
    """The inverse of pack: uint8 rows of packed_bytes(dtype, n) bytes along
    the last axis -> (..., n) elements of the sub-byte dtype."""
    return _mxp._unpack(np.asarray(packed), dtype, int(n))


def packed_bytes(dtype, n):
    """Bytes that n elements of a sub-byte dtype take packed: ceil(n*bits/8)."""
    bits = int(_mxp._traits(np.dtype(dtype))["bits"])
    if bits >= 8:
        raise TypeError(f"packed_bytes: {np.dtype(dtype).name} is not a sub-byte type")
    if int(n) < 0:
        raise ValueError(f"packed_bytes: n is {int(n)}, not a count")
    return (int(n) * bits + 7) // 8


def quantized_matmul_args(a, b, scales, out_dtype):
    """matmul of quantized tensors: the codes, zero points and the combined
    scales (a.scale * b.scale per output column), float32 out by default."""
    if not (isinstance(a, QuantizedTensor) and isinstance(b, QuantizedTensor)):
        raise TypeError("matmul: pass both operands quantized (or neither)")
    if a.qtype not in ("int8", "uint8") or b.qtype != "int8":
        raise ValueError("matmul: quantized operands must be uint8/int8 a and int8 b")
    if a.qparams.scales.size != 1:
        raise ValueError("matmul: a must be quantized per tensor")
    bq = b.qparams
    if bq.scales.size != 1 and not (bq.axis == b.codes.ndim - 1 and not bq.group_size):
        raise ValueError("matmul: b must be quantized per tensor or per output column (axis=-1)")
    if np.any(bq.zero_points != bq.zero_points[0]):
        raise ValueError("matmul: b's zero points must be equal (symmetric per-column quantization)")
    if scales is not None:
        raise ValueError("matmul: scales come from the quantized operands")
    combined = _mxp._qmatmul_scales(a.scale, bq.scales)  # mxp_qmatmul's: float32(a.scale * b.scales[j])
    return a.codes, b.codes, a.zero_point, int(bq.zero_points[0]), combined, out_dtype or np.float32


def quantize_weight(w, *, per_channel=True):
    """A linear layer's weight [out_features, in_features] quantized once for
    mxp.qlinear: int8 symmetric (zero point 0), one scale per output channel
    (axis 0; per tensor with per_channel=False), from w's min/max."""
    w = np.asarray(w)
    if w.ndim != 2:
        raise ValueError(f"quantize_weight: w must be 2-d [out_features, in_features], not {w.ndim}-d")
    return quantize(w, "int8", symmetric=True, axis=0 if per_channel else None)


def qlinear(x, weight, bias=None, *, out_dtype=np.float32, x_qparams=None, reduce_range=False):
    """A quantized linear layer, y = x @ W.T + bias, as PyTorch's dynamic
    quantized Linear: x [..., in_features] (a float dtype) is quantized per
    tensor to uint8 from its own min/max each call (or with x_qparams:
    uint8/int8, per tensor), multiplied by the int8 weight (a
    QuantizedTensor [out_features, in_features] from quantize_weight) in
    exact int32 sums, scaled by float32(x_scale * w_scale[j]), plus bias,
    rounded once to out_dtype -> [..., out_features] (docs/quant.md).

    reduce_range=True quantizes x to 7 bits, codes [0, 127], as torch's
    dynamic Linear does on x86 (its parameters those of torch's
    reduce_range=True; x_qparams then uint8 with a zero point <= 127): the
    same products as torch, faster where the CPU lacks VNNI, half the
    activation resolution of the default.  A weight kept packed
    (QuantizedTensor.prepack()) skips packing W each call."""
    if not isinstance(weight, QuantizedTensor):
        raise TypeError("qlinear: weight must be an mxp.QuantizedTensor (mxp.quantize_weight(w))")
    if x_qparams is not None and not isinstance(x_qparams, QParams):
        raise TypeError("qlinear: x_qparams must be an mxp.QParams")
    x = np.asarray(x)
    if bias is not None:
        bias = np.asarray(bias)
    return _mxp._qlinear(x, weight.codes, weight.qparams._tuple(), bias=bias, out_dtype=out_dtype,
                         x_qparams=None if x_qparams is None else x_qparams._tuple(),
                         reduce_range=bool(reduce_range), packed=getattr(weight, "_packed", None))


# ---- observers --------------------------------------------------------------

class _Observer:
    _kind = 0

    def __init__(self, qtype="int8", *, symmetric=True, axis=None, momentum=0.0, percentile=0.0, group_size=None,
                 bins=0):
        histogram = self._kind in (_mxp.CALIB_PERCENTILE, _mxp.CALIB_MSE, _mxp.CALIB_KL)
        if histogram and (isinstance(bins, bool) or int(bins) < 1):  # 0 would mean the C API's default
            raise ValueError(f"bins {bins!r} must be >= 1")
        if qtype not in QTYPES:
            raise ValueError(f"qtype {qtype!r} is not one of {', '.join(QTYPES)}")
        self.qtype, self.axis = qtype, axis
        self._axis = -1 if axis is None else int(axis)
        if self._axis < -1:
            raise ValueError("observers take a non-negative axis (or None)")
        self._obs = _mxp._observer_new(self._kind, qtype, symmetric=bool(symmetric), axis=self._axis,
                                       momentum=float(momentum), percentile=float(percentile),
                                       group_size=int(group_size or 0), bins=int(bins))

    def update(self, batch):
        """Feeds one batch; returns self."""
        _mxp._observer_update(self._obs, np.asarray(batch))
        return self

    def qparams(self):
        """The QParams for what was seen so far (ValueError before any batch)."""
        return QParams._from_tuple(_mxp._observer_compute(self._obs))

    def __repr__(self):
        return f"{type(self).__name__}({self.qtype})"


class MinMaxObserver(_Observer):
    """Running min and max (per tensor, or per channel along axis, or per group)."""
    _kind = _mxp.CALIB_MINMAX

    def __init__(self, qtype="int8", *, symmetric=True, axis=None, group_size=None):
        super().__init__(qtype, symmetric=symmetric, axis=axis, group_size=group_size)


class MovingAverageObserver(_Observer):
    """min, max = momentum * old + (1 - momentum) * the batch's (default 0.9)."""
    _kind = _mxp.CALIB_MOVING_AVERAGE

    def __init__(self, qtype="int8", *, symmetric=True, axis=None, momentum=0.9, group_size=None):
        if not 0 <= momentum < 1:
            raise ValueError("momentum must be in [0, 1)")
        super().__init__(qtype, symmetric=symmetric, axis=axis, momentum=momentum or 1e-300, group_size=group_size)


class PercentileObserver(_Observer):
    """Threshold at a percentile of |x| (default 99.99) from a histogram."""
    _kind = _mxp.CALIB_PERCENTILE

    def __init__(self, qtype="int8", *, symmetric=True, percentile=99.99, bins=2048):
        if not 0 < percentile <= 100:
            raise ValueError("percentile must be in (0, 100]")
        super().__init__(qtype, symmetric=symmetric, percentile=percentile, bins=bins)


class MSEObserver(_Observer):
    """Threshold minimising the quantization MSE over a histogram."""
    _kind = _mxp.CALIB_MSE

    def __init__(self, qtype="int8", *, symmetric=True, bins=2048):
        super().__init__(qtype, symmetric=symmetric, bins=bins)


class KLObserver(_Observer):
    """TensorRT-style entropy calibration: the threshold minimising KL(P || Q)."""
    _kind = _mxp.CALIB_KL

    def __init__(self, qtype="int8", *, symmetric=True, bins=2048):
        super().__init__(qtype, symmetric=symmetric, bins=bins)


# ---- OCP MX ------------------------------------------------------------------

# The keywords' spellings, the C library's values (mxp_mx_format).
MX_FORMATS = {"mxfp8_e4m3": _mxp.MXFP8_E4M3, "mxfp8_e5m2": _mxp.MXFP8_E5M2, "mxfp4": _mxp.MXFP4_E2M1,
              "mxint8": _mxp.MXINT8, "mxfp6_e2m3": _mxp.MXFP6_E2M3, "mxfp6_e3m2": _mxp.MXFP6_E3M2,
              "nvfp4": _mxp.NVFP4}
_MXP_FLOATS = tuple(np.dtype(t) for t in _mxp._TYPES)


class MXTensor:
    """OCP MX blocks (32 elements share an E8M0 scale) or NVFP4 (16 share an
    E4M3 scale, under a float32 tensor scale); data is the packed bytes
    (docs/mx.md), shape the original shape."""

    def __init__(self, data, fmt, shape):
        self.data, self.format, self.shape = data, fmt, tuple(shape)

    @property
    def nbytes(self):
        return self.data.nbytes

    def __repr__(self):
        return f"MXTensor({self.format}, shape={self.shape}, {self.nbytes} bytes)"


def _mx_format(fmt, what):
    if fmt not in MX_FORMATS:
        raise ValueError(f"{what}: format {fmt!r} is not one of {', '.join(MX_FORMATS)}")
    return MX_FORMATS[fmt]


def mx_quantize(x, fmt="mxfp8_e4m3", rounding="nearest_even", seed=0):
    """x (any float dtype, converted exactly or rounded once to float32) in
    OCP MX blocks of 32 along the flattened C order -> MXTensor."""
    _mx_format(fmt, "mx_quantize")
    _check_rounding(rounding)
    x = np.asarray(x)
    if x.dtype.kind not in "biuf" and x.dtype not in _MXP_FLOATS:  # complex, objects, strings: not cast silently
        raise TypeError(f"mx_quantize: mxp has no float conversion from {x.dtype}")
    flat = np.ascontiguousarray(x, dtype=np.float32).reshape(-1)
    return MXTensor(_mxp._mx_quantize(flat, MX_FORMATS[fmt], rounding, _seed(seed)), fmt, x.shape)


def mx_matmul(x, w, *, out_dtype=None, compute=None, bias=None, activation=None, clamp=None,
              rounding="nearest_even", overflow="inf", seed=0):
    """x @ W.T for an MXTensor W of shape (n, k) quantized row by row (k a
    multiple of the block: 32, or 16 for NVFP4): a weight-only quantized
    linear layer.  x has shape (..., k), any float dtype; the result (..., n)
    has out_dtype (default: x's dtype for float16/bfloat16/float32/float64,
    else float32).  W is decoded exactly to float32 a panel of rows at a time
    and multiplied by mxp's GEMM with the epilogue (bias of n values,
    activation, clamp, one rounding): the result equals mxp.matmul(x,
    mx_dequantize(W).T) with the same options (docs/mx.md)."""
    from ._api import _gemm_args
    if not isinstance(w, MXTensor):
        raise TypeError("mx_matmul: w must be an MXTensor (mxp.mx_quantize of an (n, k) weight)")
    code = _mx_format(w.format, "mx_matmul")
    if len(w.shape) != 2:
        raise ValueError(f"mx_matmul: w has shape {w.shape}; a weight is 2-d (n, k)")
    n, k = w.shape
    x = np.asarray(x)
    if x.ndim == 0 or x.shape[-1] != k:
        raise ValueError(f"mx_matmul: x has shape {x.shape}; its last axis must be w's k = {k}")
    if x.dtype.kind not in "f" and x.dtype not in _MXP_FLOATS:
        raise TypeError(f"mx_matmul: x must be a float array, not {x.dtype}")
    if out_dtype is None:
        out_dtype = x.dtype if x.dtype in (np.float16, np.float32, np.float64, np.dtype(_mxp.bfloat16)) else np.float32
    x2 = np.ascontiguousarray(x.reshape(-1, k))
    out = np.empty((x2.shape[0], n), np.dtype(out_dtype))
    options = _gemm_args(n, compute, bias, activation, clamp, rounding, overflow, seed, 0, 0, 0, None)
    data = w.data if not isinstance(w.data, np.ndarray) else np.ascontiguousarray(w.data)
    _mxp._mx_matmul(x2, data, code, n, out, **options)
    return out.reshape(*x.shape[:-1], n)


def mx_dequantize(t):
    """An MXTensor back to float32, in its shape."""
    if not isinstance(t, MXTensor):
        raise TypeError("mx_dequantize: expected an MXTensor")
    code = _mx_format(t.format, "mx_dequantize")  # ValueError, not KeyError, for an unknown format
    n = 1
    for d in t.shape:  # Python ints: a size that overflows int64 is refused, not wrapped
        if int(d) < 0:
            raise ValueError(f"mx_dequantize: shape {t.shape} has a negative dimension")
        n *= int(d)
    if n >= 2**62:
        raise ValueError(f"mx_dequantize: shape {t.shape} holds {n} elements, more than any MX data can")
    data = np.ascontiguousarray(t.data) if isinstance(t.data, np.ndarray) else t.data  # any layout of the bytes
    return _mxp._mx_dequantize(data, code, n).reshape(t.shape)

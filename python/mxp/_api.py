"""mxp.astype, mxp.matmul, mxp.gemm, mxp.gemm_safe and the runtime
functions: keyword parsing and result shapes in Python, the work in the C
library (GIL released)."""
import numpy as np

from . import _mxp

# The C library's names (the extension builds them from its tables at import).
ROUNDINGS = _mxp.ROUNDINGS              # "nearest_even", ..., "stochastic"
ACTIVATIONS = (None,) + _mxp.ACTIVATIONS[1:]  # None for "none", "relu", ...
STRATEGIES = _mxp.STRATEGIES            # gemm_safe: "none", "refuse", "clip", "scale", "promote"


class Result(dict):
    """A dict whose keys are also attributes (r.psnr_db == r["psnr_db"])."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def as_dict(self):
        return dict(self)


def _check_rounding(rounding, overflow="inf"):
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding {rounding!r} is not one of {', '.join(ROUNDINGS)}")
    if overflow not in _mxp.OVERFLOWS:
        raise ValueError(f"overflow {overflow!r} is not {' or '.join(map(repr, _mxp.OVERFLOWS))}")


def _seed(seed):
    seed = int(seed)
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed {seed} is not in [0, 2**64)")
    return seed


def astype(x, dtype, rounding="nearest_even", overflow="inf", seed=0, out=None, stats=False, index_offset=0):
    """x converted to dtype, rounded once in the given mode.

    rounding: nearest_even (default), nearest_away, toward_zero, up, down,
    stochastic (reproducible: the same seed gives the same bits; element i
    of the C-order result draws from position i of the stream).
    overflow: "inf" (IEEE; float8_e4m3fn gives NaN) or "saturate" (+-max).
    out: an existing array of x's shape to write into (any layout); dtype
    must then be None or out's dtype (ValueError otherwise).
    stats=True returns (result, counts) with counts of inexact, overflow,
    underflow and invalid elements (a slower, counting path).
    index_offset: stochastic rounding treats element 0 of x as element
    index_offset of a larger array, so pieces of an array converted apart
    (chunks, rows) get the bits of one whole conversion.
    """
    _check_rounding(rounding, overflow)
    x = np.asarray(x)
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise TypeError("astype: out must be a numpy.ndarray")
        if out.shape != x.shape:
            raise ValueError(f"astype: out has shape {out.shape}, x has {x.shape}")
        if dtype is not None:  # checked, not ignored: out's dtype is the one written
            want = _mxp._traits(dtype)["dtype"]  # TypeError for a name that is no dtype
            if want != out.dtype:
                raise ValueError(f"astype: dtype {want} differs from out's dtype {out.dtype}")
    result, counts = _mxp._astype(x, dtype, rounding=rounding, overflow=overflow, seed=_seed(seed), out=out,
                                  stats=bool(stats), index_offset=_seed(index_offset))
    return (result, Result(counts)) if stats else result


def convert_stats(x, dtype, rounding="nearest_even", overflow="inf", seed=0):
    """The counts astype(x, dtype, ...) would give: inexact, overflow,
    underflow, invalid (docs/conversions.md defines each)."""
    return astype(x, dtype, rounding, overflow, seed, stats=True)[1]


def _vector(v, sizes, what, dtype=None):
    """A 1-d contiguous array of one of the sizes (bias: any float dtype)."""
    if v is None:
        return None
    v = np.asarray(v, dtype=dtype)
    if dtype is None and v.dtype.kind != "f" and v.dtype not in _mxp_float_dtypes():
        v = v.astype(np.float64)
    if v.ndim > 1 or v.size not in sizes:
        raise ValueError(f"{what}: expected {' or '.join(map(str, sizes))} values, got shape {v.shape}")
    return np.require(v.reshape(-1), requirements=("C", "A"))  # the C layer reads it through a raw pointer


def _mxp_float_dtypes():
    return tuple(np.dtype(t) for t in _mxp._TYPES)


def _gemm_args(n, compute, bias, activation, clamp, rounding, overflow, seed, a_zp, b_zp, c_zp, scales, m=None,
               a_zero_points=None, a_scales=None):
    _check_rounding(rounding, overflow)
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation {activation!r} is not one of {', '.join(map(repr, ACTIVATIONS))}")
    if clamp is not None:
        lo, hi = (float(c) for c in clamp)
        if not lo <= hi:
            raise ValueError(f"clamp: low {lo} > high {hi}")
        clamp = (lo, hi)
    bias = _vector(bias, (n,), "bias")
    scales = _vector(scales, (1, n), "scales", np.float32)
    rows = {}
    if a_zero_points is not None:  # A's rows (gemm): int32, exactly as given
        z = np.asarray(a_zero_points)
        if z.dtype.kind not in "iu" or (z.size and (z.min() < -128 or z.max() > 255)):
            raise ValueError("a_zero_points: integers within A's type's range, one per row of a")
        rows["a_zero_points"] = _vector(z.astype(np.int32), (m,), "a_zero_points", np.int32)
    if a_scales is not None:
        rows["a_scales"] = _vector(a_scales, (m,), "a_scales", np.float32)
    return dict(compute=compute, bias=bias, activation=activation, clamp=clamp, scales=scales, rounding=rounding,
                overflow=overflow, seed=_seed(seed), a_zero_point=int(a_zp), b_zero_point=int(b_zp),
                c_zero_point=int(c_zp), **rows)


def result_type(*arrays_and_dtypes):
    """The type mxp promotes arrays and dtypes to (docs/dtypes.md), on NumPy
    1.x and 2 alike: bfloat16 + float16 -> float32, float8_e4m3fn +
    float8_e5m2 -> float16.  NumPy 2's np.result_type lacks a hook for
    these pairs (docs/python.md)."""
    if not arrays_and_dtypes:
        raise TypeError("result_type: at least one array or dtype is required")
    types = [x.dtype if hasattr(x, "dtype") and not isinstance(x, (type, np.dtype)) else x
             for x in arrays_and_dtypes]
    out = np.dtype(types[0])
    for t in types[1:]:
        out = _mxp.promote_types(out, t)
    return out


def _is_integer(dt):
    """NumPy's integers and mxp's int4/uint4/int2/uint2/int1/uint1 (kind 'V' to NumPy)."""
    if dt.kind in "iu":
        return True
    try:
        return dt.kind == "V" and _mxp._traits(dt)["kind"] in "iu"
    except TypeError:  # another void dtype: let matmul refuse it
        return False


def _default_out_dtype(a, b):
    if _is_integer(a.dtype) and _is_integer(b.dtype):
        return np.dtype(np.int32)
    return result_type(a, b)


def matmul(a, b, *, out_dtype=None, compute=None, bias=None, activation=None, clamp=None, rounding="nearest_even",
           overflow="inf", seed=0, out=None, a_zero_point=0, b_zero_point=0, c_zero_point=0, scales=None):
    """NumPy's matmul on mxp's GEMM, with the result rounded once.

    Any float dtype (float16, bfloat16, float8, float32, float64) for a and
    b; out_dtype (default: NumPy's result type) may differ; compute is the
    accumulator (float32, float64; None: float32 for <= 32-bit floats;
    float16 or bfloat16: an emulation of hardware accumulating in them, the
    running sum rounded after every addition, slow; docs/gemm.md).
    Epilogue per output element, in this order: + bias[j] (n values),
    activation ("relu", "gelu", "gelu_tanh", "silu"), clamp=(lo, hi), then
    one rounding into out_dtype with `rounding`.

    Integers: uint8 or int8 a by int8 b (zero points subtracted, exact int32
    sums) into int32 (default), or with `scales` (1 or n float32) into
    int8/uint8 (requantized, + c_zero_point, saturated) or a float dtype
    (dequantized).  Quantized tensors from mxp.quantize may be passed for a
    and b: their scales and zero points are used (see docs/python.md).
    Batch dimensions broadcast as in NumPy; 1-d operands are vectors.
    """
    from ._quant import QuantizedTensor, quantized_matmul_args
    if isinstance(a, QuantizedTensor) or isinstance(b, QuantizedTensor):
        a, b, a_zero_point, b_zero_point, scales, out_dtype = quantized_matmul_args(a, b, scales, out_dtype)
    a, b = np.asarray(a), np.asarray(b)
    shape = _mxp._matmul_shape(a.shape, b.shape)  # NumPy's rules, mxp_matmul's sentences
    if out is None:
        dt = np.dtype(out_dtype) if out_dtype is not None else _default_out_dtype(a, b)
        out = np.empty(shape, dt)
    elif not isinstance(out, np.ndarray) or out.shape != shape:
        raise ValueError(f"matmul: out must be an array of shape {shape}")
    elif out_dtype is not None and np.dtype(out_dtype) != out.dtype:
        raise ValueError(f"matmul: out_dtype {np.dtype(out_dtype)} differs from out's {out.dtype}")
    n = shape[-1] if b.ndim > 1 else 1
    options = _gemm_args(n, compute, bias, activation, clamp, rounding, overflow, seed, a_zero_point, b_zero_point,
                         c_zero_point, scales)
    return _mxp._matmul(a, b, out, **options)


def _as_matrix(x, what):
    x = np.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"{what}: expected a 2-d array, got {x.ndim}-d")
    return x  # any layout: the extension copies one whose rows mxp_gemm cannot read in place


def _gemm_common(a, b, c, alpha, beta, trans_a, trans_b, out_dtype, strategy, promote_to, kw):
    a, b = _as_matrix(a, "gemm: a"), _as_matrix(b, "gemm: b")
    m = a.shape[1] if trans_a else a.shape[0]
    n = b.shape[0] if trans_b else b.shape[1]
    if c is None:
        # beta 0 ignores what C holds: np.empty spares a memset of C (3 ms of MiniLM's 165 in float32)
        new = np.zeros if beta != 0 else np.empty
        c = new((m, n), np.dtype(out_dtype) if out_dtype is not None else _default_out_dtype(a, b))
    elif not isinstance(c, np.ndarray):
        raise TypeError("gemm: c must be a numpy.ndarray (it is written in place)")
    options = _gemm_args(n, m=m, **kw)
    report = _mxp._gemm(a, b, c, trans_a=bool(trans_a), trans_b=bool(trans_b), alpha=float(alpha), beta=float(beta),
                        strategy=strategy, promote_to=promote_to, **options)
    return c, report


def _kw(compute=None, bias=None, activation=None, clamp=None, rounding="nearest_even", overflow="inf", seed=0,
        a_zero_point=0, b_zero_point=0, c_zero_point=0, scales=None, a_zero_points=None, a_scales=None):
    return dict(compute=compute, bias=bias, activation=activation, clamp=clamp, rounding=rounding, overflow=overflow,
                seed=seed, a_zp=a_zero_point, b_zp=b_zero_point, c_zp=c_zero_point, scales=scales,
                a_zero_points=a_zero_points, a_scales=a_scales)


def gemm(a, b, c=None, *, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, out_dtype=None, **epilogue):
    """BLAS GEMM: c = alpha op(a) op(b) + beta c, in place in c (a new
    zero array of out_dtype when c is None); returns c.  c's rows must be
    contiguous.  Keywords as matmul (compute, bias, activation, clamp,
    rounding, overflow, seed, zero points, scales), and for uint8/int8 a
    quantized per row (per token): a_zero_points and a_scales, one per row
    of op(a) (row i's sums are sum_k (a[i, k] - a_zero_points[i]) b[k, j],
    scaled by float32(a_scales[i] * scales[j]); docs/gemm.md)."""
    return _gemm_common(a, b, c, alpha, beta, trans_a, trans_b, out_dtype, None, None, _kw(**epilogue))[0]


def gemm_safe(a, b, c=None, *, strategy="clip", promote_to=None, alpha=1.0, beta=0.0, trans_a=False, trans_b=False,
              out_dtype=None, **epilogue):
    """gemm with an overflow check for a low-precision c.  strategy: "none"
    (compute and report), "refuse" (OverflowError when at risk, c untouched),
    "clip" (saturate), "scale" (c = result * 2^-scale_exponent), "promote"
    (the result goes to promote_to, a float32/float64 array of c's shape).
    Returns (c, report): report.at_risk, .applied, .bound, .scale_exponent,
    .what (a sentence)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy {strategy!r} is not one of {', '.join(STRATEGIES)}")
    if (strategy == "promote") != (promote_to is not None):
        raise ValueError("gemm_safe: promote_to is given exactly with strategy='promote'")
    c, report = _gemm_common(a, b, c, alpha, beta, trans_a, trans_b, out_dtype, strategy, promote_to, _kw(**epilogue))
    return c, Result(report)


def info():
    """Version, ISA level in use and supported, CPU, features, threads and
    the kernels mxp picks for the main GEMM and conversion pairs."""
    return Result(_mxp._info())


def memory_stats(reset=False):
    """mxp's allocator statistics (current/peak bytes, allocations, frees,
    pool hits, bytes copied/converted, idle GEMM workspaces and their
    reuses, huge-page blocks advised, kept and reused); reset=True zeroes
    the counters after reading."""
    return Result(_mxp._memory_stats(bool(reset)))


hugepages = _mxp.hugepages
release_workspaces = _mxp.release_workspaces
set_num_threads = _mxp.set_num_threads
get_num_threads = _mxp.get_num_threads

"""Discrete Fourier transforms with numpy.fft's signatures, through mxp's
FFT (KISS FFT inside): float16, bfloat16 and float32 inputs are computed in
float32, float64 in float64, and the result is rounded once to `dtype`
(default complex64, or complex128 for float64 / complex128 input).

    y = mxp.fft.rfft(x_bf16)                # complex64
    z = mxp.fft.fft(x, dtype=mxp.bfloat16)  # (..., 2) bfloat16: (re, im) pairs

NumPy has no complex type of bfloat16 or float16: a 16-bit `dtype` gives
a real array with a trailing axis of 2 (re, im), and such an array is
read back as complex by every transform given `complex_pairs=True`
(without it a real array is real, as in numpy.fft).  docs/nn.md#fft."""
import numpy as np

from . import _mxp

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2"]

_NORMS = {None: 0, "backward": 0, "ortho": 1, "forward": 2}
_COMPLEX = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def _norm(norm):
    try:
        return _NORMS[norm]
    except (KeyError, TypeError):
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".') from None


def _as_pairs(a):
    """A complex NumPy array as float (..., 2) pairs (a view when it can be)."""
    f = np.float32 if a.dtype == np.complex64 else np.float64
    if a.ndim == 0:
        a = a.reshape(1)[0:1].reshape(())
    return a[..., None].view(f)


def _input(a, complex_pairs):
    """(array for C, is complex); complex NumPy arrays become pairs."""
    a = np.asarray(a)
    if a.dtype.kind == "c":
        if a.dtype.itemsize > 16:
            raise TypeError(f"{a.dtype} is not supported: convert to complex128")
        return _as_pairs(a), True
    if complex_pairs:
        if a.ndim == 0 or a.shape[-1] != 2:
            raise ValueError("complex_pairs=True needs a trailing axis of length 2 (re, im)")
        return a, True
    return a, False


def _output(r, complex_out):
    if complex_out and r.dtype in _COMPLEX:
        return np.ascontiguousarray(r).view(_COMPLEX[r.dtype])[..., 0]
    return r


def _out_dtype(dtype):
    if dtype is None:
        return None
    d = np.dtype(dtype)
    if d.kind == "c":  # complex64 -> float32 pairs, complex128 -> float64
        return np.float32 if d == np.complex64 else np.float64
    return d


def _finish(r, complex_out, out):
    r = _output(r, complex_out)
    if out is None:
        return r
    if out.shape != r.shape:
        raise ValueError(f"out has shape {out.shape}, the result {r.shape}")
    np.copyto(out, r, casting="same_kind")
    return out


def _axes1(axis):
    return None if axis == -1 else (int(axis),)


def _call(a, kind, axes, n, norm, inverse, dtype, complex_pairs=False):
    x, is_complex = _input(a, complex_pairs)
    if kind == 2 and not is_complex:  # irfft of a real array: imaginary parts 0
        x, is_complex = np.stack([np.asarray(x, np.float64 if x.dtype == np.float64 else np.float32),
                                  np.zeros(x.shape, np.float64 if x.dtype == np.float64 else np.float32)], -1), True
    real_input = kind == 0 and not is_complex
    return _mxp._fft(x, kind, axes, n, _norm(norm), inverse, real_input, _out_dtype(dtype))


def fft(a, n=None, axis=-1, norm=None, dtype=None, out=None, complex_pairs=False):
    """numpy.fft.fft; dtype: the result's (complex64, complex128, float16,
    bfloat16 ...: a 16-bit one gives (re, im) pairs)."""
    r = _call(a, 0, _axes1(axis), None if n is None else (int(n),), norm, False, dtype, complex_pairs)
    return _finish(r, True, out)


def ifft(a, n=None, axis=-1, norm=None, dtype=None, out=None, complex_pairs=False):
    """numpy.fft.ifft."""
    r = _call(a, 0, _axes1(axis), None if n is None else (int(n),), norm, True, dtype, complex_pairs)
    return _finish(r, True, out)


def rfft(a, n=None, axis=-1, norm=None, dtype=None, out=None):
    """numpy.fft.rfft: n // 2 + 1 complex values along axis."""
    a = np.asarray(a)
    if a.dtype.kind == "c":
        raise TypeError("rfft takes a real array (use fft for complex input)")
    r = _call(a, 1, _axes1(axis), None if n is None else (int(n),), norm, False, dtype)
    return _finish(r, True, out)


def irfft(a, n=None, axis=-1, norm=None, dtype=None, out=None, complex_pairs=False):
    """numpy.fft.irfft: n (default 2 (m - 1)) reals along axis."""
    r = _call(a, 2, _axes1(axis), None if n is None else (int(n),), norm, True, dtype, complex_pairs)
    return _finish(r, False, out)


def _axes2(axes, s):
    axes = tuple(int(v) for v in axes)
    if len(axes) != 2:
        raise ValueError("mxp.fft's 2-d transforms take two axes")
    return axes, None if s is None else tuple(int(v) for v in s)


def fft2(a, s=None, axes=(-2, -1), norm=None, dtype=None, out=None, complex_pairs=False):
    """numpy.fft.fft2."""
    axes, s = _axes2(axes, s)
    return _finish(_call(a, 0, axes, s, norm, False, dtype, complex_pairs), True, out)


def ifft2(a, s=None, axes=(-2, -1), norm=None, dtype=None, out=None, complex_pairs=False):
    """numpy.fft.ifft2."""
    axes, s = _axes2(axes, s)
    return _finish(_call(a, 0, axes, s, norm, True, dtype, complex_pairs), True, out)


def rfft2(a, s=None, axes=(-2, -1), norm=None, dtype=None, out=None):
    """numpy.fft.rfft2: the last axis real to complex, then the other."""
    axes, s = _axes2(axes, s)
    return _finish(_call(a, 1, axes, s, norm, False, dtype), True, out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, dtype=None, out=None, complex_pairs=False):
    """numpy.fft.irfft2."""
    axes, s = _axes2(axes, s)
    return _finish(_call(a, 2, axes, s, norm, True, dtype, complex_pairs), False, out)

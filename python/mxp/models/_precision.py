"""The precision recipes of mxp.models: how a linear layer's weight and an
embedding table are stored and multiplied in each precision, and what the
activations between layers are (docs/minilm.md, "Precisions").

Every recipe keeps float32 accumulation (mxp's GEMM) and computes the
norms, softmax and GELU wide with one rounding into the activation dtype.
"""
import numpy as np

from .. import _api, _quant, nn
from .._mxp import bfloat16, float8_e4m3fn

F32 = np.dtype(np.float32)


class Recipe:
    """act: the activations' dtype between layers; small: the dtype of the
    biases, norm weights and position tables; weight: how matrices are
    stored ("float" in wdtype, "fp8" e4m3 codes with scales, "int8" codes
    with per-output-channel scales, an MX format's name); per_channel: one
    scale per output row (else per tensor); a8: the linear layers' inputs
    are quantized to int8 per token at each call (W8A8 dynamic)."""

    def __init__(self, name, act, weight, wdtype=None, per_channel=True, a8=False, what=""):
        self.name, self.act, self.weight, self.wdtype = name, np.dtype(act), weight, wdtype
        self.small = self.act if self.act != F32 else F32
        self.per_channel, self.a8, self.what = per_channel, a8, what

    def __repr__(self):
        return f"Recipe({self.name!r})"


RECIPES = {r.name: r for r in (
    Recipe("fp32", F32, "float", F32, what="float32 weights and activations"),
    Recipe("bf16", bfloat16, "float", bfloat16, what="bfloat16 weights and activations"),
    Recipe("fp16", np.float16, "float", np.float16, what="float16 weights and activations"),
    Recipe("fp8-tensor", F32, "fp8", per_channel=False,
           what="float8_e4m3fn weights, one scale per tensor; float32 activations"),
    Recipe("fp8-channel", F32, "fp8", what="float8_e4m3fn weights, one scale per output channel; float32 activations"),
    Recipe("w8a8", F32, "int8", a8=True,
           what="int8 weights per output channel, uint8 activations per token (dynamic, asymmetric), int32 sums"),
    Recipe("w8a16", bfloat16, "int8", what="int8 weights per output channel, bfloat16 activations"),
    Recipe("mxfp8", F32, "mxfp8_e4m3", what="MXFP8 (E4M3, blocks of 32) weights; float32 activations"),
    Recipe("mxfp4", F32, "mxfp4", what="MXFP4 (E2M1, blocks of 32) weights; float32 activations"),
    Recipe("nvfp4", F32, "nvfp4", what="NVFP4 (E2M1, blocks of 16, E4M3 scales) weights; float32 activations"),
)}
PRECISIONS = tuple(RECIPES)


def recipe(precision):
    if isinstance(precision, Recipe):
        return precision
    if precision not in RECIPES:
        raise ValueError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    return RECIPES[precision]


def _quantized_rows(w, r):
    """w [rows, cols] float32 -> (codes, scales per row as float32, stored
    bytes) for the scaled recipes; per tensor: one scale for every row."""
    qtype = "float8_e4m3fn" if r.weight == "fp8" else "int8"
    q = _quant.quantize(w, qtype, symmetric=True, axis=0 if r.per_channel else None)
    s = q.qparams.scales.astype(np.float32)
    nbytes = q.codes.nbytes + s.nbytes
    return q.codes, np.broadcast_to(s, (w.shape[0],)) if s.size == 1 else s, nbytes


def _mx_roundtrip(w, fmt):
    """w quantized into MX blocks along its rows, then decoded once to
    float32 (mxp's GEMM takes no block scales): (float32 values, packed bytes)."""
    t = _quant.mx_quantize(w, fmt)
    return _quant.mx_dequantize(t), t.nbytes


# GELU(x < -9.25) is a nonzero below 2^-63, which sends the next bfloat16 GEMM to its float32 kernel
# (docs/gemm.md: vdpbf16ps flushes); GELU(-9) is -1.0e-18, within 1.1e-18 of every GELU(x < -9): a
# bfloat16 GELU's input is clamped there.
GELU_FLOOR = -9.0


class Linear:
    """y = x @ W.T + b in one recipe.  parts: [(W [out_i, in], b [out_i]),
    ...] float32, concatenated along the outputs (the fused q/k/v
    projection); a per-tensor recipe keeps one scale per part."""

    def __init__(self, parts, r, act_max=None):
        """act_max: the largest |x| of each input channel seen in
        calibration (W8A8 only): SmoothQuant's migration, below."""
        self.r, self.observed, self.inv_smooth = r, None, None
        w = np.concatenate([p[0] for p in parts]) if len(parts) > 1 else parts[0][0]
        if r.a8 and act_max is not None:
            # SmoothQuant (Xiao et al. 2023), alpha = 1/2: input channel k's outliers move into the weights,
            # x_k / s_k and W[:, k] * s_k with s_k = sqrt(max|x_k| / max|W[:, k]|); the product is unchanged.
            smooth = np.sqrt(np.maximum(act_max, 1e-5) / np.maximum(np.abs(w).max(axis=0), 1e-5))
            w = (w * smooth).astype(np.float32)
            parts = [(w, np.concatenate([p[1] for p in parts]))]
            self.inv_smooth = (1 / smooth).astype(np.float32)
        self.bias = np.concatenate([p[1] for p in parts]).astype(r.small)
        self.shape = w.shape
        self.alpha, self.scales, self.nbytes = 1.0, None, self.bias.nbytes
        if r.weight == "float":
            self.w = _api.astype(w, r.wdtype)
            self.nbytes += self.w.nbytes
        elif r.weight in ("fp8", "int8"):
            got = [_quantized_rows(p[0], r) for p in parts]
            self.w = np.concatenate([g[0] for g in got]) if len(got) > 1 else got[0][0]
            self.scales = np.ascontiguousarray(np.concatenate([g[1] for g in got]), np.float32)
            self.nbytes += sum(g[2] for g in got)
            if r.weight == "fp8" and np.all(self.scales == self.scales[0]):
                self.alpha, self.scales = float(self.scales[0]), None  # GEMM's alpha: nothing after it
        else:
            self.w, nbytes = _mx_roundtrip(w, r.weight)
            self.nbytes += nbytes
        if self.inv_smooth is not None:
            self.nbytes += self.inv_smooth.nbytes

    def __call__(self, x, out_dtype, residual=None, gelu=False):
        """x [T, in] in the activation dtype -> [T, out]: x W^T + b, then
        + residual (a float32 [T, out] array, updated in place and
        returned) or GELU; rounded once into out_dtype (the residual sum
        stays float32 for the layer norm that follows)."""
        out_dtype = np.dtype(out_dtype)
        if self.observed is not None:  # calibration: the largest |x| per input channel
            np.maximum(self.observed, np.abs(np.asarray(x, F32)).max(axis=0), out=self.observed)
        if self.r.a8:
            if residual is not None:  # the sums go onto the residual in the GEMM (beta = 1): one rounding, no pass
                return self._w8a8(x, residual)
            return self._out(self._w8a8(x), out_dtype, None, gelu)
        w = self.w if self.w.dtype != np.int8 else _api.astype(self.w, self.r.act)  # W8A16: exact in bfloat16
        if self.scales is not None:
            y = _api.gemm(x, w, trans_b=True, out_dtype=F32)
            y *= self.scales
            return self._finish(y, out_dtype, residual, gelu)
        if residual is None and not gelu and out_dtype != F32:
            # A narrow C (bfloat16, float16): the GEMM's bias epilogue, one rounding of sum + bias (filling
            # C with the bias first cost a pass in NumPy and a widening of C for beta = 1: 1.97 against
            # 1.55 ms for [1056, 384] x [384, 1152] into bfloat16 on the Xeon).
            return _api.gemm(x, w, alpha=self.alpha, trans_b=True, bias=self.bias, out_dtype=out_dtype)
        # A float32 C: the sums accumulate in C itself (+ the residual, beta = 1) and the bias epilogue rounds
        # sum + bias once, in place (a NumPy pass to fill C with the bias, or to add it to the residual, cost
        # as much).
        if residual is None:
            # GELU into bfloat16: its input clamped at GELU_FLOOR by the GEMM's epilogue (no NumPy pass)
            floor = (GELU_FLOOR, np.inf) if gelu and out_dtype == bfloat16 else None
            y = _api.gemm(x, w, alpha=self.alpha, trans_b=True, bias=self.bias, clamp=floor,
                          out_dtype=F32 if gelu else out_dtype)
            return self._gelu(y, out_dtype, floored=floor is not None) if gelu else y
        y = residual
        _api.gemm(x, w, y, alpha=self.alpha, beta=1.0, trans_b=True, bias=self.bias)
        return self._gelu(y, out_dtype) if gelu else y

    @staticmethod
    def _gelu(y, out_dtype, floored=False):
        if out_dtype == bfloat16 and not floored:
            np.maximum(y, GELU_FLOOR, out=y)
        return nn.gelu(y, dtype=out_dtype, out=y if out_dtype == F32 else None)

    def _w8a8(self, x, residual=None):
        """x quantized per token to uint8 with its own scale s_i and zero point
        z_i (min/max of the row, mxp.calibrate's rule; SmoothQuant's 1/s
        applied to the row on the way: mxp.quantize_rows, one pass over x on
        mxp's threads), then one GEMM: the exact int32 sums sum_k (a_ik - z_i)
        w_jk against the int8 weight (the VNNI or AMX kernel), scaled by
        float32(s_i w_scale_j), + bias (+ the float32 residual, beta = 1),
        rounded once to float32 (docs/gemm.md, "Integer GEMM": per-row zero
        points and scales).  A NumPy multiply for the smoothing and calibrate
        + quantize cost three passes over x on one thread: 12 of W8A8 MiniLM's
        62 ms at two threads on the Xeon."""
        q = _quant.quantize_rows(x, "uint8", symmetric=False, col_scale=self.inv_smooth)
        qp = q.qparams
        if residual is None:
            return _api.gemm(q.codes, self.w, trans_b=True, out_dtype=F32, scales=self.scales, bias=self.bias,
                             a_zero_points=qp.zero_points, a_scales=qp.scales)
        _api.gemm(q.codes, self.w, residual, beta=1.0, trans_b=True, scales=self.scales, bias=self.bias,
                  a_zero_points=qp.zero_points, a_scales=qp.scales)
        return residual

    def _finish(self, y, out_dtype, residual, gelu):
        y += self.bias
        return self._out(y, out_dtype, residual, gelu)

    def _out(self, y, out_dtype, residual, gelu):
        """y (float32, bias in) + the residual, or GELU, or rounded into out_dtype."""
        if residual is not None:
            residual += y
            return residual
        if gelu:
            return self._gelu(y, out_dtype)
        return y if out_dtype == F32 else _api.astype(y, out_dtype)


class Embedding:
    """A [rows, width] table gathered by index into float32: float tables
    in the recipe's weight dtype, fp8/int8 ones as codes with per-row
    scales (mxp.nn.embedding dequantizes on the way), MX ones decoded at
    load (nbytes counts the packed form)."""

    def __init__(self, table, r):
        self.scales = None
        if r.weight == "float":
            self.table = _api.astype(table, r.wdtype)
            self.nbytes = self.table.nbytes
        elif r.weight in ("fp8", "int8"):
            self.table, scales, self.nbytes = _quantized_rows(table, r)
            self.scales = np.ascontiguousarray(scales, np.float32)
        else:
            self.table, self.nbytes = _mx_roundtrip(table, r.weight)

    def __call__(self, ids):
        return nn.embedding(ids, self.table, self.scales, dtype=F32)

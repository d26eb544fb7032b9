"""mxp.models.cnn: a small ResNet-style CNN for scikit-learn's digits
(8x8 gray images, 10 classes) run by mxp's operations in every precision
of ``PRECISIONS`` (docs/cnn.md).

    from mxp.models import cnn
    x_train, y_train, x_test, y_test = cnn.split()       # float32 [N, 1, 8, 8] in [0, 1], labels uint8
    model = cnn.load(precision="int8-mse")               # data/cnn/cnn-digits.safetensors, checksum checked
    logits = model.forward(x_test[:64])                  # float32 [64, 10]
    model.nbytes                                         # the weights' bytes in this precision

The network (scripts/train-cnn.py trains it with torch): a stem conv3x3
1->16 + batch norm + relu; block1, 16 channels: relu(bn(conv(relu(bn(conv
x)))) + x); block2, 32 channels at stride 2 with a 1x1 strided conv + bn
shortcut; global average pooling; a linear head 32->10.  Each batch norm is
folded into its convolution (mxp.nn.fold_batch_norm, float64, rounded
once) unless fold=False (float32 only: conv, then mxp.nn.batch_norm).

Precisions: fp32, fp16, bf16 (weights and activations in that dtype,
float32 accumulation; fp32 takes the bias and relu in the conv's fused
epilogue, fp16 and bf16 add them in float32 after the conv, then round
once into their dtype; the residual sum in float32); fp8 (float8_e4m3fn weights with one scale per
output channel and activations with one calibrated scale per tensor, the
scales applied after the float32 sums); int8-<observer> (post-training
quantization as ONNX's QLinearConv: int8 weights per output channel,
uint8 activations per tensor with the scale and zero point from mxp's
observer -- minmax, moving_average, percentile, mse, entropy -- over
calibration images, int32 sums, requantized in the conv); mxfp8 / mxfp4
(the weights in OCP MX blocks of 32 along the flattened weight, decoded
once to float32; float32 activations).

Errors: ValueError for an unknown precision or a bad input shape;
KeyError for a missing tensor; OSError for a missing file; ValueError when
the weights' sha256 differs from the sidecar file's.
"""
import hashlib
import importlib.util
import os

import numpy as np

from .. import _api, _quant, nn, safetensors
from .._mxp import bfloat16, float8_e4m3fn

__all__ = ["PRECISIONS", "OBSERVERS", "CNN", "load", "split", "weights_path", "cross_entropy", "read_weights",
           "torch_module"]

F32 = np.dtype(np.float32)
OBSERVERS = {"minmax": _quant.MinMaxObserver, "moving_average": _quant.MovingAverageObserver,
             "percentile": _quant.PercentileObserver, "mse": _quant.MSEObserver, "entropy": _quant.KLObserver}
_FLOATS = {"fp32": F32, "fp16": np.dtype(np.float16), "bf16": np.dtype(bfloat16)}
_MX = {"mxfp8": "mxfp8_e4m3", "mxfp4": "mxfp4"}
PRECISIONS = tuple(_FLOATS) + ("fp8",) + tuple(f"int8-{o}" for o in OBSERVERS) + tuple(_MX)
HELD_OUT, SPLIT_SEED, EPS = 450, 2026, 1e-5
_E4M3_MAX = 448.0


def _root():
    """The source tree: the first folder above this file with data/digits
    (python/mxp/models in the tree, build/python-venv/mxp/models in a build)."""
    d = os.path.dirname(os.path.realpath(__file__))
    while not os.path.isdir(os.path.join(d, "data", "digits")):
        if os.path.dirname(d) == d:
            raise OSError("cnn: no data/digits above " + os.path.dirname(os.path.realpath(__file__)))
        d = os.path.dirname(d)
    return d


def weights_path():
    """The committed weights, data/cnn/cnn-digits.safetensors of the source tree."""
    return os.path.join(_root(), "data", "cnn", "cnn-digits.safetensors")


def split(folder=None):
    """(x_train, y_train, x_test, y_test): data/digits (1797 images) as
    float32 [N, 1, 8, 8] gray levels / 16, a fixed permutation
    (default_rng(2026)) whose first 450 images are held out."""
    folder = folder or os.path.join(_root(), "data", "digits")
    x = np.load(os.path.join(folder, "digits_x.npy"))
    y = np.load(os.path.join(folder, "digits_y.npy"))
    perm = np.random.default_rng(SPLIT_SEED).permutation(len(y))
    test, train = perm[:HELD_OUT], perm[HELD_OUT:]
    f = (x.astype(np.float32) / 16).reshape(-1, 1, 8, 8)
    return f[train], y[train], f[test], y[test]


def cross_entropy(logits, labels):
    """Mean -log softmax(logits)[label], in float64."""
    z = np.asarray(logits, np.float64)
    z = z - z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1))
    return float(np.mean(lse - z[np.arange(len(labels)), labels]))


def read_weights(path=None, check=True):
    """{name: float32 array} from the safetensors file; check: its sha256
    against path + '.sha256' (ValueError when they differ)."""
    path = path or weights_path()
    if check:
        with open(path + ".sha256") as f:
            want = f.read().split()[0]
        with open(path, "rb") as f:
            got = hashlib.sha256(f.read()).hexdigest()
        if got != want:
            raise ValueError(f"cnn: {path} has sha256 {got}, its .sha256 file says {want}")
    with safetensors.safe_open(path) as f:
        return {k: np.asarray(f.get_tensor(k), F32) for k in f.keys()}


# (name, stride, padding) of each conv-bn in the order forward() runs them.
_CONVS = (("stem", 1, 1), ("block1.a", 1, 1), ("block1.b", 1, 1), ("block2.a", 2, 1), ("block2.b", 1, 1),
          ("block2.down", 2, 0))
# Where the int8 and fp8 recipes quantize activations: the input of each conv (block1's input also feeds its
# residual; block2.down reads block2's input) and of the head.
_POINTS = {"stem": "image", "block1.a": "x1", "block1.b": "m1", "block2.a": "x2", "block2.b": "m2",
           "block2.down": "x2", "fc": "pooled"}


class _Conv:
    """One conv-bn: the folded float32 (w, b), or the unfolded conv and
    batch norm parameters, stored in the recipe's form."""

    def __init__(self, t, name, stride, padding, fold):
        self.name, self.stride, self.padding = name, stride, padding
        w = t[name + ".conv.weight"]
        bn = [t[f"{name}.bn.{k}"] for k in ("weight", "bias", "running_mean", "running_var")]
        if fold:
            w, self.b = nn.fold_batch_norm(w, None, *bn, eps=EPS)
            self.bn = None
        else:
            self.b, self.bn = None, bn
        self.w = np.ascontiguousarray(w.transpose(0, 2, 3, 1))  # OHWI: NHWC, whose GEMM spans the whole batch
        self.nbytes = self.w.nbytes + (self.b.nbytes if self.b is not None else sum(a.nbytes for a in bn))

    def __call__(self, x, relu, dtype):
        # Folded, into float32: the bias and relu in the conv's epilogue (float64, one rounding). Otherwise
        # the bias (or batch norm) and relu after a float32 conv, rounded once into dtype.
        if not self.bn and np.dtype(dtype) == F32:
            return nn.conv2d(x, self.w, self.b, self.stride, self.padding, layout="NHWC", dtype=F32,
                             activation="relu" if relu else None)
        y = nn.conv2d(x, self.w, None, self.stride, self.padding, layout="NHWC", dtype=F32)
        if self.bn:
            y = nn.batch_norm(y, self.bn[2], self.bn[3], self.bn[0], self.bn[1], eps=EPS, axis=-1)
        else:
            y += self.b
        if relu:
            np.maximum(y, 0, out=y)
        return y if np.dtype(dtype) == F32 else _api.astype(y, dtype)


class _FloatConv(_Conv):
    def __init__(self, t, name, stride, padding, dtype):
        super().__init__(t, name, stride, padding, True)
        self.w = _api.astype(self.w, dtype)
        self.nbytes = self.w.nbytes + self.b.nbytes


class _MXConv(_Conv):
    def __init__(self, t, name, stride, padding, fmt):
        super().__init__(t, name, stride, padding, True)
        q = _quant.mx_quantize(self.w, fmt)
        self.w = _quant.mx_dequantize(q)
        self.nbytes = q.nbytes + self.b.nbytes


class _Fp8Conv(_Conv):
    """float8_e4m3fn codes w8 = w / sw per output channel, the input x8 =
    x / sx per tensor (sx = calibrated max / 448, saturated): y =
    relu(sx sw conv(x8, w8) + b), float32."""

    def __init__(self, t, name, stride, padding, amax):
        super().__init__(t, name, stride, padding, True)
        q = _quant.quantize(self.w, "float8_e4m3fn", symmetric=True, axis=0)
        self.w = q.codes
        self.sx = np.float32(max(float(amax), 1e-12) / _E4M3_MAX)
        self.scale = (q.qparams.scales.astype(np.float64) * self.sx).astype(F32)
        self.nbytes = self.w.nbytes + self.scale.nbytes + self.b.nbytes

    def quantize(self, x):
        return _api.astype(np.asarray(x, F32) * (1 / self.sx), float8_e4m3fn, overflow="saturate")

    def __call__(self, x, relu, dtype):
        y = nn.conv2d(self.quantize(x), self.w, None, self.stride, self.padding, layout="NHWC", dtype=F32)
        y *= self.scale
        y += self.b
        if relu:
            np.maximum(y, 0, out=y)
        return y


class _Int8Conv(_Conv):
    """QLinearConv: uint8 x (scale sx, zero point zx, per tensor), int8 w
    (sw per output channel, zero point 0), exact int32 sums of (x - zx) w
    plus the int32 bias round(b / (sx sw)), scaled by float32(sx sw) into
    float32; requantized into the next point's uint8 (sy, zy) where qy is
    given (saturated: a relu where zy = 0).  Both in the conv's epilogue:
    round(sx sw / sy (acc + b)) + zy saturated, or sx sw (acc + b) in
    float32 (mxp_conv2d's requantization and dequantization)."""

    def __init__(self, t, name, stride, padding, qx):
        super().__init__(t, name, stride, padding, True)
        q = _quant.quantize(self.w, "int8", symmetric=True, axis=0)
        self.w, self.sw = q.codes, q.qparams.scales.astype(F32)
        self.qx = qx
        sx = float(qx.scales[0])
        self.b = np.rint(self.b / (sx * self.sw.astype(np.float64))).astype(np.int32)
        self.sx = sx
        self.zx = int(qx.zero_points[0])
        self.nbytes = self.w.nbytes + self.sw.nbytes + self.b.nbytes + 8

    def __call__(self, x, relu, dtype, qy=None):
        if x.dtype != np.uint8:
            x = _quant.quantize(x, qparams=self.qx).codes
        act = "relu" if relu else None
        if qy is None:
            return nn.conv2d(x, self.w, self.b, self.stride, self.padding, layout="NHWC", activation=act, dtype=F32,
                             x_zero_point=self.zx, x_scale=self.sx, w_scale=self.sw)
        return nn.conv2d(x, self.w, self.b, self.stride, self.padding, layout="NHWC", activation=act, dtype=np.uint8,
                         x_zero_point=self.zx, x_scale=self.sx, w_scale=self.sw, y_scale=float(qy.scales[0]),
                         y_zero_point=int(qy.zero_points[0]))


class CNN:
    """The digits CNN in one precision; forward(x) gives float32 logits."""

    def __init__(self, tensors, precision="fp32", *, calibration=None, fold=True):
        """tensors: {name: array} (read_weights()); calibration (fp8 and
        int8 only): float32 images [N, 1, 8, 8] the float32 model runs
        first to set the activation scales (default: the first 512
        training images of split(), in batches of 64)."""
        if precision not in PRECISIONS:
            raise ValueError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
        if not fold and precision != "fp32":
            raise ValueError("fold=False runs in fp32 only")
        self.precision, self.act = precision, _FLOATS.get(precision, F32)
        self.fc_w = np.ascontiguousarray(tensors["fc.weight"], F32)
        self.fc_b = np.ascontiguousarray(tensors["fc.bias"], F32)
        self.qp = None
        if precision in _FLOATS:
            self.convs = {n: (_FloatConv(tensors, n, s, p, self.act) if fold else _Conv(tensors, n, s, p, False))
                          for n, s, p in _CONVS}
            self.fc_w = _api.astype(self.fc_w, self.act)
        elif precision in _MX:
            self.convs = {n: _MXConv(tensors, n, s, p, _MX[precision]) for n, s, p in _CONVS}
            q = _quant.mx_quantize(self.fc_w, _MX[precision])
            self.fc_w, self._fc_bytes = _quant.mx_dequantize(q), q.nbytes
        else:
            if calibration is None:
                calibration = split()[0][:512]
            seen = CNN(tensors, "fp32")._observe(calibration, precision)
            if precision == "fp8":
                self.convs = {n: _Fp8Conv(tensors, n, s, p, seen[_POINTS[n]]) for n, s, p in _CONVS}
            else:
                self.qp = seen
                self.convs = {n: _Int8Conv(tensors, n, s, p, seen[_POINTS[n]]) for n, s, p in _CONVS}
                self.fc_q = _quant.quantize_weight(self.fc_w)

    def _observe(self, images, precision):
        """Runs this (float32) model on images in batches of 64: per
        quantization point, its largest |x| (fp8) or its observer's QParams
        (int8, uint8 asymmetric per tensor)."""
        kind = precision.split("-", 1)[1] if precision.startswith("int8-") else None
        obs = {p: OBSERVERS[kind]("uint8", symmetric=False) if kind else 0.0 for p in set(_POINTS.values())}

        def see(point, x):
            if kind:
                obs[point].update(np.ascontiguousarray(x, F32))
            else:
                obs[point] = max(obs[point], float(np.abs(x).max()))

        for i in range(0, len(images), 64):
            self.forward(np.asarray(images[i:i + 64], F32), see)
        return {p: o.qparams() for p, o in obs.items()} if kind else obs

    @property
    def nbytes(self):
        """Bytes of the weights in this precision (codes, scales, packed MX
        blocks, biases)."""
        fc = self._fc_bytes if self.precision in _MX else (
            self.fc_q.codes.nbytes + self.fc_q.qparams.scales.nbytes if self.qp else self.fc_w.nbytes)
        return sum(c.nbytes for c in self.convs.values()) + fc + self.fc_b.nbytes

    def forward(self, x, observe=None):
        """x float32 [N, 1, 8, 8] (gray levels / 16) -> logits float32 [N, 10]."""
        x = np.asarray(x)
        if x.ndim != 4 or x.shape[1:] != (1, 8, 8):
            raise ValueError(f"forward: x must have shape [N, 1, 8, 8], not {x.shape}")
        if self.qp is not None:
            return self._forward_int8(x)
        c, act = self.convs, self.act
        see = observe or (lambda point, v: None)
        x = x.reshape(len(x), 8, 8, 1)  # NHWC: one channel
        x = np.ascontiguousarray(x, act) if act == F32 else _api.astype(x, act)
        see("image", x)
        x = c["stem"](x, True, act)
        see("x1", x)
        x = self._block(x, c["block1.a"], c["block1.b"], None, see, "m1")
        see("x2", x)
        x = self._block(x, c["block2.a"], c["block2.b"], c["block2.down"], see, "m2")
        pooled = nn.global_avg_pool2d(x, layout="NHWC", dtype=F32).reshape(len(x), -1)
        see("pooled", pooled)
        return _api.matmul(pooled if act == F32 else _api.astype(pooled, act), self.fc_w.T, bias=self.fc_b,
                           out_dtype=F32)

    def _block(self, x, a, b, down, see, mid):
        m = a(x, True, self.act)
        see(mid, m)
        y = b(m, False, F32)
        s = x if down is None else down(x, False, F32)
        y += s if s.dtype == F32 else _api.astype(s, F32)  # mxp's widening: NumPy's float16 cast is a scalar loop
        np.maximum(y, 0, out=y)
        return y if self.act == F32 else _api.astype(y, self.act)

    def _forward_int8(self, x):
        """The QLinearConv chain: the stem and each block's first conv
        requantize into the next point's uint8; the residual sums, the
        pooling and the head's input are float32 (dequantized), as ONNX's
        QDQ graphs of the same model."""
        c, qp = self.convs, self.qp
        x1 = c["stem"](x.reshape(len(x), 8, 8, 1), True, None, qp["x1"])
        m1 = c["block1.a"](x1, True, None, qp["m1"])
        y = c["block1.b"](m1, False, None)
        y += self._deq(x1, qp["x1"])
        np.maximum(y, 0, out=y)
        x2 = _quant.quantize(y, qparams=qp["x2"]).codes
        m2 = c["block2.a"](x2, True, None, qp["m2"])
        y = c["block2.b"](m2, False, None)
        y += c["block2.down"](x2, False, None)
        np.maximum(y, 0, out=y)
        pooled = nn.global_avg_pool2d(y, layout="NHWC", dtype=F32).reshape(len(y), -1)
        return _quant.qlinear(pooled, self.fc_q, self.fc_b, x_qparams=qp["pooled"])

    @staticmethod
    def _deq(codes, q):
        return (codes.astype(F32) - np.float32(q.zero_points[0])) * np.float32(q.scales[0])


def load(path=None, precision="fp32", **kw):
    """CNN(read_weights(path), precision, **kw): the committed weights by default."""
    return CNN(read_weights(path), precision, **kw)


def torch_module(tensors):
    """The same network as a torch module in eval mode (scripts/train-cnn.py's
    Net, which trained it) holding tensors: the oracle of the tests and the
    torch rows of the table.  Needs torch and the source tree."""
    import torch
    spec = importlib.util.spec_from_file_location("train_cnn", os.path.join(_root(), "scripts", "train-cnn.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    net = mod.Net()
    net.load_state_dict({k: torch.from_numpy(np.array(v, np.float32)) for k, v in tensors.items()}, strict=False)
    return net.eval()

"""Hostile arguments, continued (see test_hostile.py): mxp.nn's convolution,
pooling and batch norm.  Wrong types, dtypes, shapes, strides and
channels, read-only out=, every layout of the inputs equal to a contiguous
copy bit for bit, empty batches."""
import numpy as np
import pytest

import mxp
import hostile
from hostile import case, raises, same_on_layouts
from mxp import nn

BF = mxp.bfloat16
X = np.linspace(-3, 3, 2 * 4 * 6 * 5, dtype=np.float32).reshape(2, 4, 6, 5)
W = np.linspace(-1, 1, 6 * 4 * 3 * 3, dtype=np.float32).reshape(6, 4, 3, 3)
B = np.linspace(-1, 1, 6, dtype=np.float32)
DY = np.ones((2, 6, 4, 3), np.float32)
C4 = np.ones(4, np.float32)


def readonly(a):
    a = np.array(a)
    a.flags.writeable = False
    return a


raises("nn.conv2d(str)", "nn.conv2d", TypeError, nn.conv2d, "abc", W)
raises("nn.conv2d(channels 4 for weights of 3)", "nn.conv2d", ValueError, nn.conv2d, X, W[:, :3])
raises("nn.conv2d(groups=3)", "nn.conv2d", ValueError, nn.conv2d, X, W, groups=3)
raises("nn.conv2d(stride=0)", "nn.conv2d", ValueError, nn.conv2d, X, W, stride=0)
raises("nn.conv2d(stride=(1, 2, 3))", "nn.conv2d", ValueError, nn.conv2d, X, W, stride=(1, 2, 3))
raises("nn.conv2d(padding=2**70)", "nn.conv2d", (ValueError, OverflowError), nn.conv2d, X, W, padding=2**70)
raises("nn.conv2d(dilation=2**62)", "nn.conv2d", OverflowError, nn.conv2d, X, W, dilation=2**62)
raises("nn.conv2d(kernel over the input)", "nn.conv2d", ValueError, nn.conv2d, X, np.ones((1, 4, 7, 1), np.float32))
raises("nn.conv2d(3-d x)", "nn.conv2d", ValueError, nn.conv2d, X[0], W)
raises("nn.conv2d(int x)", "nn.conv2d", TypeError, nn.conv2d, X.astype(np.int8), W)
raises("nn.conv2d(bias of 4)", "nn.conv2d", ValueError, nn.conv2d, X, W, C4)
raises("nn.conv2d(activation='tanh')", "nn.conv2d", ValueError, nn.conv2d, X, W, activation="tanh")
raises("nn.conv2d(clamp=(1, 0))", "nn.conv2d", ValueError, nn.conv2d, X, W, clamp=(1, 0))
raises("nn.conv2d(layout='CHW')", "nn.conv2d", ValueError, nn.conv2d, X, W, layout="CHW")
XU8, WS8 = np.arange(2 * 4 * 6 * 5, dtype=np.uint8).reshape(2, 4, 6, 5), np.ones((6, 4, 3, 3), np.int8)
raises("nn.conv2d(w_zero_point per channel)", "nn.conv2d", TypeError, nn.conv2d, XU8, WS8,
       w_zero_point=np.array([1, 2]))
raises("nn.conv2d(x_zero_point=[3])", "nn.conv2d", TypeError, nn.conv2d, XU8, WS8, x_zero_point=[3])
raises("nn.conv2d(out= read-only)", "nn.conv2d", ValueError, nn.conv2d, X, W, out=readonly(DY))
raises("nn.conv2d(out= int32)", "nn.conv2d", TypeError, nn.conv2d, X, W, out=DY.astype(np.int32))
raises("nn.conv2d(dtype=int8)", "nn.conv2d", TypeError, nn.conv2d, X, W, dtype=np.int8)
raises("nn.conv1d(4-d)", "nn.conv1d", (ValueError, np.exceptions.AxisError if hasattr(np, "exceptions") else ValueError),
       nn.conv1d, X, W)
raises("nn.conv1d(layout='NHCW')", "nn.conv1d", ValueError, nn.conv1d, X[0], W[:, :, 0], layout="NHCW")
raises("nn.conv2d_backward(dy of another shape)", "nn.conv2d_backward", ValueError, nn.conv2d_backward, X, X, W)
raises("nn.conv2d_backward(int dy)", "nn.conv2d_backward", TypeError, nn.conv2d_backward, DY.astype(np.int8), X, W)
raises("nn.conv2d_backward(need=(1, 2))", "nn.conv2d_backward", TypeError, nn.conv2d_backward, DY, X, W,
       need=(1, 2))


@case("nn.conv2d, nn.conv1d, nn.conv2d_backward: every layout equals a contiguous copy, empty batch", "nn.conv2d",
      "nn.conv1d", "nn.conv2d_backward")
def _():
    same_on_layouts(lambda x, w: nn.conv2d(x, w, B, padding=1), X.astype(BF), W)
    same_on_layouts(lambda x: nn.conv2d(x, W, stride=2, activation="relu"), X)
    same_on_layouts(lambda x: nn.conv1d(x, W[:, :, 0]), X[:, :, 0])
    same_on_layouts(lambda dy, x: nn.conv2d_backward(dy, x, W)[0], DY, X)
    assert nn.conv2d(np.zeros((0, 4, 6, 5), np.float32), W).shape == (0, 6, 4, 3)


for n in ("max_pool2d", "avg_pool2d"):
    f = getattr(nn, n)
    raises(f"nn.{n}(str)", f"nn.{n}", TypeError, f, "abc", 2)
    raises(f"nn.{n}(kernel 0)", f"nn.{n}", ValueError, f, X, 0)
    raises(f"nn.{n}(kernel 7 over 6)", f"nn.{n}", ValueError, f, X, 7)
    raises(f"nn.{n}(padding over half)", f"nn.{n}", ValueError, f, X, 2, padding=2)
    raises(f"nn.{n}(3-d)", f"nn.{n}", ValueError, f, X[0], 2)
    raises(f"nn.{n}(out= read-only)", f"nn.{n}", ValueError, f, X, 2, out=readonly(np.zeros((2, 4, 3, 2), np.float32)))
    raises(f"nn.{n}(dtype=int16)", f"nn.{n}", TypeError, f, X, 2, dtype=np.int16)

    @case(f"nn.{n}: every layout equals a contiguous copy, int input", f"nn.{n}")
    def _(f=f):
        same_on_layouts(lambda x: f(x, 3, 2, 1), X.astype(BF))
        same_on_layouts(lambda x: f(x, 2, layout="NHWC"), X)
        assert f(X.astype(np.int8), 2).dtype == np.float64
raises("nn.max_pool2d(dilation=2)", "nn.max_pool2d", NotImplementedError, nn.max_pool2d, X, 2, dilation=2)
raises("nn.avg_pool2d(divisor_override=3)", "nn.avg_pool2d", NotImplementedError, nn.avg_pool2d, X, 2,
       divisor_override=3)
for n in ("max_pool2d_backward", "avg_pool2d_backward"):
    f = getattr(nn, n)
    raises(f"nn.{n}(dy of another shape)", f"nn.{n}", ValueError, f, X, X, 2)
    raises(f"nn.{n}(int x)", f"nn.{n}", TypeError, f, np.ones((2, 4, 3, 2)), X.astype(np.int8), 2)

    @case(f"nn.{n}: every layout equals a contiguous copy", f"nn.{n}")
    def _(f=f):
        same_on_layouts(lambda dy, x: f(dy, x, 2), np.ones((2, 4, 3, 2), np.float32), X)
for n in ("global_avg_pool2d", "global_max_pool2d"):
    f = getattr(nn, n)
    raises(f"nn.{n}(empty plane)", f"nn.{n}", ValueError, f, np.zeros((1, 2, 0, 3)))
    raises(f"nn.{n}(layout=1)", f"nn.{n}", ValueError, f, X, layout=1)

    @case(f"nn.{n}: every layout equals a contiguous copy", f"nn.{n}")
    def _(f=f):
        same_on_layouts(f, X.astype(BF))
raises("nn.adaptive_avg_pool2d(4 into 3)", "nn.adaptive_avg_pool2d", NotImplementedError, nn.adaptive_avg_pool2d, X,
       (4, 3))
raises("nn.adaptive_avg_pool2d(0)", "nn.adaptive_avg_pool2d", ValueError, nn.adaptive_avg_pool2d, X, 0)

raises("nn.batch_norm(no running stats, inference)", "nn.batch_norm", ValueError, nn.batch_norm, X, None, None)
raises("nn.batch_norm(one value per channel)", "nn.batch_norm", ValueError, nn.batch_norm, X[:1, :, :1, :1], None,
       None, training=True)
raises("nn.batch_norm(running_mean read-only)", "nn.batch_norm", ValueError, nn.batch_norm, X, readonly(C4), C4.copy(),
       training=True)
raises("nn.batch_norm(running_mean a list)", "nn.batch_norm", TypeError, nn.batch_norm, X, [0.0] * 4, C4, training=True)
raises("nn.batch_norm(weight of 3)", "nn.batch_norm", ValueError, nn.batch_norm, X, C4, C4, np.ones(3))
raises("nn.batch_norm(axis=4)", "nn.batch_norm", IndexError, nn.batch_norm, X, C4, C4, axis=4)
raises("nn.batch_norm(momentum=2)", "nn.batch_norm", ValueError, nn.batch_norm, X, None, None, training=True,
       momentum=2)
raises("nn.batch_norm_backward(shapes differ)", "nn.batch_norm_backward", ValueError, nn.batch_norm_backward, DY, X)
raises("nn.batch_norm_backward(int x)", "nn.batch_norm_backward", TypeError, nn.batch_norm_backward,
       X.astype(np.int8), X.astype(np.int8))
raises("nn.fold_batch_norm(var of 4 for 6)", "nn.fold_batch_norm", ValueError, nn.fold_batch_norm, W, B, None, None,
       B, C4)
raises("nn.fold_batch_norm(int weight)", "nn.fold_batch_norm", TypeError, nn.fold_batch_norm, W.astype(np.int8),
       None, None, None, B, B)


@case("nn.batch_norm, nn.batch_norm_backward, nn.fold_batch_norm: every layout equals a contiguous copy",
      "nn.batch_norm", "nn.batch_norm_backward", "nn.fold_batch_norm")
def _():
    same_on_layouts(lambda x: nn.batch_norm(x, None, None, C4, C4, training=True), X.astype(BF))
    same_on_layouts(lambda x: nn.batch_norm(x, C4, C4, axis=-1, dtype=np.float64), X.transpose(0, 2, 3, 1))
    same_on_layouts(lambda dy, x: nn.batch_norm_backward(dy, x, C4)[0], X[::-1].copy(), X)
    same_on_layouts(lambda w: nn.fold_batch_norm(w, B, B, B, B, B + 2)[0], W)


# after every case of this file is registered
@pytest.mark.parametrize("name", hostile.cases_of(__name__))
def test_hostile(name):
    hostile.run_case(name)

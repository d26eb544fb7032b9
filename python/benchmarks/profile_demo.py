"""The README's profiler example: a small mixed workload under mxp.profile()
(a float32 GEMM, bfloat16 casts, GELU, softmax, layer norm, a 3x3
convolution, many tiny calls, fresh output buffers), its table printed and
its roofline saved.

    PYTHONPATH=build/python /usr/bin/python3 python/benchmarks/profile_demo.py [docs/img/roofline.png]

Needs matplotlib for the figure (Debian's python3-matplotlib)."""
import sys

import numpy as np

import mxp

rng = np.random.default_rng(0)
a = rng.standard_normal((1024, 1024), dtype=np.float32)
x = rng.standard_normal((1 << 22,), dtype=np.float32)
h = rng.standard_normal((256, 1024), dtype=np.float32)
img = rng.standard_normal((8, 64, 56, 56), dtype=np.float32)
w = rng.standard_normal((64, 64, 3, 3), dtype=np.float32)
small = rng.standard_normal(16, dtype=np.float32)
out = np.empty(x.shape, mxp.bfloat16)
mxp.set_num_threads(1)

with mxp.profile() as p:
    for _ in range(5):
        mxp.matmul(a, a)                                      # compute-bound
    for _ in range(20):
        np.copyto(out, x, casting="unsafe")                   # float32 -> bfloat16 into one buffer
    for _ in range(10):
        mxp.nn.gelu(x)                                        # a new output each call
        mxp.nn.softmax(h, axis=-1)
        mxp.nn.layer_norm(h, (1024,))
    for _ in range(3):
        mxp.nn.conv2d(img, w, padding=1)
    for _ in range(5000):
        mxp.nn.rms_norm(small, (16,))                         # overhead-bound

print(p.table())
path = sys.argv[1] if len(sys.argv) > 1 else "roofline.png"
p.roofline(path)
print("roofline:", path)

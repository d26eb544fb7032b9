"""make bench's Python part: mxp's NumPy dtypes beside PyTorch, NumPy and
mxp's own C entry points (through ctypes on libmxp.so), in one process.

Prints medians (ms) and the ratios the Python issue sets as goals:
  bf16 a @ b, n = 1024     >= 0.9x mxp_gemm called from C
  astype f32 <-> bf16      >= 0.8x mxp_convert, >= 3x torch .to()
  bf16 add                 >= 0.5x memcpy of the same bytes
float16 add/sum beside NumPy, and float32 exp, tanh, gelu, add, sum beside
NumPy (goals: exp and gelu >= 3x, add and sum >= 1x).  "cold" is the first call in the
process (thread pool start, page faults of a new result), the rest are
medians of warm calls.  Usage: python3 bench_python.py [--quick]
"""
import ctypes
import os
import sys

import numpy as np
import timing

import mxp

try:
    import torch
except ImportError:  # the peer is optional here; make bench installs it
    torch = None

QUICK = "--quick" in sys.argv
REPS = 5 if QUICK else 15
LIB = ctypes.CDLL(os.environ.get("MXP_LIB", os.path.join(os.path.dirname(__file__), "..", "..", "build", "libmxp.so")))
F16, BF16, F32 = 10, 11, 12
BINARY_STRIDED = LIB.mxp_binary_strided
BINARY_STRIDED.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int, ctypes.c_ssize_t,
                           ctypes.c_void_p, ctypes.c_int, ctypes.c_ssize_t, ctypes.c_void_p, ctypes.c_int,
                           ctypes.c_ssize_t, ctypes.c_void_p]


def median_ms(fn, reps=REPS):
    return timing.median_ms(fn, reps)


def row(name, ms, peers, unit=""):
    parts = [f"{name:<34} {ms:9.3f} ms{unit}"]
    for label, other in peers:
        parts.append(f"{label} {other / ms:6.2f}x" if other else f"{label}    n/a")
    print("  ".join(parts))


def operands(seed, dtype):
    """2^24 values (2^22 with --quick): a and b standard normal in dtype,
    and an empty out; -> n, a, b, out."""
    n = 1 << (22 if QUICK else 24)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    return n, a, b, np.empty(n, dtype)


def tensor_bf16(a):
    return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)


def bench_matmul():
    n = 512 if QUICK else 1024
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(mxp.bfloat16)
    b = rng.standard_normal((n, n)).astype(mxp.bfloat16)
    c = np.empty((n, n), mxp.bfloat16)
    cold = timing.cold_ms(lambda: np.matmul(a, b, out=c))
    ours = median_ms(lambda: np.matmul(a, b, out=c))
    gemm = LIB.mxp_gemm
    gemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_double,
                     ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t,
                     ctypes.c_double, ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p]
    c_call = median_ms(lambda: gemm(0, 0, n, n, n, 1.0, a.ctypes.data, BF16, n, b.ctypes.data, BF16, n, 0.0,
                                    c.ctypes.data, BF16, n, None))
    th = None
    if torch is not None:
        ta, tb = tensor_bf16(a), tensor_bf16(b)
        th = median_ms(lambda: ta @ tb, reps=3)
    gflops = 2 * n**3 / (ours * 1e6)
    print(f"bfloat16 a @ b, n = {n}: {gflops:.0f} GFLOPS, cold first call {cold:.1f} ms")
    row("  np.matmul (mxp loop)", ours, [("vs C mxp_gemm:", c_call), ("vs torch:", th)])


def bench_astype():
    n = 1 << (22 if QUICK else 24)
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    out = np.empty(n, mxp.bfloat16)
    cold = timing.cold_ms(lambda: x.astype(mxp.bfloat16))
    ours_new = median_ms(lambda: x.astype(mxp.bfloat16))
    ours = median_ms(lambda: np.copyto(out, x, casting="unsafe"))
    conv = LIB.mxp_convert
    conv.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p]
    c_call = median_ms(lambda: conv(out.ctypes.data, BF16, x.ctypes.data, F32, n, None))
    th = None
    if torch is not None:
        tx = torch.from_numpy(x)
        th = median_ms(lambda: tx.to(torch.bfloat16))
    print(f"astype float32 -> bfloat16, 2^{n.bit_length() - 1} values (cold first call {cold:.1f} ms)")
    row("  np.copyto into bf16 (mxp cast)", ours, [("vs C mxp_convert:", c_call), ("vs torch .to():", th)])
    row("  x.astype(bf16), new array", ours_new, [("vs C mxp_convert:", c_call), ("vs torch .to():", th)])
    back = np.empty(n, np.float32)
    ours_b = median_ms(lambda: np.copyto(back, out, casting="unsafe"))
    c_b = median_ms(lambda: conv(back.ctypes.data, F32, out.ctypes.data, BF16, n, None))
    th_b = None
    if torch is not None:
        tb = tensor_bf16(out)
        th_b = median_ms(lambda: tb.to(torch.float32))
    row("  bfloat16 -> float32 (copyto)", ours_b, [("vs C mxp_convert:", c_b), ("vs torch .to():", th_b)])


def bench_add():
    n, a, b, out = operands(2, mxp.bfloat16)
    src = np.ones(3 * n, np.uint16)
    dst = np.empty_like(src)
    memcpy = median_ms(lambda: np.copyto(dst, src))  # 6n bytes read and written, as the add
    ours = median_ms(lambda: np.add(a, b, out=out))
    ours_new = median_ms(lambda: a + b)
    th = None
    if torch is not None:
        ta, tb, to = tensor_bf16(a), tensor_bf16(b), tensor_bf16(out)
        th = median_ms(lambda: torch.add(ta, tb, out=to))
    gbs = 6 * n / (ours * 1e6)
    print(f"bfloat16 add, 2^{n.bit_length() - 1} values: {gbs:.1f} GB/s (memcpy of the same bytes {6 * n / (memcpy * 1e6):.1f})")
    row("  np.add(a, b, out=) (mxp loop)", ours, [("vs memcpy:", memcpy), ("vs torch:", th)])
    row("  a + b, new array", ours_new, [("vs memcpy:", memcpy), ("vs torch:", th)])
    s = median_ms(lambda: np.sum(a))
    print(f"  np.sum(bfloat16), float64 accumulation: {s:.3f} ms ({2 * n / (s * 1e6):.1f} GB/s)")


def bench_float16():
    n, a, b, out = operands(3, np.float16)
    numpy_add = median_ms(lambda: np.add(a, b, out=out))
    f = BINARY_STRIDED
    ours = median_ms(lambda: f(0, n, out.ctypes.data, F16, 2, a.ctypes.data, F16, 2, b.ctypes.data, F16, 2, None))
    numpy_sum = median_ms(lambda: np.sum(a))
    s = LIB.mxp_sum_strided
    s.argtypes = [ctypes.POINTER(ctypes.c_double), ctypes.c_void_p, ctypes.c_int, ctypes.c_ssize_t, ctypes.c_size_t,
                  ctypes.c_int]
    r = ctypes.c_double()
    ours_sum = median_ms(lambda: s(ctypes.byref(r), a.ctypes.data, F16, 2, n, F32))
    print(f"float16, 2^{n.bit_length() - 1} values (NumPy's own float16 loops vs mxp's)")
    row("  add: mxp_binary_strided", ours, [("vs NumPy np.add:", numpy_add)])
    row("  sum: mxp_sum_strided", ours_sum, [("vs NumPy np.sum:", numpy_sum)])


def bench_float32():
    """The elementwise issue's goals, NumPy in the same process: float32 exp
    and gelu >= 3x NumPy's (NumPy has no gelu: its peer is the tanh form as
    NumPy users write it), float32 add and sum >= 1x."""
    n, a, b, out = operands(5, np.float32)
    un = LIB.mxp_unary_strided
    un.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int, ctypes.c_ssize_t, ctypes.c_void_p,
                   ctypes.c_int, ctypes.c_ssize_t, ctypes.c_void_p]
    bi = BINARY_STRIDED
    sm = LIB.mxp_sum_strided
    sm.argtypes = [ctypes.POINTER(ctypes.c_double), ctypes.c_void_p, ctypes.c_int, ctypes.c_ssize_t, ctypes.c_size_t,
                   ctypes.c_int]
    vm = getattr(LIB, "mxp_vector_math", None)  # absent before mxp 0.1's SLEEF path
    if vm is not None:
        vm.restype = ctypes.c_char_p
    ops = {"exp": 3, "tanh": 5, "gelu": 8, "gelu_tanh": 9}  # mxp_unary_op values

    def unary(op):
        return lambda: un(ops[op], n, out.ctypes.data, F32, 4, a.ctypes.data, F32, 4, None)

    def np_gelu():
        return 0.5 * a * (1 + np.tanh(0.7978845608 * (a + 0.044715 * a * a * a)))

    r = ctypes.c_double()
    path = vm().decode() if vm is not None else "libm"
    print(f"float32, 2^{n.bit_length() - 1} values, vector math: {path} (NumPy in this process)")
    row("  exp: mxp_unary_strided", median_ms(unary("exp")), [("vs np.exp(out=):", median_ms(
        lambda: np.exp(a, out=out)))])
    row("  tanh: mxp_unary_strided", median_ms(unary("tanh")), [("vs np.tanh(out=):", median_ms(
        lambda: np.tanh(a, out=out)))])
    g = median_ms(np_gelu)
    row("  gelu (erf): mxp_unary_strided", median_ms(unary("gelu")), [("vs NumPy tanh-form gelu:", g)])
    row("  gelu_tanh: mxp_unary_strided", median_ms(unary("gelu_tanh")), [("vs NumPy tanh-form gelu:", g)])
    row("  add: mxp_binary_strided", median_ms(lambda: bi(0, n, out.ctypes.data, F32, 4, a.ctypes.data, F32, 4,
                                                           b.ctypes.data, F32, 4, None)),
        [("vs np.add(out=):", median_ms(lambda: np.add(a, b, out=out)))])
    row("  sum (float32 acc): mxp_sum_strided", median_ms(lambda: sm(ctypes.byref(r), a.ctypes.data, F32, 4, n, F32)),
        [("vs np.sum:", median_ms(lambda: np.sum(a)))])
    row("  sum (float64 acc): mxp_sum_strided", median_ms(lambda: sm(ctypes.byref(r), a.ctypes.data, F32, 4, n,
                                                                      13)), [("vs np.sum:", median_ms(
        lambda: np.sum(a)))])


def bench_api():
    """The Python API issue's goals: float16 mxp.matmul >= 0.9x the C float32
    GEMM; int8 mxp.matmul beside torch's quantized linear; mxp.quantize per
    tensor >= 0.8x memcpy."""
    n = 512 if QUICK else 1024
    rng = np.random.default_rng(4)
    a16, b16 = rng.standard_normal((n, n)).astype(np.float16), rng.standard_normal((n, n)).astype(np.float16)
    a32, b32 = a16.astype(np.float32), b16.astype(np.float32)
    c16 = np.empty((n, n), np.float16)
    ours = median_ms(lambda: mxp.matmul(a16, b16, out=c16))
    c32 = np.empty((n, n), np.float32)
    gemm = LIB.mxp_gemm
    c_f32 = median_ms(lambda: gemm(0, 0, n, n, n, 1.0, a32.ctypes.data, F32, n, b32.ctypes.data, F32, n, 0.0,
                                   c32.ctypes.data, F32, n, None))
    m = 128 if QUICK else 256  # NumPy's float16 matmul is ~0.4 GFLOPS: a smaller size
    np16 = median_ms(lambda: a16[:m, :m] @ b16[:m, :m], reps=3) * (n / m) ** 3
    print(f"float16 mxp.matmul, n = {n}: {2 * n**3 / (ours * 1e6):.0f} GFLOPS")
    row("  mxp.matmul(float16)", ours, [("vs C float32 mxp_gemm:", c_f32), ("vs NumPy float16 @ (scaled):", np16)])

    x = rng.standard_normal((n, n)).astype(np.float32)
    w = rng.standard_normal((n, n)).astype(np.float32)
    qx, qw = mxp.quantize(x, "uint8", symmetric=False), mxp.quantize(w, "int8", axis=1)
    y = np.empty((n, n), np.float32)
    ours_q = median_ms(lambda: mxp.matmul(qx, qw, out=y))
    th = None
    engines = torch.backends.quantized.supported_engines if torch is not None else []
    engine = next((e for e in ("fbgemm", "x86", "onednn", "qnnpack") if e in engines), None)
    if engine is not None:
        torch.backends.quantized.engine = engine
        tw = torch.quantize_per_channel(torch.from_numpy(w.T.copy()), torch.from_numpy(qw.qparams.scales.astype(
            np.float64)), torch.zeros(n, dtype=torch.int64), 0, torch.qint8)
        packed = torch.ops.quantized.linear_prepack(tw, None)
        tx = torch.quantize_per_tensor(torch.from_numpy(x), qx.scale, qx.zero_point, torch.quint8)
        th = median_ms(lambda: torch.ops.quantized.linear(tx, packed, 1.0, 0).dequantize(), reps=5)
    print(f"int8 mxp.matmul (uint8 x int8 -> float32), n = {n}: {2 * n**3 / (ours_q * 1e6):.0f} GOPS")
    row("  mxp.matmul(quantized)", ours_q, [("vs torch quantized linear:", th)])

    # a dynamic quantized linear layer: x [m, K] float32 quantized every call
    m, k = (64, 512) if QUICK else (128, 1024)
    xl = rng.standard_normal((m, k)).astype(np.float32)
    wl = (rng.standard_normal((k, k)) * 0.05).astype(np.float32)
    bl = rng.standard_normal(k).astype(np.float32)
    wq = mxp.quantize_weight(wl).prepack()  # kept packed, as torch's layer keeps its weight prepacked
    ours_l = median_ms(lambda: mxp.qlinear(xl, wq, bl))
    f32_l = median_ms(lambda: mxp.matmul(xl, wl.T, bias=bl))  # the float32 layer on mxp's GEMM
    tl = None
    if engine is not None:
        layer = torch.ao.nn.quantized.dynamic.Linear(k, k, dtype=torch.qint8)
        tx = torch.from_numpy(xl)
        tl = median_ms(lambda: layer(tx))  # torch's own thread count (1 on the 2-core machine: see docs/quant.md)
    print(f"mxp.qlinear (dynamic int8 linear layer), x [{m}, {k}], W [{k}, {k}] per channel: "
          f"{2 * m * k * k / (ours_l * 1e6):.0f} GOPS, {mxp.get_num_threads()} mxp threads"
          + (f", {torch.get_num_threads()} torch threads" if torch is not None else ""))
    row("  mxp.qlinear", ours_l, [("vs torch dynamic quantized Linear:", tl),
                                  ("vs float32 mxp.matmul + bias:", f32_l)])

    big = rng.standard_normal(1 << (22 if QUICK else 24)).astype(np.float32)
    # quantize reads 4n bytes and writes n: memcpy of 2.5n bytes moves as many
    srcb = np.ones(big.size * 5 // 2, np.uint8)
    dst = np.empty_like(srcb)
    memcpy = median_ms(lambda: np.copyto(dst, srcb))
    qp = mxp.calibrate(big, "int8")
    ours_quant = median_ms(lambda: mxp.quantize(big, qparams=qp))
    codes = np.empty(big.shape, np.int8)
    ours_into = median_ms(lambda: mxp.quantize(big, qparams=qp, out=codes))
    tq = None
    if torch is not None:
        tb = torch.from_numpy(big)
        tq = median_ms(lambda: torch.quantize_per_tensor(tb, qp.scale, 0, torch.qint8))
    print(f"mxp.quantize per tensor (int8, given qparams), 2^{big.size.bit_length() - 1} values, new codes each call")
    row("  mxp.quantize", ours_quant, [("vs memcpy of the bytes:", memcpy), ("vs torch.quantize_per_tensor:", tq)])
    row("  mxp.quantize(out=codes)", ours_into, [("vs memcpy of the bytes:", memcpy),
                                                  ("vs torch.quantize_per_tensor:", tq)])


if __name__ == "__main__":
    print(f"mxp {mxp.__version__} Python benchmark ({'quick' if QUICK else 'full'}); ratios > 1: mxp is faster")
    bench_matmul()
    bench_astype()
    bench_add()
    bench_float16()
    bench_float32()
    bench_api()

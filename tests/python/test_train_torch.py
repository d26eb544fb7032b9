"""mxp's training layer (include/mxp/train.h) against PyTorch and NumPy,
through ctypes on libmxp.so.

- The loss scaler against torch.cuda.amp.GradScaler's own Python code
  (step skipping, found-inf bookkeeping, update, state_dict) run on CPU
  tensors.  Its two CUDA-only kernels are replaced by ports of
  aten/src/ATen/native/cuda/AmpKernels.cu (_amp_update_scale_ and
  _amp_foreach_non_finite_check_and_unscale_), and its CUDA assertions are
  lifted, nothing else.  Scales and growth trackers must match exactly;
  gradients unscaled in place bit for bit; parameters to float32 rounding
  (torch's SGD update may use FMA).
- SGD (momentum, dampening, Nesterov, weight decay), Adam and AdamW against
  torch.optim on float32 parameters; a bfloat16 parameter's float32 master
  against torch's float32 parameter fed the same bfloat16 gradients.
- Clipping against torch.nn.utils.clip_grad_norm_.
- The stability monitor's counts against NumPy (float16) and torch
  (bfloat16) conversions.

Run by ctest (pytest_train) with MXP_LIB naming libmxp.so; by hand:
    MXP_LIB=build/libmxp.so /usr/bin/python3 -m pytest -q tests/python/test_train_torch.py
"""
import ctypes
import os
import sys
import warnings
from ctypes import byref, c_bool, c_double, c_void_p

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxp_ctypes as mx  # noqa: E402

torch = pytest.importorskip("torch")
lib = mx.lib

# The binding's names (generated from include/mxp/train.h).
SGD, ADAM, ADAMW = mx.OPTIM_SGD, mx.OPTIM_ADAM, mx.OPTIM_ADAMW
ROLE_WEIGHT, ROLE_ACTIVATION, ROLE_GRADIENT = mx.ROLE_WEIGHT, mx.ROLE_ACTIVATION, mx.ROLE_GRADIENT
OptimizerOpts, ScalerOpts, ScalerState = mx.abi.mxp_optimizer_opts, mx.abi.mxp_loss_scaler_opts, mx.abi.mxp_loss_scaler_state
MonitorOpts, TensorStats = mx.abi.mxp_monitor_opts, mx.abi.mxp_tensor_stats


class Optimizer:
    """An mxp optimizer over NumPy buffers (wrapped, not copied)."""

    def __init__(self, kind, **opts):
        self.ptr = c_void_p()
        self.opts = OptimizerOpts(**opts)
        mx.check(lib.mxp_optimizer_create(byref(self.ptr), kind, byref(self.opts)), "mxp_optimizer_create")
        self.arrays = []

    def add(self, param, grad, dtype=None, grad_dtype=None):
        p = mx.from_numpy(param, dtype=dtype)
        g = mx.from_numpy(grad, dtype=grad_dtype)
        mx.check(lib.mxp_optimizer_add_param(self.ptr, p.ptr, g.ptr, None), "mxp_optimizer_add_param")
        self.arrays += [p, g]

    def step(self):
        mx.check(lib.mxp_optimizer_step(self.ptr), "mxp_optimizer_step")

    def master(self, i, shape):
        a = lib.mxp_optimizer_master(self.ptr, i)
        buf = (ctypes.c_float * int(np.prod(shape))).from_address(lib.mxp_array_data(a))
        return np.frombuffer(buf, dtype=np.float32).reshape(shape).copy()

    def __del__(self):
        lib.mxp_optimizer_free(self.ptr)


# ---- GradScaler on the CPU ---------------------------------------------------


def _amp_update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """Port of _amp_update_scale_cuda_kernel: float32 scale, double factors."""
    s = float(scale.item())
    if found_inf.item() > 0:
        s, t = float(np.float32(s * backoff_factor)), 0
    else:
        t = int(growth_tracker.item()) + 1
        if t == growth_interval:
            with np.errstate(over="ignore"):
                grown = np.float32(s * growth_factor)
            if np.isfinite(grown):
                s = float(grown)
            t = 0
    scale.fill_(s)
    growth_tracker.fill_(t)
    return scale


def _amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale):
    """Port of the unscale kernel: any inf/NaN sets found_inf; every value is
    multiplied by inv_scale in float32 (opmath for float32)."""
    for g in grads:
        if not bool(torch.isfinite(g).all()):
            found_inf.fill_(1.0)
        g.mul_(inv_scale)


class _Replicator:
    """torch's _MultiDeviceReplicator without its CUDA assertion."""

    def __init__(self, master):
        self.master = master
        self._per_device_tensors = {}

    def get(self, device):
        return self._per_device_tensors.setdefault(device, self.master.clone())


@pytest.fixture
def cpu_gradscaler(monkeypatch):
    import torch.cuda.amp.grad_scaler as gs
    monkeypatch.setattr(gs, "amp_definitely_not_available", lambda: False)
    monkeypatch.setattr(gs, "_MultiDeviceReplicator", _Replicator)
    monkeypatch.setattr(torch, "_amp_update_scale_", _amp_update_scale_, raising=False)
    monkeypatch.setattr(torch, "_amp_foreach_non_finite_check_and_unscale_",
                        _amp_foreach_non_finite_check_and_unscale_, raising=False)

    def make(**kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sc = gs.GradScaler(**kw)
        sc._lazy_init_scale_growth_tracker(torch.device("cpu"))
        return sc
    return make


SCALER_CASES = [
    dict(init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=3),
    dict(init_scale=1000.0, growth_factor=3.0, backoff_factor=0.25, growth_interval=5),
    dict(init_scale=2.0**120, growth_factor=4.0, backoff_factor=0.5, growth_interval=1),
]


@pytest.mark.parametrize("case", range(len(SCALER_CASES)))
@pytest.mark.parametrize("mode", ["fused", "unscale"])
def test_loss_scaler_matches_gradscaler(cpu_gradscaler, case, mode):
    kw = SCALER_CASES[case]
    sc = cpu_gradscaler(**kw)
    shapes = [(4, 3), (7,)]
    r = np.random.default_rng(10 + case)
    init = [r.standard_normal(s).astype(np.float32) for s in shapes]
    tparams = [torch.nn.Parameter(torch.tensor(w)) for w in init]
    topt = torch.optim.SGD(tparams, lr=0.01)

    scaler = c_void_p()
    so = ScalerOpts(init_scale=kw["init_scale"], growth_factor=kw["growth_factor"],
                    backoff_factor=kw["backoff_factor"], growth_interval=kw["growth_interval"])
    mx.check(lib.mxp_loss_scaler_create(byref(scaler), byref(so)), "mxp_loss_scaler_create")
    opt = Optimizer(SGD, lr=0.01)
    mparams = [w.copy() for w in init]
    mgrads = [np.zeros(s, dtype=np.float32) for s in shapes]
    for w, g in zip(mparams, mgrads):
        opt.add(w, g)
    garrays = [mx.from_numpy(g) for g in mgrads]
    skipped = 0
    try:
        for step in range(150):
            scale = sc.get_scale()
            grads = [(r.standard_normal(s) * (scale / 8)).astype(np.float32) for s in shapes]  # finite
            if r.random() < 0.2:
                k = int(r.integers(2))
                grads[k].flat[int(r.integers(grads[k].size))] = [np.inf, -np.inf, np.nan][step % 3]
                skipped += 1
            for p, g in zip(tparams, grads):
                p.grad = torch.tensor(g)
            for mg, g in zip(mgrads, grads):
                mg[...] = g
            if mode == "unscale":
                sc.unscale_(topt)
                for a in garrays:
                    mx.check(lib.mxp_loss_scaler_unscale(scaler, a.ptr), "unscale")
                for p, mg in zip(tparams, mgrads):  # in place, bit for bit
                    assert np.array_equal(p.grad.numpy(), mg, equal_nan=True)
            sc.step(topt)
            stepped = c_bool()
            mx.check(lib.mxp_loss_scaler_step(scaler, opt.ptr, byref(stepped)), "step")
            sc.update()
            mx.check(lib.mxp_loss_scaler_update(scaler), "update")
            st = ScalerState()
            mx.check(lib.mxp_loss_scaler_get_state(scaler, byref(st)), "get_state")
            sd = sc.state_dict()
            assert st.scale == sd["scale"], step
            assert st.growth_tracker == sd["_growth_tracker"], step
            assert st.skipped == skipped and st.steps == step + 1
            for p, w in zip(tparams, mparams):
                np.testing.assert_allclose(w, p.detach().numpy(), rtol=1e-6, atol=1e-7)
    finally:
        lib.mxp_loss_scaler_free(scaler)
    assert 10 < skipped < 60


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_unscale_low_precision_rounds_once(dtype):
    """float16/bfloat16 gradients: widened, times float32(1/scale), rounded once."""
    r = np.random.default_rng(3)
    g32 = (r.standard_normal(4096) * 1000).astype(np.float32)
    g32[::97] *= 1e-6
    tdt = getattr(torch, dtype)
    g = torch.tensor(g32).to(tdt)
    inv = np.float32(1.0 / 3.0)
    want = (g.float() * torch.tensor(inv)).to(tdt)
    bits = g.view(torch.int16).numpy().view(np.uint16).copy()
    scaler = c_void_p()
    mx.check(lib.mxp_loss_scaler_create(byref(scaler), byref(ScalerOpts(init_scale=3.0))), "create")
    a = mx.from_numpy(bits, dtype=mx.F16 if dtype == "float16" else mx.BF16)
    mx.check(lib.mxp_loss_scaler_unscale(scaler, a.ptr), "unscale")
    assert not lib.mxp_loss_scaler_found_inf(scaler)
    lib.mxp_loss_scaler_free(scaler)
    assert np.array_equal(bits, want.view(torch.int16).numpy().view(np.uint16))


# ---- optimizers ------------------------------------------------------------------

OPTIMIZER_CASES = [
    (SGD, dict(lr=0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    (SGD, dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    (SGD, dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.001),
     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.001)),
    (ADAM, dict(lr=0.01, weight_decay=0.05), lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.05)),
    (ADAM, dict(lr=0.003, beta1=0.8, beta2=0.99, eps=1e-6),
     lambda p: torch.optim.Adam(p, lr=0.003, betas=(0.8, 0.99), eps=1e-6)),
    (ADAMW, dict(lr=0.01, weight_decay=0.05), lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.05)),
]


@pytest.mark.parametrize("case", range(len(OPTIMIZER_CASES)))
def test_optimizer_matches_torch(case):
    kind, opts, make = OPTIMIZER_CASES[case]
    r = np.random.default_rng(20 + case)
    shapes = [(6, 9), (5,)]
    init = [r.standard_normal(s).astype(np.float32) for s in shapes]
    tparams = [torch.nn.Parameter(torch.tensor(w)) for w in init]
    topt = make(tparams)
    opt = Optimizer(kind, **opts)
    params = [w.copy() for w in init]
    grads = [np.zeros(s, dtype=np.float32) for s in shapes]
    for w, g in zip(params, grads):
        opt.add(w, g)
    for step in range(10):
        for p, g in zip(tparams, grads):
            g[...] = r.standard_normal(g.shape).astype(np.float32)
            p.grad = torch.tensor(g)
        topt.step()
        opt.step()
        for p, w in zip(tparams, params):
            np.testing.assert_allclose(w, p.detach().numpy(), rtol=2e-6, atol=2e-7, err_msg="step %d" % step)


def test_bf16_master_weights_match_torch_float32_param():
    """A bfloat16 parameter whose float32 master mxp keeps, against a torch
    float32 parameter fed the same (bfloat16) gradients: the masters agree,
    and the parameter is the master rounded to nearest even."""
    r = np.random.default_rng(5)
    w0 = r.standard_normal(500).astype(np.float32)
    tp = torch.nn.Parameter(torch.tensor(w0))
    topt = torch.optim.AdamW([tp], lr=0.01, weight_decay=0.01)
    opt = Optimizer(ADAMW, lr=0.01, weight_decay=0.01)
    wb = torch.tensor(w0).to(torch.bfloat16)
    bits = wb.view(torch.int16).numpy().view(np.uint16).copy()
    gbits = np.zeros(500, dtype=np.uint16)
    opt.add(bits, gbits, dtype=mx.BF16, grad_dtype=mx.BF16)
    tp.data = wb.float()  # mxp's master starts as the bfloat16 parameter widened
    for step in range(8):
        g = torch.tensor(r.standard_normal(500).astype(np.float32)).to(torch.bfloat16)
        gbits[...] = g.view(torch.int16).numpy().view(np.uint16)
        tp.grad = g.float()
        topt.step()
        opt.step()
        master = opt.master(0, (500,))
        np.testing.assert_allclose(master, tp.detach().numpy(), rtol=2e-6, atol=2e-7)
        rounded = torch.tensor(master).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
        assert np.array_equal(bits, rounded)


@pytest.mark.parametrize("max_norm", [0.5, 3.0, 1e6])
def test_clip_grad_norm_matches_torch(max_norm):
    r = np.random.default_rng(int(max_norm * 10) % 1000)
    grads = [r.standard_normal(s).astype(np.float32) for s in [(8, 3), (17,), (2, 2, 2)]]
    tparams = [torch.nn.Parameter(torch.zeros(g.shape)) for g in grads]
    for p, g in zip(tparams, grads):
        p.grad = torch.tensor(g)
    tnorm = float(torch.nn.utils.clip_grad_norm_(tparams, max_norm))
    arrays = [mx.from_numpy(g) for g in grads]
    ptrs = (c_void_p * len(arrays))(*[a.ptr for a in arrays])
    norm = c_double()
    mx.check(lib.mxp_clip_grad_norm(ptrs, len(arrays), max_norm, byref(norm)), "mxp_clip_grad_norm")
    assert norm.value == pytest.approx(tnorm, rel=1e-6)
    for p, g in zip(tparams, grads):
        np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-6, atol=1e-9)


# ---- the monitor -------------------------------------------------------------------


def monitor_record(x, target, role=ROLE_ACTIVATION):
    m = c_void_p()
    mx.check(lib.mxp_monitor_create(byref(m), byref(MonitorOpts(target=target))), "mxp_monitor_create")
    s = TensorStats()
    try:
        a = mx.from_numpy(x)
        mx.check(lib.mxp_monitor_record(m, 3, b"x", role, a.ptr, byref(s)), "mxp_monitor_record")
    finally:
        lib.mxp_monitor_free(m)
    return s


def special_values(seed, n=50000, dtype=np.float32):
    r = np.random.default_rng(seed)
    x = (np.exp2(r.uniform(-45, 25, n)) * r.choice([-1, 1], n)).astype(dtype)
    x[r.integers(0, n, 40)] = np.nan
    x[r.integers(0, n, 30)] = np.inf
    x[r.integers(0, n, 30)] = -np.inf
    x[r.integers(0, n, 200)] = 0
    x[:6] = [65504, 65519.996, 65520, -65536, 2.0**-25, 2.0**-24 * 0.5000001]
    return x


def expected_counts(x, rounded, min_normal):
    finite = np.isfinite(x)
    nonzero = finite & (x != 0)
    y = rounded.astype(np.float64)
    return dict(nan=int(np.isnan(x).sum()), inf=int(np.isinf(x).sum()), zeros=int((finite & (x == 0)).sum()),
                overflow=int((finite & ~np.isfinite(y)).sum()), underflow=int((nonzero & (y == 0)).sum()),
                subnormal=int((nonzero & (y != 0) & (np.abs(y) < min_normal)).sum()))


def check_stats(s, x, want):
    for k, v in want.items():
        assert getattr(s, k) == v, k
    f = x[np.isfinite(x)].astype(np.float64)
    assert s.count == x.size
    assert s.norm == pytest.approx(np.sqrt(np.sum(f * f)), rel=1e-12)
    assert s.max_abs == np.abs(f).max()
    assert s.min_abs == np.abs(f[f != 0]).min()
    assert s.overflow_share == pytest.approx(want["overflow"] / f.size, rel=1e-15)
    assert s.underflow_share == pytest.approx(want["underflow"] / np.count_nonzero(f), rel=1e-15)


def test_monitor_counts_match_numpy_float16():
    x = special_values(1)
    with np.errstate(over="ignore"):
        rounded = x.astype(np.float16)
    want = expected_counts(x, rounded, 2.0**-14)
    assert want["overflow"] > 1000 and want["underflow"] > 1000 and want["subnormal"] > 100
    check_stats(monitor_record(x, mx.F16), x, want)


def test_monitor_counts_match_torch_bfloat16():
    x = special_values(2)
    x[6:9] = [3.3895e38, 3.4e38, -3.39e38]  # around bfloat16's max
    x[9:12] = [1e-40, 4.6e-41, 9e-41]        # around half of its smallest subnormal
    rounded = torch.tensor(x).to(torch.bfloat16).float().numpy()
    want = expected_counts(x, rounded, 2.0**-126)
    check_stats(monitor_record(x, mx.BF16, ROLE_GRADIENT), x, want)


def test_monitor_float64_input_and_float32_target():
    r = np.random.default_rng(7)
    x = np.exp2(r.uniform(-160, 140, 20000)) * r.choice([-1, 1], 20000)
    with np.errstate(over="ignore", under="ignore"):
        rounded = x.astype(np.float32)
    want = expected_counts(x, rounded, 2.0**-126)
    assert want["overflow"] > 0 and want["underflow"] > 0
    check_stats(monitor_record(x, mx.F32, ROLE_WEIGHT), x, want)

"""The training layer from Python: the loss scaler's rules against a port of
GradScaler's update rule, unscaling, the optimizers against float64
references and torch.optim, master weights, clipping, the monitor, the
autocast table, bad input and reference counts."""
import gc
import sys

import numpy as np
import pytest

import mxp

f32 = np.float32


def ref_update(scale, tracker, found_inf, growth, backoff, interval):
    """torch's _amp_update_scale_ (aten/src/ATen/native/cuda/AmpKernels.cu),
    in float32 as its scale tensor is."""
    if found_inf:
        return f32(f32(scale) * f32(backoff)), 0
    tracker += 1
    if tracker == interval:
        grown = f32(f32(scale) * f32(growth))
        return (grown if np.isfinite(grown) else f32(scale)), 0
    return f32(scale), tracker


@pytest.mark.parametrize("fused", [False, True])
def test_scaler_follows_gradscaler_rules_step_by_step(fused):
    growth, backoff, interval = 2.0, 0.5, 3
    s = mxp.LossScaler(1024.0, growth, backoff, interval)
    p = np.zeros(4, f32)
    opt = mxp.SGD([p], lr=1.0)
    scale, tracker, skipped = f32(1024.0), 0, 0
    bad = {2, 3, 9, 10, 11, 17}
    for step in range(24):
        g = np.full(4, scale, f32)  # d(loss * scale) of a loss with gradient 1
        if step in bad:
            g[step % 4] = np.inf if step % 2 else np.nan
        opt.grads[0][...] = g
        if not fused:
            assert s.unscale_(opt) == (step in bad)
        before = p.copy()
        stepped = s.step(opt)
        assert stepped == (step not in bad) and s.found_inf == (step in bad)
        if stepped:
            np.testing.assert_array_equal(p, before - 1)  # the gradient unscaled to 1 exactly
        else:
            np.testing.assert_array_equal(p, before)
        s.update()
        skipped += step in bad
        scale, tracker = ref_update(scale, tracker, step in bad, growth, backoff, interval)
        assert s.state_dict() == {"scale": float(scale), "growth_tracker": tracker, "steps": step + 1,
                                  "skipped": skipped}
        assert not s.found_inf
    assert s.skipped == len(bad) and s.steps == 24


def test_scaler_growth_is_refused_at_inf_and_static_mode_stays():
    big = float(np.finfo(f32).max) / 1.5
    s = mxp.LossScaler(big, growth_interval=1)
    s.check(np.ones(2))
    s.update()
    assert s.scale == float(f32(big))  # growth would give inf: the scale stays
    st = mxp.LossScaler(256.0, growth_interval=1, static=True)
    for bad in (False, True, False):
        assert st.check(np.array([np.inf if bad else 1.0])) == bad
        st.update()
        assert st.scale == 256.0
    assert st.skipped == 1


def test_scaler_state_dict_round_trips():
    s = mxp.LossScaler(2.0**10, growth_interval=5)
    for _ in range(3):
        s.update()
    d = s.state_dict()
    t = mxp.LossScaler(2.0**10, growth_interval=5)
    t.load_state_dict(d)
    assert t.state_dict() == d == {"scale": 1024.0, "growth_tracker": 3, "steps": 3, "skipped": 0}
    with pytest.raises(ValueError):
        t.load_state_dict(dict(d, growth_tracker=5))  # outside [0, interval)
    with pytest.raises(ValueError, match="lacks"):
        t.load_state_dict({"scale": 1.0})
    with pytest.raises(TypeError):
        t.load_state_dict([1.0])
    assert t.state_dict() == d


@pytest.mark.parametrize("dtype", [np.float16, mxp.bfloat16, np.float32, np.float64])
def test_unscale_divides_exactly_and_finds_inf_nan(dtype):
    scale = 3.0 * 2**12  # 1/scale is not a power of two: one rounding shows
    s = mxp.LossScaler(scale)
    inv = f32(1.0) / f32(scale)
    g = (np.random.default_rng(1).standard_normal(1000) * 100).astype(dtype)
    if dtype == np.float64:
        want = g * np.float64(inv)
    else:
        want = (g.astype(f32) * inv).astype(dtype)
    got = g.copy()
    assert s.unscale_([got]) is False
    np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
    for special in (np.inf, -np.inf, np.nan):
        s.update()
        h = g.copy()
        h[7] = special
        assert s.unscale_(h) is True and s.found_inf


def ref_sgd(w, gs, lr, momentum=0.0, dampening=0.0, nesterov=False, wd=0.0):
    w, b = w.astype(np.float64), None
    for g in gs:
        d = g + wd * w
        if momentum:
            b = d if b is None else momentum * b + (1 - dampening) * d
            d = d + momentum * b if nesterov else b
        w = w - lr * d
    return w


def ref_adam(w, gs, lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, decoupled=False):
    w, m, v = w.astype(np.float64), 0.0, 0.0
    for t, g in enumerate(gs, 1):
        if decoupled:
            w = w * (1 - lr * wd)
        else:
            g = g + wd * w
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - lr / (1 - b1**t) * m / (np.sqrt(v) / np.sqrt(1 - b2**t) + eps)
    return w


def _run(opt_cls, w0, gs, **kw):
    p = w0.copy()
    opt = opt_cls([p], **kw)
    for g in gs:
        opt.step([g])
    return p, opt


@pytest.fixture
def problem():
    rng = np.random.default_rng(5)
    w0 = rng.standard_normal(257).astype(f32)
    gs = [rng.standard_normal(257).astype(f32) for _ in range(6)]
    return w0, gs


def test_sgd_against_float64(problem):
    w0, gs = problem
    for kw, rkw in [({}, {}), (dict(momentum=0.9, dampening=0.1, weight_decay=0.01),
                               dict(momentum=0.9, dampening=0.1, wd=0.01)),
                    (dict(momentum=0.9, nesterov=True), dict(momentum=0.9, nesterov=True))]:
        p, opt = _run(mxp.SGD, w0, gs, lr=0.05, **kw)
        np.testing.assert_allclose(p, ref_sgd(w0, gs, 0.05, **rkw), rtol=1e-5, atol=1e-6)
        assert opt.steps == 6 and opt.lr == 0.05


def test_adam_and_adamw_against_float64(problem):
    w0, gs = problem
    p, _ = _run(mxp.Adam, w0, gs, lr=0.01, weight_decay=0.1)
    np.testing.assert_allclose(p, ref_adam(w0, gs, 0.01, wd=0.1), rtol=1e-5, atol=1e-6)
    p, _ = _run(mxp.AdamW, w0, gs, lr=0.01, betas=(0.8, 0.99), eps=1e-6)
    np.testing.assert_allclose(p, ref_adam(w0, gs, 0.01, 0.8, 0.99, 1e-6, 0.01, True), rtol=1e-5, atol=1e-6)


def test_optimizers_against_torch_optim(problem):
    torch = pytest.importorskip("torch")
    w0, gs = problem
    cases = [(mxp.SGD, torch.optim.SGD, dict(lr=0.05, momentum=0.9, dampening=0.2, weight_decay=0.01)),
             (mxp.SGD, torch.optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True)),
             (mxp.Adam, torch.optim.Adam, dict(lr=0.01, weight_decay=0.1)),
             (mxp.AdamW, torch.optim.AdamW, dict(lr=0.01, weight_decay=0.05))]
    for ours, theirs, kw in cases:
        p, _ = _run(ours, w0, gs, **kw)
        t = torch.tensor(w0, requires_grad=True)
        topt = theirs([t], **kw)
        for g in gs:
            t.grad = torch.tensor(g)
            topt.step()
        np.testing.assert_allclose(p, t.detach().numpy(), rtol=2e-6, atol=2e-7, err_msg=str((ours, kw)))


def test_bfloat16_parameter_with_a_float32_master():
    w0 = np.full(64, 1.0, f32)
    p = np.zeros(64, mxp.bfloat16)
    opt = mxp.SGD([p], lr=1.0, master_init=[w0])
    np.testing.assert_array_equal(p.astype(f32), w0)
    g = np.full(64, 1e-4, mxp.bfloat16)  # far below half an ulp of bfloat16 at 1 (2^-8)
    for _ in range(100):
        opt.step([g])
    master = opt.master(0)
    assert master.dtype == f32
    want = ref_sgd(w0, [g.astype(np.float64)] * 100, 1.0)
    np.testing.assert_allclose(master, want, rtol=1e-6)
    np.testing.assert_array_equal(p, master.astype(mxp.bfloat16))  # one rounding of the master
    assert p[0] != mxp.bfloat16(1.0)  # the updates accumulated
    # without a master, nearest rounding loses every update
    q = np.ones(64, mxp.bfloat16)
    nm = mxp.SGD([q], lr=1.0, master=False)
    for _ in range(100):
        nm.step([g])
    assert np.all(q == mxp.bfloat16(1.0))
    # stochastic rounding keeps them on average (docs/train.md: 1.01 +- 1e-3)
    r = np.ones(4096, mxp.bfloat16)
    sr = mxp.SGD([r], lr=1.0, master=False, rounding="stochastic", seed=7)
    for _ in range(100):
        sr.step([np.full(4096, -1e-4, f32)])
    assert abs(r.astype(np.float64).mean() - 1.01) < 1e-3


def test_fused_scaled_step_equals_unscaled_gradients(problem):
    w0, gs = problem
    a, b = w0.copy(), w0.copy()
    oa, ob = mxp.SGD([a], lr=0.1), mxp.SGD([b], lr=0.1)
    s = mxp.LossScaler(2.0**8)
    for g in gs:
        assert s.step(oa, [g * f32(256)])
        s.update()
        ob.step([g])
    np.testing.assert_array_equal(a, b)


def test_clip_grad_norm_against_numpy():
    rng = np.random.default_rng(2)
    gs = [rng.standard_normal(100).astype(f32), rng.standard_normal((3, 7)).astype(np.float64)]
    norm = np.sqrt(sum(np.sum(g.astype(np.float64) ** 2) for g in gs))
    orig = [g.copy() for g in gs]
    assert mxp.clip_grad_norm(gs, 1.0) == pytest.approx(norm, rel=1e-12)
    c = 1.0 / (norm + 1e-6)
    np.testing.assert_array_equal(gs[0], (orig[0].astype(np.float64) * c).astype(f32))  # rounded once
    np.testing.assert_allclose(gs[1], orig[1] * c, rtol=1e-7)
    kept = [g.copy() for g in gs]
    assert mxp.clip_grad_norm(gs, 100.0) <= 1.0 + 1e-6
    np.testing.assert_array_equal(gs[0], kept[0])  # under max_norm: untouched


def test_monitor_counts_against_numpy():
    rng = np.random.default_rng(3)
    x = (np.sign(rng.standard_normal(20000)) * 10.0 ** rng.uniform(-10, 6, 20000))
    x[:5] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    m = mxp.Monitor("float16")
    r = m.record("act", x, "activation", step=4)
    fin = x[np.isfinite(x)]
    with np.errstate(over="ignore"):
        h = fin.astype(np.float16)
    assert r["count"] == x.size and r["nan"] == 1 and r["inf"] == 2 and r["zeros"] == 2
    assert r["overflow"] == np.sum(np.isinf(h))
    assert r["underflow"] == np.sum((h == 0) & (fin != 0))
    assert r["norm"] == pytest.approx(np.sqrt(np.sum(fin**2)), rel=1e-12)
    assert r["max_abs"] == np.max(np.abs(fin)) and r["step"] == 4
    assert set(r["flags"]) >= {"nonfinite", "overflow", "underflow"}
    assert m.tensors == {"act": "activation"} and m.target == "float16"
    m.record("g", np.full(10, 1e-3))
    m.record("g", np.full(10, 1e3))  # 1000x the previous norm: exploding
    assert "exploding" in m.history("g")[-1]["flags"] and len(m.history("g")) == 2
    assert m.suggest("g")[0] == "float16"
    text = m.report()
    assert "act" in text and "g" in text
    js = m.report_json()
    assert {t["name"] for t in js["tensors"]} == {"act", "g"} and js["target"] == "float16"


def test_autocast_policies():
    assert mxp.autocast_policy("fp32") == {op: np.dtype(f32) for op in mxp.AUTOCAST_OPS}
    t = mxp.autocast_policy("fp16")
    assert t["matmul"] == np.float16 and t["elementwise"] == np.float16 and t["softmax"] == f32
    ac = mxp.Autocast("bf16")
    assert ac.policy == "bf16" and ac.dtype("matmul") == np.dtype(mxp.bfloat16)
    ac.set("softmax", "bfloat16")
    assert ac.policy == "custom" and ac.dtype("softmax") == np.dtype(mxp.bfloat16)
    x = np.array([1.0, 1 + 2**-10], f32)
    np.testing.assert_array_equal(ac.cast("matmul", x), x.astype(mxp.bfloat16))
    assert ac.cast("loss", x) is x
    with pytest.raises(ValueError, match="autocast op"):
        ac.set("conv", np.float16)
    with pytest.raises(ValueError):
        mxp.Autocast("int8")


def test_bad_input_raises_with_the_library_sentence():
    p = np.ones(3, f32)
    with pytest.raises(ValueError, match="learning rate nan must be finite and >= 0"):
        mxp.SGD([p], lr=float("nan"))
    with pytest.raises(TypeError):
        mxp.SGD([np.ones(3)], lr=0.1)  # float64 parameters: unsupported
    with pytest.raises(ValueError):
        mxp.SGD([p], lr=0.1, grads=[np.ones(4, f32)])  # shapes differ
    ro = np.ones(3, f32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        mxp.SGD([ro], lr=0.1)
    with pytest.raises(ValueError, match="rounding"):
        mxp.SGD([p], rounding="toward_zero")
    with pytest.raises(ValueError, match="momentum"):
        mxp.SGD([p], momentum=1.0)
    with pytest.raises(TypeError, match="lr must be a number"):
        mxp.SGD([p], lr="fast")
    with pytest.raises(TypeError, match="numpy.ndarray"):
        mxp.SGD([[1.0, 2.0]])
    with pytest.raises(ValueError, match="2 grads for 1 params"):
        mxp.SGD([p]).step([p, p])
    with pytest.raises(ValueError):
        mxp.LossScaler(backoff_factor=1.5)
    with pytest.raises(ValueError):
        mxp.LossScaler(growth_factor=0.5)
    with pytest.raises(TypeError):
        mxp.LossScaler().step(object())
    m = mxp.Monitor()
    m.record("w", p, "weight")
    with pytest.raises(ValueError):
        m.record("w", p, "gradient")  # a name keeps its first role
    with pytest.raises(ValueError, match="role 'bias'"):
        m.record("b", p, "bias")
    with pytest.raises(ValueError):
        m.record("", p)
    with pytest.raises(ValueError):
        m.history("nothing")


def test_no_reference_leaks():
    p, g = np.ones(16, mxp.bfloat16), np.full(16, 0.5, f32)
    base_p, base_g = sys.getrefcount(p), sys.getrefcount(g)
    opt = mxp.Adam([p], grads=[g])
    s, m = mxp.LossScaler(4.0), mxp.Monitor()
    held_p, held_g = sys.getrefcount(p), sys.getrefcount(g)
    for i in range(50):
        opt.step()
        s.unscale_(g)
        s.step(opt)
        s.update()
        s.check([g, p])
        m.record("g", g, step=i)
        mxp.clip_grad_norm([g], 10.0)
        opt.master(0)
    assert (sys.getrefcount(p), sys.getrefcount(g)) == (held_p, held_g)
    del opt, s, m
    gc.collect()
    assert (sys.getrefcount(p), sys.getrefcount(g)) == (base_p, base_g)

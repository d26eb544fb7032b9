"""Mixed-precision training aids on NumPy arrays: SGD, Adam and AdamW with
float32 master weights, gradient clipping, a dynamic loss scaler with
PyTorch GradScaler's rules, the autocast table and a stability monitor.
Rules and formulas: docs/train.md; the work is the C library's
(mxp/train.h)."""
import json

import numpy as np

from . import _mxp
from ._api import _seed

_SGD, _ADAM, _ADAMW = _mxp.OPTIM_SGD, _mxp.OPTIM_ADAM, _mxp.OPTIM_ADAMW
_MXP_FLOATS = tuple(np.dtype(t) for t in _mxp._TYPES)


def _array_list(xs, what):
    """xs as a list of ndarrays (a single array gives a list of one)."""
    if isinstance(xs, np.ndarray):
        return [xs]
    try:
        xs = list(xs)
    except TypeError:
        raise TypeError(f"{what}: expected a numpy.ndarray or a list of them, got a {type(xs).__name__}") from None
    for x in xs:
        if not isinstance(x, np.ndarray):
            raise TypeError(f"{what}: expected numpy.ndarray elements, got a {type(x).__name__}")
    return xs


def _number(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{what} must be a number, got a {type(v).__name__}")
    return float(v)


# ---- optimizers ---------------------------------------------------------------

class _Optimizer:
    """Updates params (NumPy arrays, C-contiguous and writeable: float32,
    float16, bfloat16 or float8) in place from their gradients.

    grads: arrays of the params' shapes (any float dtype) that the
    optimizer reads at every step, written in place by the backward pass
    (like torch's .grad); None: float32 zeros, self.grads.  master_init:
    None, or arrays (any float dtype) the float32 masters start from (the
    params are overwritten with them rounded once).  master=False keeps no
    float32 copy (pair it with rounding="stochastic").  The optimizer holds
    references to every array it was given."""
    _kind = 0

    def __init__(self, params, grads=None, *, lr, momentum=0.0, dampening=0.0, nesterov=False, weight_decay=0.0,
                 betas=(0.9, 0.999), eps=1e-8, max_grad_norm=0.0, rounding="nearest_even", seed=0, master=True,
                 master_init=None):
        params = _array_list(params, type(self).__name__ + ": params")
        if not params:
            raise ValueError(f"{type(self).__name__}: params is empty")
        grads = [np.zeros(p.shape, np.float32) for p in params] if grads is None else _array_list(
            grads, type(self).__name__ + ": grads")
        inits = [None] * len(params) if master_init is None else _array_list(
            master_init, type(self).__name__ + ": master_init")
        if len(grads) != len(params) or len(inits) != len(params):
            raise ValueError(f"{type(self).__name__}: {len(params)} params but {len(grads)} grads"
                             + ("" if master_init is None else f" and {len(inits)} master_init arrays"))
        if rounding not in ("nearest_even", "stochastic"):
            raise ValueError(f"rounding {rounding!r} is not 'nearest_even' or 'stochastic'")
        try:
            beta1, beta2 = betas
        except (TypeError, ValueError):
            raise TypeError("betas must be a pair (beta1, beta2)") from None
        lr = _number(lr, "lr")
        if self._kind != _SGD and (beta1 == 0 or beta2 == 0):
            raise ValueError("betas must be in (0, 1) (0 would mean the default in the C API)")
        self._opt = _mxp._optim_new(self._kind, lr=lr, momentum=_number(momentum, "momentum"),
                                    dampening=_number(dampening, "dampening"), nesterov=bool(nesterov),
                                    weight_decay=_number(weight_decay, "weight_decay"), beta1=_number(beta1, "beta1"),
                                    beta2=_number(beta2, "beta2"), eps=_number(eps, "eps"),
                                    max_grad_norm=_number(max_grad_norm, "max_grad_norm"), master=bool(master),
                                    rounding=rounding, seed=_seed(seed))
        if lr == 0:  # the C API's 0 means the default: set it explicitly
            _mxp._optim_set_lr(self._opt, 0.0)
        for p, g, m in zip(params, grads, inits):  # master_init is read once: any layout
            _mxp._optim_add_param(self._opt, p, g, None if m is None else np.ascontiguousarray(m))
        # C holds views of these; the lists keep them reachable from Python too.
        self.params, self.grads = params, grads

    def step(self, grads=None):
        """One update of every parameter.  grads (optional): arrays copied
        into self.grads first (rounded once to their dtype)."""
        if grads is not None:
            self._load_grads(grads)
        _mxp._optim_step(self._opt, None)

    def step_scaled(self, grad_scale):
        """The same with every gradient multiplied by grad_scale (finite,
        > 0) as it is read; the gradients stay as they are."""
        _mxp._optim_step(self._opt, _number(grad_scale, "grad_scale"))

    def _load_grads(self, grads):
        grads = _array_list(grads, "step: grads")
        if len(grads) != len(self.grads):
            raise ValueError(f"step: {len(grads)} grads for {len(self.grads)} params")
        for dst, g in zip(self.grads, grads):
            if g.dtype.kind not in "biuf" and g.dtype not in _MXP_FLOATS:  # complex, objects: not cast silently
                raise TypeError(f"step: a gradient of dtype {g.dtype} (a float dtype is needed)")
            if g.shape != dst.shape:
                raise ValueError(f"step: a gradient of shape {g.shape} for a parameter of shape {dst.shape}")
            np.copyto(dst, g, casting="unsafe")

    def zero_grad(self):
        for g in self.grads:
            g[...] = 0

    @property
    def lr(self):
        return _mxp._optim_info(self._opt)[0]

    @lr.setter
    def lr(self, value):
        _mxp._optim_set_lr(self._opt, _number(value, "lr"))

    @property
    def steps(self):
        """Steps taken."""
        return _mxp._optim_info(self._opt)[1]

    @property
    def last_grad_norm(self):
        """The global gradient norm the last step computed for clipping
        (max_grad_norm > 0), else NaN."""
        return _mxp._optim_info(self._opt)[3]

    def master(self, i):
        """A float32 copy of parameter i's master weights."""
        return _mxp._optim_master(self._opt, int(i))

    def __repr__(self):
        return f"{type(self).__name__}({len(self.params)} params, lr={self.lr:g}, steps={self.steps})"


class SGD(_Optimizer):
    """torch.optim.SGD: momentum, dampening, Nesterov, L2 weight decay."""
    _kind = _SGD

    def __init__(self, params, lr=0.01, momentum=0.0, dampening=0.0, nesterov=False, weight_decay=0.0, *,
                 grads=None, max_grad_norm=0.0, rounding="nearest_even", seed=0, master=True, master_init=None):
        super().__init__(params, grads, lr=lr, momentum=momentum, dampening=dampening, nesterov=nesterov,
                         weight_decay=weight_decay, max_grad_norm=max_grad_norm, rounding=rounding, seed=seed,
                         master=master, master_init=master_init)


class Adam(_Optimizer):
    """torch.optim.Adam (L2 weight decay added to the gradient)."""
    _kind = _ADAM

    def __init__(self, params, lr=0.001, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, *, grads=None,
                 max_grad_norm=0.0, rounding="nearest_even", seed=0, master=True, master_init=None):
        super().__init__(params, grads, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         max_grad_norm=max_grad_norm, rounding=rounding, seed=seed, master=master,
                         master_init=master_init)


class AdamW(Adam):
    """torch.optim.AdamW: decoupled weight decay (default 0.01, as torch's)."""
    _kind = _ADAMW

    def __init__(self, params, lr=0.001, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, **kw):
        super().__init__(params, lr, betas, eps, weight_decay, **kw)


def clip_grad_norm(grads, max_norm):
    """torch.nn.utils.clip_grad_norm_: the global L2 norm of grads (float64);
    if max_norm / (norm + 1e-6) < 1 every gradient is multiplied in place
    by it.  Returns the norm before clipping."""
    return _mxp._clip_grad_norm(_array_list(grads, "clip_grad_norm: grads"), _number(max_norm, "max_norm"))


# ---- loss scaling -------------------------------------------------------------

class LossScaler:
    """Dynamic loss scaling with torch.cuda.amp.GradScaler's rules (static
    with static=True: the scale stays init_scale, steps with inf/NaN are
    still skipped).  min_scale/max_scale None: 2**-126 and float32's max."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, *,
                 min_scale=None, max_scale=None, static=False):
        if isinstance(growth_interval, bool) or not isinstance(growth_interval, (int, np.integer)):
            raise TypeError(f"growth_interval must be an int, got a {type(growth_interval).__name__}")
        args = [_number(init_scale, "init_scale"), _number(growth_factor, "growth_factor"),
                _number(backoff_factor, "backoff_factor")]
        for v, what in zip(args, ("init_scale", "growth_factor", "backoff_factor")):
            if v == 0:  # 0 would mean the default in the C API
                raise ValueError(f"{what} 0 is out of range")
        if growth_interval == 0:
            raise ValueError("growth_interval 0 must be > 0")
        lo = 0.0 if min_scale is None else _number(min_scale, "min_scale")
        hi = 0.0 if max_scale is None else _number(max_scale, "max_scale")
        if (min_scale is not None and lo == 0) or (max_scale is not None and hi == 0):
            raise ValueError("min_scale and max_scale must be > 0")
        self._s = _mxp._scaler_new(init_scale=args[0], growth_factor=args[1], backoff_factor=args[2],
                                   growth_interval=int(growth_interval), min_scale=lo, max_scale=hi, fixed=bool(static))
        self.static = bool(static)

    @property
    def scale(self):
        """The current scale (a float32 value): seed the backward pass with it."""
        return _mxp._scaler_state(self._s)[0]

    @property
    def found_inf(self):
        """Whether unscale_/check/step found inf/NaN since the last update."""
        return _mxp._scaler_state(self._s)[4]

    def scale_loss(self, loss):
        """loss * scale (a float or an array)."""
        return loss * self.scale

    def unscale_(self, grads):
        """Multiplies grads (an array, a list, or an optimizer's grads) in
        place by float32(1/scale), rounded once, and looks for inf/NaN.
        Returns whether inf/NaN was found since the last update.  A later
        step() then takes the optimizer's gradients as unscaled."""
        if isinstance(grads, _Optimizer):
            grads = grads.grads
        return _mxp._scaler_unscale(self._s, _array_list(grads, "unscale_: grads"), True)

    def check(self, xs):
        """Looks for inf/NaN in xs (any layout, read only); returns found_inf."""
        return _mxp._scaler_unscale(self._s, _array_list(xs, "check: arrays"), False)

    def step(self, optimizer, grads=None):
        """GradScaler.step: the optimizer steps (unscaling the gradients as
        it reads them, unless unscale_ ran) only if no inf/NaN was found.
        grads (optional) are copied into optimizer.grads first.  Returns
        whether it stepped."""
        if not isinstance(optimizer, _Optimizer):
            raise TypeError(f"step: expected an mxp optimizer (SGD, Adam, AdamW), got a {type(optimizer).__name__}")
        if grads is not None:
            optimizer._load_grads(grads)
        return _mxp._scaler_step(self._s, optimizer._opt)

    def update(self):
        """GradScaler.update: back off after inf/NaN, grow after
        growth_interval clean steps; ends the step."""
        _mxp._scaler_update(self._s)

    def state_dict(self):
        scale, tracker, steps, skipped, _ = _mxp._scaler_state(self._s)
        return {"scale": scale, "growth_tracker": tracker, "steps": steps, "skipped": skipped}

    def load_state_dict(self, state):
        if not isinstance(state, dict):
            raise TypeError(f"load_state_dict: expected a dict, got a {type(state).__name__}")
        missing = [k for k in ("scale", "growth_tracker", "steps", "skipped") if k not in state]
        if missing:
            raise ValueError(f"load_state_dict: the state lacks {', '.join(missing)}")
        _mxp._scaler_set_state(self._s, _number(state["scale"], "scale"), int(state["growth_tracker"]),
                               int(state["steps"]), int(state["skipped"]))

    steps = property(lambda self: self.state_dict()["steps"])
    skipped = property(lambda self: self.state_dict()["skipped"])

    def __repr__(self):
        d = self.state_dict()
        return f"LossScaler(scale={d['scale']:g}, steps={d['steps']}, skipped={d['skipped']})"


# ---- autocast -------------------------------------------------------------------

AUTOCAST_OPS = _mxp.AUTOCAST_OPS  # the C library's: matmul, elementwise, reduction, softmax, loss, normalization


class Autocast:
    """Which dtype each kind of operation computes in: policy "fp32",
    "bf16", "fp16" (or a float dtype name meaning the same)."""

    def __init__(self, policy="fp32"):
        if not isinstance(policy, str):
            raise TypeError(f"autocast policy must be a str, got a {type(policy).__name__}")
        self._ac = _mxp._autocast_new(policy)

    @property
    def policy(self):
        """"fp32", "bf16", "fp16"; "custom" once an entry was changed."""
        return _mxp._autocast_table(self._ac)[0]

    def table(self):
        """{op: numpy dtype} for the ops in AUTOCAST_OPS."""
        return _mxp._autocast_table(self._ac)[1]

    def dtype(self, op):
        t = self.table()
        if op not in t:
            raise ValueError(f"autocast op {op!r} is not one of {', '.join(AUTOCAST_OPS)}")
        return t[op]

    def set(self, op, dtype):
        """Changes one entry (any float dtype)."""
        _mxp._autocast_set(self._ac, str(op), dtype)

    def cast(self, op, x):
        """x in op's dtype: x itself when it has it, else a copy rounded once."""
        return _mxp._autocast_cast(self._ac, str(op), np.asarray(x))

    def __repr__(self):
        return f"Autocast({self.policy!r})"


def autocast_policy(name="fp32"):
    """The autocast table of a policy as {op: numpy dtype}."""
    return Autocast(name).table()


# ---- monitor ----------------------------------------------------------------------

class Monitor:
    """Statistics of named tensors step by step against a target dtype
    (what the values would do stored in it), flags and dtype suggestions.
    Thresholds as docs/train.md; a threshold of 0 means its default."""

    def __init__(self, target="float16", *, overflow_share=0.0, underflow_share=0.01, exploding_norm=1e4,
                 exploding_ratio=100.0, vanishing_norm=1e-7, headroom=2.0, max_history=0):
        self._m = _mxp._monitor_new(target, overflow_share=_number(overflow_share, "overflow_share"),
                                    underflow_share=_number(underflow_share, "underflow_share"),
                                    exploding_norm=_number(exploding_norm, "exploding_norm"),
                                    exploding_ratio=_number(exploding_ratio, "exploding_ratio"),
                                    vanishing_norm=_number(vanishing_norm, "vanishing_norm"),
                                    headroom=_number(headroom, "headroom"), max_history=int(max_history))
        self._step = 0

    def record(self, name, x, role="gradient", step=None):
        """Records x under name (role "weight", "activation" or "gradient";
        step None: one more than the last step given) -> the record as a
        dict (counts, norm, max_abs, shares, flags as names)."""
        if not isinstance(name, str):
            raise TypeError(f"record: name must be a str, got a {type(name).__name__}")
        if not isinstance(role, str):
            raise TypeError(f"record: role must be a str, got a {type(role).__name__}")
        step = self._step if step is None else int(step)
        r = _mxp._monitor_record(self._m, step, name, role, np.asarray(x))
        self._step = step + 1
        return r

    def history(self, name):
        """The records kept for name, oldest first."""
        return _mxp._monitor_history(self._m, str(name))

    @property
    def tensors(self):
        """{name: role} of everything recorded."""
        return dict(_mxp._monitor_info(self._m)[0])

    @property
    def target(self):
        return _mxp._monitor_info(self._m)[1]

    @property
    def flags(self):
        """The flags of every record kept, by name."""
        return _mxp._monitor_info(self._m)[2]

    def suggest(self, name):
        """(dtype name, reason): the narrowest float dtype for name."""
        return _mxp._monitor_suggest(self._m, str(name))

    def report(self):
        """A text table, one line per tensor."""
        return _mxp._monitor_report(self._m, False)

    def report_json(self):
        """The JSON report, parsed (non-finite numbers are None)."""
        return json.loads(_mxp._monitor_report(self._m, True))

    def __repr__(self):
        return f"Monitor(target={self.target}, {len(self.tensors)} tensors)"


__all__ = ["SGD", "Adam", "AdamW", "clip_grad_norm", "LossScaler", "Autocast", "autocast_policy", "Monitor",
           "AUTOCAST_OPS"]

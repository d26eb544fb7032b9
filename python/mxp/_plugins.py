"""Operator plugins: operators compiled into a shared library (mxp/plugin.h,
docs/plugins.md), called on NumPy arrays and checked against a reference.

    ops = mxp.load_ops("build/examples/libmxp_example_ops.so")
    y = ops.gelu(x)                       # bfloat16, float16, float32 ...
    z = ops.bias_gelu(x, b, out=z)        # broadcasting, out=
    s = ops.logsumexp(x, axis=0)          # reductions: axis=, keepdims=
    reports = mxp.check_op(ops.gelu)      # ulp error vs its float64 reference
"""
import numpy as np

from . import _mxp
from ._api import Result

__all__ = ["Op", "OpLibrary", "load_ops", "list_ops", "check_op", "CheckReport"]

_LAST = "last"  # the C default: a reduction's last axis


class Op:
    """One loaded operator; call it like a NumPy function.  The kernel is
    chosen by the inputs' dtypes (exact, else the first declared signature
    they convert to safely); work is split over mxp's threads with the GIL
    released."""

    def __init__(self, info):
        self.name = info["name"]
        self.kind = info["kind"]
        self.n_inputs = info["n_inputs"]
        self.library = info["library"]
        self.has_reference = info["has_reference"]
        self.kernels = info["kernels"]  # [(signature, isa), ...]
        self.signatures = list(dict.fromkeys(s for s, _ in self.kernels))
        self.__doc__ = info["doc"] or None
        self.__name__ = self.name

    def __call__(self, *inputs, out=None, dtype=None, axis=_LAST, keepdims=False, signature=None):
        """inputs: arrays (anything np.asarray takes); out: an array of the
        result's shape and dtype; dtype: the result's dtype (the kernel's
        result converted once); axis (reductions): an int, None for every
        axis, default the last; signature: force a kernel, "f32->f32"."""
        if len(inputs) != self.n_inputs:
            raise TypeError(f"{self.name}() takes {self.n_inputs} input{'s' if self.n_inputs != 1 else ''}, "
                            f"got {len(inputs)}")
        if self.kind != "reduction" and (axis is not _LAST or keepdims):
            raise TypeError(f"{self.name}() is {self.kind}: axis and keepdims are for reductions")
        if axis is not _LAST and axis is not None and not isinstance(axis, (int, np.integer)):
            raise TypeError(f"axis must be an int or None, not {type(axis).__name__}")
        arrays = tuple(np.asarray(a) for a in inputs)
        if axis is not _LAST and axis is not None:
            axis = int(axis)
        return _mxp._op_call(self.name, arrays, out, dtype, axis, bool(keepdims), signature)

    def check(self, reference=None, signature=None, samples=None, seed=0):
        """check_op(self, ...)."""
        return check_op(self, reference=reference, signature=signature, samples=samples, seed=seed)

    def __repr__(self):
        return f"<mxp operator {self.name} ({self.kind}, {', '.join(self.signatures)}) from {self.library}>"


class OpLibrary:
    """The operators of one plugin: attributes by name, and a mapping."""

    def __init__(self, path, ops):
        self.path = path
        self.ops = {op.name: op for op in ops}
        for op in ops:
            setattr(self, op.name, op)

    def __getitem__(self, name):
        return self.ops[name]

    def __iter__(self):
        return iter(self.ops)

    def __len__(self):
        return len(self.ops)

    def __repr__(self):
        return f"<mxp operators from {self.path}: {', '.join(self.ops)}>"


def list_ops():
    """Every loaded operator's description: name, doc, library, kind,
    n_inputs, has_reference, check_shapes, kernels [(signature, isa)]."""
    return _mxp._op_list()


def load_ops(path):
    """Loads the plugin at path (a shared library exporting
    mxp_plugin_register) and returns its operators as an OpLibrary.
    All or nothing: a file that is not a plugin, another plugin ABI, a bad
    declaration or a name another plugin took raise ValueError (OSError
    when the file cannot be loaded at all) and add nothing.  Loading the
    same file again returns the same operators."""
    import os
    path = os.fspath(path)
    _mxp._ops_load(path)
    resolved = os.path.realpath(path)
    ops = [Op(i) for i in _mxp._op_list()
           if i["library"] == path or os.path.realpath(i["library"]) == resolved]
    return OpLibrary(path, ops)


class CheckReport(Result):
    """One kernel signature's comparison with the reference (a dict whose
    keys are attributes): signature, isa, count, exhaustive, max_ulp,
    mean_ulp, histogram (bins 0, 1, 2, (2,4], ..., (256,512], more),
    nan_mismatch, inf_mismatch, worst_input, worst_got, worst_want,
    kernel_ns, reference_ns."""

    def __str__(self):
        h = self["histogram"]
        return (f"{self['signature']} [{self['isa']}]: {self['count']} outputs"
                f"{' (every input)' if self['exhaustive'] else ''}, max {self['max_ulp']:g} ulp, "
                f"mean {self['mean_ulp']:.3g}, exact {h[0]}, NaN/inf mismatches "
                f"{self['nan_mismatch']}/{self['inf_mismatch']}, worst at {self['worst_input']}: "
                f"{self['worst_got']!r} vs {self['worst_want']!r}; {self['kernel_ns']:.2f} ns/element "
                f"(reference {self['reference_ns']:.2f})")


_EDGES = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 10.0, -10.0, 1e-3, -1e-3, 100.0, -100.0,
                   np.inf, -np.inf, np.nan])


def _kinded(t):
    t = dict(t)
    t["kind"] = chr(t["kind"]) if isinstance(t["kind"], int) else t["kind"]
    return t


def _inputs(types, samples, seed):
    """Every combination of patterns for small types (at most 2^24), else
    edge values then random ones: arrays of the kernel's input dtypes."""
    dts = [np.dtype(t) for t in types]
    traits = [_kinded(_mxp._traits(d)) for d in dts]
    bits = [t["bits"] for t in traits]
    total = 1 << sum(bits)
    if all(b <= 16 for b in bits) and total <= 1 << 24:
        idx = np.arange(total, dtype=np.uint64)
        out, shift = [], 0
        for d, t, b in zip(dts, traits, bits):
            code = (idx >> np.uint64(shift)) & np.uint64((1 << b) - 1)
            shift += b
            if t["kind"] == "f":  # raw codes, in the low bits of each element
                out.append(code.astype(np.uint8 if d.itemsize == 1 else np.uint16).view(d))
            else:  # integers by value
                lo = -(1 << (b - 1)) if t["is_signed"] else 0
                out.append((code.astype(np.int64) + lo).astype(d))
        return out, True
    rng = np.random.default_rng(seed)
    n = samples or 1_000_000
    out = []
    for d in dts:
        v = np.sign(rng.standard_normal(n)) * np.exp2(rng.uniform(-10, 10, n))
        v[: min(n, len(_EDGES))] = _EDGES[: min(n, len(_EDGES))]
        t = _kinded(_mxp._traits(d))
        if t["kind"] != "f":
            v = np.clip(np.nan_to_num(v), float(t["lowest"]), float(t["max"]))
        out.append(v.astype(d))
    return out, False


def check_op(op, reference=None, signature=None, samples=None, seed=0):
    """Compares an operator's kernels with a reference: its plugin's float64
    reference (reference=None), a built-in elementwise function of mxp by
    name ("gelu", "exp", "add" ...), or a Python function of float64 NumPy
    arrays (elementwise operators).  Inputs: every bit pattern of 8- and
    16-bit input types (when they number at most 2^24), else edge values and
    `samples` random ones (default 1,000,000).  The reference's float64
    result is rounded once to the kernel's output dtype; distances are in
    its units in the last place.  Returns one CheckReport per signature."""
    if not isinstance(op, Op):
        infos = [i for i in _mxp._op_list() if i["name"] == op]
        if not infos:
            raise ValueError(f"no operator named {op!r} is loaded (mxp.load_ops, mxp.list_ops)")
        op = Op(infos[0])
    if not callable(reference):
        return [CheckReport(r) for r in _mxp._op_check(op.name, signature, reference, samples or 0, seed)]
    if op.kind != "elementwise":
        raise ValueError(f"{op.name} is {op.kind}: a Python reference checks elementwise operators only")
    import time
    reports = []
    for sig in op.signatures:
        if signature is not None and sig != _canonical(op, signature):
            continue
        types, out_type = sig.split("->")[0].split(","), sig.split("->")[1]
        inputs, exhaustive = _inputs(types, samples, seed)
        t0 = time.perf_counter()
        got = np.ascontiguousarray(op(*inputs, signature=sig))
        t1 = time.perf_counter()
        want64 = np.asarray(reference(*[x.astype(np.float64) for x in inputs]), dtype=np.float64)
        t2 = time.perf_counter()
        want = np.ascontiguousarray(np.broadcast_to(want64, got.shape).astype(np.dtype(out_type)))
        r = CheckReport(_mxp._op_check_compare(got.reshape(-1), want.reshape(-1)))
        i = r["worst_index"]
        r.update(signature=sig, isa=_isa_used(op, sig), exhaustive=exhaustive,
                 worst_input=tuple(float(x.reshape(-1)[i]) for x in inputs),
                 kernel_ns=(t1 - t0) * 1e9 / got.size, reference_ns=(t2 - t1) * 1e9 / got.size)
        reports.append(r)
    if not reports:
        raise ValueError(f"{op.name} has no kernel {signature}; its signatures: {', '.join(op.signatures)}")
    return reports


_ISAS = ["scalar", "avx2", "avx512", "avx512bf16", "amx"]


def _isa_used(op, sig):
    level = _ISAS.index(_mxp._info()["isa"]) if _mxp._info()["isa"] in _ISAS else 0
    usable = [_ISAS.index(i) for s, i in op.kernels if s == sig and i in _ISAS and _ISAS.index(i) <= level]
    return _ISAS[max(usable)] if usable else "none"


def _canonical(op, signature):
    ins, out = signature.split("->")
    return ",".join(np.dtype(t.strip()).name if t.strip() not in _SHORT else _SHORT[t.strip()]
                    for t in ins.split(",")) + "->" + (_SHORT.get(out.strip()) or np.dtype(out.strip()).name)


_SHORT = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16", "s8": "int8", "u8": "uint8"}

"""The machinery of the hostile-argument harness (test_hostile.py,
test_hostile_more.py; issue 24): a registry of cases, each a function that
makes one hostile call and checks its outcome, bit-for-bit comparison of
results, layouts of equal values, and a crash guard that runs every case
in a child interpreter first so that a segfault is reported as a failure
of the case that caused it, not the death of pytest.

A case is registered with the public names it covers; test_hostile.py
checks that every public name of mxp (and mxp.dask, where importable) is
covered by at least one case."""
import math
import os
import struct
import subprocess
import sys

import numpy as np

import mxp

try:
    AxisError = np.exceptions.AxisError  # NumPy >= 1.25
except AttributeError:
    AxisError = np.AxisError

# name -> (covered public names, function); in registration order
CASES = {}


def case(name, *covers, _depth=1):
    """Decorator: registers fn as the case `name` covering `covers` (of the
    test module calling this)."""
    module = sys._getframe(_depth).f_globals["__name__"]

    def register(fn):
        assert name not in CASES, f"case {name} registered twice"
        assert covers, f"case {name} covers nothing"
        CASES[name] = (covers, fn, module)
        return fn
    return register


def expect(exc, fn, *args, **kwargs):
    """fn(*args, **kwargs) raises exc (an exception class or a tuple); the
    class raised is returned for further checks."""
    try:
        fn(*args, **kwargs)
    except exc as e:
        return e
    except BaseException as e:  # the wrong class: report what came instead
        raise AssertionError(f"expected {exc}, got {type(e).__name__}: {e}") from e
    raise AssertionError(f"expected {exc}, nothing was raised")


def raises(name, covers, exc, fn, *args, **kwargs):
    """Registers a case: fn(*args, **kwargs) raises exc."""
    if isinstance(covers, str):
        covers = (covers,)
    case(name, *covers, _depth=2)(lambda: expect(exc, fn, *args, **kwargs))


def bits_equal(a, b, where="result"):
    """a and b are the same, bit for bit: arrays (dtype, shape, bytes),
    floats (NaN payloads and signed zeros), dicts, sequences, mxp's result
    objects."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), f"{where}: {type(a)} vs {type(b)}"
        assert a.dtype == b.dtype, f"{where}: dtype {a.dtype} vs {b.dtype}"
        assert a.shape == b.shape, f"{where}: shape {a.shape} vs {b.shape}"
        ab = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
        bb = np.ascontiguousarray(b).reshape(-1).view(np.uint8)
        assert ab.tobytes() == bb.tobytes(), f"{where}: {a!r} vs {b!r}"
    elif isinstance(a, np.generic):
        assert type(a) is type(b), f"{where}: {type(a)} vs {type(b)}"
        bits_equal(np.asarray(a), np.asarray(b), where)
    elif isinstance(a, float):
        assert isinstance(b, float), f"{where}: {a!r} vs {b!r}"
        assert struct.pack("<d", a) == struct.pack("<d", b), f"{where}: {a!r} vs {b!r}"
    elif isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), f"{where}: keys {sorted(a)} vs {sorted(b)}"
        for k in a:
            bits_equal(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), f"{where}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            bits_equal(x, y, f"{where}[{i}]")
    elif isinstance(a, mxp.QuantizedTensor):
        assert isinstance(b, mxp.QuantizedTensor)
        bits_equal(a.codes, b.codes, where + ".codes")
        bits_equal(a.qparams, b.qparams, where + ".qparams")
    elif isinstance(a, mxp.QParams):
        assert isinstance(b, mxp.QParams)
        bits_equal(a._tuple(), b._tuple(), where)
    elif isinstance(a, mxp.MXTensor):
        assert isinstance(b, mxp.MXTensor) and (a.format, a.shape) == (b.format, b.shape), where
        bits_equal(a.data, b.data, where + ".data")
    else:
        assert type(a) is type(b) and a == b, f"{where}: {a!r} vs {b!r}"


def layouts(x):
    """Views with x's values (x C-contiguous, at least 2-d with every axis
    longer than 1): both axes reversed, Fortran order, every other column
    of a wider buffer, a transposed copy transposed back.  Never unaligned
    (misalignment has cases of its own)."""
    x = np.ascontiguousarray(x)
    rev = tuple(slice(None, None, -1) for _ in range(x.ndim))
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    wide[..., ::2] = x
    out = {
        "negative strides": x[rev].copy()[rev],
        "fortran": np.asfortranarray(x),
        "non-contiguous": wide[..., ::2],
        "last axis reversed": x[..., ::-1].copy()[..., ::-1],
    }
    for k, v in out.items():
        assert np.ascontiguousarray(v).tobytes() == x.tobytes(), k
    return out


def same_on_layouts(fn, *arrays):
    """fn(*views) equals fn(*contiguous copies) bit for bit, for each
    layout of the arrays (all of one layout at a time; each one alone)."""
    want = fn(*[np.ascontiguousarray(a) for a in arrays])
    views = [layouts(a) for a in arrays]
    for kind in views[0]:
        got = fn(*[v[kind] for v in views])
        bits_equal(got, want, f"all {kind}")
        for i in range(len(arrays)):
            args = [np.ascontiguousarray(a) for a in arrays]
            args[i] = views[i][kind]
            bits_equal(fn(*args), want, f"argument {i} {kind}")
    return want


def finite(x):
    return np.all(np.isfinite(np.asarray(x, np.float64)))


def f64(x):
    return float(np.float64(x))


def nan_equal(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


# ---- the crash guard ------------------------------------------------------------

def dask_results(v):
    """Every mxp.dask operation on v (2-d, in blocks of 2 x 3): the results
    that must not depend on v's layout or alignment."""
    import dask.array as da
    import mxp.dask as mdask
    bf = mxp.bfloat16
    d = da.from_array(v, chunks=(2, 3))
    q = mdask.quantize(d, "int8", qparams=mdask.calibrate(d, "int8"))
    return (mdask.astype(d, bf, rounding="stochastic", seed=3).compute(),
            np.asarray(mdask.sum(d.astype(bf), axis=0).compute()),
            np.asarray(mdask.mean(d.astype(bf)).compute()), mdask.compare(d, d * 2).as_dict(),
            mdask.matmul(d, d.T).compute(), q.codes.compute(), mdask.dequantize(q).compute())


CHILD = r"""
import faulthandler, importlib, sys
faulthandler.enable()
sys.path.insert(0, {tests!r})
for m in {modules!r}:
    importlib.import_module(m)
cases = importlib.import_module({registry!r}).CASES
names = list(cases)
start = names.index({start!r}) if {start!r} else 0
for name in names[start:]:
    print("BEGIN", name, flush=True)
    try:
        cases[name][1]()
    except BaseException:
        pass
print("END", flush=True)
"""


def crash_map(modules, registry="hostile", cases=None, timeout=600):
    """Runs every case of the registry (a module with a CASES dict, cases
    here: hostile's when None) in child interpreters that import modules
    first, resuming after each crash: {case name: what happened} for the
    cases that killed the child (a signal, an abort) or hung."""
    tests = os.path.dirname(os.path.abspath(__file__))
    names = list(CASES if cases is None else cases)
    crashed, start = {}, ""
    for _ in range(50):
        code = CHILD.format(tests=tests, modules=list(modules), registry=registry, start=start)
        try:
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
            out, rc, err = p.stdout, p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, err = "timeout", ""
        begun = [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("BEGIN ")]
        if "END" in out.splitlines() and rc == 0:
            return crashed
        if not begun:
            raise AssertionError(f"the child failed before any case (rc {rc}): {err[-2000:]}")
        last = begun[-1]
        crashed[last] = f"the interpreter died (rc {rc}): {err[-1500:]}"
        i = names.index(last)
        if i + 1 >= len(names):
            return crashed
        start = names[i + 1]
    return crashed


class CrashGuard:
    """Runs a registry's cases in this process, each unless it crashed a
    child interpreter (crash_map's arguments; the map is made once, on the
    first case): then the case fails with what happened, unrun here."""

    def __init__(self, modules, registry="hostile", cases=None, timeout=600):
        self.args = (modules, registry, cases, timeout)
        self.cases = CASES if cases is None else cases
        self.crashes = None

    def run(self, name):
        if self.crashes is None:
            self.crashes = crash_map(*self.args)
        if name in self.crashes:
            raise AssertionError(f"case {name!r}: {self.crashes[name]}")
        self.cases[name][1]()


run_case = CrashGuard(("test_hostile", "test_hostile_more", "test_hostile_nn")).run


def cases_of(module):
    return [n for n, (_, _, m) in CASES.items() if m == module]

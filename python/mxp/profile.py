"""The profiler: what each kind of mxp operation cost in a block of your
program, against this machine's memory bandwidth and FMA peak, with a
verdict and one line of advice (docs/profiling.md).

    with mxp.profile() as p:
        y = model(x)                 # any mxp calls, from any thread
    print(p.table())                 # one line per operation kind
    p.save_trace("trace.json")       # (or to_chrome_trace) chrome://tracing, ui.perfetto.dev
    p.roofline("roofline.png")       # matplotlib
"""
import json

from . import _mxp
from ._api import Result

__all__ = ["Profile", "profile", "machine"]

_TABLE, _JSON, _TRACE = 0, 1, 2
_generation = [0]  # the profile whose records the library holds


def machine():
    """This machine's roofline: memory_gbps (a streaming copy), peak_gflops
    (one core's float32 FMA peak at the ISA level in use), fault_us (one
    page fault), cpu, source ("measured", "cached" or "MXP_PROFILE_MACHINE").
    Measured once (about half a second) and cached in ~/.cache/mxp."""
    return Result(_mxp._profile_machine())


class Profile:
    """A context manager around mxp_profile_begin / mxp_profile_end.  The
    report is taken when the block ends; the per-call trace stays in the
    library until the next profile begins."""

    def __init__(self):
        self.entries = None
        self._gen = None

    def __enter__(self):
        _mxp._profile_begin()  # ValueError when a profile is already running
        _generation[0] += 1
        self._gen = _generation[0]
        return self

    def __exit__(self, *exc):
        _mxp._profile_end()
        self.machine = machine()
        self.entries = [Result(e) for e in _mxp._profile_entries()]
        self._table = _mxp._profile_report(_TABLE)
        self._json = _mxp._profile_report(_JSON)
        return False

    def reset(self):
        """Inside the with block: drop what was recorded so far (a warm-up
        left out of the report); the trace's times count from here."""
        if self._gen is None or self.entries is not None:
            raise RuntimeError("reset() is for a running profile: call it inside the with block")
        _mxp._profile_reset()

    def _done(self):
        if self.entries is None:
            raise RuntimeError("the profile is still running: read it after the with block")

    def table(self):
        """One line per operation kind, slowest first: calls, time, GB/s,
        GFLOPS, shares of the roofline, faults, threads, verdict, advice."""
        self._done()
        return self._table

    def to_json(self):
        """The report as a JSON string (machine and entries)."""
        self._done()
        return self._json

    def as_dict(self):
        return json.loads(self.to_json())

    def __getitem__(self, op):
        """The entry of one operation kind ("gemm", "convert", "op:gelu" ...)."""
        self._done()
        for e in self.entries:
            if e.op == op:
                return e
        raise KeyError(op)

    def save_trace(self, path):
        """Chrome trace events (one per call) into path, atomically."""
        self._done()
        if self._gen != _generation[0]:
            raise RuntimeError("a later profile replaced this one's trace in the library")
        _mxp._profile_save(path, _TRACE)

    to_chrome_trace = save_trace

    def roofline(self, path=None, title=None):
        """The roofline (log-log: GFLOP/s against FLOPs per byte, the memory
        and FMA roofs, one point per operation kind with FLOPs) as a
        matplotlib Figure, saved to path when given."""
        self._done()
        from .plot import roofline
        return roofline(self, path=path, title=title)


def profile():
    """with mxp.profile() as p: ... — see Profile."""
    return Profile()


profile.machine = machine  # mxp.profile.machine(): `mxp.profile` is the function, not this module

"""Hostile arguments, continued (see test_hostile.py): operator plugins
(mxp.load_ops, mxp.check_op, their operators) and the profiler."""
import os

import numpy as np

import mxp
from hostile import case, expect, raises

EXAMPLE = os.environ.get("MXP_EXAMPLE_OPS")  # ctest sets it (python/CMakeLists.txt)
X = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)

raises("load_ops(None)", "load_ops", TypeError, mxp.load_ops, None)
raises("load_ops(123)", "load_ops", TypeError, mxp.load_ops, 123)
raises("load_ops(a missing file)", "load_ops", OSError, mxp.load_ops, "/nonexistent/libx.so")
raises("load_ops(a directory)", "load_ops", OSError, mxp.load_ops, "/tmp")
raises("load_ops(not a library)", "load_ops", OSError, mxp.load_ops, "/etc/hostname")
raises("check_op(a name not loaded)", "check_op", ValueError, mxp.check_op, "no_such_operator")
raises("check_op(None)", "check_op", ValueError, mxp.check_op, None)


@case("list_ops(): a list of dicts, unchanged by failed loads", "list_ops", "OpLibrary")
def _():
    before = mxp.list_ops()
    expect(OSError, mxp.load_ops, "/nonexistent/libx.so")
    assert mxp.list_ops() == before and all(isinstance(d, dict) for d in before)


@case("an operator: wrong counts, axis on elementwise, bad dtype=, bad signature, read-only out=",
      "Op", "Op.check", "check_op", "CheckReport", "CheckReport.as_dict", "OpLibrary")
def _():
    if not EXAMPLE:
        return  # outside ctest: no example plugin to call
    ops = mxp.load_ops(EXAMPLE)
    expect(TypeError, ops.gelu)
    expect(TypeError, ops.gelu, X, X)
    expect(TypeError, ops.gelu, X, axis=0)
    expect(TypeError, ops.logsumexp, X, axis="0")
    expect(TypeError, ops.gelu, X, dtype="abc")
    expect(TypeError, ops.gelu, np.array(["a"]))
    expect(TypeError, ops.gelu, X, signature="float64->float64")
    expect(ValueError, ops.gelu, X, signature="floatXX->float32")
    ro = np.zeros_like(X)
    ro.flags.writeable = False
    expect(ValueError, ops.gelu, X, out=ro)
    expect(ValueError, ops.gelu, X, out=np.zeros(3, np.float32))
    expect(IndexError, ops.logsumexp, X, axis=5)
    expect(ValueError, ops.logsumexp, np.zeros((3, 0), np.float32))
    expect(ValueError, ops.cosine_similarity, X, X.T)
    r = ops.gelu.check(samples=1000)
    assert isinstance(r[0], mxp.CheckReport) and r[0].as_dict()["count"] == 1000
    expect(ValueError, ops.gelu.check, reference="no_such_function")
    expect(ValueError, ops.gelu.check, signature="int8->int8")
    expect(KeyError, lambda: ops["nope"])


@case("profile(): nesting refused, reading too early, a trace into a directory, roofline without FLOPs",
      "profile", "Profile", "Profile.table", "Profile.to_json", "Profile.as_dict", "Profile.save_trace",
      "Profile.roofline")
def _():
    p = mxp.profile()
    expect(RuntimeError, p.table)
    expect(RuntimeError, p.to_json)
    expect(RuntimeError, p.as_dict)
    expect(RuntimeError, p.save_trace, "/tmp/x.json")
    expect(RuntimeError, p.roofline)
    with p:
        expect(ValueError, mxp.profile().__enter__)
    expect(OSError, p.save_trace, "/tmp")
    assert p.as_dict()["entries"] == [] and p.entries == []

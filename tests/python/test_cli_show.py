"""`mxp show FILE.npy` prints what print(np.load(FILE)) prints: its output is
compared character for character with np.array2string (NumPy's defaults,
and --precision / --edgeitems as array2string's arguments) on hand-picked
arrays of every kind NumPy has (positional and scientific floats, nan and
inf, -0.0, subnormals, integer extremes, bool, 0-d, empty, wrapped lines,
summaries with "...") and on seeded random ones.

Where mxp differs (documented in `mxp show --help`): bfloat16 and float8,
which NumPy prints through ml_dtypes, print like NumPy's own floats.

Run by ctest (pytest_cli_show) with MXP_CLI naming the mxp binary.
"""
import os
import subprocess

import numpy as np
import pytest

MXP = os.environ.get("MXP_CLI")
pytestmark = pytest.mark.skipif(not MXP, reason="MXP_CLI is not set (run through ctest)")

CASES = {
    "float32 0.1": np.array([0.1, 1, 2.5], np.float32),
    "float64 scientific": np.array([1e-5, 1, 1000.0]),
    "float64 ratio over 1000": np.array([1, 1000.5]),
    "float32 exact digits past unique": np.array([8.6698689e10, 9.5446865e-07, 1.5], np.float32),
    "nan inf -0": np.array([[np.nan, -np.inf, 1.5], [0, -0.0, 3]]),
    "all nan": np.array([np.nan, np.nan]),
    "float16": np.arange(12, dtype=np.float16).reshape(3, 4) / 3,
    "float16 integer digits": np.array([-41984, 21088, 1.5e4], np.float16),
    "float16 subnormal": np.array([2.0 ** -24, 65504], np.float16),
    "float64 extremes": np.array([5e-324, 1e300, -1.7976931348623157e308]),
    "float32 2^24": np.full(5, 16777216.0, np.float32),
    "0-d float": np.array(1.5),
    "0-d bool": np.array(True),
    "empty": np.zeros((3, 0)),
    "int32 negative": np.arange(-5, 7, dtype=np.int32).reshape(3, 4),
    "int64 extremes": np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max]),
    "uint64 max": np.array([0, np.iinfo(np.uint64).max], np.uint64),
    "uint8": np.arange(0, 256, 17, dtype=np.uint8),
    "bool": np.array([[True, False], [False, True]]),
    "3-d": np.arange(24, dtype=np.int16).reshape(2, 3, 4),
    "5-d": np.ones((2, 1, 2, 1, 2)),
    "wrapped": np.linspace(-1, 1, 30),
    "summary 1-d": np.arange(2000) / 7,
    "summary 2-d": np.arange(3600, dtype=np.int32).reshape(60, 60) - 1000,
    "summary 3-d": np.arange(4000.0).reshape(10, 20, 20),
    "fortran order": np.asfortranarray(np.arange(12.0).reshape(3, 4) ** 3),
}
OPTIONS = [{}, {"precision": 3}, {"precision": 0}, {"edgeitems": 1}, {"precision": 12, "edgeitems": 5}]


def show(path, opts):
    args = [MXP, "show", str(path)]
    for k, v in opts.items():
        args += ["--" + k, str(v)]
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults")
@pytest.mark.parametrize("name", list(CASES))
def test_show_matches_array2string(tmp_path, name, opts):
    a = CASES[name]
    np.save(tmp_path / "a.npy", a)
    assert show(tmp_path / "a.npy", opts) == np.array2string(a, **opts) + "\n"


def random_case(rng):
    kinds = [np.float16, np.float32, np.float64, np.int8, np.int32, np.int64, np.uint16, np.uint64, np.bool_]
    dt = kinds[rng.integers(len(kinds))]
    ndim = int(rng.integers(0, 4))
    shape = tuple(int(n) for n in rng.integers(1, 12, size=ndim))
    if rng.random() < 0.15:
        shape = (int(rng.integers(1001, 2500)),)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    scale = 10.0 ** rng.integers(-12, 12, size=shape) if rng.random() < 0.3 else 10.0 ** rng.integers(-3, 5)
    with np.errstate(over="ignore"):
        x = (rng.standard_normal(shape) * scale).astype(dt)
    if x.size > 2 and rng.random() < 0.3:
        x.flat[:3] = [np.nan, np.inf, -np.inf]
    return x


def test_show_matches_array2string_on_random_arrays(tmp_path):
    rng = np.random.default_rng(2024)
    for i in range(120):
        a = random_case(rng)
        opts = {"precision": int(rng.integers(0, 10))} if rng.random() < 0.3 else {}
        np.save(tmp_path / "r.npy", a)
        assert show(tmp_path / "r.npy", opts) == np.array2string(a, **opts) + "\n", (i, a.dtype, a.shape, opts)

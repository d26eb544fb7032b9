"""NumPy and mxp read each other's .npy files, bit for bit.

NumPy writes every standard dtype (C and Fortran order, both byte orders,
format versions 1.0/2.0/3.0, 0-d, empty, 3-d); `mxp cast` reads them and
writes its own; NumPy reads those back.  bfloat16 and float8 files written
by mxp load in NumPy as one-field structured arrays whose raw bits are
checked against NumPy computations of the correctly rounded results.

Run by ctest (pytest_npy) with MXP_CLI naming the mxp binary.
"""
import os
import subprocess

import numpy as np
import pytest
from numpy.lib import format as npformat

MXP = os.environ.get("MXP_CLI")
pytestmark = pytest.mark.skipif(not MXP, reason="MXP_CLI is not set (run through ctest)")

STANDARD = ["|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8"]
BIG = ["<i2", "<i4", "<i8", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8"]
SHAPES = {"1d": (7,), "2d": (3, 5), "3d": (2, 3, 4), "0d": (), "empty": (0, 3)}


def mxp(*args, ok=True):
    r = subprocess.run([MXP, *map(str, args)], capture_output=True, text=True)
    if ok and r.returncode != 0:
        raise AssertionError("mxp %s: exit %d\n%s%s" % (" ".join(map(str, args)), r.returncode, r.stdout, r.stderr))
    return r


def bits(a):
    """The array's raw bits as unsigned integers, native order, C order."""
    a = np.ascontiguousarray(a)
    a = a.astype(a.dtype.newbyteorder("=")) if a.dtype.byteorder not in "=|" else a
    return a.view("u%d" % a.dtype.itemsize)


def random_array(descr, shape, seed=0):
    """Every bit pattern, except that signalling NaNs are made quiet (mxp's
    conversions quiet them, even float32 -> float32) and bools are 0/1."""
    dt = np.dtype(descr)
    n = int(np.prod(shape)) if shape else 1
    raw = np.random.default_rng(seed).integers(0, 256, size=n * dt.itemsize, dtype=np.uint8)
    a = raw.view(dt.newbyteorder("=")).copy()
    if dt.kind == "b":
        a = (raw % 2).view(dt)
    if dt.kind == "f":
        quiet = {2: 0x0200, 4: 0x00400000, 8: 0x0008000000000000}[dt.itemsize]
        u = a.view("u%d" % dt.itemsize)
        u[np.isnan(a)] |= quiet
    return a.astype(dt).reshape(shape)


def stat(path):
    out = mxp("stat", path).stdout
    return dict(line.split(None, 1) for line in out.strip().splitlines())


# ---- NumPy writes, mxp reads and writes, NumPy reads ------------------------

@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("descr", STANDARD)
def test_mxp_cast_to_the_same_dtype_keeps_every_bit(tmp_path, descr, shape):
    a = random_array(descr, shape, seed=STANDARD.index(descr))
    src, dst = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(src, a)
    mxp("cast", src, dst, "--to", a.dtype.name)
    b = np.load(dst)
    assert b.dtype == a.dtype and b.shape == a.shape
    assert np.array_equal(bits(a), bits(b))
    # NumPy's own file for the same array is byte for byte what mxp wrote.
    np.save(tmp_path / "numpy.npy", a)
    assert (tmp_path / "numpy.npy").read_bytes() == dst.read_bytes()


@pytest.mark.parametrize("descr", BIG)
def test_big_endian_files_are_read_and_written_in_native_order(tmp_path, descr):
    a = random_array(descr, (4, 3), seed=7).astype(np.dtype(descr).newbyteorder(">"))
    np.save(tmp_path / "be.npy", a)
    mxp("cast", tmp_path / "be.npy", tmp_path / "le.npy", "--to", a.dtype.name)
    b = np.load(tmp_path / "le.npy")
    assert b.dtype == a.dtype.newbyteorder("=")
    assert np.array_equal(bits(a), bits(b))


@pytest.mark.parametrize("descr", STANDARD)
def test_fortran_order_files_are_read(tmp_path, descr):
    a = np.asfortranarray(random_array(descr, (3, 4, 2), seed=3))
    np.save(tmp_path / "f.npy", a)
    s = stat(tmp_path / "f.npy")
    assert s["order"] == "F" and s["shape"] == "(3, 4, 2)"
    mxp("cast", tmp_path / "f.npy", tmp_path / "c.npy", "--to", a.dtype.name)
    b = np.load(tmp_path / "c.npy")
    assert b.flags.c_contiguous
    assert np.array_equal(bits(a), bits(b))


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
@pytest.mark.parametrize("descr", ["<f4", ">i8", "|u1"])
def test_format_versions_1_2_3_are_read(tmp_path, descr, version):
    a = random_array(descr, (5, 2), seed=11)
    with open(tmp_path / "v.npy", "wb") as f:
        npformat.write_array(f, a, version=version)
    assert (tmp_path / "v.npy").read_bytes()[6] == version[0]
    mxp("cast", tmp_path / "v.npy", tmp_path / "out.npy", "--to", a.dtype.name)
    assert np.array_equal(bits(a), bits(np.load(tmp_path / "out.npy")))


def test_trailing_bytes_are_ignored_as_numpy_does(tmp_path):
    a = np.arange(4, dtype="<f8")
    np.save(tmp_path / "t.npy", a)
    with open(tmp_path / "t.npy", "ab") as f:
        f.write(b"trailing")
    assert np.array_equal(np.load(tmp_path / "t.npy"), a)
    assert stat(tmp_path / "t.npy")["elements"] == "4"


# ---- bfloat16 and float8: structured arrays NumPy reads without mxp ---------

def float32_inputs():
    specials = np.array([0.0, -0.0, 1.0, -1.0, 0.1, 1e-40, -1e-45, 1.17549435e-38, 3.0e38, 3.4028235e38,
                         np.inf, -np.inf, 1 + 2.0**-8, 1 + 3 * 2.0**-8, 448, 464, 480, -500, 57344, 61440,
                         2.0**-9, 2.0**-10, 2.0**-16, 2.0**-17, 3 * 2.0**-18], dtype=np.float32)
    rng = np.random.default_rng(5)
    normal = (rng.standard_normal(2000) * np.exp2(rng.integers(-20, 20, 2000))).astype(np.float32)
    tiny = (rng.standard_normal(500) * 2.0**-12).astype(np.float32)
    return np.concatenate([specials, normal, tiny])


def rne_bf16(x):
    u = x.view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def e4m3_values():
    """The 127 non-negative finite float8_e4m3fn values, by code."""
    v = []
    for c in range(0x7F):
        e, m = c >> 3, c & 7
        v.append(m * 2.0**-9 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
    return np.array(v)


def rne_e4m3(x):
    """Nearest, ties to the even code; beyond 464 (half an ulp past 448;
    464 itself ties to 448) NaN, as mxp's default overflow mode gives for a
    type without inf."""
    vals = e4m3_values()
    m = np.abs(x.astype(np.float64))
    hi = np.clip(np.searchsorted(vals, m), 1, 0x7E)
    lo = hi - 1
    dlo, dhi = m - vals[lo], vals[hi] - m
    code = np.where((dhi < dlo) | ((dhi == dlo) & (hi % 2 == 0)), hi, lo)
    code = np.where(m <= vals[0], 0, code)
    code = np.where(m > 464, 0x7F, code)
    code = np.where(np.isnan(x), 0x7F, code)
    return (code | np.where(np.signbit(x), 0x80, 0)).astype(np.uint8)


def test_bfloat16_from_mxp_is_a_structured_array_with_rne_bits(tmp_path):
    x = np.concatenate([float32_inputs(), np.array([np.nan, -np.nan], np.float32)])
    np.save(tmp_path / "x.npy", x)
    r = mxp("cast", tmp_path / "x.npy", tmp_path / "y.npy", "--to", "bfloat16")
    assert "float32 -> " in r.stdout and "bfloat16" in r.stdout
    y = np.load(tmp_path / "y.npy")
    assert y.dtype.names == ("bfloat16",) and y.dtype["bfloat16"] == np.uint16
    got = y["bfloat16"]
    num = ~np.isnan(x)
    assert np.array_equal(got[num], rne_bf16(x[num]))
    nan = got[~num]
    assert np.all((nan & 0x7F80) == 0x7F80) and np.all(nan & 0x7F)
    assert np.array_equal(nan >> 15, np.signbit(x[~num]).astype(np.uint16))


def test_float8_e5m2_from_mxp_has_rne_bits(tmp_path):
    # float16-exact inputs: e5m2 is the top byte of float16, so RNE is one shift.
    rng = np.random.default_rng(9)
    h = rng.integers(0, 0x10000, 4000, dtype=np.uint64).astype(np.uint16)
    h = h[(h & 0x7C00) != 0x7C00]
    x = h.view(np.float16).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    mxp("cast", tmp_path / "x.npy", tmp_path / "y.npy", "--to", "e5m2")
    y = np.load(tmp_path / "y.npy")
    assert y.dtype.names == ("float8_e5m2",) and y.dtype.itemsize == 1
    want = ((h.astype(np.uint32) + 0x7F + ((h >> 8) & 1)) >> 8).astype(np.uint8)
    assert np.array_equal(y["float8_e5m2"], want)


def test_float8_e4m3fn_from_mxp_has_rne_bits(tmp_path):
    x = float32_inputs()
    x = x[np.isfinite(x)]
    np.save(tmp_path / "x.npy", x)
    r = mxp("cast", tmp_path / "x.npy", tmp_path / "y.npy", "--to", "float8_e4m3fn")
    y = np.load(tmp_path / "y.npy")
    assert y.dtype.names == ("float8_e4m3fn",)
    assert np.array_equal(y["float8_e4m3fn"], rne_e4m3(x))
    assert "overflow 0" not in r.stdout  # 464 and beyond overflowed


@pytest.mark.parametrize("name,field,nbytes", [("bfloat16", "<u2", 2), ("float8_e4m3fn", "|u1", 1),
                                               ("float8_e5m2", "|u1", 1)])
def test_structured_files_from_numpy_read_back_as_the_mxp_dtype(tmp_path, name, field, nbytes):
    codes = np.arange(0, 1 << (8 * nbytes), 97 if nbytes == 2 else 1).astype(field)
    np.save(tmp_path / "s.npy", codes.view([(name, field)]))
    assert stat(tmp_path / "s.npy")["dtype"] == name
    mxp("cast", tmp_path / "s.npy", tmp_path / "f32.npy", "--to", "float32")
    f32 = np.load(tmp_path / "f32.npy")
    if name == "bfloat16":
        want = (codes.astype(np.uint32) << 16).view(np.float32)
    elif name == "float8_e5m2":
        want = (codes.astype(np.uint16) << 8).view(np.float16).astype(np.float32)
    else:
        mag = np.append(e4m3_values(), np.nan)[codes & 0x7F]
        want = np.where(codes & 0x80, -mag, mag).astype(np.float32)
    assert np.array_equal(f32, want, equal_nan=True)
    # and written back with the same codes (NaNs stay NaN; signalling ones are quieted)
    mxp("cast", tmp_path / "s.npy", tmp_path / "again.npy", "--to", name)
    again = np.load(tmp_path / "again.npy")
    assert again.dtype == np.dtype([(name, field)])
    num = ~np.isnan(want)
    assert np.array_equal(again[name][num], codes[num])


# ---- mxp stat ---------------------------------------------------------------

def test_stat_counts_and_moments_match_numpy(tmp_path):
    x = np.array([1.5, -2.0, 0.0, -0.0, np.nan, np.inf, -np.inf, 1e-40, 3.0, np.nan], dtype=np.float32)
    np.save(tmp_path / "x.npy", x.reshape(2, 5))
    s = stat(tmp_path / "x.npy")
    assert s["shape"] == "(2, 5)" and s["dtype"] == "float32" and s["order"] == "C"
    assert s["bytes"] == "40" and s["elements"] == "10"
    assert (s["finite"], s["zero"], s["subnormal"], s["nan"], s["inf"]) == ("6", "2", "1", "2", "2")
    f = x[np.isfinite(x)].astype(np.float64)
    assert float(s["min"]) == f.min() and float(s["max"]) == f.max()
    assert float(s["mean"]) == pytest.approx(f.mean(), rel=1e-9)
    assert float(s["std"]) == pytest.approx(f.std(), rel=1e-9)


def test_stat_of_empty_and_integer_files(tmp_path):
    np.save(tmp_path / "e.npy", np.zeros((0, 3), np.float16))
    s = stat(tmp_path / "e.npy")
    assert s["elements"] == "0" and s["min"] == "n/a" and s["std"] == "n/a"
    np.save(tmp_path / "i.npy", np.array([[-3, 0], [7, 100]], np.int8))
    s = stat(tmp_path / "i.npy")
    assert (s["min"], s["max"], s["mean"], s["zero"]) == ("-3", "100", "26", "1")
    assert "subnormal" not in s and "nan" not in s  # integers have none


# ---- refusals and exit codes ------------------------------------------------

@pytest.mark.parametrize("make,says", [
    (lambda: np.array([{"a": 1}], dtype=object), "'|O'"),
    (lambda: np.zeros(2, np.complex128), "'<c16'"),
    (lambda: np.array([b"ab"]), "'|S2'"),
    (lambda: np.array(["ab"]), "'<U2'"),
    (lambda: np.zeros(2, "datetime64[ns]"), "'<M8[ns]'"),
    (lambda: np.zeros(2, [("a", "<f4"), ("b", "<f4")]), "one-field structured dtypes only"),
    (lambda: np.zeros(2, [("名", "<u2")]), "not printable ASCII"),  # written as format 3.0
])
@pytest.mark.filterwarnings("ignore:Stored array in format 3.0")
def test_unsupported_files_exit_1_naming_the_reason(tmp_path, make, says):
    np.save(tmp_path / "u.npy", make(), allow_pickle=True)
    r = mxp("stat", tmp_path / "u.npy", ok=False)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith(f"mxp stat: npy: {tmp_path / 'u.npy'}: ") and says in r.stderr


def test_usage_errors_exit_2(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros(3, np.float32))
    for args in (["stat"], ["stat", "--bogus"], ["cast", tmp_path / "a.npy", tmp_path / "b.npy"],
                 ["cast", tmp_path / "a.npy", "--to", "f16"], ["cast", "a", "b", "--to", "float128"],
                 ["cast", "a", "b", "--to", "f16", "--rounding", "sideways"]):
        assert mxp(*args, ok=False).returncode == 2, args
    assert mxp("cast", tmp_path / "nope.npy", tmp_path / "b.npy", "--to", "f16", ok=False).returncode == 1
    assert mxp("stat", "--help").stdout.startswith("usage: mxp stat")
    assert mxp("cast", "--help").stdout.startswith("usage: mxp cast")

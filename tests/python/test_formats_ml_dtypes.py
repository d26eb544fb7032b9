"""The formats added in 0.2 against ml_dtypes 0.6 through ctypes on
libmxp.so: every bit pattern of each format decoded, every float16 and
bfloat16 pattern and a stride through all 2^32 float32 patterns encoded
(nearest even, ml_dtypes' one rounding mode), bit for bit; the documented
differences (docs/conversions.md) checked as differences.  float64 sources
(the ties of each format nudged by less than half a float32 ulp, specials)
through mxp's NumPy module too, against a rounding computed here: where
ml_dtypes differs it has rounded through float32 first (the list of
formats where it does is THROUGH_FLOAT32, docs/conversions.md).

Run by ctest (pytest_formats_ml_dtypes) with the first venv's Python (it
has ml_dtypes); by hand:
    MXP_LIB=build/libmxp.so build/venv/bin/python -m pytest -q tests/python/test_formats_ml_dtypes.py
"""
import ctypes
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxp_ctypes as mx  # noqa: E402

ml = pytest.importorskip("ml_dtypes")

FLOATS = ["float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2fnuz",
          "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]
INTS = ["int4", "uint4", "int2", "uint2", "int1", "uint1"]


def convert(dst, src_array, src, rounding=0, overflow=0):
    """mxp_convert of a contiguous NumPy array between the named dtypes."""
    d, s = mx.lib.mxp_dtype_from_name(dst.encode()), mx.lib.mxp_dtype_from_name(src.encode())
    assert d > 0 and s > 0, (dst, src)
    size = mx.lib.mxp_dtype_get_traits(d).contents.itemsize
    out = np.empty(src_array.size, "u%d" % size)
    opts = mx.abi.mxp_convert_opts(0, rounding, overflow, 0, None, 0)
    mx.check(mx.lib.mxp_convert(out.ctypes.data_as(ctypes.c_void_p), d, src_array.ctypes.data_as(ctypes.c_void_p),
                                s, src_array.size, ctypes.byref(opts)), "mxp_convert")
    return out


def same(a, b):
    """Equal floats, NaN equal to NaN, zeros by sign."""
    return (a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))


@pytest.mark.parametrize("name", FLOATS)
def test_every_pattern_decodes_as_ml_dtypes(name):
    t = getattr(ml, name)
    pats = np.arange(1 << ml.finfo(t).bits, dtype=np.uint8)
    want = pats.view(t).astype(np.float64)
    got = convert("float64", pats, name).view(np.float64)
    assert same(got, want).all(), pats[~same(got, want)]


def known_difference(name, x):
    """The cases docs/conversions.md lists: NaN payloads (and every NaN
    into the IEEE-style types), float32 subnormals in [2^-127, 1.5 2^-127)
    into e8m0."""
    bits = x.view("u%d" % x.dtype.itemsize).astype(np.uint64)
    diff = np.isnan(x) & np.isin(name, ["float8_e3m4", "float8_e4m3"])
    if name == "float8_e8m0fnu" and x.dtype == np.float32:
        diff |= (bits >= 0x00400000) & (bits < 0x00600000)
    return diff


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("src", ["float16", "bfloat16", "float32"])
def test_encoding_matches_ml_dtypes(name, src):
    t = getattr(ml, name)
    if src == "float32":  # a prime stride through all 2^32 patterns, plus the NaN/inf/zero edges
        pats = np.concatenate([np.arange(0, 1 << 32, 4099, dtype=np.uint64),
                               np.array([0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000,
                                         0x7f800001, 0x00000001, 0x00400000, 0x00800000], np.uint64)]).astype(np.uint32)
        x = pats.view(np.float32)
    else:
        pats = np.arange(1 << 16, dtype=np.uint16)
        x = pats.view(np.float16 if src == "float16" else ml.bfloat16)
    with np.errstate(all="ignore"):
        want = x.astype(t).view(np.uint8)
    got = convert(name, x, src).astype(np.uint8)
    xf = x.astype(np.float32) if src != "float32" else x
    bad = (want != got) & ~known_difference(name, xf)
    assert not bad.any(), [(float(v), hex(w), hex(g)) for v, w, g in zip(xf[bad][:5], want[bad][:5], got[bad][:5])]


def test_documented_differences_are_what_they_say():
    # NaN payload kept in the IEEE-style float8s: quiet bit + the top payload
    # bit, 0.110 (ml_dtypes: the canonical 0.100)
    x = np.array([0x7fa00000], np.uint32).view(np.float32)
    assert convert("float8_e4m3", x, "float32")[0] == 0x7e and x.astype(ml.float8_e4m3).view(np.uint8)[0] == 0x7c
    # float32 subnormal just above 2^-127 into e8m0: mxp the nearest (2^-127)
    x = np.array([0x00400001], np.uint32).view(np.float32)
    assert convert("float8_e8m0fnu", x, "float32")[0] == 0x00
    assert x.astype(ml.float8_e8m0fnu).view(np.uint8)[0] == 0x01
    # NaN into float4/float6: both give the zero of the other sign
    x = np.array([np.nan, -np.nan], np.float32)
    assert list(convert("float4_e2m1fn", x, "float32")) == list(x.astype(ml.float4_e2m1fn).view(np.uint8)) == [8, 0]


@pytest.mark.parametrize("name", INTS)
def test_sub_byte_integers_read_as_ml_dtypes_and_saturate(name):
    t = getattr(ml, name)
    info = ml.iinfo(t)
    pats = np.arange(256, dtype=np.uint8)  # every byte: the bits above the type are ignored, as in ml_dtypes
    want = pats.view(t).astype(np.int64)
    got = convert("int64", pats, name).view(np.int64)
    assert (got == want).all()
    vals = np.arange(-20, 21, dtype=np.int64)
    got = convert(name, vals, "int64").view(t).astype(np.int64)
    assert (got == np.clip(vals, int(info.min), int(info.max))).all()  # ml_dtypes wraps; mxp saturates


def test_traits_equal_ml_dtypes_finfo_and_iinfo():
    for name in FLOATS:
        tr = mx.lib.mxp_dtype_get_traits(mx.lib.mxp_dtype_from_name(name.encode())).contents
        f = ml.finfo(getattr(ml, name))
        assert tr.bits == f.bits and tr.itemsize == 1
        assert tr.max == float(f.max) and tr.eps == float(f.eps)
        assert tr.min_normal == float(f.tiny) and tr.min_subnormal == float(f.smallest_subnormal)
        assert tr.exp_bits == f.nexp and tr.mant_bits == f.nmant
    for name in INTS:
        tr = mx.lib.mxp_dtype_get_traits(mx.lib.mxp_dtype_from_name(name.encode())).contents
        i = ml.iinfo(getattr(ml, name))
        assert (tr.lowest, tr.max, tr.bits) == (int(i.min), int(i.max), i.bits)


# ---- float64 sources: mxp rounds once; ml_dtypes 0.6 goes through float32 --

F64_FLOATS = ["float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float8_e4m3fnuz",
              "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "bfloat16"]
# The formats whose float64 -> format cast in ml_dtypes 0.6 rounds to float32
# first (found by test_float64_sources_round_once; docs/conversions.md lists
# them), each with an example: x, mxp's (correct) value, ml_dtypes' value.
# x = 1 + ulp(1)/2 + 2^-40 is just above a tie: float32 rounds it onto the tie,
# which goes to the even neighbour, 1.  e8m0's ties go up, so its example is
# just below one.  The integer types are cast from float64 directly.
THROUGH_FLOAT32 = {
    "float8_e3m4": (1 + 2.0**-5 + 2.0**-40, 1.0625, 1.0),
    "float8_e4m3": (1 + 2.0**-4 + 2.0**-40, 1.125, 1.0),
    "float8_e4m3fn": (1 + 2.0**-4 + 2.0**-40, 1.125, 1.0),
    "float8_e5m2": (1 + 2.0**-3 + 2.0**-40, 1.25, 1.0),
    "float8_e4m3b11fnuz": (1 + 2.0**-4 + 2.0**-40, 1.125, 1.0),
    "float8_e4m3fnuz": (1 + 2.0**-4 + 2.0**-40, 1.125, 1.0),
    "float8_e5m2fnuz": (1 + 2.0**-3 + 2.0**-40, 1.25, 1.0),
    "float8_e8m0fnu": (1.5 - 2.0**-40, 1.0, 2.0),
    "float6_e2m3fn": (1 + 2.0**-4 + 2.0**-40, 1.125, 1.0),
    "float6_e3m2fn": (1 + 2.0**-3 + 2.0**-40, 1.25, 1.0),
    "float4_e2m1fn": (1 + 2.0**-2 + 2.0**-40, 1.5, 1.0),
    "bfloat16": (1 + 2.0**-8 + 2.0**-40, 1.0078125, 1.0),
}
NUDGE = 2.0**-40  # relative: far below half a float32 ulp (2^-25), so float32 rounds a nudged tie onto the tie


def mxp_module():
    """mxp's NumPy module: from PYTHONPATH, else the build's (python-venv
    beside libmxp.so, where ctest finds it); None where neither imports."""
    try:
        import mxp
        return mxp
    except ImportError:
        pass
    path = os.path.join(os.path.dirname(os.path.abspath(mx.LIB_PATH)), "python-venv")
    if not os.path.isdir(os.path.join(path, "mxp")):
        return None
    sys.path.insert(0, path)
    try:
        import mxp
        return mxp
    except ImportError:
        sys.path.remove(path)
        return None


def uint_type(name):
    return np.uint16 if name == "bfloat16" else np.uint8


def mxp_cast(name, x):
    """x.astype(mxp.<name>)'s bits, checked equal to libmxp's mxp_convert (the
    library alone where the module is not built for this Python); into the
    integer types toward zero, as NumPy's casts and the module's."""
    got = convert(name, x, "float64", mx.ROUND_TOWARD_ZERO if name in INTS else 0).astype(uint_type(name))
    module = mxp_module()
    if module is not None:
        with np.errstate(all="ignore"):
            by_module = x.astype(getattr(module, name)).view(uint_type(name))
        assert np.array_equal(by_module, got)
    return got


def float64_inputs(name):
    """Each format's values, the midpoints between neighbours (0 and the
    smallest subnormal, max and the value past it included), each nudged by
    +-NUDGE relative and by one float64 ulp, log-uniform random values,
    specials; both signs."""
    rng = np.random.default_rng(25)
    if name in INTS:
        info = ml.iinfo(getattr(ml, name))
        k = np.arange(int(info.min) - 2, int(info.max) + 3, dtype=np.float64)
        near = np.concatenate([k, k * (1 + NUDGE), k * (1 - NUDGE), k + 2.0**-30, k - 2.0**-30, k + 0.5,
                               np.nextafter(k, np.inf), np.nextafter(k, -np.inf), rng.uniform(-20, 20, 4096)])
        special = [np.inf, np.nan, 1e300, 2.0**63, 5e-324]
    else:
        grid = value_grid(name)[0]
        pos = grid[grid > 0]
        mid = (np.concatenate([[0.0], pos[:-1]]) + pos) / 2  # exact: one bit more than the format
        near = np.concatenate([pos, pos * (1 + NUDGE), pos * (1 - NUDGE), mid, mid * (1 + NUDGE), mid * (1 - NUDGE),
                               np.nextafter(mid, np.inf), np.nextafter(mid, 0)])
        lo, hi = np.log2(pos[0]) - 3, np.log2(pos[-1]) + 1
        rand = np.exp2(rng.uniform(lo, hi, 4096)) * (1 + rng.uniform(-2.0**-20, 2.0**-20, 4096))
        near = np.concatenate([near, rand])
        special = [np.inf, np.nan, 1e300, 2.0**128, float(np.finfo(np.float32).max), 5e-324, 1e-45, 2.0**-150]
    x = np.concatenate([near, [0.0], special, [THROUGH_FLOAT32.get(name, (0.0,))[0]]])
    return np.concatenate([x, -x])


def value_grid(name):
    """The format's finite values, sorted, one zero (+0), with past its
    largest magnitude the value the next binade would start at (each sign):
    values, bit patterns (for the value past max: the format's own result
    for an infinity, its overflow), whether the pattern is even (the one past
    max counts as max's pattern + 1), and the pattern of -0 (None: no -0)."""
    t = getattr(ml, name)
    pats = np.arange(1 << (16 if name == "bfloat16" else ml.finfo(t).bits), dtype=np.uint32).astype(uint_type(name))
    with np.errstate(all="ignore"):
        v = pats.view(t).astype(np.float64)
        over = np.array([-np.inf, np.inf]).astype(t).view(uint_type(name)).astype(np.int64)
    minus_zero = pats[(v == 0) & np.signbit(v)]
    keep = np.isfinite(v) & ~((v == 0) & np.signbit(v))
    v, pats = v[keep], pats[keep].astype(np.int64)
    order = np.argsort(v, kind="stable")
    v, pats = v[order], pats[order]
    past = 2 * v[-1] if name == "float8_e8m0fnu" else v[-1] + (v[-1] - v[-2])
    even = (pats & 1) == 0
    past_even = not even[-1]
    if v[0] < 0:
        v, pats = np.concatenate([[-past], v, [past]]), np.concatenate([[over[0]], pats, [over[1]]])
        even = np.concatenate([[past_even], even, [past_even]])
    else:
        v, pats, even = np.append(v, past), np.append(pats, over[1]), np.append(even, past_even)
    return v, pats, even, (int(minus_zero[0]) if minus_zero.size else None)


def correctly_rounded(name, x):
    """The bits of x (float64) rounded once to nearest (ties to even; e8m0's
    ties up, as both libraries define them), worked out here from the
    format's value grid; and where that answer is defined (finite x, and for
    e8m0 positive x).  The distances x - lo and hi - x are exact in float64:
    lo, hi are adjacent values of one sign with |hi| <= 2|lo| (Sterbenz), or
    one of them is 0."""
    if name in INTS:
        info = ml.iinfo(getattr(ml, name))
        with np.errstate(all="ignore"):
            tr = np.trunc(x)
        defined = np.isfinite(x) & (tr >= int(info.min)) & (tr <= int(info.max))
        return (np.where(defined, tr, 0).astype(np.int64) & ((1 << info.bits) - 1)).astype(np.uint8), defined
    v, pats, even, minus_zero = value_grid(name)
    e8m0 = name == "float8_e8m0fnu"
    defined = np.isfinite(x) & ((x > 0) if e8m0 else True)
    xs = np.where(defined, x, 1.0)
    i = np.clip(np.searchsorted(v, xs, side="right") - 1, 0, v.size - 2)
    lo, hi = v[i], v[i + 1]
    dlo, dhi = xs - lo, hi - xs
    up = (dhi < dlo) | ((dhi == dlo) & (True if e8m0 else even[i + 1]))
    up |= xs >= hi  # past the largest value (or the value past max): overflow
    k = np.where(xs < lo, i, i + up)  # below the smallest: e8m0's 2^-127, the negative overflow
    bits = pats[k]
    if minus_zero is not None:  # a negative value that rounds to zero is -0 where the format has one (not fnuz)
        bits = np.where((v[k] == 0) & np.signbit(xs), minus_zero, bits)
    return bits.astype(uint_type(name)), defined


def nan_in(name, bits):
    with np.errstate(all="ignore"):
        return np.isnan(bits.view(getattr(ml, name)).astype(np.float64))


@pytest.mark.parametrize("name", F64_FLOATS + INTS)
def test_float64_sources_round_once(name):
    t = getattr(ml, name)
    x = float64_inputs(name)
    with np.errstate(all="ignore"):
        theirs = x.astype(t).view(uint_type(name))
        via_f32 = x.astype(np.float32).astype(t).view(uint_type(name))
    ours = mxp_cast(name, x)
    want, defined = correctly_rounded(name, x)
    bad = defined & (ours != want)
    assert not bad.any(), [(float(v), hex(g), hex(w)) for v, g, w in zip(x[bad][:5], ours[bad][:5], want[bad][:5])]
    # the inputs tell one rounding from two: through float32 is wrong for some
    assert (defined & (via_f32 != want)).any()
    if name in INTS:  # out of range and NaN: mxp saturates (NaN -> 0), ml_dtypes wraps (docs/conversions.md)
        info = ml.iinfo(t)
        with np.errstate(all="ignore"):
            sat = np.where(np.isnan(x), 0, np.clip(x, int(info.min), int(info.max)))
        sat = (np.trunc(sat).astype(np.int64) & ((1 << info.bits) - 1)).astype(np.uint8)
        assert np.array_equal(ours[~defined], sat[~defined])
        differ = defined & (ours != theirs)
    else:
        differ = (ours != theirs) & ~(nan_in(name, ours) & nan_in(name, theirs))
    # every difference is a float32 double rounding: ml_dtypes' answer is its
    # answer for float32(x), mxp's the one rounding (checked above)
    assert defined[differ].all(), x[differ & ~defined][:5]
    assert np.array_equal(theirs[differ], via_f32[differ]), x[differ & (theirs != via_f32)][:5]
    if name not in THROUGH_FLOAT32:
        assert not differ.any(), [(float(v), hex(g), hex(w)) for v, g, w in zip(x[differ][:5], ours[differ][:5],
                                                                                    theirs[differ][:5])]
        return
    assert differ.any()
    v, mxp_value, ml_value = THROUGH_FLOAT32[name]
    e = np.array([v])
    with np.errstate(all="ignore"):
        assert float(e.astype(t).astype(np.float64)[0]) == ml_value
        assert float(e.astype(np.float32).astype(t).astype(np.float64)[0]) == ml_value
    assert float(mxp_cast(name, e).view(t).astype(np.float64)[0]) == mxp_value
    assert correctly_rounded(name, e)[0][0] == mxp_cast(name, e)[0]

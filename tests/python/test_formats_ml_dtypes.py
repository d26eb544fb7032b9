"""The formats added in 0.2 against ml_dtypes 0.6 through ctypes on
libmxp.so: every bit pattern of each format decoded, every float16 and
bfloat16 pattern and a stride through all 2^32 float32 patterns encoded
(nearest even, ml_dtypes' one rounding mode), bit for bit; the documented
differences (docs/conversions.md) checked as differences.

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

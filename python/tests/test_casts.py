"""Casts: bit-exact against PyTorch (bfloat16) and the C library's
mxp_convert (float8), single rounding from float64, every NumPy type,
can_cast and result_type as docs/dtypes.md."""
import warnings

import numpy as np
import pytest

import mxp
from mxptest import FLOATS, all_values, bits, c_convert

NUMPY2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"

torch = pytest.importorskip("torch")


def test_every_bfloat16_to_float32_equals_torch():
    v = all_values(mxp.bfloat16)
    ours = v.astype(np.float32).view(np.uint32)
    theirs = torch.from_numpy(bits(v).view(np.int16).copy()).view(torch.bfloat16).float().numpy().view(np.uint32)
    # Bit for bit, except that signalling NaNs come out quiet (IEEE 754 and
    # docs/conversions.md; torch shifts the bits): same sign and payload.
    snan = ((theirs & 0x7FC00000) == 0x7F800000) & ((theirs & 0x003FFFFF) != 0)
    assert snan.sum() == 2 * 63
    assert np.array_equal(ours[~snan], theirs[~snan])
    assert np.array_equal(ours[snan], theirs[snan] | 0x00400000)


def _float32_edge_values():
    rng = np.random.default_rng(1)
    r = rng.integers(0, 2**32, 2**20, dtype=np.uint64).astype(np.uint32)
    hand = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF,
                     0x3F808000, 0x3F818000, 0x3F80FFFF, 0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0x7F7F8000,
                     0x00008000, 0x00018000], dtype=np.uint32)
    # every tie and near-tie around a grid of bfloat16 values
    base = (np.arange(0, 2**16, 97, dtype=np.uint32) << 16)
    near = (base[:, None] + np.array([0x7FFF, 0x8000, 0x8001, 0x18000], dtype=np.uint32)).ravel()
    return np.concatenate([r, hand, near]).view(np.float32)


def test_float32_to_bfloat16_equals_torch_nearest_even_nan_sign_kept():
    x = _float32_edge_values()
    ours = bits(x.astype(mxp.bfloat16))
    theirs = torch.from_numpy(x).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    nan = np.isnan(x)
    assert np.array_equal(ours[~nan], theirs[~nan])
    # NaN: stays NaN, sign kept (torch keeps it too; payloads may differ)
    assert np.all(np.isnan(x[nan].astype(mxp.bfloat16).astype(np.float32)))
    assert np.array_equal(ours[nan] >> 15, (x[nan].view(np.uint32) >> 31).astype(np.uint16))


@pytest.mark.parametrize("t", FLOATS)
@pytest.mark.parametrize("src", [np.float16, np.float32, np.float64, np.int8, np.uint8, np.int32, np.int64])
def test_casts_to_new_types_equal_the_c_library(libmxp, t, src):
    rng = np.random.default_rng(2)
    if np.dtype(src).kind == "f":
        x = np.concatenate([rng.standard_normal(20000) * 10.0 ** rng.integers(-8, 6, 20000),
                            [0.0, -0.0, np.inf, -np.inf, np.nan, 448, 464, 57344, 61440, 1e-40]]).astype(src)
    else:
        info = np.iinfo(src)
        x = rng.integers(info.min, info.max, 20000, dtype=src, endpoint=True)
    assert np.array_equal(bits(x.astype(t)), bits(c_convert(libmxp, x, t)))


@pytest.mark.parametrize("t", FLOATS)
@pytest.mark.parametrize("dst", [np.bool_, np.float16, np.float32, np.float64])
def test_casts_from_new_types_equal_the_c_library(libmxp, t, dst):
    v = all_values(t)
    ours, theirs = v.astype(dst), c_convert(libmxp, v, dst)
    assert np.array_equal(ours.view(np.uint8), theirs.view(np.uint8))


@pytest.mark.parametrize("t", FLOATS)
@pytest.mark.parametrize("dst", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64])
def test_casts_to_integers_truncate_as_numpy(t, dst):
    """astype(int) truncates, as NumPy's and ml_dtypes' do (C's conversion);
    mxp.astype rounds in the mode asked for."""
    v = all_values(t)
    with np.errstate(invalid="ignore", over="ignore"):
        ours = v.astype(dst)
    assert np.array_equal(ours, mxp.astype(v, dst, rounding="toward_zero"))
    f = v.astype(np.float64)
    info = np.iinfo(dst)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(f) & (np.trunc(f) >= info.min) & (np.trunc(f) <= float(info.max) / 2)
    assert ok.sum() > 20
    assert np.array_equal(ours[ok], np.trunc(f[ok]).astype(dst))
    assert np.array([1.5, 2.5, -3.5, 0.75], t).astype(int).tolist() == [1, 2, -3, 0]
    assert mxp.astype(np.array([1.5, 2.5, -3.5], t), np.int32).tolist() == [2, 2, -4]  # nearest even, asked for


def test_float64_is_rounded_once():
    # x = 1 + 2^-8 + 2^-30: float64 -> float32 rounds to the tie 1 + 2^-8,
    # then -> bfloat16 ties to even (1.0); one rounding gives 1 + 2^-7.
    x = np.array([1 + 2**-8 + 2**-30, -(1 + 2**-8 + 2**-30)], np.float64)
    assert x.astype(mxp.bfloat16).astype(np.float64).tolist() == [1 + 2**-7, -(1 + 2**-7)]
    assert x.astype(np.float32).astype(mxp.bfloat16).astype(np.float64).tolist()[0] == 1.0
    e = np.array([1 + 2**-4 + 2**-40], np.float64)  # e4m3: the tie at 1 + 2^-4, just above it
    assert float(e.astype(mxp.float8_e4m3fn)[0]) == 1.125


@pytest.mark.parametrize("t", FLOATS)
def test_long_double_and_complex(t):
    x = np.array([1.5, -2.5, 0.0], np.longdouble)
    assert x.astype(t).tolist() == [1.5, -2.5, 0.0]
    tie = np.longdouble(1) + np.longdouble(2) ** -8 + np.longdouble(2) ** -60  # lost by a float64 detour
    assert float(np.array([tie]).astype(mxp.bfloat16)[0]) == 1 + 2**-7
    c = np.array([1.5 + 2j], np.complex128)
    with np.testing.suppress_warnings() as sup:
        sup.filter(getattr(np, "exceptions", np).ComplexWarning)
        assert c.astype(t).tolist() == [1.5]
    assert np.array([1.5], t).astype(np.complex64).tolist() == [1.5 + 0j]
    assert np.array([0.5], t).astype(np.clongdouble)[0] == 0.5


def test_can_cast_follows_the_dtype_rules():
    bf, e4, e5 = mxp.bfloat16, mxp.float8_e4m3fn, mxp.float8_e5m2
    safe = [(bf, np.float32), (bf, np.float64), (np.int8, bf), (np.uint8, bf), (np.bool_, bf), (e4, bf), (e4, np.float16),
            (e5, np.float16), (e5, bf), (e4, np.float32), (bf, np.complex64)]
    unsafe = [(np.float16, bf), (bf, np.float16), (np.int16, bf), (np.float32, bf), (e4, e5), (e5, e4), (bf, e4),
              (bf, np.int8)]
    for a, b in safe:
        assert np.can_cast(a, b, "safe"), (a, b)
    for a, b in unsafe:
        if NUMPY2 and {a, b} == {e4, e5}:
            # NumPy 2 calls legacy dtypes of one kind and size equivalent; no
            # public hook marks this cast same_kind (docs/python.md).  The
            # cast still converts, and ufuncs promote the pair to float16.
            assert np.can_cast(a, b, "safe")
            want = {e4: [448.0, 1.0], e5: [448.0, 1.25]}[a]  # 1.125 ties to even in e5m2; 1.25 is exact in e4m3
            assert np.array([448.0, 1.125 if a is e4 else 1.25], a).astype(b).astype(np.float32).tolist() == want
            continue
        assert not np.can_cast(a, b, "safe"), (a, b)
    assert np.can_cast(np.float32, bf, "same_kind") and np.can_cast(np.float64, e4, "same_kind")
    assert not np.can_cast(bf, np.int8, "same_kind")


def test_result_type_follows_the_dtype_rules():
    """NumPy 1.x: np.result_type follows mxp's table (a common_dtype hook).
    NumPy 2 has no public such hook for legacy user dtypes: np.result_type
    gives mxp's answer where one type casts safely to the other and raises
    DTypePromotionError elsewhere (docs/python.md); ufuncs follow the whole
    table on both (test_ufuncs.py)."""
    bf, e4, e5 = mxp.bfloat16, mxp.float8_e4m3fn, mxp.float8_e5m2
    table = [((bf, np.float16), np.float32), ((np.float16, bf), np.float32), ((bf, np.int8), bf), ((bf, np.uint8), bf),
             ((bf, np.int16), np.float32), ((bf, np.float32), np.float32), ((bf, np.float64), np.float64),
             ((e4, e5), np.float16), ((e4, bf), bf), ((e5, bf), bf), ((e4, np.int8), np.float16), ((bf, np.int64), np.float64),
             ((bf, bf), bf), ((bf, np.bool_), bf), ((bf, np.complex64), np.complex64), ((e5, np.float16), np.float16)]
    no_common_on_numpy2 = {(bf, np.float16), (np.float16, bf), (bf, np.int16), (e4, np.int8), (bf, np.int64)}
    for (a, b), want in table:
        if NUMPY2 and (a, b) == (e4, e5):  # "equivalent" legacy dtypes (test_can_cast_follows_the_dtype_rules)
            assert np.result_type(a, b) == np.dtype(e4) and np.promote_types(a, b) == np.dtype(e4)
            continue
        if NUMPY2 and (a, b) in no_common_on_numpy2:
            with pytest.raises(np.exceptions.DTypePromotionError):
                np.result_type(a, b)
            with pytest.raises(np.exceptions.DTypePromotionError):
                np.promote_types(a, b)
            continue
        assert np.result_type(a, b) == np.dtype(want), (a, b)
        assert np.promote_types(a, b) == np.dtype(want), (a, b)
    if NUMPY2:
        with pytest.raises(np.exceptions.DTypePromotionError):
            np.concatenate([np.ones(2, bf), np.ones(2, np.float16)])
        return
    assert np.concatenate([np.ones(2, bf), np.ones(2, np.float16)]).dtype == np.float32


def test_mxp_result_type_gives_the_table_on_every_numpy():
    bf, e4, e5 = mxp.bfloat16, mxp.float8_e4m3fn, mxp.float8_e5m2
    table = [((bf, np.float16), np.float32), ((e4, e5), np.float16), ((e5, e4), np.float16), ((bf, np.int16), np.float32),
             ((e4, np.int8), np.float16), ((bf, np.int64), np.float64), ((bf, np.uint8), bf), ((e4, bf), bf),
             ((bf, np.complex64), np.complex64), ((np.int8, np.uint8), np.int16)]
    for (a, b), want in table:
        assert mxp.promote_types(a, b) == np.dtype(want), (a, b)
        assert mxp.result_type(np.ones(1, a), b) == np.dtype(want), (a, b)
    assert mxp.result_type(bf, np.float16, np.float64) == np.float64
    assert mxp.matmul(np.ones((2, 2), bf), np.ones((2, 2), np.float16)).dtype == np.float32
    with pytest.raises(TypeError):
        mxp.result_type()
    with pytest.raises(TypeError):
        mxp.promote_types(bf, "not a dtype")


@pytest.mark.parametrize("t", FLOATS)
@pytest.mark.parametrize("c", [np.complex64, np.complex128, np.clongdouble])
def test_complex_arrays_cast_both_ways_element_by_element(t, c):
    """Arrays of several distinct values (one-element arrays hide swapped
    item sizes: [1+2j, 3+4j, 5+6j] once became [1, 5, 0])."""
    z = np.array([1 + 2j, 3 + 4j, 5 + 6j, -0.5 - 1j], c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", getattr(np, "exceptions", np).ComplexWarning)
        back = z.astype(t)
    assert back.astype(np.float64).tolist() == [1.0, 3.0, 5.0, -0.5]
    there = np.array([1.0, 3.0, 5.0, -0.5], t).astype(c)
    assert there.tolist() == [1 + 0j, 3 + 0j, 5 + 0j, -0.5 + 0j]

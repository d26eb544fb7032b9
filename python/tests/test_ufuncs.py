"""ufuncs on the mxp dtypes: every bit pattern (or a grid with subnormals,
+-0, +-inf, NaN) against a float64 reference rounded once; result dtypes;
reductions accumulated wide and rounded once."""
import math

import numpy as np
import pytest

import mxp
from mxptest import FLOATS, all_values, bits

EXACT_UNARY = ["negative", "positive", "absolute", "fabs", "sign", "reciprocal", "square", "sqrt", "floor", "ceil",
               "rint", "trunc"]
TRANSCENDENTAL = ["cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin",
                  "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg",
                  "radians", "degrees"]
EXACT_BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "minimum", "fmax", "fmin", "copysign",
                "floor_divide", "remainder", "fmod"]
BINARY_MATH = ["power", "arctan2", "hypot", "logaddexp", "logaddexp2"]
COMPARE = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
           "logical_xor"]
PREDICATES = ["isnan", "isinf", "isfinite", "signbit", "logical_not"]


def same(a, b):
    """Bitwise equal, any NaN equal to any NaN."""
    a, b = np.asarray(a), np.asarray(b)
    na, nb = np.isnan(a.astype(np.float32)), np.isnan(b.astype(np.float32))
    return np.array_equal(na, nb) and np.array_equal(bits(a)[~na], bits(b)[~nb])


def ulps_apart(a, b, t):
    """Distance in units in the last place of t (NaN with NaN: 0)."""
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    both_nan = np.isnan(fa) & np.isnan(fb)
    ia = bits(a).astype(np.int64)
    ib = bits(b).astype(np.int64)
    sign = 1 << (8 * np.dtype(t).itemsize - 1)
    ia = np.where(ia & sign, sign - ia, ia)  # sign-magnitude to a monotone integer line
    ib = np.where(ib & sign, sign - ib, ib)
    d = np.abs(ia - ib)
    return np.where(both_nan, 0, d)


def grid(t):
    v = all_values(t)
    return v if v.size <= 256 else v[::3]


def unary_and_float64_rounded_once(t, name):
    """np.<name> of every value of t, and of the same in float64 rounded
    once to t; the first checked to be of dtype t."""
    x = all_values(t)
    f = getattr(np, name)
    with np.errstate(all="ignore"):
        got, want = f(x), f(x.astype(np.float64)).astype(t)
    assert got.dtype == np.dtype(t)
    return got, want


@pytest.mark.parametrize("t", FLOATS)
@pytest.mark.parametrize("name", EXACT_UNARY)
def test_exact_unary_equals_float64_rounded_once(t, name):
    got, want = unary_and_float64_rounded_once(t, name)
    assert same(got, want)


@pytest.mark.parametrize("t", FLOATS)
@pytest.mark.parametrize("name", TRANSCENDENTAL)
def test_transcendental_within_one_ulp_of_float64_rounded_once(t, name):
    got, want = unary_and_float64_rounded_once(t, name)
    d = ulps_apart(got, want, t)
    assert d.max() <= 1 and np.mean(d == 0) >= 0.999, (int(d.max()), float(np.mean(d == 0)))


def pairs(t):
    g = grid(t) if np.dtype(t).itemsize == 1 else all_values(t)[::257]
    a, b = np.meshgrid(g, g)
    return a.ravel(), b.ravel()


@pytest.mark.parametrize("t", FLOATS)
@pytest.mark.parametrize("name", EXACT_BINARY + BINARY_MATH)
def test_binary_equals_float64_rounded_once(t, name):
    a, b = pairs(t)
    f = getattr(np, name)
    with np.errstate(all="ignore"):
        got, want = f(a, b), f(a.astype(np.float64), b.astype(np.float64)).astype(t)
    assert got.dtype == np.dtype(t)
    if name in EXACT_BINARY:
        assert same(got, want)
    else:
        assert ulps_apart(got, want, t).max() <= 1


@pytest.mark.parametrize("t", FLOATS)
@pytest.mark.parametrize("name", COMPARE)
def test_comparisons_and_logical(t, name):
    a, b = pairs(t)
    f = getattr(np, name)
    got, want = f(a, b), f(a.astype(np.float64), b.astype(np.float64))
    assert got.dtype == np.bool_ and np.array_equal(got, want)


@pytest.mark.parametrize("t", FLOATS)
@pytest.mark.parametrize("name", PREDICATES)
def test_predicates(t, name):
    x = all_values(t)
    got, want = getattr(np, name)(x), getattr(np, name)(x.astype(np.float64))
    assert got.dtype == np.bool_ and np.array_equal(got, want)


def test_nextafter_spacing_frexp_ldexp_step_in_the_type():
    one = np.array([1.0], mxp.bfloat16)
    assert float(np.nextafter(one, np.array([2.0], mxp.bfloat16))[0]) == 1 + 2**-7
    assert float(np.nextafter(one, np.array([0.0], mxp.bfloat16))[0]) == 1 - 2**-8
    assert float(np.spacing(one)[0]) == 2**-7
    assert float(np.spacing(np.array([1.0], mxp.float8_e4m3fn))[0]) == 2**-3
    assert float(np.nextafter(np.array([0.0], mxp.float8_e5m2), np.array([1.0], mxp.float8_e5m2))[0]) == 2**-16
    m, e = np.frexp(np.array([12.0, 0.375, 0.0], mxp.bfloat16))
    assert m.dtype == np.dtype(mxp.bfloat16) and m.tolist() == [0.75, 0.75, 0.0] and e.tolist() == [4, -1, 0]
    r = np.ldexp(np.array([1.5, 3.0], mxp.bfloat16), np.array([3, -1], np.int32))
    assert r.dtype == np.dtype(mxp.bfloat16) and r.tolist() == [12.0, 1.5]
    r = np.ldexp(np.array([1.5], mxp.bfloat16), np.array([2], np.int64))
    assert r.tolist() == [6.0]


@pytest.mark.parametrize("t", FLOATS)
def test_strided_broadcast_and_out(t):
    x = np.arange(40, dtype=np.float32).reshape(5, 8).astype(t)
    y = x[:, ::-3] + x[:, :3]
    assert same(y, (x[:, ::-3].astype(np.float64) + x[:, :3].astype(np.float64)).astype(t))
    z = x * np.array([2.0], t)
    assert same(z, (x.astype(np.float64) * 2).astype(t))
    out = np.empty_like(x)
    np.multiply(x, x, out=out)
    assert same(out, (x.astype(np.float64) ** 2).astype(t))
    x2 = x.copy()
    x2 += x  # in place
    assert same(x2, (2 * x.astype(np.float64)).astype(t))


def test_mixed_types_give_the_promoted_type():
    a = np.ones(4, mxp.bfloat16)
    assert (a + np.float16(1)).dtype == np.float32
    assert (a + np.ones(4, np.float32)).dtype == np.float32
    assert (a + np.ones(4, np.int8)).dtype == np.dtype(mxp.bfloat16)
    assert (np.ones(4, mxp.float8_e4m3fn) + np.ones(4, mxp.float8_e5m2)).dtype == np.float16
    assert (np.ones(4, mxp.float8_e4m3fn) * a).dtype == np.dtype(mxp.bfloat16)
    assert (a == np.ones(4, np.float32)).dtype == np.bool_
    assert (a + np.ones(4, np.int16)).dtype == np.float32 and (a * np.ones(4, np.int64)).dtype == np.float64
    assert (np.ones(4, mxp.float8_e4m3fn) + np.ones(4, np.int8)).dtype == np.float16
    assert (np.float16(1) + a).dtype == np.float32 and (a > np.ones(4, np.float16)).dtype == np.bool_
    assert np.add(a, a, dtype=np.float32).dtype == np.float32



def test_partners_without_an_mxp_rule_keep_numpys_result():
    # complex, object, long double, Python complex: mxp's promoters step
    # aside and NumPy resolves as for any user dtype
    a = np.ones(4, mxp.bfloat16)
    for other, want in [(np.ones(4, np.complex64), np.complex64), (np.ones(4, object), object),
                        (np.ones(4, np.longdouble), np.longdouble), (1j, np.complex64)]:
        assert (a + other).dtype == want and (other + a).dtype == want
        assert (a < other).dtype == np.bool_
    assert np.add.reduce(a).dtype == np.dtype(mxp.bfloat16) and float(np.add.reduce(a)) == 4.0
    with pytest.raises(TypeError):
        a + np.array(["x"] * 4)

NUMPY2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


@pytest.mark.parametrize("t", FLOATS)
def test_python_scalars_keep_the_type_on_numpy2(t):
    """NEP 50 (NumPy 2): a Python int or float is weak, as with float16;
    NumPy 1.x picks the smallest type that holds the value."""
    a = np.array([1.5, -2.0, 3.0], t)
    for s in (1, 0.5, True):
        for r in (a + s, s * a, a - s, np.maximum(a, s), a / s):
            if NUMPY2:
                assert r.dtype == np.dtype(t), (s, r.dtype)
    if NUMPY2:
        assert same(a * 0.5, (a.astype(np.float64) * 0.5).astype(t))
        assert (a > 1).dtype == np.bool_ and np.array_equal(a > 1, [True, False, True])
    else:
        assert (a * 0.5).dtype in (np.dtype(t), np.float16, np.float32)


def test_sum_of_2_24_normal_values_within_one_ulp():
    x = np.random.default_rng(0).standard_normal(2**24).astype(mxp.bfloat16)
    exact = math.fsum(x.astype(np.float64))
    s = np.sum(x)
    assert type(s) is mxp.bfloat16
    ulp = float(np.spacing(np.array([exact], mxp.bfloat16))[0])
    assert abs(float(s) - exact) <= ulp, (float(s), exact)
    assert abs(float(np.add.reduce(x)) - exact) <= ulp
    assert abs(float(np.mean(x)) - exact / 2**24) <= float(np.spacing(np.array([exact / 2**24], mxp.bfloat16))[0])


def _round_once(value, t):
    return np.array([value]).astype(t)[0]


@pytest.mark.parametrize("seed", range(40))
def test_a_new_reduction_into_the_same_output_never_resumes_the_last_one(seed):
    # Issue 24 item 4: a second np.add.reduce into the same output, on the
    # input right after the first one's, with initial= the bits the first
    # wrote, was folded into the first call's float64 sum.  Each call must be
    # its own sum, rounded once -- and a single call over several of NumPy's
    # 8192-element chunks still rounds once.
    x = (np.random.default_rng(seed).standard_normal(20000) * 4).astype(mxp.bfloat16)
    whole = x.astype(np.float64)
    assert same(np.add.reduce(x), _round_once(math.fsum(whole), mxp.bfloat16))
    o = np.zeros((), mxp.bfloat16)
    np.add.reduce(x[:10000], out=o)
    first = o[()]
    assert same(first, _round_once(math.fsum(whole[:10000]), mxp.bfloat16))
    for initial in (float(first), mxp.bfloat16(first), np.array(first, mxp.bfloat16)):
        o[()] = first
        np.add.reduce(x[10000:], out=o, initial=initial)
        want = _round_once(float(first) + math.fsum(whole[10000:]), mxp.bfloat16)
        assert same(o[()], want), (type(initial), float(o[()]), float(want))
    y = (1 + np.random.default_rng(seed).standard_normal(20000) / 1024).astype(mxp.bfloat16)
    p = np.ones((), mxp.bfloat16)
    np.multiply.reduce(y[:10000], out=p)
    head = p[()]
    np.multiply.reduce(y[10000:], out=p, initial=float(head))
    want = _round_once(float(head) * float(np.prod(y[10000:].astype(np.float64))), mxp.bfloat16)
    assert same(p[()], want)


@pytest.mark.parametrize("t", FLOATS)
def test_reductions_along_axes(t):
    x = np.random.default_rng(1).standard_normal((30, 50)).astype(t)
    for axis in (None, 1):
        got = np.sum(x, axis=axis)
        want = np.sum(x.astype(np.float64), axis=axis).astype(t)
        assert same(got, want)
    assert same(np.prod(x[0, :6]), np.array(np.prod(x[0, :6].astype(np.float64)), t))
    assert same(np.max(x), np.array(np.max(x.astype(np.float64)), t))
    assert same(np.min(x, axis=0), np.min(x.astype(np.float64), axis=0).astype(t))
    y = x.copy()
    y[3, 7] = np.nan
    assert math.isnan(float(np.max(y))) and math.isnan(float(np.sum(y)))


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_extreme_reductions_over_many_blocks(name):
    x = np.random.default_rng(5).standard_normal(50001).astype(mxp.bfloat16)
    f = getattr(np, name)
    assert same(f.reduce(x), np.array(f.reduce(x.astype(np.float64)), mxp.bfloat16))
    x[40000] = np.nan  # in a later block
    with np.errstate(invalid="ignore"):
        assert same(f.reduce(x), np.array(f.reduce(x.astype(np.float64)), mxp.bfloat16))
    assert same(f.reduce(x[::-3]), np.array(f.reduce(x[::-3].astype(np.float64)), mxp.bfloat16))


@pytest.mark.parametrize("t", FLOATS)
def test_cumulative_ufuncs(t):
    """np.cumsum, np.cumprod, op.accumulate: each output is the float64
    running value rounded once (NumPy's float16 rounds at every step)."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(3000) * (0.05 if t is mxp.float8_e4m3fn else 1)).astype(t)
    f = x.astype(np.float64)
    assert same(np.cumsum(x), np.cumsum(f).astype(t))
    assert same(np.add.accumulate(x), np.cumsum(f).astype(t))
    y = x.reshape(30, 100)
    for axis in (0, 1):
        assert same(np.cumsum(y, axis=axis), np.cumsum(y.astype(np.float64), axis=axis).astype(t))
    p = np.array([1.5, 2.0, -0.5, 3.0, 0.25], t)
    assert same(np.cumprod(p), np.cumprod(p.astype(np.float64)).astype(t))
    m = np.array([1.0, 3.0, 2.0, np.nan, 5.0, -1.0], t)
    assert same(np.maximum.accumulate(m), np.maximum.accumulate(m.astype(np.float64)).astype(t))
    assert same(np.fmin.accumulate(m), np.fmin.accumulate(m.astype(np.float64)).astype(t))
    s = np.array([10.0, 1.0, 2.0, 0.5], t)  # subtract: step by step, each rounded
    want = [float(s[0])]
    for v in s[1:].astype(np.float64):
        want.append(float(np.array([want[-1] - v]).astype(t)[0]))
    assert same(np.subtract.accumulate(s), np.array(want, t))
    z = x.copy()
    np.cumsum(z, out=z)
    assert same(z, np.cumsum(f).astype(t))
    assert same(np.cumsum(x[::-2]), np.cumsum(f[::-2]).astype(t))
    if t is mxp.bfloat16:
        tenth = np.full(10000, 0.1, t)  # a bfloat16 chain stalls at 32; the running value does not
        assert float(np.cumsum(tenth)[-1]) == float(np.array(10000 * float(tenth[0]), t))


def test_numpy_nan_functions_as_documented():
    """docs/python.md: NumPy treats these types as non-float in its nan*
    functions (np.issubdtype(t, np.floating) is False): the ones that
    reach fmax/fmin or sorting skip NaNs, the others see them -- and
    np.nanargmax returns the NaN's position (a trap the docs name)."""
    a = np.array([1.0, np.nan, 3.0], mxp.bfloat16)
    assert not np.issubdtype(mxp.bfloat16, np.floating)
    assert float(np.nanmax(a)) == 3.0 and float(np.nanmin(a)) == 1.0 and float(np.nanmedian(a)) == 2.0
    assert np.isnan(float(np.nansum(a))) and np.isnan(float(np.nanmean(a)))
    assert np.isnan(np.nan_to_num(a).astype(np.float32)[1])
    assert np.nanargmax(a) == 1  # the NaN: NumPy does not replace it for these types
    assert np.argmax(np.where(np.isnan(a), -np.inf, a)) == 2  # the documented way round


@pytest.mark.parametrize("t", FLOATS)
@pytest.mark.parametrize("name", ["negative", "sqrt", "exp", "isnan", "frexp", "absolute", "signbit"])
def test_unary_ufuncs_on_strided_views_equal_a_contiguous_copy(t, name):
    """Each input and output stride is its own (a loop that took the input's
    step from the output gave np.negative(a[::2]) = [-0, -1, -2, ...])."""
    x = np.random.default_rng(4).standard_normal((40, 30)).astype(t)
    f = getattr(np, name)
    with np.errstate(all="ignore"):
        for view in (x[:, ::2], x[::-3], x.T, x[::2, ::-1]):
            got, want = f(view), f(np.ascontiguousarray(view))
            for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                assert g.dtype == w.dtype and np.array_equal(g.view(np.uint8) if g.dtype.itemsize == 1 else g.view(
                    {2: np.uint16, 4: np.uint32}.get(g.dtype.itemsize, np.uint8)), w.view(np.uint8) if
                    w.dtype.itemsize == 1 else w.view({2: np.uint16, 4: np.uint32}.get(w.dtype.itemsize, np.uint8)))

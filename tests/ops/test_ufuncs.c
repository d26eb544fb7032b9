/* NumPy's ufunc set as elementwise ops: every op added for the ufunc loops
 * on float16, bfloat16, float8 (every bit pattern where that is cheap),
 * float32 and float64 against a float64 reference computed here and rounded
 * once with mxp_convert (nextafter and spacing against steps of the output
 * dtype's bit patterns; floor_divide and remainder against NumPy's divmod
 * run in float, as its float32 and float16 loops run it), hand-written
 * edge cases, integer semantics and result dtypes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static const mxp_dtype float_types[] = { MXP_F16, MXP_BF16, MXP_E4M3, MXP_E5M2, MXP_F32, MXP_F64 };
enum { NFLOAT = sizeof float_types / sizeof float_types[0] };

/* ---- values and bit patterns of a dtype ------------------------------- */

static double decode(mxp_dtype dt, uint64_t bits)
{
    double d;
    assert_int_equal(mxp_convert(&d, MXP_F64, &bits, dt, 1, NULL), MXP_OK); /* little-endian */
    return d;
}

static uint64_t encode(mxp_dtype dt, double x)
{
    uint64_t bits = 0;
    assert_int_equal(mxp_convert(&bits, dt, &x, MXP_F64, 1, NULL), MXP_OK);
    return bits;
}

/* x rounded once (nearest even) to dt and back. */
static double round_to(mxp_dtype dt, double x) { return decode(dt, encode(dt, x)); }

static uint64_t sign_bit(mxp_dtype dt) { return 1ull << (8 * mxp_dtype_itemsize(dt) - 1); }

/* The values the op tests run on: every bit pattern of 8-bit types (and of
 * 16-bit ones for unary ops), else special values and random patterns. */
static uint64_t *test_bits(mxp_dtype dt, bool binary, size_t *count)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(dt);
    const size_t size = mxp_dtype_itemsize(dt);
    if (size == 1 || (size == 2 && !binary)) {
        *count = (size_t)1 << (8 * size);
        uint64_t *v = malloc(*count * sizeof *v);
        for (size_t i = 0; i < *count; i++)
            v[i] = i;
        return v;
    }
    const double special[] = { 0.0, -0.0, INFINITY, -INFINITY, NAN, t->min_subnormal, -t->min_subnormal,
                               t->min_normal, -t->min_normal, t->min_normal - t->min_subnormal, t->max, -t->max,
                               1, -1, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3, -3, 7, -7, 0.1, 100, -100, 1e4, 0.75 };
    const size_t ns = sizeof special / sizeof special[0], nr = binary ? 300 : 20000;
    *count = ns + nr;
    uint64_t *v = malloc(*count * sizeof *v), s = 0x9e3779b97f4a7c15ull * (uint64_t)dt;
    for (size_t i = 0; i < ns; i++)
        v[i] = encode(dt, special[i]);
    for (size_t i = ns; i < *count; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = size == 8 ? s ^ (s >> 29) : (s >> 17) & ((1ull << (8 * size)) - 1);
    }
    return v;
}

/* ---- references ---------------------------------------------------------- */

/* nextafter in dt's bit patterns: one step of the magnitude. */
static double ref_nextafter(mxp_dtype dt, uint64_t xb, double y)
{
    double x = decode(dt, xb);
    if (isnan(x) || isnan(y))
        return NAN;
    if (x == y)
        return y;
    if (x == 0)
        return decode(dt, 1 | (y < 0 ? sign_bit(dt) : 0));
    return decode(dt, (y > x) == (x > 0) ? xb + 1 : xb - 1);
}

/* NumPy's npy_spacing: the step away from zero, signed as x. */
static double ref_spacing(mxp_dtype dt, uint64_t xb)
{
    double x = decode(dt, xb);
    if (isnan(x) || isinf(x))
        return NAN;
    if (x == 0)
        return decode(dt, 1);
    return decode(dt, xb + 1) - x;
}

/* NumPy's npy_divmodf, in float as its float32 and float16 loops run it. */
static float ref_divmodf(float a, float b, float *modulus)
{
    float mod = fmodf(a, b);
    if (b == 0) {
        *modulus = mod;
        return a / b;
    }
    float div = (a - mod) / b;
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) {
            mod += b;
            div -= 1.0f;
        }
    } else {
        mod = copysignf(0.0f, b);
    }
    float floordiv = copysignf(0.0f, a / b);
    if (div != 0) {
        floordiv = floorf(div);
        if (div - floordiv > 0.5f)
            floordiv += 1.0f;
    }
    *modulus = mod;
    return floordiv;
}

static double ref_binary(mxp_binary_op op, mxp_dtype dt, uint64_t xb, double x, double y)
{
    float mod;
    switch (op) {
    case MXP_OP_FLOOR_DIVIDE: return ref_divmodf((float)x, (float)y, &mod);
    case MXP_OP_REMAINDER: ref_divmodf((float)x, (float)y, &mod); return mod;
    case MXP_OP_FMOD: return fmod(x, y);
    case MXP_OP_FMAX: return isnan(y) ? x : isnan(x) ? y : x > y ? x : y;
    case MXP_OP_FMIN: return isnan(y) ? x : isnan(x) ? y : x < y ? x : y;
    case MXP_OP_ARCTAN2: return atan2(x, y);
    case MXP_OP_HYPOT: return hypot(x, y);
    case MXP_OP_COPYSIGN: return copysign(x, y);
    case MXP_OP_NEXTAFTER: return ref_nextafter(dt, xb, y);
    case MXP_OP_LOGICAL_AND: return x != 0 && y != 0;
    case MXP_OP_LOGICAL_OR: return x != 0 || y != 0;
    case MXP_OP_LOGADDEXP: /* in long double: an independent route */
        if (x == y)
            return x + 0.693147180559945309417;
        return (double)(fmaxl(x, y) + log1pl(expl(-fabsl((long double)x - y))));
    case MXP_OP_LOGADDEXP2:
        if (x == y)
            return x + 1;
        return (double)(fmaxl(x, y) + log1pl(exp2l(-fabsl((long double)x - y))) / 0.693147180559945309417232121458L);
    default: return (x != 0) != (y != 0); /* logical_xor */
    }
}

/* The unary ops that are one libm function of the same name. */
static double (*const libm_unary[MXP_UNARY_OP_COUNT])(double) = {
    [MXP_OP_CBRT] = cbrt,   [MXP_OP_EXP2] = exp2,   [MXP_OP_EXPM1] = expm1,   [MXP_OP_LOG2] = log2,
    [MXP_OP_LOG10] = log10, [MXP_OP_LOG1P] = log1p, [MXP_OP_SIN] = sin,       [MXP_OP_COS] = cos,
    [MXP_OP_TAN] = tan,     [MXP_OP_ARCSIN] = asin, [MXP_OP_ARCCOS] = acos,   [MXP_OP_ARCTAN] = atan,
    [MXP_OP_SINH] = sinh,   [MXP_OP_COSH] = cosh,   [MXP_OP_ARCSINH] = asinh, [MXP_OP_ARCCOSH] = acosh,
    [MXP_OP_ARCTANH] = atanh, [MXP_OP_FLOOR] = floor, [MXP_OP_CEIL] = ceil,   [MXP_OP_TRUNC] = trunc,
    [MXP_OP_RINT] = nearbyint, /* the test runs in round-to-nearest */
};

static double ref_unary(mxp_unary_op op, mxp_dtype dt, uint64_t xb, double x)
{
    int e = 0;
    if (libm_unary[op])
        return libm_unary[op](x);
    switch (op) {
    case MXP_OP_POSITIVE: return x;
    case MXP_OP_SIGN: return isnan(x) ? x : x > 0 ? 1 : x < 0 ? -1 : 0;
    case MXP_OP_RECIPROCAL: return 1 / x;
    case MXP_OP_SQUARE: return x * x;
    case MXP_OP_SPACING: return ref_spacing(dt, xb);
    case MXP_OP_ISNAN: return isnan(x) != 0;
    case MXP_OP_ISINF: return isinf(x) != 0;
    case MXP_OP_ISFINITE: return isfinite(x) != 0;
    case MXP_OP_SIGNBIT: return signbit(x) != 0;
    case MXP_OP_LOGICAL_NOT: return x == 0;
    case MXP_OP_DEG2RAD: return (double)((long double)x * (3.14159265358979323846264338327950288L / 180));
    case MXP_OP_RAD2DEG: return (double)((long double)x * (180 / 3.14159265358979323846264338327950288L));
    default: { /* frexp */
        const double m = x == 0 || !isfinite(x) ? x : frexp(x, &e);
        return op == MXP_OP_FREXP_MANTISSA ? m : e;
    }
    }
}

/* got (n elements of rt) equals want (float64) rounded once to rt; any NaN
 * for a NaN. */
static void check_rounded_once(const char *what, mxp_dtype dt, const unsigned char *got, mxp_dtype rt,
                               const double *want, const double *x, const double *y, size_t n)
{
    const size_t size = mxp_dtype_itemsize(rt);
    unsigned char *w = malloc(n * size);
    assert_int_equal(mxp_convert(w, rt, want, MXP_F64, n, NULL), MXP_OK);
    for (size_t i = 0; i < n; i++) {
        uint64_t g = 0, e = 0;
        memcpy(&g, got + i * size, size);
        memcpy(&e, w + i * size, size);
        if (g == e || (isnan(want[i]) && isnan(decode(rt, g))))
            continue;
        fail_msg("%s %s(%.9g%s%.9g) = %.9g, want %.9g", mxp_dtype_name(dt), what, x[i], y ? ", " : "",
                 y ? y[i] : 0.0, decode(rt, g), decode(rt, e));
    }
    free(w);
}

/* float32: got within max_ulp of want rounded once (the ordered bit
 * patterns' distance); NaN for NaN, infinities and zeros' signs exact. */
static void check_f32_within(const char *what, const float *got, const double *want, const double *x, size_t n,
                             unsigned max_ulp)
{
    for (size_t i = 0; i < n; i++) {
        const float w = (float)want[i];
        if (isnan(w) && isnan(got[i]))
            continue;
        int32_t gb, wb;
        memcpy(&gb, &got[i], 4);
        memcpy(&wb, &w, 4);
        const int64_t go = gb < 0 ? -(int64_t)(gb & 0x7fffffff) : gb, wo = wb < 0 ? -(int64_t)(wb & 0x7fffffff) : wb;
        const int64_t d = go > wo ? go - wo : wo - go;
        const bool exact_only = isinf(w) || w == 0 || isnan(w);
        if ((exact_only ? gb == wb : d <= (int64_t)max_ulp))
            continue;
        fail_msg("float32 %s(%.9g) = %.9g, want %.9g within %u ulp", what, x[i], got[i], w, max_ulp);
    }
}

/* ---- every new op against the reference --------------------------------- */

static const mxp_binary_op new_binary[] = {
    MXP_OP_FLOOR_DIVIDE, MXP_OP_REMAINDER, MXP_OP_FMOD,       MXP_OP_FMAX,        MXP_OP_FMIN,
    MXP_OP_ARCTAN2,      MXP_OP_HYPOT,     MXP_OP_COPYSIGN,   MXP_OP_NEXTAFTER,   MXP_OP_LOGICAL_AND,
    MXP_OP_LOGICAL_OR,   MXP_OP_LOGICAL_XOR, MXP_OP_LOGADDEXP, MXP_OP_LOGADDEXP2,
};

/* All pairs of the test values of dt (for 8-bit types every pair). */
static void pairs(mxp_dtype dt, uint64_t **xb, uint64_t **yb, size_t *n)
{
    size_t count;
    uint64_t *v = test_bits(dt, true, &count);
    *n = count * count;
    *xb = malloc(*n * sizeof **xb);
    *yb = malloc(*n * sizeof **yb);
    for (size_t i = 0; i < *n; i++) {
        (*xb)[i] = v[i / count];
        (*yb)[i] = v[i % count];
    }
    free(v);
}

static unsigned char *pack(mxp_dtype dt, const uint64_t *bits, size_t n)
{
    const size_t size = mxp_dtype_itemsize(dt);
    unsigned char *p = malloc(n * size);
    for (size_t i = 0; i < n; i++)
        memcpy(p + i * size, &bits[i], size);
    return p;
}

static void test_binary_ops_match_float64_reference_rounded_once(void **state)
{
    (void)state;
    for (size_t t = 0; t < NFLOAT; t++) {
        const mxp_dtype dt = float_types[t];
        uint64_t *xb, *yb;
        size_t n;
        pairs(dt, &xb, &yb, &n);
        unsigned char *a = pack(dt, xb, n), *b = pack(dt, yb, n), *got = malloc(n * 8);
        double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *want = malloc(n * sizeof *want);
        assert_int_equal(mxp_convert(x, MXP_F64, a, dt, n, NULL), MXP_OK);
        assert_int_equal(mxp_convert(y, MXP_F64, b, dt, n, NULL), MXP_OK);
        for (size_t k = 0; k < sizeof new_binary / sizeof new_binary[0]; k++) {
            const mxp_binary_op op = new_binary[k];
            if (dt == MXP_F64 && (op == MXP_OP_FLOOR_DIVIDE || op == MXP_OP_REMAINDER))
                continue; /* NumPy's float64 loop: pytest_ufuncs compares bit for bit */
            if (dt == MXP_F64 && (op == MXP_OP_LOGADDEXP || op == MXP_OP_LOGADDEXP2))
                continue; /* computed in float64 as NumPy's loop: not rounded once from above */
            const mxp_dtype rt = mxp_binary_result_type(op, dt, dt);
            assert_int_equal(rt, op >= MXP_OP_LOGICAL_AND && op <= MXP_OP_LOGICAL_XOR ? MXP_BOOL : dt);
            assert_int_equal(mxp_binary_strided(op, n, got, rt, (ptrdiff_t)mxp_dtype_itemsize(rt), a, dt,
                                                (ptrdiff_t)mxp_dtype_itemsize(dt), b, dt,
                                                (ptrdiff_t)mxp_dtype_itemsize(dt), NULL),
                             MXP_OK);
            for (size_t i = 0; i < n; i++)
                want[i] = ref_binary(op, dt, xb[i], x[i], y[i]);
            check_rounded_once(mxp_binary_op_name(op), dt, got, rt, want, x, y, n);
        }
        free(xb);
        free(yb);
        free(a);
        free(b);
        free(got);
        free(x);
        free(y);
        free(want);
    }
}

static void test_unary_ops_match_float64_reference_rounded_once(void **state)
{
    (void)state;
    for (size_t t = 0; t < NFLOAT; t++) {
        const mxp_dtype dt = float_types[t];
        size_t n;
        uint64_t *xb = test_bits(dt, false, &n);
        unsigned char *a = pack(dt, xb, n), *got = malloc(n * 8);
        double *x = malloc(n * sizeof *x), *want = malloc(n * sizeof *want);
        assert_int_equal(mxp_convert(x, MXP_F64, a, dt, n, NULL), MXP_OK);
        for (int op = MXP_OP_POSITIVE; op < MXP_UNARY_OP_COUNT; op++) {
            const mxp_dtype rt = mxp_unary_result_type((mxp_unary_op)op, dt);
            assert_int_equal(rt, op >= MXP_OP_ISNAN && op <= MXP_OP_LOGICAL_NOT ? MXP_BOOL
                                 : op == MXP_OP_FREXP_EXPONENT ? MXP_S32 : dt);
            mxp_array *in = NULL, *r = NULL;
            const int64_t len = (int64_t)n;
            assert_int_equal(mxp_array_empty(&in, dt, 1, &len), MXP_OK);
            memcpy(mxp_array_data(in), a, n * mxp_dtype_itemsize(dt));
            assert_int_equal(mxp_unary(&r, (mxp_unary_op)op, in, NULL), MXP_OK);
            assert_int_equal(mxp_array_dtype(r), rt);
            if (dt == MXP_F64 && (op == MXP_OP_DEG2RAD || op == MXP_OP_RAD2DEG)) {
                mxp_array_free(r); /* float64: one multiplication by the float64 constant, as NumPy's loop */
                mxp_array_free(in);
                continue;
            }
            for (size_t i = 0; i < n; i++)
                want[i] = ref_unary((mxp_unary_op)op, dt, xb[i], x[i]);
            /* float32 sin and cos go through SLEEF's float32 functions (1 ulp)
             * above the scalar level (docs/ops.md); test_vmath has the ulp table */
            if (dt == MXP_F32 && (op == MXP_OP_SIN || op == MXP_OP_COS) && mxp_isa_current() != MXP_ISA_SCALAR)
                check_f32_within(mxp_unary_op_name((mxp_unary_op)op), mxp_array_data(r), want, x, n, 1);
            else
                check_rounded_once(mxp_unary_op_name((mxp_unary_op)op), dt, mxp_array_data(r), rt, want, x, NULL, n);
            mxp_array_free(r);
            mxp_array_free(in);
        }
        free(xb);
        free(a);
        free(got);
        free(x);
        free(want);
    }
}

/* ldexp over the test values with exponents from far below to far above
 * every range, as int32: the exact x 2^n (float64 holds it, or under- or
 * overflows as the exact value does) rounded once. */
static void test_ldexp_is_exact_then_rounded_once(void **state)
{
    (void)state;
    const int32_t exps[] = { INT32_MIN, -2000, -1080, -200, -150, -140, -134, -133, -30, -1, 0, 1, 5, 30,
                             127, 128, 1000, INT32_MAX };
    const size_t ne = sizeof exps / sizeof exps[0];
    for (size_t t = 0; t < NFLOAT; t++) {
        const mxp_dtype dt = float_types[t];
        const size_t size = mxp_dtype_itemsize(dt);
        size_t nv;
        uint64_t *v = test_bits(dt, true, &nv);
        const size_t n = nv * ne;
        uint64_t *xb = malloc(n * sizeof *xb);
        int32_t *e = malloc(n * sizeof *e);
        for (size_t i = 0; i < n; i++) {
            xb[i] = v[i / ne];
            e[i] = exps[i % ne];
        }
        unsigned char *a = pack(dt, xb, n), *got = malloc(n * size);
        double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *want = malloc(n * sizeof *want);
        assert_int_equal(mxp_convert(x, MXP_F64, a, dt, n, NULL), MXP_OK);
        assert_int_equal(mxp_binary_result_type(MXP_OP_LDEXP, dt, MXP_S32), dt);
        assert_int_equal(mxp_binary_strided(MXP_OP_LDEXP, n, got, dt, (ptrdiff_t)size, a, dt, (ptrdiff_t)size, e,
                                            MXP_S32, 4, NULL),
                         MXP_OK);
        for (size_t i = 0; i < n; i++) {
            y[i] = e[i];
            want[i] = ldexp(x[i], e[i] < -3000 ? -3000 : e[i] > 3000 ? 3000 : e[i]);
        }
        check_rounded_once("ldexp", dt, got, dt, want, x, y, n);
        free(v);
        free(xb);
        free(e);
        free(a);
        free(got);
        free(x);
        free(y);
        free(want);
    }
}

/* ---- hand-written edge cases -------------------------------------------- */

static uint64_t bin_bits(mxp_binary_op op, mxp_dtype out, mxp_dtype in, double x, double y,
                         const mxp_convert_opts *co)
{
    uint64_t a = encode(in, x), b = encode(in, y), r = 0;
    assert_int_equal(mxp_binary_strided(op, 1, &r, out, 8, &a, in, 8, &b, in, 8, co), MXP_OK);
    return r;
}

static uint64_t un_bits(mxp_unary_op op, mxp_dtype out, mxp_dtype in, double x)
{
    uint64_t a = encode(in, x), r = 0;
    assert_int_equal(mxp_unary_strided(op, 1, &r, out, 8, &a, in, 8, NULL), MXP_OK);
    return r;
}

static uint64_t ldexp_bits(mxp_dtype dt, double x, int64_t n, mxp_rounding rounding)
{
    const mxp_convert_opts co = { .rounding = rounding };
    uint64_t a = encode(dt, x), r = 0;
    assert_int_equal(mxp_binary_strided(MXP_OP_LDEXP, 1, &r, dt, 8, &a, dt, 8, &n, MXP_S64, 8, &co), MXP_OK);
    return r;
}

static void test_nextafter_and_spacing_step_in_the_output_dtype(void **state)
{
    (void)state;
    /* bfloat16: 1 + 2^-7 above 1, 1 - 2^-8 below; the smallest subnormal
     * above 0; y itself when x == y (-0 toward... -0); max -> inf. */
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_BF16, MXP_BF16, 1, 2, NULL), 0x3f81);
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_BF16, MXP_BF16, 1, 0, NULL), 0x3f7f);
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_BF16, MXP_BF16, 0, 1, NULL), 0x0001);
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_BF16, MXP_BF16, -0.0, -1, NULL), 0x8001);
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_BF16, MXP_BF16, 0, -0.0, NULL), 0x8000);
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_BF16, MXP_BF16, -0x1p-133, 1, NULL), 0x8000);
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_BF16, MXP_BF16, 0x1.fep127, INFINITY, NULL), 0x7f80);
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_BF16, MXP_BF16, -INFINITY, 0, NULL), 0xff7f);
    assert_true(isnan(decode(MXP_BF16, bin_bits(MXP_OP_NEXTAFTER, MXP_BF16, MXP_BF16, NAN, 1, NULL))));
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_F16, MXP_F16, 1, 2, NULL), 0x3c01);
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_E5M2, MXP_E5M2, 57344, INFINITY, NULL), 0x7c);
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_E4M3, MXP_E4M3, 1, 2, NULL), 0x39);
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_E4M3, MXP_E4M3, 448, 0, NULL), 0x7d);
    /* float8_e4m3fn has no infinity: past 448 is NaN, as its overflow is;
     * from float32 inputs the step is still the output's. */
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_E4M3, MXP_F32, 448, INFINITY, NULL) & 0x7f, 0x7f);
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_E4M3, MXP_F32, INFINITY, 0, NULL), 0x7e);
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_BF16, MXP_F32, 1, 2, NULL), 0x3f81);
    assert_int_equal(bin_bits(MXP_OP_NEXTAFTER, MXP_BF16, MXP_F32, 1.001f, 2, NULL), 0x3f81); /* 1.001 -> 1 + 2^-7 */
    /* spacing: 2^-7 at bfloat16 1, signed as x, +smallest subnormal at both
     * zeros, inf at max (NaN for e4m3), NaN at inf. */
    assert_int_equal(un_bits(MXP_OP_SPACING, MXP_BF16, MXP_BF16, 1), 0x3c00);
    assert_int_equal(un_bits(MXP_OP_SPACING, MXP_BF16, MXP_BF16, -1), 0xbc00);
    assert_int_equal(un_bits(MXP_OP_SPACING, MXP_BF16, MXP_BF16, -0.0), 0x0001);
    assert_int_equal(un_bits(MXP_OP_SPACING, MXP_BF16, MXP_BF16, 0x1.fep127), 0x7f80);
    assert_true(isnan(decode(MXP_BF16, un_bits(MXP_OP_SPACING, MXP_BF16, MXP_BF16, INFINITY))));
    assert_int_equal(un_bits(MXP_OP_SPACING, MXP_F16, MXP_F16, 1), 0x1400);
    assert_int_equal(un_bits(MXP_OP_SPACING, MXP_E4M3, MXP_E4M3, 1), 0x20);
    assert_int_equal(un_bits(MXP_OP_SPACING, MXP_E4M3, MXP_E4M3, 448) & 0x7f, 0x7f);
    assert_int_equal(un_bits(MXP_OP_SPACING, MXP_E5M2, MXP_E5M2, 1), 0x34);
    assert_true(decode(MXP_F64, un_bits(MXP_OP_SPACING, MXP_F64, MXP_F64, 1)) == 0x1p-52);
    assert_true(decode(MXP_F32, un_bits(MXP_OP_SPACING, MXP_F32, MXP_F32, -0.0)) == 0x1p-149);
}

static void test_frexp_ldexp_floor_rint_edge_cases(void **state)
{
    (void)state;
    /* frexp: 3 = 0.75 2^2; zeros, inf and NaN give themselves and 0. */
    assert_int_equal(un_bits(MXP_OP_FREXP_MANTISSA, MXP_BF16, MXP_BF16, 3), 0x3f40);
    assert_int_equal(un_bits(MXP_OP_FREXP_EXPONENT, MXP_S32, MXP_BF16, 3), 2);
    assert_int_equal(un_bits(MXP_OP_FREXP_MANTISSA, MXP_BF16, MXP_BF16, -0.0), 0x8000);
    assert_int_equal(un_bits(MXP_OP_FREXP_EXPONENT, MXP_S32, MXP_BF16, -0.0), 0);
    assert_int_equal(un_bits(MXP_OP_FREXP_MANTISSA, MXP_BF16, MXP_BF16, -INFINITY), 0xff80);
    assert_int_equal(un_bits(MXP_OP_FREXP_EXPONENT, MXP_S32, MXP_BF16, INFINITY), 0);
    assert_int_equal(un_bits(MXP_OP_FREXP_MANTISSA, MXP_BF16, MXP_BF16, 0x1p-133), 0x3f00); /* 0.5 */
    assert_int_equal(un_bits(MXP_OP_FREXP_EXPONENT, MXP_S32, MXP_BF16, 0x1p-133), (uint32_t)-132);
    assert_int_equal(un_bits(MXP_OP_FREXP_MANTISSA, MXP_E4M3, MXP_E4M3, 448), 0x36); /* 0.875 */
    assert_int_equal(un_bits(MXP_OP_FREXP_EXPONENT, MXP_S32, MXP_E4M3, 448), 9);
    assert_int_equal(un_bits(MXP_OP_FREXP_EXPONENT, MXP_S32, MXP_F16, 0x1p-24), (uint32_t)-23);
    /* ldexp: exact, then one rounding; the smallest bfloat16 subnormal is 2^-133. */
    assert_int_equal(ldexp_bits(MXP_BF16, 1.5, -3, MXP_ROUND_NEAREST_EVEN), 0x3e40);
    assert_int_equal(ldexp_bits(MXP_BF16, 1, 127, MXP_ROUND_NEAREST_EVEN), 0x7f00);
    assert_int_equal(ldexp_bits(MXP_BF16, 1, 128, MXP_ROUND_NEAREST_EVEN), 0x7f80);
    assert_int_equal(ldexp_bits(MXP_BF16, 1, 128, MXP_ROUND_TOWARD_ZERO), 0x7f7f);
    assert_int_equal(ldexp_bits(MXP_BF16, 1, -133, MXP_ROUND_NEAREST_EVEN), 0x0001);
    assert_int_equal(ldexp_bits(MXP_BF16, 1, -134, MXP_ROUND_NEAREST_EVEN), 0x0000); /* a tie: even */
    assert_int_equal(ldexp_bits(MXP_BF16, 1.5, -134, MXP_ROUND_NEAREST_EVEN), 0x0001);
    assert_int_equal(ldexp_bits(MXP_BF16, -1, -1000, MXP_ROUND_NEAREST_EVEN), 0x8000);
    assert_int_equal(ldexp_bits(MXP_BF16, 1, -1000, MXP_ROUND_UP), 0x0001); /* not 0: rounded once */
    assert_int_equal(ldexp_bits(MXP_BF16, 1, INT64_MIN, MXP_ROUND_UP), 0x0001);
    assert_int_equal(ldexp_bits(MXP_BF16, 1, INT64_MAX, MXP_ROUND_NEAREST_EVEN), 0x7f80);
    assert_int_equal(ldexp_bits(MXP_BF16, -0.0, 5, MXP_ROUND_NEAREST_EVEN), 0x8000);
    assert_int_equal(ldexp_bits(MXP_E4M3, 1, 8, MXP_ROUND_NEAREST_EVEN), 0x78);
    assert_int_equal(ldexp_bits(MXP_E4M3, 1, 9, MXP_ROUND_NEAREST_EVEN) & 0x7f, 0x7f); /* 512: NaN */
    assert_true(decode(MXP_F64, ldexp_bits(MXP_F64, 1, -1074, MXP_ROUND_NEAREST_EVEN)) == 0x1p-1074);
    assert_true(decode(MXP_F64, ldexp_bits(MXP_F64, 1, -1076, MXP_ROUND_NEAREST_EVEN)) == 0);
    /* floor, ceil, trunc keep the sign of zero; rint ties to even. */
    const double x[] = { -0.5, 0.5, 1.5, 2.5, -2.5, -1.5, 0.49609375, -0.0 };
    const double floor_[] = { -1, 0, 1, 2, -3, -2, 0, -0.0 }, ceil_[] = { -0.0, 1, 2, 3, -2, -1, 1, -0.0 },
                 trunc_[] = { -0.0, 0, 1, 2, -2, -1, 0, -0.0 }, rint_[] = { -0.0, 0, 2, 2, -2, -2, 0, -0.0 };
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) {
        assert_int_equal(un_bits(MXP_OP_FLOOR, MXP_BF16, MXP_BF16, x[i]), encode(MXP_BF16, floor_[i]));
        assert_int_equal(un_bits(MXP_OP_CEIL, MXP_BF16, MXP_BF16, x[i]), encode(MXP_BF16, ceil_[i]));
        assert_int_equal(un_bits(MXP_OP_TRUNC, MXP_BF16, MXP_BF16, x[i]), encode(MXP_BF16, trunc_[i]));
        assert_int_equal(un_bits(MXP_OP_RINT, MXP_BF16, MXP_BF16, x[i]), encode(MXP_BF16, rint_[i]));
        assert_int_equal(un_bits(MXP_OP_RINT, MXP_F64, MXP_F64, x[i]), encode(MXP_F64, rint_[i]));
    }
    assert_true(decode(MXP_F64, un_bits(MXP_OP_RINT, MXP_F64, MXP_F64, 0x1p52 + 1)) == 0x1p52 + 1);
    assert_true(decode(MXP_F64, un_bits(MXP_OP_RINT, MXP_F64, MXP_F64, 0x1.fffffffffffffp-2)) == 0);
    assert_true(decode(MXP_F32, un_bits(MXP_OP_RINT, MXP_F32, MXP_F32, 8388609)) == 8388609);
    /* sign: +0 for both zeros, NaN stays NaN; floor_divide and remainder of
     * NumPy's: -7 // 2 = -4, -7 % 2 = 1, 7 % -2 = -1, x // 0 = +-inf. */
    assert_int_equal(un_bits(MXP_OP_SIGN, MXP_BF16, MXP_BF16, -0.0), 0x0000);
    assert_true(isnan(decode(MXP_E5M2, un_bits(MXP_OP_SIGN, MXP_E5M2, MXP_E5M2, NAN))));
    assert_int_equal(bin_bits(MXP_OP_FLOOR_DIVIDE, MXP_BF16, MXP_BF16, -7, 2, NULL), encode(MXP_BF16, -4));
    assert_int_equal(bin_bits(MXP_OP_REMAINDER, MXP_BF16, MXP_BF16, -7, 2, NULL), encode(MXP_BF16, 1));
    assert_int_equal(bin_bits(MXP_OP_REMAINDER, MXP_E4M3, MXP_E4M3, 7, -2, NULL), encode(MXP_E4M3, -1));
    assert_int_equal(bin_bits(MXP_OP_REMAINDER, MXP_BF16, MXP_BF16, 0.0, -3, NULL), 0x8000);
    assert_int_equal(bin_bits(MXP_OP_FMOD, MXP_BF16, MXP_BF16, -7, 2, NULL), encode(MXP_BF16, -1));
    assert_int_equal(bin_bits(MXP_OP_FLOOR_DIVIDE, MXP_BF16, MXP_BF16, -5, 0, NULL), 0xff80);
    assert_int_equal(bin_bits(MXP_OP_FLOOR_DIVIDE, MXP_BF16, MXP_BF16, -1, INFINITY, NULL), encode(MXP_BF16, -1));
    assert_int_equal(bin_bits(MXP_OP_REMAINDER, MXP_BF16, MXP_BF16, -1, INFINITY, NULL), 0x7f80);
}

/* ---- integers -------------------------------------------------------- */

static void int_binary(mxp_binary_op op, mxp_dtype dt, const int64_t *x, const int64_t *y, int64_t *r, size_t n)
{
    void *a = malloc(n * 8), *b = malloc(n * 8), *o = malloc(n * 8);
    assert_int_equal(mxp_convert(a, dt, x, MXP_S64, n, NULL), MXP_OK);
    assert_int_equal(mxp_convert(b, dt, y, MXP_S64, n, NULL), MXP_OK);
    const mxp_dtype rt = mxp_binary_result_type(op, dt, dt);
    const ptrdiff_t s = (ptrdiff_t)mxp_dtype_itemsize(dt);
    assert_int_equal(mxp_binary_strided(op, n, o, rt, (ptrdiff_t)mxp_dtype_itemsize(rt), a, dt, s, b, dt, s, NULL),
                     MXP_OK);
    assert_int_equal(mxp_convert(r, MXP_S64, o, rt, n, NULL), MXP_OK);
    free(a);
    free(b);
    free(o);
}

static void test_integer_ops_follow_numpy_and_divide_by_zero_gives_zero(void **state)
{
    (void)state;
    const int64_t x[] = { 7, -7, 7, -7, 7, -7, 0, -128, 5 }, y[] = { 2, 2, -2, -2, 0, 0, 0, -1, 1 };
    const int64_t fd[] = { 3, -4, -4, 3, 0, 0, 0, 127, 5 }, rem[] = { 1, 1, -1, -1, 0, 0, 0, 0, 0 },
                  fmod_[] = { 1, -1, 1, -1, 0, 0, 0, 0, 0 };
    int64_t r[9];
    int_binary(MXP_OP_FLOOR_DIVIDE, MXP_S8, x, y, r, 9); /* -128 // -1 saturates (NumPy wraps) */
    assert_memory_equal(r, fd, sizeof fd);
    int_binary(MXP_OP_REMAINDER, MXP_S8, x, y, r, 9);
    assert_memory_equal(r, rem, sizeof rem);
    int_binary(MXP_OP_FMOD, MXP_S8, x, y, r, 9);
    assert_memory_equal(r, fmod_, sizeof fmod_);
    /* int64: INT64_MIN // -1 wraps to INT64_MIN (as NumPy), % -1 is 0. */
    const int64_t bx[] = { INT64_MIN, INT64_MIN, INT64_MAX, -1 }, by[] = { -1, 0, -2, INT64_MIN };
    int_binary(MXP_OP_FLOOR_DIVIDE, MXP_S64, bx, by, r, 4);
    assert_true(r[0] == INT64_MIN && r[1] == 0 && r[2] == -(INT64_MAX / 2) - 1 && r[3] == 0);
    int_binary(MXP_OP_REMAINDER, MXP_S64, bx, by, r, 4);
    assert_true(r[0] == 0 && r[1] == 0 && r[2] == -1 && r[3] == -1);
    int_binary(MXP_OP_FMAX, MXP_S64, bx, by, r, 4);
    assert_true(r[0] == -1 && r[2] == INT64_MAX && r[3] == -1);
    /* unsigned */
    const int64_t ux[] = { 7, 7, 200, 0 }, uy[] = { 2, 0, 7, 0 };
    int_binary(MXP_OP_FLOOR_DIVIDE, MXP_U8, ux, uy, r, 4);
    assert_true(r[0] == 3 && r[1] == 0 && r[2] == 28 && r[3] == 0);
    int_binary(MXP_OP_REMAINDER, MXP_U8, ux, uy, r, 4);
    assert_true(r[0] == 1 && r[1] == 0 && r[2] == 4 && r[3] == 0);
    /* logical ops on integers: nonzero is true */
    int_binary(MXP_OP_LOGICAL_XOR, MXP_S16, x, y, r, 4);
    assert_true(r[0] == 0 && r[1] == 0 && r[2] == 0 && r[3] == 0);
    /* unary: sign, square (saturating like multiply), reciprocal (integer 1/x, 1/0 = 0) */
    const int8_t v[] = { -5, 0, 5, 1, -1, 100, 2 };
    int8_t o[7];
    assert_int_equal(mxp_unary_strided(MXP_OP_SIGN, 7, o, MXP_S8, 1, v, MXP_S8, 1, NULL), MXP_OK);
    assert_memory_equal(o, ((int8_t[]){ -1, 0, 1, 1, -1, 1, 1 }), 7);
    assert_int_equal(mxp_unary_strided(MXP_OP_SQUARE, 7, o, MXP_S8, 1, v, MXP_S8, 1, NULL), MXP_OK);
    assert_memory_equal(o, ((int8_t[]){ 25, 0, 25, 1, 1, 127, 4 }), 7);
    assert_int_equal(mxp_unary_strided(MXP_OP_RECIPROCAL, 7, o, MXP_S8, 1, v, MXP_S8, 1, NULL), MXP_OK);
    assert_memory_equal(o, ((int8_t[]){ 0, 0, 0, 1, -1, 0, 0 }), 7);
    assert_int_equal(mxp_unary_strided(MXP_OP_POSITIVE, 7, o, MXP_S8, 1, v, MXP_S8, 1, NULL), MXP_OK);
    assert_memory_equal(o, v, 7);
    uint8_t bo[7];
    assert_int_equal(mxp_unary_strided(MXP_OP_SIGNBIT, 7, bo, MXP_BOOL, 1, v, MXP_S8, 1, NULL), MXP_OK);
    assert_memory_equal(bo, ((uint8_t[]){ 1, 0, 0, 0, 1, 0, 0 }), 7);
    /* float-only functions of integers give floats: sqrt(int8) is float16 */
    uint16_t h[7];
    assert_int_equal(mxp_unary_strided(MXP_OP_CBRT, 7, h, MXP_F16, 2, v, MXP_S8, 1, NULL), MXP_OK);
    assert_true(decode(MXP_F16, h[0]) == round_to(MXP_F16, cbrt(-5.0)) && h[1] == 0);
}

/* ---- result dtypes and names ---------------------------------------------- */

static void test_result_types_of_the_new_ops(void **state)
{
    (void)state;
    assert_int_equal(mxp_binary_result_type(MXP_OP_FLOOR_DIVIDE, MXP_BOOL, MXP_BOOL), MXP_S8);
    assert_int_equal(mxp_binary_result_type(MXP_OP_REMAINDER, MXP_S8, MXP_U8), MXP_S16);
    assert_int_equal(mxp_binary_result_type(MXP_OP_FMOD, MXP_U64, MXP_S8), MXP_F64);
    assert_int_equal(mxp_binary_result_type(MXP_OP_FMAX, MXP_BOOL, MXP_BOOL), MXP_BOOL);
    assert_int_equal(mxp_binary_result_type(MXP_OP_FMIN, MXP_BF16, MXP_E4M3), MXP_BF16);
    assert_int_equal(mxp_binary_result_type(MXP_OP_ARCTAN2, MXP_S8, MXP_S8), MXP_F16);
    assert_int_equal(mxp_binary_result_type(MXP_OP_ARCTAN2, MXP_S16, MXP_BOOL), MXP_F32);
    assert_int_equal(mxp_binary_result_type(MXP_OP_HYPOT, MXP_BF16, MXP_BF16), MXP_BF16);
    assert_int_equal(mxp_binary_result_type(MXP_OP_COPYSIGN, MXP_E4M3, MXP_E4M3), MXP_E4M3);
    assert_int_equal(mxp_binary_result_type(MXP_OP_NEXTAFTER, MXP_BF16, MXP_F16), MXP_F32);
    assert_int_equal(mxp_binary_result_type(MXP_OP_NEXTAFTER, MXP_E5M2, MXP_S8), MXP_F16);
    assert_int_equal(mxp_binary_result_type(MXP_OP_LOGICAL_AND, MXP_F32, MXP_S8), MXP_BOOL);
    assert_int_equal(mxp_binary_result_type(MXP_OP_LOGICAL_XOR, MXP_BF16, MXP_BF16), MXP_BOOL);
    assert_int_equal(mxp_binary_result_type(MXP_OP_LDEXP, MXP_BF16, MXP_S32), MXP_BF16);
    assert_int_equal(mxp_binary_result_type(MXP_OP_LDEXP, MXP_S8, MXP_S64), MXP_F16);
    assert_int_equal(mxp_binary_result_type(MXP_OP_LDEXP, MXP_S32, MXP_BOOL), MXP_F64);
    assert_int_equal(mxp_binary_result_type(MXP_OP_LDEXP, MXP_F32, MXP_U64), MXP_DTYPE_INVALID);
    assert_int_equal(mxp_binary_result_type(MXP_OP_LDEXP, MXP_F32, MXP_F32), MXP_DTYPE_INVALID);
    assert_int_equal(mxp_binary_result_type((mxp_binary_op)MXP_BINARY_OP_COUNT, MXP_F32, MXP_F32), MXP_DTYPE_INVALID);
    assert_int_equal(mxp_unary_result_type(MXP_OP_POSITIVE, MXP_S8), MXP_S8);
    assert_int_equal(mxp_unary_result_type(MXP_OP_SIGN, MXP_U16), MXP_U16);
    assert_int_equal(mxp_unary_result_type(MXP_OP_RECIPROCAL, MXP_BOOL), MXP_S8);
    assert_int_equal(mxp_unary_result_type(MXP_OP_SQUARE, MXP_BOOL), MXP_S8);
    assert_int_equal(mxp_unary_result_type(MXP_OP_SQUARE, MXP_BF16), MXP_BF16);
    assert_int_equal(mxp_unary_result_type(MXP_OP_CBRT, MXP_S16), MXP_F32);
    assert_int_equal(mxp_unary_result_type(MXP_OP_FLOOR, MXP_U8), MXP_F16);
    assert_int_equal(mxp_unary_result_type(MXP_OP_RINT, MXP_S64), MXP_F64);
    assert_int_equal(mxp_unary_result_type(MXP_OP_SPACING, MXP_E5M2), MXP_E5M2);
    assert_int_equal(mxp_unary_result_type(MXP_OP_ARCTANH, MXP_BOOL), MXP_F16);
    assert_int_equal(mxp_unary_result_type(MXP_OP_ISNAN, MXP_BF16), MXP_BOOL);
    assert_int_equal(mxp_unary_result_type(MXP_OP_LOGICAL_NOT, MXP_S64), MXP_BOOL);
    assert_int_equal(mxp_unary_result_type(MXP_OP_FREXP_MANTISSA, MXP_E4M3), MXP_E4M3);
    assert_int_equal(mxp_unary_result_type(MXP_OP_FREXP_MANTISSA, MXP_S32), MXP_F64);
    assert_int_equal(mxp_unary_result_type(MXP_OP_FREXP_EXPONENT, MXP_BF16), MXP_S32);
    assert_int_equal(mxp_unary_result_type((mxp_unary_op)-1, MXP_F32), MXP_DTYPE_INVALID);
    static const char *const binary_names[MXP_BINARY_OP_COUNT] = {
        "add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "equal", "not_equal", "less",
        "less_equal", "greater", "greater_equal", "floor_divide", "remainder", "fmod", "fmax", "fmin", "arctan2",
        "hypot", "copysign", "nextafter", "logical_and", "logical_or", "logical_xor", "ldexp", "logaddexp",
        "logaddexp2",
    };
    static const char *const unary_names[MXP_UNARY_OP_COUNT] = {
        "negative", "abs", "sqrt", "exp", "log", "tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "silu",
        "positive", "sign", "reciprocal", "square", "cbrt", "exp2", "expm1", "log2", "log10", "log1p", "sin",
        "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "floor",
        "ceil", "rint", "trunc", "spacing", "isnan", "isinf", "isfinite", "signbit", "logical_not",
        "frexp_mantissa", "frexp_exponent", "deg2rad", "rad2deg",
    };
    for (int op = 0; op < MXP_BINARY_OP_COUNT; op++)
        assert_string_equal(mxp_binary_op_name((mxp_binary_op)op), binary_names[op]);
    for (int op = 0; op < MXP_UNARY_OP_COUNT; op++)
        assert_string_equal(mxp_unary_op_name((mxp_unary_op)op), unary_names[op]);
    assert_string_equal(mxp_binary_op_name(MXP_BINARY_OP_COUNT), "invalid");
    /* ldexp with a float exponent is refused before anything is made */
    mxp_array *a = NULL, *r = NULL;
    const int64_t n = 3;
    assert_int_equal(mxp_array_zeros(&a, MXP_F32, 1, &n), MXP_OK);
    assert_int_equal(mxp_binary(&r, MXP_OP_LDEXP, a, a, NULL), MXP_ERR_UNSUPPORTED);
    assert_null(r);
    mxp_array_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binary_ops_match_float64_reference_rounded_once),
        cmocka_unit_test(test_unary_ops_match_float64_reference_rounded_once),
        cmocka_unit_test(test_ldexp_is_exact_then_rounded_once),
        cmocka_unit_test(test_nextafter_and_spacing_step_in_the_output_dtype),
        cmocka_unit_test(test_frexp_ldexp_floor_rint_edge_cases),
        cmocka_unit_test(test_integer_ops_follow_numpy_and_divide_by_zero_gives_zero),
        cmocka_unit_test(test_result_types_of_the_new_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

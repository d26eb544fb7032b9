/* Every elementwise operation on one float64 element, NumPy's semantics for
 * NaN, infinities and signed zeros.  Nothing here reads the floating-point
 * rounding mode except libm's own functions (rint is written without it).
 *
 * nextafter and spacing step through the values of the output dtype,
 * described by its traits (p = mant_bits + 1 bits, emin = 1 - bias): the
 * gap above 2^e is 2^(e - mant_bits) for e >= emin, and 2^(emin - mant_bits)
 * below 2^emin (subnormals). */
#include <math.h>

#include "core/activation.h"
#include "ops/ops-internal.h"

static const mxp_dtype_traits *traits_or_f64(const mxp_ew_ctx *c)
{
    return c->out ? c->out : mxp_dtype_get_traits(MXP_F64);
}

/* The largest value of the format below a > 0 (a may be inf or not in the
 * format): 0 below the smallest subnormal, max above max. */
static const double PI = 3.14159265358979323846;

static double format_below(const mxp_dtype_traits *t, double a)
{
    if (a > t->max)
        return t->max;
    const int emin = 1 - t->bias;
    int e = ilogb(a);
    if (e > emin && a == ldexp(1.0, e)) /* below a power of two the gap halves */
        e--;
    if (e < emin)
        e = emin;
    const double gap = ldexp(1.0, e - t->mant_bits);
    return (ceil(a / gap) - 1) * gap; /* a / gap and the product are exact */
}

/* The smallest value of the format above a >= 0 (finite); past max: inf,
 * or NaN for a format without infinities (float8_e4m3fn), as overflow. */
static double format_above(const mxp_dtype_traits *t, double a)
{
    if (a == 0)
        return t->min_subnormal;
    const int emin = 1 - t->bias;
    int e = ilogb(a);
    if (e < emin)
        e = emin;
    const double gap = ldexp(1.0, e - t->mant_bits);
    const double r = (floor(a / gap) + 1) * gap;
    return r <= t->max ? r : t->has_inf ? INFINITY : NAN;
}

/* The format's neighbour of x in the direction of y; y when x == y. */
static double next_toward(const mxp_dtype_traits *t, double x, double y)
{
    if (x != x || y != y)
        return x + y;
    if (x == y)
        return y;
    if (y > x)
        return x >= 0 ? format_above(t, x) : -format_below(t, -x);
    return x <= 0 ? -format_above(t, -x) : format_below(t, x);
}

/* NumPy's npy_spacing: the step from x to its neighbour away from zero,
 * signed as x; +smallest subnormal for both zeros; NaN for infinities. */
static double spacing(const mxp_dtype_traits *t, double x)
{
    if (x != x)
        return x;
    if (isinf(x))
        return NAN;
    if (x == 0)
        return t->min_subnormal;
    const double a = fabs(x);
    return copysign(format_above(t, a) - a, x);
}

/* x 2^n with n clamped so the double result rounds into the output as the
 * exact one would: 34 binades below the smallest subnormal (stochastic
 * rounding's 32 random bits cannot round it up) and 2 above max. */
static double ldexp_exact(const mxp_dtype_traits *t, double x, double n)
{
    if (x == 0 || !isfinite(x))
        return x;
    const double ex = ilogb(x), emax = ilogb(t->max);
    const double lo = (1 - t->bias) - t->mant_bits - 34 - ex, hi = emax + 2 - ex;
    n = n < lo ? lo : n > hi ? hi : n;
    return ldexp(x, (int)n);
}

/* Ties to even without the rounding mode: x - trunc(x) is exact. */
static double rint_even(double x)
{
    double t = trunc(x), f = fabs(x - t);
    if (f > 0.5 || (f == 0.5 && fmod(t, 2.0) != 0))
        t += copysign(1.0, x);
    return t;
}

static double rnd(bool f32, double x) { return f32 ? (double)(float)x : x; }

/* NumPy's npy_divmod (Python's float divmod): the quotient floored and
 * snapped to an integer, the remainder with the sign of b.  f32: every step
 * rounded to float32 as NumPy's float32 loop computes it (double then float
 * equals float arithmetic here: 53 >= 2 * 24 + 2). */
static double divmod(double a, double b, bool f32, double *mod_out)
{
    double mod = fmod(a, b);
    if (b == 0) {
        *mod_out = mod;
        return rnd(f32, a / b);
    }
    double div = rnd(f32, rnd(f32, a - mod) / b);
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) {
            mod = rnd(f32, mod + b);
            div = rnd(f32, div - 1.0);
        }
    } else {
        mod = copysign(0.0, b);
    }
    double floordiv;
    if (div != 0) {
        floordiv = floor(div);
        if (rnd(f32, div - floordiv) > 0.5)
            floordiv = rnd(f32, floordiv + 1.0);
    } else {
        floordiv = copysign(0.0, a / b);
    }
    *mod_out = mod;
    return floordiv;
}

/* silu, gelu and gelu_tanh are x/2 + k x^2 + ... with k > 0: for
 * 2^-1000 < |x| < 2^-54 the value lies strictly between x/2 and the next
 * double above, which rounds as it does into a format of at most 32 bits
 * (x/2 can be a tie there: subnormal float32 and bfloat16 x).  A float64
 * output keeps r (x/2 is then the right float64). */
static double tiny_nudge(const mxp_ew_ctx *c, double x, double r)
{
    const double a = fabs(x);
    if (a < 0x1p-54 && a > 0x1p-1000 && c->out && c->out->bits <= 32)
        return nextafter(0.5 * x, INFINITY);
    return r;
}

static double frexp_part(double x, bool exponent)
{
    if (x == 0 || !isfinite(x))
        return exponent ? 0.0 : x;
    int e;
    double m = frexp(x, &e);
    return exponent ? (double)e : m;
}

double mxp_ew_unary1(const mxp_ew_ctx *c, double x)
{
    switch (c->op) {
    case MXP_OP_NEGATIVE: return -x;
    case MXP_OP_ABS: return fabs(x);
    case MXP_OP_SQRT: return sqrt(x);
    case MXP_OP_EXP: return exp(x);
    case MXP_OP_LOG: return log(x);
    case MXP_OP_TANH: return tanh(x);
    case MXP_OP_SIGMOID: return mxp_sigmoid(x);
    case MXP_OP_RELU: return mxp_relu(x);
    case MXP_OP_GELU: return tiny_nudge(c, x, mxp_gelu(x));
    case MXP_OP_GELU_TANH: return tiny_nudge(c, x, mxp_gelu_tanh(x));
    case MXP_OP_SILU: return tiny_nudge(c, x, mxp_silu(x));
    case MXP_OP_POSITIVE: return x;
    case MXP_OP_SIGN: return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x;
    case MXP_OP_RECIPROCAL: return 1.0 / x;
    case MXP_OP_SQUARE: return x * x;
    case MXP_OP_CBRT: return cbrt(x);
    case MXP_OP_EXP2: return exp2(x);
    case MXP_OP_EXPM1: return expm1(x);
    case MXP_OP_LOG2: return log2(x);
    case MXP_OP_LOG10: return log10(x);
    case MXP_OP_LOG1P: return log1p(x);
    case MXP_OP_SIN: return sin(x);
    case MXP_OP_COS: return cos(x);
    case MXP_OP_TAN: return tan(x);
    case MXP_OP_ARCSIN: return asin(x);
    case MXP_OP_ARCCOS: return acos(x);
    case MXP_OP_ARCTAN: return atan(x);
    case MXP_OP_SINH: return sinh(x);
    case MXP_OP_COSH: return cosh(x);
    case MXP_OP_ARCSINH: return asinh(x);
    case MXP_OP_ARCCOSH: return acosh(x);
    case MXP_OP_ARCTANH: return atanh(x);
    case MXP_OP_FLOOR: return floor(x);
    case MXP_OP_CEIL: return ceil(x);
    case MXP_OP_RINT: return rint_even(x);
    case MXP_OP_TRUNC: return trunc(x);
    case MXP_OP_SPACING: return spacing(traits_or_f64(c), x);
    case MXP_OP_ISNAN: return x != x;
    case MXP_OP_ISINF: return isinf(x) != 0;
    case MXP_OP_ISFINITE: return isfinite(x) != 0;
    case MXP_OP_SIGNBIT: return signbit(x) != 0;
    case MXP_OP_LOGICAL_NOT: return x == 0;
    case MXP_OP_FREXP_MANTISSA: return frexp_part(x, false);
    case MXP_OP_DEG2RAD: return x * (PI / 180.0);
    case MXP_OP_RAD2DEG: return x * (180.0 / PI);
    default: return frexp_part(x, true); /* frexp_exponent */
    }
}

/* NumPy's logaddexp(2): the larger argument plus log1p of the other's
 * exponential, so that nothing overflows; equal arguments (infinities
 * included) give x + log(2). */
static double logaddexp(double x, double y, bool base2)
{
    const double ln2 = 0.693147180559945309417;
    if (x == y)
        return base2 ? x + 1.0 : x + ln2;
    const double d = x - y;
    if (d > 0)
        return base2 ? x + log1p(exp2(-d)) / ln2 : x + log1p(exp(-d));
    if (d <= 0)
        return base2 ? y + log1p(exp2(d)) / ln2 : y + log1p(exp(d));
    return d; /* NaN */
}

double mxp_ew_binary1(const mxp_ew_ctx *c, double x, double y)
{
    double mod;
    switch (c->op) {
    case MXP_OP_ADD: return x + y;
    case MXP_OP_SUBTRACT: return x - y;
    case MXP_OP_MULTIPLY: return x * y;
    case MXP_OP_DIVIDE: return x / y;
    case MXP_OP_MAXIMUM: return mxp_ew_maximum(x, y);
    case MXP_OP_MINIMUM: return mxp_ew_minimum(x, y);
    case MXP_OP_POWER: return pow(x, y);
    case MXP_OP_EQUAL: return x == y;
    case MXP_OP_NOT_EQUAL: return x != y;
    case MXP_OP_LESS: return x < y;
    case MXP_OP_LESS_EQUAL: return x <= y;
    case MXP_OP_GREATER: return x > y;
    case MXP_OP_GREATER_EQUAL: return x >= y;
    case MXP_OP_FLOOR_DIVIDE: return divmod(x, y, c->f32, &mod);
    case MXP_OP_REMAINDER: divmod(x, y, c->f32, &mod); return mod;
    case MXP_OP_FMOD: return fmod(x, y);
    case MXP_OP_FMAX: return mxp_ew_fmax(x, y);
    case MXP_OP_FMIN: return mxp_ew_fmin(x, y);
    case MXP_OP_ARCTAN2: return atan2(x, y);
    case MXP_OP_HYPOT: return hypot(x, y);
    case MXP_OP_COPYSIGN: return copysign(x, y);
    case MXP_OP_NEXTAFTER: return next_toward(traits_or_f64(c), x, y);
    case MXP_OP_LOGICAL_AND: return x != 0 && y != 0;
    case MXP_OP_LOGICAL_OR: return x != 0 || y != 0;
    case MXP_OP_LOGICAL_XOR: return (x != 0) != (y != 0);
    case MXP_OP_LOGADDEXP: return logaddexp(x, y, false);
    case MXP_OP_LOGADDEXP2: return logaddexp(x, y, true);
    default: return ldexp_exact(traits_or_f64(c), x, y); /* ldexp */
    }
}

/* The facts of each elementwise operation — name, result dtype rule, how it
 * is computed — and, from them, result types and compute types.
 *
 * Compute types: float32 when its one rounding is correct — + - * / sqrt
 * and friends when every float involved has at most 16 bits (float32's 24
 * bits are >= 2p+2 for p <= 11) or the output is float32; operations whose
 * result is exact (maximum, floor, copysign, comparisons ...) whenever
 * float32 holds the inputs — float64 otherwise and for the transcendental
 * functions; int64 (uint64 when the common type is uint64) for integer
 * arithmetic.  exp, log, tanh, sin, cos and the activations of inputs
 * float32 holds, into float outputs of at most 32 bits, go through SLEEF
 * (plan_init): in float32 for a float32 output and (checked) for 16-bit
 * outputs of the first five, else in float64. */
#include "core/dtype-internal.h"
#include "core/error.h"
#include "ops/kernel-config.h"
#include "ops/ops-internal.h"

/* The result dtype from the promoted input type p (NumPy 1.24's ufunc type
 * resolution for NumPy's types; bfloat16 and float8 follow float16). */
enum result_rule {
    R_PROMOTE,         /* p */
    R_PROMOTE_NO_BOOL, /* p, bool -> int8 (NumPy has no bool loop) */
    R_FLOAT,           /* p if float, else the float NumPy gives the integers */
    R_TRUE_DIVIDE,     /* p if float, else float64 */
    R_BOOL,
    R_LDEXP,           /* a's float type; b must be an integer */
    R_INT32,
};

enum compute_class {
    C_ARITH, /* correctly rounded once: float32 under the 2p+2 rule */
    C_EXACT, /* the result is exact: float32 whenever it holds the inputs */
    C_F64,   /* transcendental functions, power, nextafter, spacing, ldexp */
};

typedef struct op_info {
    const char *name;
    unsigned char result;  /* enum result_rule */
    unsigned char compute; /* enum compute_class */
    bool ints;             /* an integer loop: integer in, integer out */
} op_info;

static const op_info binary_info[MXP_BINARY_OP_COUNT] = {
    [MXP_OP_ADD] = { "add", R_PROMOTE, C_ARITH, true },
    [MXP_OP_SUBTRACT] = { "subtract", R_PROMOTE, C_ARITH, true },
    [MXP_OP_MULTIPLY] = { "multiply", R_PROMOTE, C_ARITH, true },
    [MXP_OP_DIVIDE] = { "divide", R_TRUE_DIVIDE, C_ARITH, false },
    [MXP_OP_MAXIMUM] = { "maximum", R_PROMOTE, C_EXACT, true },
    [MXP_OP_MINIMUM] = { "minimum", R_PROMOTE, C_EXACT, true },
    [MXP_OP_POWER] = { "power", R_PROMOTE_NO_BOOL, C_F64, false },
    [MXP_OP_EQUAL] = { "equal", R_BOOL, C_EXACT, true },
    [MXP_OP_NOT_EQUAL] = { "not_equal", R_BOOL, C_EXACT, true },
    [MXP_OP_LESS] = { "less", R_BOOL, C_EXACT, true },
    [MXP_OP_LESS_EQUAL] = { "less_equal", R_BOOL, C_EXACT, true },
    [MXP_OP_GREATER] = { "greater", R_BOOL, C_EXACT, true },
    [MXP_OP_GREATER_EQUAL] = { "greater_equal", R_BOOL, C_EXACT, true },
    [MXP_OP_FLOOR_DIVIDE] = { "floor_divide", R_PROMOTE_NO_BOOL, C_ARITH, true },
    [MXP_OP_REMAINDER] = { "remainder", R_PROMOTE_NO_BOOL, C_ARITH, true },
    [MXP_OP_FMOD] = { "fmod", R_PROMOTE_NO_BOOL, C_EXACT, true },
    [MXP_OP_FMAX] = { "fmax", R_PROMOTE, C_EXACT, true },
    [MXP_OP_FMIN] = { "fmin", R_PROMOTE, C_EXACT, true },
    [MXP_OP_ARCTAN2] = { "arctan2", R_FLOAT, C_F64, false },
    [MXP_OP_HYPOT] = { "hypot", R_FLOAT, C_F64, false },
    [MXP_OP_COPYSIGN] = { "copysign", R_FLOAT, C_EXACT, false },
    [MXP_OP_NEXTAFTER] = { "nextafter", R_FLOAT, C_F64, false },
    [MXP_OP_LOGICAL_AND] = { "logical_and", R_BOOL, C_EXACT, false },
    [MXP_OP_LOGICAL_OR] = { "logical_or", R_BOOL, C_EXACT, false },
    [MXP_OP_LOGICAL_XOR] = { "logical_xor", R_BOOL, C_EXACT, false },
    [MXP_OP_LDEXP] = { "ldexp", R_LDEXP, C_F64, false },
    [MXP_OP_LOGADDEXP] = { "logaddexp", R_FLOAT, C_F64, false },
    [MXP_OP_LOGADDEXP2] = { "logaddexp2", R_FLOAT, C_F64, false },
};

static const op_info unary_info[MXP_UNARY_OP_COUNT] = {
    [MXP_OP_NEGATIVE] = { "negative", R_PROMOTE, C_EXACT, true },
    [MXP_OP_ABS] = { "abs", R_PROMOTE, C_EXACT, true },
    [MXP_OP_SQRT] = { "sqrt", R_FLOAT, C_ARITH, false },
    [MXP_OP_EXP] = { "exp", R_FLOAT, C_F64, false },
    [MXP_OP_LOG] = { "log", R_FLOAT, C_F64, false },
    [MXP_OP_TANH] = { "tanh", R_FLOAT, C_F64, false },
    [MXP_OP_SIGMOID] = { "sigmoid", R_FLOAT, C_F64, false },
    [MXP_OP_RELU] = { "relu", R_PROMOTE, C_EXACT, true },
    [MXP_OP_GELU] = { "gelu", R_FLOAT, C_F64, false },
    [MXP_OP_GELU_TANH] = { "gelu_tanh", R_FLOAT, C_F64, false },
    [MXP_OP_SILU] = { "silu", R_FLOAT, C_F64, false },
    [MXP_OP_POSITIVE] = { "positive", R_PROMOTE, C_EXACT, true },
    [MXP_OP_SIGN] = { "sign", R_PROMOTE, C_EXACT, true },
    [MXP_OP_RECIPROCAL] = { "reciprocal", R_PROMOTE_NO_BOOL, C_ARITH, true },
    [MXP_OP_SQUARE] = { "square", R_PROMOTE_NO_BOOL, C_ARITH, true },
    [MXP_OP_CBRT] = { "cbrt", R_FLOAT, C_F64, false },
    [MXP_OP_EXP2] = { "exp2", R_FLOAT, C_F64, false },
    [MXP_OP_EXPM1] = { "expm1", R_FLOAT, C_F64, false },
    [MXP_OP_LOG2] = { "log2", R_FLOAT, C_F64, false },
    [MXP_OP_LOG10] = { "log10", R_FLOAT, C_F64, false },
    [MXP_OP_LOG1P] = { "log1p", R_FLOAT, C_F64, false },
    [MXP_OP_SIN] = { "sin", R_FLOAT, C_F64, false },
    [MXP_OP_COS] = { "cos", R_FLOAT, C_F64, false },
    [MXP_OP_TAN] = { "tan", R_FLOAT, C_F64, false },
    [MXP_OP_ARCSIN] = { "arcsin", R_FLOAT, C_F64, false },
    [MXP_OP_ARCCOS] = { "arccos", R_FLOAT, C_F64, false },
    [MXP_OP_ARCTAN] = { "arctan", R_FLOAT, C_F64, false },
    [MXP_OP_SINH] = { "sinh", R_FLOAT, C_F64, false },
    [MXP_OP_COSH] = { "cosh", R_FLOAT, C_F64, false },
    [MXP_OP_ARCSINH] = { "arcsinh", R_FLOAT, C_F64, false },
    [MXP_OP_ARCCOSH] = { "arccosh", R_FLOAT, C_F64, false },
    [MXP_OP_ARCTANH] = { "arctanh", R_FLOAT, C_F64, false },
    [MXP_OP_FLOOR] = { "floor", R_FLOAT, C_EXACT, false },
    [MXP_OP_CEIL] = { "ceil", R_FLOAT, C_EXACT, false },
    [MXP_OP_RINT] = { "rint", R_FLOAT, C_EXACT, false },
    [MXP_OP_TRUNC] = { "trunc", R_FLOAT, C_EXACT, false },
    [MXP_OP_SPACING] = { "spacing", R_FLOAT, C_F64, false },
    [MXP_OP_ISNAN] = { "isnan", R_BOOL, C_EXACT, false },
    [MXP_OP_ISINF] = { "isinf", R_BOOL, C_EXACT, false },
    [MXP_OP_ISFINITE] = { "isfinite", R_BOOL, C_EXACT, false },
    [MXP_OP_SIGNBIT] = { "signbit", R_BOOL, C_EXACT, false },
    [MXP_OP_LOGICAL_NOT] = { "logical_not", R_BOOL, C_EXACT, false },
    [MXP_OP_FREXP_MANTISSA] = { "frexp_mantissa", R_FLOAT, C_EXACT, false },
    [MXP_OP_FREXP_EXPONENT] = { "frexp_exponent", R_INT32, C_EXACT, false },
    [MXP_OP_DEG2RAD] = { "deg2rad", R_FLOAT, C_F64, false },
    [MXP_OP_RAD2DEG] = { "rad2deg", R_FLOAT, C_F64, false },
};

const char *mxp_binary_op_name(mxp_binary_op op)
{
    return (unsigned)op < MXP_BINARY_OP_COUNT ? binary_info[op].name : "invalid";
}

const char *mxp_unary_op_name(mxp_unary_op op)
{
    return (unsigned)op < MXP_UNARY_OP_COUNT ? unary_info[op].name : "invalid";
}

static int float_bits(mxp_dtype t) { return mxp_is_float_dtype(t) ? mxp_dtype_get_traits(t)->bits : 0; }

/* The float NumPy computes an integer's float functions in. */
static mxp_dtype float_of(mxp_dtype t) { return mxp_is_float_dtype(t) ? t : mxp_promote_types(t, MXP_F16); }

/* NumPy's ldexp loops take int8 ... int64 exponents (bool and the smaller
 * unsigned types cast safely to them); uint64 has none. */
static bool ldexp_exponent_ok(mxp_dtype b) { return !mxp_is_float_dtype(b) && b != MXP_U64; }

static mxp_dtype result_type(const op_info *info, mxp_dtype a, mxp_dtype b, mxp_dtype p)
{
    switch (info->result) {
    case R_PROMOTE: return p;
    case R_PROMOTE_NO_BOOL: return p == MXP_BOOL ? MXP_S8 : p;
    /* NumPy's first float loop both inputs cast to safely: int8 with uint8
     * is float16, not the float of their int16 */
    case R_FLOAT: return mxp_is_float_dtype(p) ? p : mxp_promote_types(float_of(a), float_of(b));
    case R_TRUE_DIVIDE: return mxp_is_float_dtype(p) ? p : MXP_F64;
    case R_BOOL: return MXP_BOOL;
    case R_LDEXP: return ldexp_exponent_ok(b) ? float_of(a) : MXP_DTYPE_INVALID;
    default: return MXP_S32;
    }
}

mxp_dtype mxp_binary_result_type(mxp_binary_op op, mxp_dtype a, mxp_dtype b)
{
    mxp_dtype p = mxp_promote_types(a, b);
    if (p == MXP_DTYPE_INVALID || (unsigned)op >= MXP_BINARY_OP_COUNT)
        return MXP_DTYPE_INVALID;
    return result_type(&binary_info[op], a, b, p);
}

mxp_dtype mxp_unary_result_type(mxp_unary_op op, mxp_dtype a)
{
    if (!mxp_dtype_is_valid(a) || (unsigned)op >= MXP_UNARY_OP_COUNT)
        return MXP_DTYPE_INVALID;
    return result_type(&unary_info[op], a, a, a);
}

mxp_status mxp_ew_check_binary(mxp_binary_op op, mxp_dtype a, mxp_dtype b)
{
    (void)a;
    if (op == MXP_OP_LDEXP && !ldexp_exponent_ok(b))
        return mxp_error(MXP_ERR_UNSUPPORTED, "ldexp: the exponent's dtype %s is not an integer type "
                         "(bool, int8 ... int64, uint8 ... uint32)", mxp_dtype_name(b));
    return MXP_OK;
}

/* float32 holds every value exactly. */
static bool fits_f32(mxp_dtype t) { return mxp_is_float_dtype(t) ? float_bits(t) <= 32 : mxp_dtype_itemsize(t) <= 2; }

/* At most 11 significant bits: float32 rounds + - * / sqrt of it correctly. */
static bool narrow(mxp_dtype t) { return mxp_is_float_dtype(t) ? float_bits(t) <= 16 : mxp_dtype_itemsize(t) == 1; }

static mxp_dtype compute_type(const op_info *info, int nin, const mxp_dtype *in, mxp_dtype out)
{
    mxp_dtype common = nin == 2 ? mxp_promote_types(in[0], in[1]) : in[0];
    if (info->ints && !mxp_is_float_dtype(common) && !mxp_is_float_dtype(out)) /* int64 with uint64 is float64 */
        return common == MXP_U64 ? MXP_U64 : MXP_S64;
    bool all_fit = true, all_narrow = true, all_f32 = true;
    for (int k = 0; k < nin; k++) {
        all_fit = all_fit && fits_f32(in[k]);
        all_narrow = all_narrow && narrow(in[k]);
        all_f32 = all_f32 && (mxp_is_float_dtype(in[k]) ? float_bits(in[k]) <= 32 : mxp_dtype_itemsize(in[k]) == 1);
    }
    switch (info->compute) {
    case C_EXACT:
        return all_fit ? MXP_F32 : MXP_F64;
    case C_ARITH:
        /* An integer output would be a second rounding after float32's. */
        if ((all_narrow && mxp_is_float_dtype(out) && float_bits(out) <= 16) || (all_f32 && out == MXP_F32))
            return MXP_F32;
        return MXP_F64;
    default:
        return MXP_F64;
    }
}

static void plan_init(mxp_ew_plan *p, const op_info *info, int op, int nin, mxp_dtype a, mxp_dtype b, mxp_dtype out,
                      const mxp_convert_opts *convert)
{
    *p = (mxp_ew_plan){ .nin = nin, .in = { a, b }, .out = out };
    p->ct = compute_type(info, nin, p->in, out);
    p->costly = info->compute == C_F64;
    /* negative, positive, abs and copysign act on the sign bit alone (IEEE
     * 754's bit operations): an input NaN keeps its payload */
    const bool sign_op = nin == 2 ? op == MXP_OP_COPYSIGN
                                  : op == MXP_OP_NEGATIVE || op == MXP_OP_POSITIVE || op == MXP_OP_ABS;
    const mxp_isa isa = mxp_isa_current();
    mxp_kernel_any kernel = NULL;
    p->fn = nin == 2 ? mxp_binary_kernel_for(p->ct, op, isa, &kernel) : mxp_unary_kernel(p->ct);
    bool fused_nan = false;
    if (nin == 1 && fits_f32(a) && mxp_is_float_dtype(out) && float_bits(out) <= 32) {
        /* SLEEF's loops (src/ops/elementwise-vmath.c) where they exist at
         * this ISA level: float32 ones for a float32 output rounded to
         * nearest even without flag counters (the kernel's result is the
         * rounded one), float64 ones rounded once by the conversion otherwise */
        const bool nearest = !convert || (convert->rounding == MXP_ROUND_NEAREST_EVEN && !convert->flags);
        /* float16 and bfloat16 outputs of exp, log, tanh, sin, cos take the
         * float32 kernel with its check (mxp_vmath_kernel_h16): SLEEF's
         * float32 result where its rounding is settled, the float64 kernel's
         * elsewhere -- the float64 path's bits, about 2.5x faster.  So
         * does gelu (float16: at AVX-512, its fast path's float64
         * approximation rounded to float32, within 1 ulp; bfloat16: at AVX2
         * and AVX-512, a float32 one within 6.65 ulps).  The other activations keep
         * the float64 kernel (in float32 their formulas lose tens of ulp for
         * negative x: no 1-ulp bound to check with) */
        mxp_kernel_any vk = NULL;
        mxp_kernel_fn vm = !nearest ? NULL
                         : out == MXP_F32 ? mxp_vmath_kernel(MXP_F32, op, isa, &vk)
                         : mxp_vmath_kernel_h16(a, out, op, isa, &vk);
        if (vm) {
            p->ct = MXP_F32;
        } else {
            vm = mxp_vmath_kernel(MXP_F64, op, isa, &vk);
        }
        if (vm) {
            p->fn = vm;
            kernel = vk;
        }
        /* mxp_f32_vmath__* write their NaNs as the positive quiet NaN
         * (float32 gelu has a kernel of its own, src/kernels/f32-gelu/) */
        fused_nan = vm && out == MXP_F32 && p->ct == MXP_F32 && op != MXP_OP_GELU;
    }
    p->ctx = (mxp_ew_ctx){ op, p->ct == MXP_F32, mxp_is_float_dtype(out) ? mxp_dtype_get_traits(out) : NULL, kernel };
    if (convert)
        p->convert = *convert;
    /* One float dtype throughout: the sign bit flipped, cleared or copied
     * in place, as IEEE 754's bit operations (widened to float32, a
     * signalling NaN of float16, bfloat16 or the IEEE-style float8s came
     * back quiet).  Not the fnuz float8s (no -0: their zero and their one
     * NaN, 0x80, keep their sign) nor float8_e8m0fnu (no sign bit): those
     * keep the arithmetic path, which has no payload to lose there. */
    if (sign_op && a == out && (nin == 1 || b == out) && mxp_is_float_dtype(out) && out != MXP_E4M3FNUZ &&
        out != MXP_E5M2FNUZ && out != MXP_E4M3B11 && out != MXP_E8M0 && mxp_dtype_itemsize(out) <= 8) {
        const int bits = mxp_dtype_get_traits(out)->bits;
        p->sign_size = mxp_dtype_itemsize(out);
        p->sign_mask = (uint64_t)1 << (bits - 1);
        p->sign_width = bits < 64 ? ((uint64_t)1 << bits) - 1 : ~(uint64_t)0;
    }
    if (mxp_is_float_dtype(out) && !sign_op && !fused_nan) {
        if (p->ct == MXP_F32)
            p->nan_f32 = mxp_f32_canonical_nan_kernel(isa);
        else if (p->ct == MXP_F64)
            p->nan_f64 = mxp_f64_canonical_nan_kernel(isa);
    }
}

static bool plain_rne(const mxp_convert_opts *convert)
{
    return !convert || (convert->rounding == MXP_ROUND_NEAREST_EVEN && convert->overflow == MXP_OVERFLOW_INF &&
                        !convert->flags);
}

/* The fused float16/bfloat16 kernel for a + b, a - b, a * b of one 16-bit
 * type into the same type, rounded to nearest even (infinities kept, no
 * flag counters): the bits of the blocked float32 path. */
static void plan_h16(mxp_ew_plan *p, mxp_binary_op op, mxp_dtype a, mxp_dtype b, mxp_dtype out,
                     const mxp_convert_opts *convert)
{
    const int h = op == MXP_OP_ADD ? MXP_ARITH_ADD : op == MXP_OP_SUBTRACT ? MXP_ARITH_SUB
                : op == MXP_OP_MULTIPLY ? MXP_ARITH_MUL : -1;
    if (h < 0 || !plain_rne(convert) || a != b || a != out || (a != MXP_F16 && a != MXP_BF16))
        return;
    p->h16 = a == MXP_F16 ? mxp_f16_arith_kernel(mxp_isa_current()) : mxp_bf16_arith_kernel(mxp_isa_current());
    p->h16_op = h;
}

void mxp_ew_plan_binary(mxp_ew_plan *p, mxp_binary_op op, mxp_dtype a, mxp_dtype b, mxp_dtype out,
                        const mxp_convert_opts *convert)
{
    plan_init(p, &binary_info[op], (int)op, 2, a, b, out, convert);
    plan_h16(p, op, a, b, out, convert);
}

void mxp_ew_plan_unary(mxp_ew_plan *p, mxp_unary_op op, mxp_dtype a, mxp_dtype out, const mxp_convert_opts *convert)
{
    plan_init(p, &unary_info[op], (int)op, 1, a, MXP_DTYPE_INVALID, out, convert);
    /* float16 exp, log, tanh, sin, cos of float16, rounded to nearest even
     * with infinities kept: one pass, no float32 scratch (the same bits) */
    if (a == MXP_F16 && out == MXP_F16 && plain_rne(convert) && p->ct == MXP_F32)
        p->h16_unary = mxp_vmath_fused_f16((int)op, mxp_isa_current(), &p->h16_op);
    p->lut16 = mxp_ew_lut16_key(p, (int)op);
}

/* The dtype traits table, names, promotion and casting rules. */
#include <string.h>
#include <strings.h>

#include "core/dtype-internal.h"
#include "mxp/dtype.h"

#define INT_TRAITS(dt_, name_, short_, size_, kind_, signed_, max_, lowest_) \
    [dt_] = { .name = name_, .short_name = short_, .dtype = dt_, .itemsize = size_,   \
              .kind = kind_, .bits = 8 * (size_), .eps = 1.0, .max = (double)(max_), \
              .lowest = (double)(lowest_), .min_normal = 1.0, .min_subnormal = 1.0,  \
              .is_signed = signed_, .max_exact_int = (uint64_t)(max_) }

/* Sub-byte integers: one byte per element, the value in the low bits. */
#define SUBBYTE_INT_TRAITS(dt_, name_, short_, bits_, signed_)                              \
    [dt_] = { .name = name_, .short_name = short_, .dtype = dt_, .itemsize = 1,               \
              .kind = (signed_) ? MXP_KIND_INT : MXP_KIND_UINT, .bits = bits_, .eps = 1.0,    \
              .max = (signed_) ? (double)((1 << ((bits_) - 1)) - 1) : (double)((1 << (bits_)) - 1), \
              .lowest = (signed_) ? -(double)(1 << ((bits_) - 1)) : 0.0, .min_normal = 1.0,     \
              .min_subnormal = 1.0, .is_signed = signed_,                                      \
              .max_exact_int = (signed_) ? (uint64_t)(1 << ((bits_) - 1)) - 1 : (uint64_t)(1 << (bits_)) - 1 }

/* Float traits: p = mant_bits + 1 significant bits, emin = 1 - bias. */
static const mxp_dtype_traits traits_table[MXP_DTYPE_COUNT] = {
    [MXP_BOOL] = { .name = "bool", .short_name = "bool", .dtype = MXP_BOOL, .itemsize = 1,
                   .kind = MXP_KIND_BOOL, .bits = 8, .eps = 1.0, .max = 1.0, .lowest = 0.0,
                   .min_normal = 1.0, .min_subnormal = 1.0, .max_exact_int = 1 },
    INT_TRAITS(MXP_S8, "int8", "s8", 1, MXP_KIND_INT, true, INT8_MAX, INT8_MIN),
    INT_TRAITS(MXP_S16, "int16", "s16", 2, MXP_KIND_INT, true, INT16_MAX, INT16_MIN),
    INT_TRAITS(MXP_S32, "int32", "s32", 4, MXP_KIND_INT, true, INT32_MAX, INT32_MIN),
    INT_TRAITS(MXP_S64, "int64", "s64", 8, MXP_KIND_INT, true, INT64_MAX, INT64_MIN),
    INT_TRAITS(MXP_U8, "uint8", "u8", 1, MXP_KIND_UINT, false, UINT8_MAX, 0),
    INT_TRAITS(MXP_U16, "uint16", "u16", 2, MXP_KIND_UINT, false, UINT16_MAX, 0),
    INT_TRAITS(MXP_U32, "uint32", "u32", 4, MXP_KIND_UINT, false, UINT32_MAX, 0),
    INT_TRAITS(MXP_U64, "uint64", "u64", 8, MXP_KIND_UINT, false, UINT64_MAX, 0),
    [MXP_F16] = { .name = "float16", .short_name = "f16", .dtype = MXP_F16, .itemsize = 2,
                  .kind = MXP_KIND_FLOAT, .bits = 16, .exp_bits = 5, .mant_bits = 10, .bias = 15,
                  .eps = 0x1p-10, .max = 65504.0, .lowest = -65504.0, .min_normal = 0x1p-14,
                  .min_subnormal = 0x1p-24, .has_inf = true, .has_nan = true, .is_signed = true,
                  .max_exact_int = 2048 },
    [MXP_BF16] = { .name = "bfloat16", .short_name = "bf16", .dtype = MXP_BF16, .itemsize = 2,
                   .kind = MXP_KIND_FLOAT, .bits = 16, .exp_bits = 8, .mant_bits = 7, .bias = 127,
                   .eps = 0x1p-7, .max = 0x1.fep127, .lowest = -0x1.fep127, .min_normal = 0x1p-126,
                   .min_subnormal = 0x1p-133, .has_inf = true, .has_nan = true, .is_signed = true,
                   .max_exact_int = 256 },
    [MXP_F32] = { .name = "float32", .short_name = "f32", .dtype = MXP_F32, .itemsize = 4,
                  .kind = MXP_KIND_FLOAT, .bits = 32, .exp_bits = 8, .mant_bits = 23, .bias = 127,
                  .eps = 0x1p-23, .max = 0x1.fffffep127, .lowest = -0x1.fffffep127,
                  .min_normal = 0x1p-126, .min_subnormal = 0x1p-149, .has_inf = true,
                  .has_nan = true, .is_signed = true, .max_exact_int = 1ull << 24 },
    [MXP_F64] = { .name = "float64", .short_name = "f64", .dtype = MXP_F64, .itemsize = 8,
                  .kind = MXP_KIND_FLOAT, .bits = 64, .exp_bits = 11, .mant_bits = 52, .bias = 1023,
                  .eps = 0x1p-52, .max = 0x1.fffffffffffffp1023, .lowest = -0x1.fffffffffffffp1023,
                  .min_normal = 0x1p-1022, .min_subnormal = 0x1p-1074, .has_inf = true,
                  .has_nan = true, .is_signed = true, .max_exact_int = 1ull << 53 },
    /* OCP FP8 E4M3: no infinity; S.1111.111 is NaN, so max is 1.110b x 2^8. */
    [MXP_E4M3] = { .name = "float8_e4m3fn", .short_name = "e4m3", .dtype = MXP_E4M3, .itemsize = 1,
                   .kind = MXP_KIND_FLOAT, .bits = 8, .exp_bits = 4, .mant_bits = 3, .bias = 7,
                   .eps = 0x1p-3, .max = 448.0, .lowest = -448.0, .min_normal = 0x1p-6,
                   .min_subnormal = 0x1p-9, .has_inf = false, .has_nan = true, .is_signed = true,
                   .max_exact_int = 16 },
    /* OCP FP8 E5M2: IEEE-like, the top 8 bits of a float16. */
    [MXP_E5M2] = { .name = "float8_e5m2", .short_name = "e5m2", .dtype = MXP_E5M2, .itemsize = 1,
                   .kind = MXP_KIND_FLOAT, .bits = 8, .exp_bits = 5, .mant_bits = 2, .bias = 15,
                   .eps = 0x1p-2, .max = 57344.0, .lowest = -57344.0, .min_normal = 0x1p-14,
                   .min_subnormal = 0x1p-16, .has_inf = true, .has_nan = true, .is_signed = true,
                   .max_exact_int = 8 },
    /* IEEE-style: S.111.0000 infinity, S.111.xxxx NaN */
    [MXP_E3M4] = { .name = "float8_e3m4", .short_name = "e3m4", .dtype = MXP_E3M4, .itemsize = 1,
        .kind = MXP_KIND_FLOAT, .bits = 8, .exp_bits = 3, .mant_bits = 4, .bias = 3,
        .eps = 0x1p-4, .max = 0x1.fp3, .lowest = -0x1.fp3,
        .min_normal = 0x1p-2, .min_subnormal = 0x1p-6,
        .has_inf = true, .has_nan = true, .is_signed = true,
        .max_exact_int = 15 },
    /* IEEE-style E4M3 (ml_dtypes, MLIR): infinities, so max is 1.111b x 2^7 */
    [MXP_E4M3IEEE] = { .name = "float8_e4m3", .short_name = "e4m3ieee", .dtype = MXP_E4M3IEEE, .itemsize = 1,
        .kind = MXP_KIND_FLOAT, .bits = 8, .exp_bits = 4, .mant_bits = 3, .bias = 7,
        .eps = 0x1p-3, .max = 240.0, .lowest = -240.0,
        .min_normal = 0x1p-6, .min_subnormal = 0x1p-9,
        .has_inf = true, .has_nan = true, .is_signed = true,
        .max_exact_int = 16 },
    /* fnuz: no infinity, no -0; 0x80 is the only NaN */
    [MXP_E4M3B11] = { .name = "float8_e4m3b11fnuz", .short_name = "e4m3b11", .dtype = MXP_E4M3B11, .itemsize = 1,
        .kind = MXP_KIND_FLOAT, .bits = 8, .exp_bits = 4, .mant_bits = 3, .bias = 11,
        .eps = 0x1p-3, .max = 30.0, .lowest = -30.0,
        .min_normal = 0x1p-10, .min_subnormal = 0x1p-13,
        .has_inf = false, .has_nan = true, .is_signed = true,
        .max_exact_int = 16 },
    /* fnuz, bias 8 (AMD/Graphcore FP8) */
    [MXP_E4M3FNUZ] = { .name = "float8_e4m3fnuz", .short_name = "e4m3fnuz", .dtype = MXP_E4M3FNUZ, .itemsize = 1,
        .kind = MXP_KIND_FLOAT, .bits = 8, .exp_bits = 4, .mant_bits = 3, .bias = 8,
        .eps = 0x1p-3, .max = 240.0, .lowest = -240.0,
        .min_normal = 0x1p-7, .min_subnormal = 0x1p-10,
        .has_inf = false, .has_nan = true, .is_signed = true,
        .max_exact_int = 16 },
    /* fnuz, bias 16 */
    [MXP_E5M2FNUZ] = { .name = "float8_e5m2fnuz", .short_name = "e5m2fnuz", .dtype = MXP_E5M2FNUZ, .itemsize = 1,
        .kind = MXP_KIND_FLOAT, .bits = 8, .exp_bits = 5, .mant_bits = 2, .bias = 16,
        .eps = 0x1p-2, .max = 57344.0, .lowest = -57344.0,
        .min_normal = 0x1p-15, .min_subnormal = 0x1p-17,
        .has_inf = false, .has_nan = true, .is_signed = true,
        .max_exact_int = 8 },
    /* OCP MX scale: 2^(e-127), unsigned, no zero, 0xff NaN */
    [MXP_E8M0] = { .name = "float8_e8m0fnu", .short_name = "e8m0", .dtype = MXP_E8M0, .itemsize = 1,
        .kind = MXP_KIND_FLOAT, .bits = 8, .exp_bits = 8, .mant_bits = 0, .bias = 127,
        .eps = 1.0, .max = 0x1p127, .lowest = 0x1p-127,
        .min_normal = 0x1p-127, .min_subnormal = 0x1p-127,
        .has_inf = false, .has_nan = true, .is_signed = false,
        .max_exact_int = 0 },
    /* OCP MX FP6: every encoding finite */
    [MXP_E2M3] = { .name = "float6_e2m3fn", .short_name = "e2m3", .dtype = MXP_E2M3, .itemsize = 1,
        .kind = MXP_KIND_FLOAT, .bits = 6, .exp_bits = 2, .mant_bits = 3, .bias = 1,
        .eps = 0x1p-3, .max = 0x1.ep2, .lowest = -0x1.ep2,
        .min_normal = 1.0, .min_subnormal = 0x1p-3,
        .has_inf = false, .has_nan = false, .is_signed = true,
        .max_exact_int = 7 },
    /* OCP MX FP6: every encoding finite */
    [MXP_E3M2] = { .name = "float6_e3m2fn", .short_name = "e3m2", .dtype = MXP_E3M2, .itemsize = 1,
        .kind = MXP_KIND_FLOAT, .bits = 6, .exp_bits = 3, .mant_bits = 2, .bias = 3,
        .eps = 0x1p-2, .max = 28.0, .lowest = -28.0,
        .min_normal = 0x1p-2, .min_subnormal = 0x1p-4,
        .has_inf = false, .has_nan = false, .is_signed = true,
        .max_exact_int = 8 },
    /* OCP MX FP4, NVFP4's element: every encoding finite */
    [MXP_E2M1] = { .name = "float4_e2m1fn", .short_name = "e2m1", .dtype = MXP_E2M1, .itemsize = 1,
        .kind = MXP_KIND_FLOAT, .bits = 4, .exp_bits = 2, .mant_bits = 1, .bias = 1,
        .eps = 0x1p-1, .max = 6.0, .lowest = -6.0,
        .min_normal = 1.0, .min_subnormal = 0x1p-1,
        .has_inf = false, .has_nan = false, .is_signed = true,
        .max_exact_int = 4 },
    SUBBYTE_INT_TRAITS(MXP_S4, "int4", "s4", 4, true),
    SUBBYTE_INT_TRAITS(MXP_U4, "uint4", "u4", 4, false),
    SUBBYTE_INT_TRAITS(MXP_S2, "int2", "s2", 2, true),
    SUBBYTE_INT_TRAITS(MXP_U2, "uint2", "u2", 2, false),
    SUBBYTE_INT_TRAITS(MXP_S1, "int1", "s1", 1, true),
    SUBBYTE_INT_TRAITS(MXP_U1, "uint1", "u1", 1, false),
};

bool mxp_dtype_is_valid(mxp_dtype dt) { return dt > MXP_DTYPE_INVALID && dt < MXP_DTYPE_COUNT; }

const mxp_dtype_traits *mxp_dtype_get_traits(mxp_dtype dt)
{
    return mxp_dtype_is_valid(dt) ? &traits_table[dt] : NULL;
}

const char *mxp_dtype_name(mxp_dtype dt)
{
    return mxp_dtype_is_valid(dt) ? traits_table[dt].name : "invalid";
}

size_t mxp_dtype_itemsize(mxp_dtype dt)
{
    return mxp_dtype_is_valid(dt) ? traits_table[dt].itemsize : 0;
}

static const struct { const char *name; mxp_dtype dt; } aliases[] = {
    { "bool_", MXP_BOOL }, { "b1", MXP_BOOL }, { "?", MXP_BOOL },
    { "i1", MXP_S8 }, { "i8", MXP_S8 }, { "byte", MXP_S8 },
    { "i2", MXP_S16 }, { "i16", MXP_S16 }, { "short", MXP_S16 },
    { "i4", MXP_S32 }, { "i32", MXP_S32 }, { "intc", MXP_S32 },
    { "i64", MXP_S64 }, { "int", MXP_S64 }, { "long", MXP_S64 }, { "int_", MXP_S64 },
    { "u1", MXP_U8 }, { "ubyte", MXP_U8 },
    { "u2", MXP_U16 }, { "ushort", MXP_U16 },
    { "u4", MXP_U32 }, { "uintc", MXP_U32 },
    { "uint", MXP_U64 },
    { "f2", MXP_F16 }, { "half", MXP_F16 }, { "fp16", MXP_F16 },
    { "bf16", MXP_BF16 }, { "brain", MXP_BF16 },
    { "f4", MXP_F32 }, { "single", MXP_F32 }, { "fp32", MXP_F32 },
    /* NumPy: np.dtype("float") is float64 (Python's float). */
    { "f8", MXP_F64 }, { "double", MXP_F64 }, { "float", MXP_F64 }, { "fp64", MXP_F64 },
    /* "e4m3" is float8_e4m3fn (OCP, no infinity: the float8 users mean);
     * "float8_e4m3" and "f8e4m3" are, as in ml_dtypes, JAX and MLIR, the
     * IEEE-style E4M3 with infinities (max 240), another format. */
    { "e4m3fn", MXP_E4M3 }, { "fp8_e4m3", MXP_E4M3 }, { "f8e4m3fn", MXP_E4M3 },
    { "fp8_e5m2", MXP_E5M2 }, { "f8e5m2", MXP_E5M2 },
    { "f8e3m4", MXP_E3M4 }, { "f8e4m3", MXP_E4M3IEEE },
    { "e4m3b11fnuz", MXP_E4M3B11 }, { "f8e4m3b11fnuz", MXP_E4M3B11 },
    { "f8e4m3fnuz", MXP_E4M3FNUZ }, { "f8e5m2fnuz", MXP_E5M2FNUZ },
    { "e8m0fnu", MXP_E8M0 }, { "f8e8m0fnu", MXP_E8M0 }, { "fp8_e8m0", MXP_E8M0 },
    { "e2m3fn", MXP_E2M3 }, { "f6e2m3fn", MXP_E2M3 }, { "fp6_e2m3", MXP_E2M3 },
    { "e3m2fn", MXP_E3M2 }, { "f6e3m2fn", MXP_E3M2 }, { "fp6_e3m2", MXP_E3M2 },
    { "e2m1fn", MXP_E2M1 }, { "f4e2m1fn", MXP_E2M1 }, { "fp4_e2m1", MXP_E2M1 }, { "fp4", MXP_E2M1 },
};

mxp_dtype mxp_dtype_from_name(const char *name)
{
    if (!name)
        return MXP_DTYPE_INVALID;
    for (int dt = 1; dt < MXP_DTYPE_COUNT; dt++) {
        if (!strcasecmp(name, traits_table[dt].name) || !strcasecmp(name, traits_table[dt].short_name))
            return (mxp_dtype)dt;
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (!strcasecmp(name, aliases[i].name))
            return aliases[i].dt;
    }
    return MXP_DTYPE_INVALID;
}

/* ---- promotion ------------------------------------------------------- */

/* Not one of NumPy's own types: bfloat16, the float8/6/4 types and the
 * sub-byte integers promote by exactness (docs/dtypes.md). */
static bool is_new_type(mxp_dtype t)
{
    const mxp_dtype_traits *tr = &traits_table[t];
    if (tr->kind == MXP_KIND_FLOAT)
        return t != MXP_F16 && t != MXP_F32 && t != MXP_F64;
    return tr->kind != MXP_KIND_BOOL && tr->bits < 8;
}

/* NumPy's integer promotion, by bits: same signedness -> the wider; mixed
 * -> the narrowest signed type wider than the unsigned one (uint64 ->
 * float64). */
static mxp_dtype promote_ints(mxp_dtype a, mxp_dtype b)
{
    const mxp_dtype_traits *ta = &traits_table[a], *tb = &traits_table[b];
    if (ta->is_signed == tb->is_signed)
        return ta->bits >= tb->bits ? a : b;
    const mxp_dtype_traits *s = ta->is_signed ? ta : tb, *u = ta->is_signed ? tb : ta;
    if (s->bits > u->bits)
        return s->dtype;
    static const mxp_dtype signed_types[] = { MXP_S2, MXP_S4, MXP_S8, MXP_S16, MXP_S32, MXP_S64 };
    for (size_t i = 0; i < sizeof signed_types / sizeof signed_types[0]; i++)
        if (traits_table[signed_types[i]].bits > u->bits)
            return signed_types[i];
    return MXP_F64;
}

/* Does float type f hold every value of type t exactly (zeros of both
 * signs, infinities and NaN included where t has them)? */
static bool holds_exactly(mxp_dtype f, mxp_dtype t)
{
    const mxp_dtype_traits *F = &traits_table[f], *T = &traits_table[t];
    if (t == MXP_BOOL || f == t)
        return f == t || F->max_exact_int >= 1;
    if (mxp_is_int_dtype(t)) {
        uint64_t mag = T->is_signed ? T->max_exact_int + 1 : T->max_exact_int;
        return F->max_exact_int >= mag && (F->is_signed || !T->is_signed);
    }
    /* With at least t's significand bits, t's largest value and t's
     * smallest step, f has every value of t. */
    return F->mant_bits >= T->mant_bits && F->max >= T->max && F->min_subnormal <= T->min_subnormal &&
           (F->is_signed || !T->is_signed) && (F->has_inf || !T->has_inf) &&
           (F->has_nan || !T->has_nan) && (mxp_has_neg_zero(f) || !mxp_has_neg_zero(t));
}

/* NumPy's int -> float widening: 1-byte ints -> f16, 2-byte -> f32, else f64. */
static mxp_dtype float_for_int(mxp_dtype t)
{
    size_t s = traits_table[t].itemsize;
    return s == 1 ? MXP_F16 : s == 2 ? MXP_F32 : MXP_F64;
}

mxp_dtype mxp_promote_types(mxp_dtype a, mxp_dtype b)
{
    if (!mxp_dtype_is_valid(a) || !mxp_dtype_is_valid(b))
        return MXP_DTYPE_INVALID;
    if (a == b)
        return a;
    if (a == MXP_BOOL)
        return b;
    if (b == MXP_BOOL)
        return a;
    if (mxp_is_int_dtype(a) && mxp_is_int_dtype(b))
        return promote_ints(a, b);
    if (is_new_type(a) || is_new_type(b)) {
        if (a == MXP_S64 || a == MXP_U64 || b == MXP_S64 || b == MXP_U64)
            return MXP_F64;
        /* Narrowest first; at equal width the OCP types first, float16
         * before bfloat16. */
        static const mxp_dtype order[] = { MXP_E2M1, MXP_E2M3, MXP_E3M2, MXP_E3M4, MXP_E4M3,
                                           MXP_E4M3IEEE, MXP_E4M3FNUZ, MXP_E4M3B11, MXP_E5M2,
                                           MXP_E5M2FNUZ, MXP_E8M0, MXP_F16, MXP_BF16, MXP_F32, MXP_F64 };
        for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
            if (holds_exactly(order[i], a) && holds_exactly(order[i], b))
                return order[i];
        }
        return MXP_F64;
    }
    /* NumPy's own float types: f16 < f32 < f64, ints widen by size. */
    mxp_dtype fa = mxp_is_float_dtype(a) ? a : float_for_int(a);
    mxp_dtype fb = mxp_is_float_dtype(b) ? b : float_for_int(b);
    return fa > fb ? fa : fb;
}

static int kind_rank(mxp_dtype t)
{
    switch (traits_table[t].kind) {
    case MXP_KIND_BOOL: return 0;
    case MXP_KIND_UINT: return 1;
    case MXP_KIND_INT: return 2;
    default: return 3;
    }
}

bool mxp_can_cast(mxp_dtype from, mxp_dtype to, mxp_casting casting)
{
    if (!mxp_dtype_is_valid(from) || !mxp_dtype_is_valid(to))
        return false;
    switch (casting) {
    case MXP_CASTING_NO:
    case MXP_CASTING_EQUIV:
        return from == to;
    case MXP_CASTING_SAFE:
        return mxp_promote_types(from, to) == to;
    case MXP_CASTING_SAME_KIND:
        return mxp_promote_types(from, to) == to || kind_rank(from) <= kind_rank(to);
    case MXP_CASTING_UNSAFE:
        return true;
    default:
        return false;
    }
}

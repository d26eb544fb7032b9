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
    /* Not "float8_e4m3" nor "f8e4m3": in ml_dtypes, JAX and MLIR those name
     * the IEEE-style E4M3 with infinities (max 240), another format. */
    { "e4m3fn", MXP_E4M3 }, { "fp8_e4m3", MXP_E4M3 }, { "f8e4m3fn", MXP_E4M3 },
    { "fp8_e5m2", MXP_E5M2 }, { "f8e5m2", MXP_E5M2 },
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

static bool is_new_float(mxp_dtype t) { return t == MXP_BF16 || t == MXP_E4M3 || t == MXP_E5M2; }

/* NumPy's integer promotion: same signedness -> the larger; mixed -> the
 * smallest signed type larger than the unsigned one (uint64 -> float64). */
static mxp_dtype promote_ints(mxp_dtype a, mxp_dtype b)
{
    const mxp_dtype_traits *ta = &traits_table[a], *tb = &traits_table[b];
    if (ta->is_signed == tb->is_signed)
        return ta->itemsize >= tb->itemsize ? a : b;
    const mxp_dtype_traits *s = ta->is_signed ? ta : tb, *u = ta->is_signed ? tb : ta;
    if (s->itemsize > u->itemsize)
        return s->dtype;
    switch (u->itemsize) {
    case 1: return MXP_S16;
    case 2: return MXP_S32;
    case 4: return MXP_S64;
    default: return MXP_F64;
    }
}

/* Does float type f hold every value of type t exactly? */
static bool holds_exactly(mxp_dtype f, mxp_dtype t)
{
    const mxp_dtype_traits *F = &traits_table[f], *T = &traits_table[t];
    if (t == MXP_BOOL || f == t)
        return true;
    if (mxp_is_int_dtype(t)) {
        uint64_t mag = T->is_signed ? T->max_exact_int + 1 : T->max_exact_int;
        return F->max_exact_int >= mag;
    }
    int f_emax = (1 << F->exp_bits) - 1 - F->bias - (F->has_inf ? 1 : 0);
    int t_emax = (1 << T->exp_bits) - 1 - T->bias - (T->has_inf ? 1 : 0);
    int f_tiny = 1 - F->bias - F->mant_bits, t_tiny = 1 - T->bias - T->mant_bits;
    return F->mant_bits >= T->mant_bits && f_emax >= t_emax && f_tiny <= t_tiny &&
           (F->has_inf || !T->has_inf);
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
    if (is_new_float(a) || is_new_float(b)) {
        if (a == MXP_S64 || a == MXP_U64 || b == MXP_S64 || b == MXP_U64)
            return MXP_F64;
        /* Smallest first; at equal size float16 before bfloat16. */
        static const mxp_dtype order[] = { MXP_E4M3, MXP_E5M2, MXP_F16, MXP_BF16, MXP_F32, MXP_F64 };
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

/* mxp — the dtype system: names, traits, promotion and casting rules.
 * See docs/dtypes.md for the tables. */
#ifndef MXP_DTYPE_H
#define MXP_DTYPE_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Short words (s8, bf16, e4m3 ...) are used in code; the long NumPy /
 * ml_dtypes spellings are aliases of the same values.  0 is never a dtype,
 * so a zero-initialized mxp_dtype is detectably unset. */
typedef enum mxp_dtype {
    MXP_DTYPE_INVALID = 0,
    MXP_BOOL,
    MXP_S8, MXP_S16, MXP_S32, MXP_S64,
    MXP_U8, MXP_U16, MXP_U32, MXP_U64,
    MXP_F16, MXP_BF16, MXP_F32, MXP_F64,
    MXP_E4M3, MXP_E5M2,
    /* Added in 0.2 (docs/dtypes.md has the table): ml_dtypes' other float8
     * types, the OCP MX element and scale types and the sub-byte integers.
     * Sub-byte types take one byte per element, as ml_dtypes stores them:
     * the value in the low bits, the bits above ignored on read and written
     * as zero (mxp_pack/mxp_unpack give the packed forms). */
    MXP_E3M4,      /* float8_e3m4: IEEE-style, bias 3 */
    MXP_E4M3IEEE,  /* float8_e4m3: IEEE-style with infinities, bias 7, max 240 */
    MXP_E4M3B11,   /* float8_e4m3b11fnuz: bias 11, no inf, no -0, NaN 0x80 */
    MXP_E4M3FNUZ,  /* float8_e4m3fnuz: bias 8, no inf, no -0, NaN 0x80 */
    MXP_E5M2FNUZ,  /* float8_e5m2fnuz: bias 16, no inf, no -0, NaN 0x80 */
    MXP_E8M0,      /* float8_e8m0fnu: unsigned powers of two 2^-127..2^127, NaN 0xff, no zero */
    MXP_E2M3,      /* float6_e2m3fn: OCP MX FP6, no inf, no NaN, max 7.5 */
    MXP_E3M2,      /* float6_e3m2fn: OCP MX FP6, no inf, no NaN, max 28 */
    MXP_E2M1,      /* float4_e2m1fn: OCP MX / NVFP4 FP4, no inf, no NaN, max 6 */
    MXP_S4, MXP_U4, MXP_S2, MXP_U2, MXP_S1, MXP_U1,
    MXP_DTYPE_COUNT,

    MXP_INT8 = MXP_S8, MXP_INT16 = MXP_S16, MXP_INT32 = MXP_S32, MXP_INT64 = MXP_S64,
    MXP_UINT8 = MXP_U8, MXP_UINT16 = MXP_U16, MXP_UINT32 = MXP_U32, MXP_UINT64 = MXP_U64,
    MXP_FLOAT16 = MXP_F16, MXP_BFLOAT16 = MXP_BF16,
    MXP_FLOAT32 = MXP_F32, MXP_FLOAT64 = MXP_F64,
    MXP_FLOAT8_E4M3FN = MXP_E4M3, MXP_FLOAT8_E5M2 = MXP_E5M2,
    MXP_FLOAT8_E3M4 = MXP_E3M4, MXP_FLOAT8_E4M3 = MXP_E4M3IEEE,
    MXP_FLOAT8_E4M3B11FNUZ = MXP_E4M3B11, MXP_FLOAT8_E4M3FNUZ = MXP_E4M3FNUZ,
    MXP_FLOAT8_E5M2FNUZ = MXP_E5M2FNUZ, MXP_FLOAT8_E8M0FNU = MXP_E8M0,
    MXP_FLOAT6_E2M3FN = MXP_E2M3, MXP_FLOAT6_E3M2FN = MXP_E3M2, MXP_FLOAT4_E2M1FN = MXP_E2M1,
    MXP_INT4 = MXP_S4, MXP_UINT4 = MXP_U4, MXP_INT2 = MXP_S2, MXP_UINT2 = MXP_U2,
    MXP_INT1 = MXP_S1, MXP_UINT1 = MXP_U1
} mxp_dtype;

/* NumPy's kind characters. */
typedef enum mxp_kind {
    MXP_KIND_BOOL = 'b',
    MXP_KIND_INT = 'i',
    MXP_KIND_UINT = 'u',
    MXP_KIND_FLOAT = 'f'
} mxp_kind;

/* Everything about one dtype.  For integer types exp_bits, mant_bits and
 * bias are 0, eps is 1 and min_normal/min_subnormal are 1 (the smallest
 * positive value).  For floats mant_bits excludes the implicit bit. */
typedef struct mxp_dtype_traits {
    const char *name;       /* NumPy / ml_dtypes spelling: "bfloat16" */
    const char *short_name; /* "bf16" */
    mxp_dtype dtype;
    size_t itemsize;        /* bytes */
    mxp_kind kind;
    int bits;
    int exp_bits;
    int mant_bits;
    int bias;
    double eps;             /* distance from 1.0 to the next larger value */
    double max;             /* largest finite value */
    double lowest;          /* most negative finite value */
    double min_normal;      /* smallest positive normal value */
    double min_subnormal;   /* smallest positive value */
    bool has_inf;
    bool has_nan;
    bool is_signed;
    uint64_t max_exact_int; /* every integer in [0, max_exact_int] is exact */
} mxp_dtype_traits;

/* Traits of a dtype, or NULL if dt is not a valid dtype. */
MXP_API const mxp_dtype_traits *mxp_dtype_get_traits(mxp_dtype dt);

/* "float32", or "invalid" for a value that is not a dtype. */
MXP_API const char *mxp_dtype_name(mxp_dtype dt);

/* Accepts the NumPy / ml_dtypes names ("bfloat16", "float8_e4m3fn"), the
 * short words ("bf16", "e4m3", "s8", "u8", "f32") and common aliases
 * ("half", "float", "double", "int", "bool_").  Case-insensitive.
 * Returns MXP_DTYPE_INVALID (0) for an unknown name or NULL. */
MXP_API mxp_dtype mxp_dtype_from_name(const char *name);

MXP_API bool mxp_dtype_is_valid(mxp_dtype dt);
MXP_API size_t mxp_dtype_itemsize(mxp_dtype dt); /* 0 if invalid */

/* numpy.promote_types for NumPy's own types (NumPy 1.24).  For bfloat16 and
 * the float8 types: the smallest floating type that holds every value of
 * both exactly (ties prefer float16 over bfloat16); int64/uint64 with any
 * float give float64, as NumPy does.  MXP_DTYPE_INVALID for invalid input. */
MXP_API mxp_dtype mxp_promote_types(mxp_dtype a, mxp_dtype b);

typedef enum mxp_casting {
    MXP_CASTING_NO = 0,
    MXP_CASTING_EQUIV,
    MXP_CASTING_SAFE,
    MXP_CASTING_SAME_KIND,
    MXP_CASTING_UNSAFE
} mxp_casting;

/* numpy.can_cast(from, to, casting) for NumPy's types; the new types follow
 * "safe == promote_types(from, to) is to".  False for invalid arguments. */
MXP_API bool mxp_can_cast(mxp_dtype from, mxp_dtype to, mxp_casting casting);

#ifdef __cplusplus
}
#endif
#endif

/* Internal: the dtype predicates the library asks everywhere, answered
 * from the one traits table (src/core/dtype.c) so that a new dtype needs a
 * row there and nothing else.  Each is false for a value that is not a
 * dtype (MXP_DTYPE_INVALID, a quantization-only type such as MXP_QINT4,
 * garbage). */
#ifndef MXP_CORE_DTYPE_INTERNAL_H
#define MXP_CORE_DTYPE_INTERNAL_H

#include <stdbool.h>

#include "mxp/dtype.h"

/* float16, bfloat16, float32, float64, float8 ... */
static inline bool mxp_is_float_dtype(mxp_dtype t)
{
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(t);
    return tr && tr->kind == MXP_KIND_FLOAT;
}

/* A signed or unsigned integer type (bool is not one). */
static inline bool mxp_is_int_dtype(mxp_dtype t)
{
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(t);
    return tr && (tr->kind == MXP_KIND_INT || tr->kind == MXP_KIND_UINT);
}

/* One of NumPy's own types (bool, the 8- to 64-bit integers, float16/32/64);
 * bfloat16, float8/6/4 and the sub-byte integers are not. */
static inline bool mxp_is_numpy_dtype(mxp_dtype t)
{
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(t);
    if (!tr)
        return false;
    if (tr->kind == MXP_KIND_FLOAT)
        return t == MXP_F16 || t == MXP_F32 || t == MXP_F64;
    return tr->kind == MXP_KIND_BOOL || tr->bits >= 8;
}

/* How a float format spends its special encodings (docs/dtypes.md). */
typedef enum mxp_float_style {
    MXP_FLOAT_IEEE = 0, /* infinities and NaNs at the all-ones exponent */
    MXP_FLOAT_FN,       /* no infinity: only S.1..1.1..1 is NaN (float8_e4m3fn) */
    MXP_FLOAT_FNUZ,     /* no infinity, no -0: 1.0..0 is the one NaN */
    MXP_FLOAT_FINITE,   /* every encoding is a number (float6, float4) */
    MXP_FLOAT_E8M0      /* unsigned powers of two 2^(e - bias); all-ones is NaN */
} mxp_float_style;

static inline mxp_float_style mxp_float_style_of(mxp_dtype t)
{
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(t);
    if (!tr || tr->has_inf)
        return MXP_FLOAT_IEEE;
    if (!tr->has_nan)
        return MXP_FLOAT_FINITE;
    if (!tr->is_signed)
        return MXP_FLOAT_E8M0;
    if (t == MXP_E4M3B11 || t == MXP_E4M3FNUZ || t == MXP_E5M2FNUZ)
        return MXP_FLOAT_FNUZ;
    return MXP_FLOAT_FN;
}

/* Does the format have a negative zero?  (Not the fnuz types, nor e8m0.) */
static inline bool mxp_has_neg_zero(mxp_dtype t)
{
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(t);
    mxp_float_style st = mxp_float_style_of(t);
    return tr && tr->kind == MXP_KIND_FLOAT && st != MXP_FLOAT_FNUZ && st != MXP_FLOAT_E8M0;
}

#endif

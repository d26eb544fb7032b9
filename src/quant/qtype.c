/* The quantized types: int8, uint8, the quantization-only int4 / uint4
 * (codes unpacked in int8 / uint8 arrays), the sub-byte integer dtypes and
 * float8/float6/float4 with a scale. */
#include "quant/quant-internal.h"
#include "core/error.h"

/* The facts of a quantized type come from the dtype traits table (src/core/
 * dtype.c): an integer type of b bits (8, or 4 for the quantization-only
 * int4 / uint4, whose codes live in int8 / uint8 arrays) has the codes
 * [-2^(b-1), 2^(b-1) - 1] or [0, 2^b - 1]; its symmetric scale is
 * amax / (2^(b-1) - 1), the largest magnitude both signs reach (127 for
 * int8: -128 is only reached by saturation), with the zero point 0 or
 * 2^(b-1) (uint8: 128), and KL calibration aims at the 2^(b-1)
 * non-negative levels.  A float type is scaled so that amax lands on its
 * largest finite value (448, 57344, 240, 15.5, 30, 7.5, 28, 6), zero point 0. */
static quant_type int_type(mxp_dtype qtype, mxp_dtype code, int bits)
{
    const bool is_signed = mxp_dtype_get_traits(code)->is_signed;
    const int32_t half = (int32_t)1 << (bits - 1);
    const quant_type t = { qtype, code, false, is_signed ? -half : 0, is_signed ? half - 1 : 2 * half - 1,
                           (double)(half - 1), is_signed ? 0 : half, (int)half };
    return t;
}

/* The dtypes that are quantized types themselves: int8/uint8, the sub-byte
 * integers (codes in their own one-byte-per-element arrays: C only, not
 * enumerated, since "int4"/"uint4" name the quantization-only types) and
 * every float8/float6/float4 with a scale (not float8_e8m0fnu: unsigned,
 * no zero). */
static bool is_quant_dtype(mxp_dtype qtype)
{
    switch (qtype) {
    case MXP_S8: case MXP_U8: case MXP_S4: case MXP_U4: case MXP_S2: case MXP_U2:
    case MXP_E4M3: case MXP_E5M2: case MXP_E3M4: case MXP_E4M3IEEE: case MXP_E4M3B11:
    case MXP_E4M3FNUZ: case MXP_E5M2FNUZ: case MXP_E2M3: case MXP_E3M2: case MXP_E2M1:
        return true;
    default:
        return false;
    }
}

static bool quant_type_of(mxp_dtype qtype, quant_type *t)
{
    if (qtype == MXP_QINT4 || qtype == MXP_QUINT4) {
        *t = int_type(qtype, qtype == MXP_QINT4 ? MXP_S8 : MXP_U8, 4);
        return true;
    }
    if (!is_quant_dtype(qtype))
        return false; /* the other dtypes are no quantized types */
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(qtype);
    if (tr->kind != MXP_KIND_FLOAT) {
        *t = int_type(qtype, qtype, tr->bits);
        return true;
    }
    const quant_type f = { qtype, qtype, true, 0, 0, tr->max, 0, 128 };
    *t = f;
    return true;
}

/* The quantized types, in the order mxp_qtype_at enumerates them. */
static const mxp_dtype qtypes[] = { MXP_S8, MXP_U8, MXP_QINT4, MXP_QUINT4, MXP_E4M3, MXP_E5M2,
                                    MXP_E3M4, MXP_E4M3IEEE, MXP_E4M3B11, MXP_E4M3FNUZ, MXP_E5M2FNUZ,
                                    MXP_E2M3, MXP_E3M2, MXP_E2M1 };

mxp_dtype mxp_qtype_at(int i)
{
    const int n = (int)(sizeof qtypes / sizeof qtypes[0]);
    return i >= 0 && i < n ? qtypes[i] : MXP_DTYPE_INVALID;
}

mxp_dtype mxp_qtype_code_dtype(mxp_dtype qtype)
{
    quant_type t;
    return quant_type_of(qtype, &t) ? t.code : MXP_DTYPE_INVALID;
}

mxp_status mxp_qtype_limits(mxp_dtype qtype, int32_t *qmin, int32_t *qmax)
{
    quant_type t = { 0 };
    mxp_status st = mxp_quant_type_info(qtype, "mxp_qtype_limits", &t);
    if (st == MXP_OK && (!qmin || !qmax))
        st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_qtype_limits: qmin or qmax is NULL");
    if (st == MXP_OK)
        *qmin = t.qmin, *qmax = t.qmax;
    return st;
}

const char *mxp_qtype_name(mxp_dtype qtype)
{
    if (qtype == MXP_QINT4)
        return "int4";
    if (qtype == MXP_QUINT4)
        return "uint4";
    return mxp_dtype_name(qtype);
}

mxp_status mxp_quant_type_info(mxp_dtype qtype, const char *what, quant_type *t)
{
    if (quant_type_of(qtype, t))
        return MXP_OK;
    if (!mxp_dtype_is_valid(qtype))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: %d is neither an mxp_dtype nor MXP_QINT4 / MXP_QUINT4", what,
                         (int)qtype);
    return mxp_error(MXP_ERR_UNSUPPORTED,
                     "%s: quantized type %s is not supported (int8, uint8, int4, uint4, int2, uint2 and the "
                     "float8/float6/float4 types but float8_e8m0fnu)",
                     what, mxp_qtype_name(qtype));
}

mxp_status mxp_quant_calib_type(mxp_dtype qtype, bool symmetric, const char *what, quant_type *t)
{
    mxp_status st = mxp_quant_type_info(qtype, what, t);
    if (st == MXP_OK && t->is_float && !symmetric)
        return mxp_error(MXP_ERR_UNSUPPORTED,
                         "%s: %s with a scale is symmetric only (its zero point is always 0); ask for symmetric",
                         what, mxp_qtype_name(qtype));
    return st;
}

/* The quantized types: int8, uint8, the quantization-only int4 / uint4
 * (codes unpacked in int8 / uint8 arrays) and float8 with a scale. */
#include "quant/quant-internal.h"
#include "core/error.h"

/* amax / sym_max is the symmetric scale: the largest code magnitude that
 * both signs reach (127 for int8, so -128 is only reached by saturation),
 * or the float8 type's largest finite value. */
static const quant_type quant_types[] = {
    { MXP_S8, MXP_S8, false, -128, 127, 127.0, 0, 128 },
    { MXP_U8, MXP_U8, false, 0, 255, 127.0, 128, 128 },
    { MXP_QINT4, MXP_S8, false, -8, 7, 7.0, 0, 8 },
    { MXP_QUINT4, MXP_U8, false, 0, 15, 7.0, 8, 8 },
    { MXP_E4M3, MXP_E4M3, true, 0, 0, 448.0, 0, 128 },
    { MXP_E5M2, MXP_E5M2, true, 0, 0, 57344.0, 0, 128 },
};

mxp_dtype mxp_qtype_at(int i)
{
    const int n = (int)(sizeof quant_types / sizeof quant_types[0]);
    return i >= 0 && i < n ? quant_types[i].qtype : MXP_DTYPE_INVALID;
}

mxp_dtype mxp_qtype_code_dtype(mxp_dtype qtype)
{
    for (size_t i = 0; i < sizeof quant_types / sizeof quant_types[0]; i++)
        if (quant_types[i].qtype == qtype)
            return quant_types[i].code;
    return MXP_DTYPE_INVALID;
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
    for (size_t i = 0; i < sizeof quant_types / sizeof quant_types[0]; i++)
        if (quant_types[i].qtype == qtype) {
            *t = quant_types[i];
            return MXP_OK;
        }
    if (!mxp_dtype_is_valid(qtype))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: %d is neither an mxp_dtype nor MXP_QINT4 / MXP_QUINT4", what,
                         (int)qtype);
    return mxp_error(MXP_ERR_UNSUPPORTED,
                     "%s: quantized type %s is not supported (int8, uint8, int4, uint4, float8_e4m3fn, float8_e5m2)",
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

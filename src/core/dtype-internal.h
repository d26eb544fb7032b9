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

#endif

/* Internal: shared by src/quant/affine.c and src/quant/calibrate.c. */
#ifndef MXP_QUANT_INTERNAL_H
#define MXP_QUANT_INTERNAL_H

#include "mxp/quant.h"

/* x viewed as [outer, len, inner] around the axis (len = size, inner = 1
 * for per tensor); pair index of element (o, a, i) is quant_index(). */
typedef struct quant_layout {
    int64_t outer, len, inner, size, count, group;
    int axis; /* -1 or normalized */
} quant_layout;

static inline int64_t quant_index(const quant_layout *L, int64_t o, int64_t a, int64_t i)
{
    if (L->axis < 0)
        return 0;
    if (L->group == 0)
        return a;
    return (o * (L->len / L->group) + a / L->group) * L->inner + i;
}

/* qmin and qmax of S8/U8; MXP_ERR_UNSUPPORTED / INVALID_DTYPE otherwise. */
mxp_status mxp_quant_type_range(mxp_dtype qtype, const char *what, int32_t *qmin, int32_t *qmax);

/* Checks x (non-empty), axis (-1 or in range: MXP_ERR_INDEX) and group_size
 * (needs axis >= 0 and to divide the axis length), fills *L. */
mxp_status mxp_quant_layout(const mxp_array *x, int axis, int64_t group, const char *what, quant_layout *L);

/* x as a C-contiguous float64 array (a new reference). */
mxp_status mxp_quant_as_f64(mxp_array **out, const mxp_array *x);

/* Fills *out from per-pair ranges (mins[k] <= maxs[k] finite, or mins[k] >
 * maxs[k] when the pair saw no finite value: treated as [0, 0]). */
mxp_status mxp_qparams_from_ranges(mxp_qparams *out, mxp_dtype qtype, bool symmetric, int axis, int64_t group,
                                   int64_t count, const double *mins, const double *maxs);

#endif

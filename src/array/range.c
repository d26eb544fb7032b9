/* A run of an array's elements in C order, converted into a contiguous
 * buffer: how the analysis streams an array of any layout, a chunk at a
 * time, without a whole-array copy. */
#include "array/array-internal.h"

mxp_status mxp_array_convert_range(const mxp_array *a, int64_t start, int64_t n, void *dst, mxp_dtype dt)
{
    const size_t ss = mxp_dtype_itemsize(a->dtype), ds = mxp_dtype_itemsize(dt);
    if ((a->flags & MXP_ARRAY_C_CONTIGUOUS) || a->ndim == 0)
        return mxp_convert(dst, dt, a->data + (size_t)start * ss, a->dtype, (size_t)n, NULL);
    /* The index of element `start`, then rows of the last axis. */
    const int last = a->ndim - 1;
    int64_t idx[MXP_MAXDIMS], rem = start;
    const char *p = a->data;
    for (int ax = last; ax >= 0; ax--) {
        idx[ax] = rem % a->shape[ax];
        rem /= a->shape[ax];
        p += idx[ax] * a->strides[ax];
    }
    char *d = dst;
    while (n > 0) {
        const int64_t left = a->shape[last] - idx[last], run = n < left ? n : left;
        mxp_status st = mxp_convert_strided(d, dt, (ptrdiff_t)ds, p, a->dtype, (ptrdiff_t)a->strides[last],
                                            (size_t)run, NULL);
        if (st != MXP_OK)
            return st;
        d += (size_t)run * ds;
        n -= run;
        p += run * a->strides[last];
        idx[last] += run;
        for (int ax = last; ax > 0 && idx[ax] == a->shape[ax]; ax--) { /* carry */
            p += a->strides[ax - 1] - a->strides[ax] * a->shape[ax];
            idx[ax] = 0;
            idx[ax - 1]++;
        }
    }
    return MXP_OK;
}

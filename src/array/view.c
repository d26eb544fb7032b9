/* Views without copies: slicing, indexing, transpose, reshape, squeeze,
 * expand_dims, broadcasting. */
#include <stdio.h>
#include <string.h>

#include "array/array-internal.h"
#include "core/checked.h"
#include "core/error.h"

static mxp_status check_in(mxp_array **out, const mxp_array *a, const char *fn)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    return a ? MXP_OK : mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: array is NULL", fn);
}

/* NumPy's slice.indices: clip start/stop into range for the step's sign. */
static mxp_status resolve_slice(mxp_slice s, int64_t n, int64_t *start, int64_t *len)
{
    if (s.step == 0)
        return mxp_error(MXP_ERR_INDEX, "slice step cannot be zero");
    if (s.step == INT64_MIN)
        return mxp_error(MXP_ERR_INDEX, "slice step is out of range");
    int64_t lo = s.step > 0 ? 0 : -1, hi = s.step > 0 ? n : n - 1;
    int64_t b, e;
    if (s.start == MXP_SLICE_NONE)
        b = s.step > 0 ? lo : hi;
    else {
        b = s.start < 0 ? (s.start < -n ? lo : s.start + n) : s.start;
        b = b < lo ? lo : b > hi ? hi : b;
    }
    if (s.stop == MXP_SLICE_NONE)
        e = s.step > 0 ? hi : lo;
    else {
        e = s.stop < 0 ? (s.stop < -n ? lo : s.stop + n) : s.stop;
        e = e < lo ? lo : e > hi ? hi : e;
    }
    int64_t count = 0;
    if (s.step > 0 && e > b)
        count = (e - b - 1) / s.step + 1;
    else if (s.step < 0 && b > e)
        count = (b - e - 1) / (-s.step) + 1;
    *start = b;
    *len = count;
    return MXP_OK;
}

mxp_status mxp_array_slice(mxp_array **out, const mxp_array *a, int nslices, const mxp_slice *slices)
{
    mxp_status st0 = check_in(out, a, "mxp_array_slice");
    if (st0 != MXP_OK)
        return st0;
    if (nslices < 0 || nslices > a->ndim || (nslices && !slices))
        return mxp_error(MXP_ERR_INDEX, "mxp_array_slice: %d slices for an array of %d dimensions", nslices, a->ndim);
    int64_t shape[MXP_MAXDIMS], strides[MXP_MAXDIMS];
    char *data = a->data;
    for (int i = 0; i < a->ndim; i++) {
        shape[i] = a->shape[i];
        strides[i] = a->strides[i];
        if (i >= nslices)
            continue;
        int64_t start = 0, len = 0;
        mxp_status st = resolve_slice(slices[i], a->shape[i], &start, &len);
        if (st != MXP_OK)
            return st;
        int64_t offset = 0;
        if (len > 0 && !mxp_checked_mul_i64(start, a->strides[i], &offset))
            return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_array_slice: axis %d: start %lld times stride %lld "
                             "overflows", i, (long long)start, (long long)a->strides[i]);
        data += offset;
        shape[i] = len;
        if (!mxp_checked_mul_i64(a->strides[i], slices[i].step, &strides[i])) {
            /* A step beyond the axis (a[::2**63-1]): at most one element,
             * the step never taken, so the axis keeps its stride. */
            if (len > 1)
                return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_array_slice: axis %d: stride %lld times step %lld "
                                 "overflows", i, (long long)a->strides[i], (long long)slices[i].step);
            strides[i] = a->strides[i];
        }
    }
    return mxp_array_new_view(out, a, a->ndim, shape, strides, data);
}

mxp_status mxp_array_index(mxp_array **out, const mxp_array *a, int axis, int64_t i)
{
    mxp_status st0 = check_in(out, a, "mxp_array_index");
    if (st0 != MXP_OK)
        return st0;
    mxp_status st = mxp_normalize_axis(&axis, a->ndim, "mxp_array_index");
    if (st != MXP_OK)
        return st;
    int64_t n = a->shape[axis], k = i < 0 ? i + n : i;
    if (k < 0 || k >= n)
        return mxp_error(MXP_ERR_INDEX, "index %lld is out of range for axis %d of size %lld", (long long)i, axis,
                         (long long)n);
    int64_t shape[MXP_MAXDIMS], strides[MXP_MAXDIMS];
    for (int j = 0, o = 0; j < a->ndim; j++) {
        if (j == axis)
            continue;
        shape[o] = a->shape[j];
        strides[o++] = a->strides[j];
    }
    return mxp_array_new_view(out, a, a->ndim - 1, shape, strides, a->data + k * a->strides[axis]);
}

mxp_status mxp_array_transpose(mxp_array **out, const mxp_array *a, const int *perm)
{
    mxp_status st0 = check_in(out, a, "mxp_array_transpose");
    if (st0 != MXP_OK)
        return st0;
    int64_t shape[MXP_MAXDIMS], strides[MXP_MAXDIMS];
    bool seen[MXP_MAXDIMS] = { false };
    for (int j = 0; j < a->ndim; j++) {
        int p = perm ? perm[j] : a->ndim - 1 - j;
        mxp_status st = mxp_normalize_axis(&p, a->ndim, "mxp_array_transpose");
        if (st != MXP_OK)
            return st;
        if (seen[p])
            return mxp_error(MXP_ERR_INDEX, "mxp_array_transpose: axis %d repeated in the permutation", p);
        seen[p] = true;
        shape[j] = a->shape[p];
        strides[j] = a->strides[p];
    }
    return mxp_array_new_view(out, a, a->ndim, shape, strides, a->data);
}

/* Resolves one -1 in the new shape; checks the element count. */
static mxp_status resolve_shape(const mxp_array *a, int ndim, const int64_t *shape, int64_t *resolved)
{
    if (ndim < 0 || ndim > MXP_MAXDIMS || (ndim && !shape))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "reshape: ndim %d is outside 0..%d", ndim, MXP_MAXDIMS);
    int64_t size = mxp_array_size(a), known = 1;
    int unknown = -1;
    for (int i = 0; i < ndim; i++) {
        resolved[i] = shape[i];
        if (shape[i] == -1) {
            if (unknown >= 0)
                return mxp_error(MXP_ERR_SHAPE, "reshape: only one dimension can be -1");
            unknown = i;
        } else if (shape[i] < 0) {
            return mxp_error(MXP_ERR_SHAPE, "reshape: dimension %d is %lld", i, (long long)shape[i]);
        } else {
            if (shape[i] && known > INT64_MAX / shape[i])
                return mxp_error(MXP_ERR_SIZE_OVERFLOW, "reshape: the new shape overflows");
            known *= shape[i];
        }
    }
    if (unknown >= 0) {
        if (known == 0 || size % known)
            return mxp_error(MXP_ERR_SHAPE, "reshape: cannot reshape %lld elements with a -1 in that shape",
                             (long long)size);
        resolved[unknown] = size / known;
    } else if (known != size) {
        return mxp_error(MXP_ERR_SHAPE, "reshape: cannot reshape %lld elements into %lld", (long long)size,
                         (long long)known);
    }
    return MXP_OK;
}

/* Strides for the new shape over a's memory in C order, if a view can
 * express it (NumPy's _attempt_nocopy_reshape, simplified: merge runs of old
 * axes that are contiguous with each other). */
static bool view_strides(const mxp_array *a, int ndim, const int64_t *shape, int64_t *strides)
{
    int64_t os[MXP_MAXDIMS], ost[MXP_MAXDIMS];
    int on = 0;
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] != 1) {
            os[on] = a->shape[i];
            ost[on++] = a->strides[i];
        }
    }
    int oi = 0, ni = 0;
    while (ni < ndim && oi < on) {
        int oj = oi + 1, nj = ni + 1;
        int64_t np = shape[ni], op = os[oi];
        while (np != op) {
            if (np < op) {
                if (nj >= ndim)
                    return false;
                np *= shape[nj++];
            } else {
                if (oj >= on)
                    return false;
                op *= os[oj++];
            }
        }
        for (int k = oi; k < oj - 1; k++)
            if (ost[k] != os[k + 1] * ost[k + 1])
                return false;
        strides[nj - 1] = ost[oj - 1];
        for (int k = nj - 1; k > ni; k--)
            strides[k - 1] = strides[k] * shape[k];
        ni = nj;
        oi = oj;
    }
    int64_t last = ni > 0 ? strides[ni - 1] : (int64_t)mxp_dtype_itemsize(a->dtype);
    for (; ni < ndim; ni++)
        strides[ni] = last; /* trailing size-1 axes */
    return oi == on;
}

mxp_status mxp_array_reshape(mxp_array **out, const mxp_array *a, int ndim, const int64_t *shape)
{
    mxp_status st0 = check_in(out, a, "mxp_array_reshape");
    if (st0 != MXP_OK)
        return st0;
    int64_t resolved[MXP_MAXDIMS], strides[MXP_MAXDIMS];
    mxp_status st = resolve_shape(a, ndim, shape, resolved);
    int64_t size = 0;
    if (st == MXP_OK) /* NumPy's rule: an empty array's nonzero dimensions must fit too (its strides use them) */
        st = mxp_check_shape(ndim, resolved, a->dtype, &size);
    if (st != MXP_OK)
        return st;
    if (mxp_array_size(a) == 0) {
        int64_t s = (int64_t)mxp_dtype_itemsize(a->dtype);
        for (int i = ndim - 1; i >= 0; i--) {
            strides[i] = s;
            s *= resolved[i] ? resolved[i] : 1;
        }
    } else {
        for (int i = 0; i < ndim; i++)
            strides[i] = 0;
        if (!view_strides(a, ndim, resolved, strides))
            return mxp_error(MXP_ERR_SHAPE, "reshape: this array's strides do not allow a view with that shape; "
                                            "use mxp_array_reshape_copy");
        for (int i = 0; i < ndim; i++)
            if (resolved[i] == 1)
                strides[i] = (int64_t)mxp_dtype_itemsize(a->dtype);
    }
    return mxp_array_new_view(out, a, ndim, resolved, strides, a->data);
}

mxp_status mxp_array_squeeze(mxp_array **out, const mxp_array *a, int axis)
{
    mxp_status st0 = check_in(out, a, "mxp_array_squeeze");
    if (st0 != MXP_OK)
        return st0;
    if (axis != MXP_ALL_AXES) {
        mxp_status st = mxp_normalize_axis(&axis, a->ndim, "mxp_array_squeeze");
        if (st != MXP_OK)
            return st;
        if (a->shape[axis] != 1)
            return mxp_error(MXP_ERR_SHAPE, "squeeze: axis %d has size %lld, not 1", axis, (long long)a->shape[axis]);
    }
    int64_t shape[MXP_MAXDIMS], strides[MXP_MAXDIMS];
    int n = 0;
    for (int i = 0; i < a->ndim; i++) {
        bool drop = axis == MXP_ALL_AXES ? a->shape[i] == 1 : i == axis;
        if (!drop) {
            shape[n] = a->shape[i];
            strides[n++] = a->strides[i];
        }
    }
    return mxp_array_new_view(out, a, n, shape, strides, a->data);
}

mxp_status mxp_array_expand_dims(mxp_array **out, const mxp_array *a, int axis)
{
    mxp_status st0 = check_in(out, a, "mxp_array_expand_dims");
    if (st0 != MXP_OK)
        return st0;
    if (a->ndim == MXP_MAXDIMS)
        return mxp_error(MXP_ERR_SHAPE, "expand_dims: the array already has %d dimensions", MXP_MAXDIMS);
    mxp_status st = mxp_normalize_axis(&axis, a->ndim + 1, "mxp_array_expand_dims");
    if (st != MXP_OK)
        return st;
    int64_t shape[MXP_MAXDIMS], strides[MXP_MAXDIMS];
    for (int i = 0, j = 0; i <= a->ndim; i++) {
        if (i == axis) {
            shape[i] = 1;
            strides[i] = (int64_t)mxp_dtype_itemsize(a->dtype);
        } else {
            shape[i] = a->shape[j];
            strides[i] = a->strides[j++];
        }
    }
    return mxp_array_new_view(out, a, a->ndim + 1, shape, strides, a->data);
}

void mxp_format_shape(char *buf, size_t cap, int ndim, const int64_t *shape)
{
    size_t at = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < ndim && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, i ? ",%lld" : "%lld", (long long)shape[i]);
    if (at < cap)
        snprintf(buf + at, cap - at, ndim == 1 ? ",)" : ")");
}

mxp_status mxp_broadcast_shapes(int *ndim_out, int64_t *shape_out, int ndim_a, const int64_t *shape_a,
                                int ndim_b, const int64_t *shape_b)
{
    if (!ndim_out || !shape_out || ndim_a < 0 || ndim_b < 0 || ndim_a > MXP_MAXDIMS || ndim_b > MXP_MAXDIMS)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_broadcast_shapes: bad arguments");
    if ((ndim_a > 0 && !shape_a) || (ndim_b > 0 && !shape_b))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_broadcast_shapes: shape_%c is NULL with %d dimensions",
                         ndim_a > 0 && !shape_a ? 'a' : 'b', ndim_a > 0 && !shape_a ? ndim_a : ndim_b);
    int n = ndim_a > ndim_b ? ndim_a : ndim_b;
    for (int i = 0; i < n; i++) {
        int ia = ndim_a - n + i, ib = ndim_b - n + i;
        int64_t x = ia >= 0 ? shape_a[ia] : 1, y = ib >= 0 ? shape_b[ib] : 1;
        if (x < 0 || y < 0)
            return mxp_error(MXP_ERR_SHAPE, "mxp_broadcast_shapes: dimension %lld is negative", (long long)(x < 0 ? x : y));
        if (x != y && x != 1 && y != 1) {
            char sa[256], sb[256];
            mxp_format_shape(sa, sizeof sa, ndim_a, shape_a);
            mxp_format_shape(sb, sizeof sb, ndim_b, shape_b);
            return mxp_error(MXP_ERR_SHAPE, "shapes %s and %s are not broadcastable", sa, sb);
        }
        shape_out[i] = x == 1 ? y : x;
    }
    *ndim_out = n;
    return MXP_OK;
}

mxp_status mxp_array_broadcast_to(mxp_array **out, const mxp_array *a, int ndim, const int64_t *shape)
{
    mxp_status st0 = check_in(out, a, "mxp_array_broadcast_to");
    if (st0 != MXP_OK)
        return st0;
    int64_t size;
    mxp_status st = mxp_check_shape(ndim, shape, a->dtype, &size);
    if (st != MXP_OK)
        return st;
    int64_t strides[MXP_MAXDIMS];
    if (ndim < a->ndim) {
        char sa[256], sb[256];
        mxp_format_shape(sa, sizeof sa, a->ndim, a->shape);
        mxp_format_shape(sb, sizeof sb, ndim, shape);
        return mxp_error(MXP_ERR_SHAPE, "cannot broadcast shape %s to %s (fewer dimensions)", sa, sb);
    }
    for (int i = 0; i < ndim; i++) {
        int j = a->ndim - ndim + i;
        int64_t n = j >= 0 ? a->shape[j] : 1;
        if (n != shape[i] && n != 1) {
            char sa[256], sb[256];
            mxp_format_shape(sa, sizeof sa, a->ndim, a->shape);
            mxp_format_shape(sb, sizeof sb, ndim, shape);
            return mxp_error(MXP_ERR_SHAPE, "cannot broadcast shape %s to %s", sa, sb);
        }
        strides[i] = j >= 0 && n == shape[i] ? a->strides[j] : 0;
    }
    st = mxp_array_new_view(out, a, ndim, shape, strides, a->data);
    if (st == MXP_OK)
        (*out)->flags &= ~MXP_ARRAY_WRITEABLE; /* elements may repeat */
    return st;
}

/* Copies: row-by-row conversion between layouts, ascontiguous, astype,
 * copyto, reshape_copy. */
#include <string.h>

#include "array/array-internal.h"
#include "core/abi.h"
#include "core/alloc-internal.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "core/profile-internal.h"

/* Row by row (one environment switch for all rows, not one per row). */
static void copy_rows(mxp_array *dst, const mxp_array *src, const mxp_convert_opts *opts)
{
    const int64_t n = mxp_array_size(dst);
    if (n == 0)
        return;
    mxp_convert_opts o = { .rounding = MXP_ROUND_NEAREST_EVEN };
    if (opts)
        o = *opts;
    const uint64_t offset0 = o.index_offset;
    const size_t ss = mxp_dtype_itemsize(src->dtype);
    mxp_stats_add_copied((uint64_t)n * ss, src->dtype != dst->dtype);
    if ((dst->flags & src->flags & MXP_ARRAY_C_CONTIGUOUS) || dst->ndim == 0) {
        mxp_convert(dst->data, dst->dtype, src->data, src->dtype, (size_t)n, &o);
        return;
    }
    const int last = dst->ndim - 1;
    const int64_t len = dst->shape[last];
    int64_t idx[MXP_MAXDIMS] = { 0 };
    char *d = dst->data;
    const char *s = src->data;
    for (int64_t row = 0; row < n / len; row++) {
        o.index_offset = offset0 + (uint64_t)(row * len);
        mxp_convert_strided(d, dst->dtype, dst->strides[last], s, src->dtype, src->strides[last], (size_t)len, &o);
        /* Next row: increment the index over axes 0..last-1, C order. */
        for (int ax = last - 1; ax >= 0; ax--) {
            d += dst->strides[ax];
            s += src->strides[ax];
            if (++idx[ax] < dst->shape[ax])
                break;
            d -= dst->strides[ax] * dst->shape[ax];
            s -= src->strides[ax] * src->shape[ax];
            idx[ax] = 0;
        }
    }
}

void mxp_array_copy_rows(mxp_array *dst, const mxp_array *src, const mxp_convert_opts *opts)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    copy_rows(dst, src, opts);
    mxp_fpenv_leave(env);
}

/* A new owner with the shape of a in the given order. */
static mxp_status new_like(mxp_array **out, const mxp_array *a, mxp_dtype dt, char order)
{
    mxp_status st = mxp_array_new_owner(out, dt, a->ndim, a->shape);
    if (st != MXP_OK || order != 'F')
        return st;
    mxp_array *r = *out;
    int64_t s = (int64_t)mxp_dtype_itemsize(dt);
    for (int i = 0; i < r->ndim; i++) {
        r->strides[i] = s;
        s *= r->shape[i] ? r->shape[i] : 1;
    }
    mxp_array_update_flags(r);
    return MXP_OK;
}

mxp_status mxp_array_ascontiguous(mxp_array **out, const mxp_array *a, char order)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_array_ascontiguous: out is NULL");
    *out = NULL;
    mxp_status st = mxp_require_array(a, "mxp_array_ascontiguous: array");
    if (st != MXP_OK)
        return st;
    if (order != 'C' && order != 'F')
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "order must be 'C' or 'F', not '%c'", order);
    unsigned want = order == 'C' ? MXP_ARRAY_C_CONTIGUOUS : MXP_ARRAY_F_CONTIGUOUS;
    if (a->flags & want) {
        mxp_array *self = (mxp_array *)a;
        atomic_fetch_add(&self->refs, 1);
        *out = self;
        return MXP_OK;
    }
    st = new_like(out, a, a->dtype, order);
    if (st == MXP_OK)
        mxp_array_copy_rows(*out, a, NULL);
    return st;
}

static mxp_status array_astype_entry(mxp_array **out, const mxp_array *a, mxp_dtype dt, const mxp_convert_opts *opts)
{
    MXP_ABI_IN_OUT(opts, convert_opts, "mxp_array_astype", out);
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_array_astype: out is NULL");
    *out = NULL;
    mxp_status st = mxp_require_array(a, "mxp_array_astype: array");
    if (st != MXP_OK)
        return st;
    /* Validate the options before allocating. */
    st = mxp_convert(NULL, dt, NULL, a->dtype, 0, opts);
    if (st != MXP_OK)
        return st;
    st = new_like(out, a, dt, 'C');
    if (st == MXP_OK)
        mxp_array_copy_rows(*out, a, opts);
    return st;
}

/* Do the byte ranges the two arrays can touch intersect? */
bool mxp_arrays_may_overlap(const mxp_array *a, const mxp_array *b)
{
    if (mxp_array_size(a) == 0 || mxp_array_size(b) == 0)
        return false;
    intptr_t lo[2], hi[2];
    const mxp_array *arr[2] = { a, b };
    for (int k = 0; k < 2; k++) {
        intptr_t l = (intptr_t)arr[k]->data, h = l;
        for (int i = 0; i < arr[k]->ndim; i++) {
            intptr_t span = (intptr_t)(arr[k]->strides[i] * (arr[k]->shape[i] - 1));
            if (span < 0)
                l += span;
            else
                h += span;
        }
        lo[k] = l;
        hi[k] = h + (intptr_t)mxp_dtype_itemsize(arr[k]->dtype);
    }
    return lo[0] < hi[1] && lo[1] < hi[0];
}

static mxp_status array_copyto_entry(mxp_array *dst, const mxp_array *src, mxp_casting casting, const mxp_convert_opts *opts)
{
    MXP_ABI_IN(opts, convert_opts, "mxp_array_copyto");
    mxp_status st = mxp_require_array(dst, "mxp_array_copyto: dst");
    if (st == MXP_OK)
        st = mxp_require_array(src, "mxp_array_copyto: src");
    if (st != MXP_OK)
        return st;
    if (!(dst->flags & MXP_ARRAY_WRITEABLE))
        return mxp_error(MXP_ERR_READONLY, "mxp_array_copyto: the destination is read-only");
    if ((unsigned)casting > MXP_CASTING_UNSAFE)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "casting %d is not one of mxp_casting's", (int)casting);
    if (!mxp_can_cast(src->dtype, dst->dtype, casting))
        return mxp_error(MXP_ERR_CASTING, "cannot cast %s to %s under this casting rule",
                         mxp_dtype_name(src->dtype), mxp_dtype_name(dst->dtype));
    st = mxp_convert(NULL, dst->dtype, NULL, src->dtype, 0, opts);
    if (st != MXP_OK)
        return st;
    mxp_array *b = NULL, *tmp = NULL;
    st = mxp_array_broadcast_to(&b, src, dst->ndim, dst->shape);
    if (st != MXP_OK)
        return st;
    if (mxp_arrays_may_overlap(dst, b)) { /* as NumPy: read everything before writing */
        st = mxp_array_astype(&tmp, b, b->dtype, NULL);
        if (st != MXP_OK) {
            mxp_array_free(b);
            return st;
        }
    }
    mxp_array_copy_rows(dst, tmp ? tmp : b, opts);
    mxp_array_free(tmp);
    mxp_array_free(b);
    return MXP_OK;
}

mxp_status mxp_array_reshape_copy(mxp_array **out, const mxp_array *a, int ndim, const int64_t *shape)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_array_reshape_copy: out is NULL");
    *out = NULL;
    mxp_array *c = NULL;
    mxp_status st = mxp_require_array(a, "mxp_array_reshape_copy: array");
    if (st == MXP_OK)
        st = mxp_array_astype(&c, a, a->dtype, NULL); /* always a fresh C-order copy */
    if (st == MXP_OK)
        st = mxp_array_reshape(out, c, ndim, shape);
    mxp_array_free(c);
    return st;
}

/* ---- the entry points, profiled (src/core/profile-internal.h) ---------- */

mxp_status mxp_array_astype(mxp_array **out, const mxp_array *a, mxp_dtype dt, const mxp_convert_opts *opts)
{
    MXP_PROF_RETURN_AFTER("astype", array_astype_entry(out, a, dt, opts),
                          mxp_prof_array_bytes(a),
                          mxp_prof_array_bytes(a) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          0);
}

mxp_status mxp_array_copyto(mxp_array *dst, const mxp_array *src, mxp_casting casting, const mxp_convert_opts *opts)
{
    MXP_PROF_RETURN_AFTER("copyto", array_copyto_entry(dst, src, casting, opts),
                          mxp_prof_array_bytes(src),
                          mxp_prof_array_bytes(dst) + mxp_prof_array_bytes(src),
                          0);
}

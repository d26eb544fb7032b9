/* Arrays: owners, views, reference counts, flags, properties, wrapping. */
#include <string.h>

#include "array/array-internal.h"
#include "core/checked.h"
#include "core/error.h"

mxp_status mxp_require_array(const mxp_array *a, const char *name)
{
    return a ? MXP_OK : mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s is NULL", name);
}

mxp_status mxp_check_shape(int ndim, const int64_t *shape, mxp_dtype dt, int64_t *size)
{
    if (!mxp_dtype_is_valid(dt))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "dtype %d is not a valid mxp_dtype", (int)dt);
    if (ndim < 0 || ndim > MXP_MAXDIMS)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "ndim %d is outside 0..%d", ndim, MXP_MAXDIMS);
    if (ndim > 0 && !shape)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "shape is NULL with ndim %d", ndim);
    /* NumPy's rule: the product of the nonzero dimensions must fit too,
     * since strides are computed from it even when the array is empty. */
    const int64_t limit = PTRDIFF_MAX / (int64_t)mxp_dtype_itemsize(dt);
    int64_t n = 1;
    bool empty = false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "shape[%d] = %lld is negative", i, (long long)shape[i]);
        if (shape[i] == 0) {
            empty = true;
            continue;
        }
        if (n > limit / shape[i])
            return mxp_error(MXP_ERR_SIZE_OVERFLOW, "shape[%d] = %lld makes the array larger than memory", i,
                             (long long)shape[i]);
        n *= shape[i];
    }
    *size = empty ? 0 : n;
    return MXP_OK;
}

mxp_status mxp_normalize_axis(int *axis, int ndim, const char *what)
{
    int a = *axis;
    if (a < -ndim || a >= ndim)
        return mxp_error(MXP_ERR_INDEX, "%s: axis %d is out of range for %d dimensions", what, a, ndim);
    *axis = a < 0 ? a + ndim : a;
    return MXP_OK;
}

static bool is_contiguous(const mxp_array *a, bool fortran)
{
    int64_t expect = (int64_t)mxp_dtype_itemsize(a->dtype);
    for (int k = 0; k < a->ndim; k++) {
        int i = fortran ? k : a->ndim - 1 - k;
        if (a->shape[i] == 0)
            return true;
        if (a->shape[i] != 1 && a->strides[i] != expect)
            return false;
        expect *= a->shape[i];
    }
    return true;
}

void mxp_array_update_flags(mxp_array *a)
{
    unsigned f = a->flags & MXP_ARRAY_WRITEABLE;
    if (is_contiguous(a, false))
        f |= MXP_ARRAY_C_CONTIGUOUS;
    if (is_contiguous(a, true))
        f |= MXP_ARRAY_F_CONTIGUOUS;
    int64_t size = (int64_t)mxp_dtype_itemsize(a->dtype);
    bool aligned = (uintptr_t)a->data % (uintptr_t)size == 0;
    for (int i = 0; i < a->ndim; i++)
        aligned = aligned && a->strides[i] % size == 0;
    if (aligned)
        f |= MXP_ARRAY_ALIGNED;
    if (!a->owner)
        f |= MXP_ARRAY_OWNDATA;
    a->flags = f;
}

static mxp_array *alloc_struct(void)
{
    mxp_array *a = mxp_malloc(sizeof *a);
    if (a) {
        memset(a, 0, sizeof *a);
        atomic_init(&a->refs, 1);
    }
    return a;
}

static void c_strides(mxp_array *a)
{
    int64_t s = (int64_t)mxp_dtype_itemsize(a->dtype);
    for (int i = a->ndim - 1; i >= 0; i--) {
        a->strides[i] = s;
        s *= a->shape[i] ? a->shape[i] : 1;
    }
}

mxp_status mxp_array_new_owner(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape)
{
    int64_t n;
    mxp_status st = mxp_check_shape(ndim, shape, dt, &n);
    if (st != MXP_OK)
        return st;
    mxp_array *a = alloc_struct();
    if (!a)
        return MXP_ERR_NO_MEMORY;
    a->memory = mxp_malloc((size_t)n * mxp_dtype_itemsize(dt));
    if (!a->memory) {
        mxp_free(a);
        return MXP_ERR_NO_MEMORY;
    }
    a->dtype = dt;
    a->ndim = ndim;
    if (ndim)
        memcpy(a->shape, shape, (size_t)ndim * sizeof *shape);
    c_strides(a);
    a->data = a->memory;
    a->flags = MXP_ARRAY_WRITEABLE;
    mxp_array_update_flags(a);
    *out = a;
    return MXP_OK;
}

mxp_status mxp_array_new_view(mxp_array **out, const mxp_array *a, int ndim, const int64_t *shape,
                              const int64_t *strides, char *data)
{
    mxp_array *v = alloc_struct();
    if (!v)
        return MXP_ERR_NO_MEMORY;
    mxp_array *owner = a->owner ? a->owner : (mxp_array *)a;
    atomic_fetch_add(&owner->refs, 1);
    v->owner = owner;
    v->dtype = a->dtype;
    v->ndim = ndim;
    if (ndim) {
        memcpy(v->shape, shape, (size_t)ndim * sizeof *shape);
        memcpy(v->strides, strides, (size_t)ndim * sizeof *strides);
    }
    v->data = data;
    v->flags = a->flags & MXP_ARRAY_WRITEABLE;
    mxp_array_update_flags(v);
    *out = v;
    return MXP_OK;
}

void mxp_array_free(mxp_array *a)
{
    if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
        return;
    if (a->owner)
        mxp_array_free(a->owner);
    else if (a->release)
        a->release(a->release_ctx, a->memory);
    else
        mxp_free(a->memory);
    mxp_free(a);
}

/* Every byte a wrapped array can reach, data + sum_i k_i strides[i] + the
 * element's bytes for 0 <= k_i < shape[i], is an address: the offsets fit
 * int64 and stay within [0, UINTPTR_MAX] from data.  (Copies and views
 * step through them with int64 and pointer arithmetic.) */
static mxp_status check_reach(const void *data, mxp_dtype dt, int ndim, const int64_t *shape,
                              const int64_t *strides, int64_t size)
{
    if (size == 0) /* no element: nothing is ever reached */
        return MXP_OK;
    int64_t lo = 0, hi = (int64_t)mxp_dtype_itemsize(dt) - 1; /* reached bytes, relative to data */
    for (int i = 0; i < ndim; i++) {
        int64_t extent = 0;
        if (!mxp_checked_mul_i64(shape[i] - 1, strides[i], &extent) ||
            !mxp_checked_add_i64(extent < 0 ? lo : hi, extent, extent < 0 ? &lo : &hi))
            return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_array_wrap: axis %d (%lld elements %lld bytes apart) "
                             "reaches byte offsets that overflow int64", i, (long long)shape[i],
                             (long long)strides[i]);
    }
    const uintptr_t p = (uintptr_t)data;
    if ((uint64_t)0 - (uint64_t)lo > p || (uint64_t)hi > UINTPTR_MAX - p)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_array_wrap: the strides reach bytes %lld .. %lld from data %p, "
                         "beyond the address space", (long long)lo, (long long)hi, data);
    return MXP_OK;
}

mxp_status mxp_array_wrap(mxp_array **out, void *data, mxp_dtype dt, int ndim, const int64_t *shape,
                          const int64_t *strides, bool writeable, void (*release)(void *ctx, void *data), void *ctx)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_array_wrap: out is NULL");
    *out = NULL;
    int64_t n;
    mxp_status st = mxp_check_shape(ndim, shape, dt, &n);
    if (st != MXP_OK)
        return st;
    if (!data && n > 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_array_wrap: data is NULL for %lld elements", (long long)n);
    if (strides)
        st = check_reach(data, dt, ndim, shape, strides, n);
    if (st != MXP_OK)
        return st;
    mxp_array *a = alloc_struct();
    if (!a)
        return MXP_ERR_NO_MEMORY;
    a->dtype = dt;
    a->ndim = ndim;
    if (ndim)
        memcpy(a->shape, shape, (size_t)ndim * sizeof *shape);
    if (strides)
        memcpy(a->strides, strides, (size_t)ndim * sizeof *strides);
    else
        c_strides(a);
    if (!strides && (st = check_reach(data, dt, ndim, a->shape, a->strides, n)) != MXP_OK) {
        mxp_free(a);
        return st;
    }
    a->data = a->memory = data;
    a->release = release ? release : mxp_wrap_keep; /* without one, never freed by mxp */
    a->release_ctx = ctx;
    a->flags = writeable ? MXP_ARRAY_WRITEABLE : 0;
    mxp_array_update_flags(a);
    *out = a;
    return MXP_OK;
}

void mxp_wrap_keep(void *ctx, void *data)
{
    (void)ctx;
    (void)data;
}

/* ---- properties ---------------------------------------------------------- */

mxp_dtype mxp_array_dtype(const mxp_array *a) { return a ? a->dtype : MXP_DTYPE_INVALID; }
int mxp_array_ndim(const mxp_array *a) { return a ? a->ndim : 0; }
const int64_t *mxp_array_shape(const mxp_array *a) { return a ? a->shape : NULL; }
const int64_t *mxp_array_strides(const mxp_array *a) { return a ? a->strides : NULL; }
size_t mxp_array_itemsize(const mxp_array *a) { return a ? mxp_dtype_itemsize(a->dtype) : 0; }
void *mxp_array_data(const mxp_array *a) { return a ? a->data : NULL; }
unsigned mxp_array_flags(const mxp_array *a) { return a ? a->flags : 0; }
const mxp_array *mxp_array_base(const mxp_array *a) { return a ? a->owner : NULL; }

int64_t mxp_array_size(const mxp_array *a)
{
    if (!a)
        return 0;
    int64_t n = 1;
    for (int i = 0; i < a->ndim; i++)
        n *= a->shape[i];
    return n;
}

void *mxp_array_at(const mxp_array *a, const int64_t *idx)
{
    if (mxp_require_array(a, "array") != MXP_OK || (a->ndim && !idx)) {
        mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_array_at: array or index is NULL");
        return NULL;
    }
    char *p = a->data;
    for (int i = 0; i < a->ndim; i++) {
        int64_t k = idx[i] < 0 ? idx[i] + a->shape[i] : idx[i];
        if (k < 0 || k >= a->shape[i]) {
            mxp_error(MXP_ERR_INDEX, "index %lld is out of range for axis %d of size %lld", (long long)idx[i], i,
                      (long long)a->shape[i]);
            return NULL;
        }
        p += k * a->strides[i];
    }
    return p;
}

mxp_status mxp_array_get_f64(const mxp_array *a, const int64_t *idx, double *out)
{
    mxp_status st = mxp_require_array(a, "mxp_array_get_f64: array");
    if (st != MXP_OK)
        return st;
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_array_get_f64: out is NULL");
    if (a->ndim && !idx)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_array_get_f64: idx is NULL for a %d-d array", a->ndim);
    const char *p = a->data;
    for (int i = 0; i < a->ndim; i++) {
        const int64_t k = idx[i] < 0 ? idx[i] + a->shape[i] : idx[i];
        if (k < 0 || k >= a->shape[i])
            return mxp_error(MXP_ERR_INDEX, "mxp_array_get_f64: index %lld is out of range for axis %d of size %lld",
                             (long long)idx[i], i, (long long)a->shape[i]);
        p += k * a->strides[i];
    }
    return mxp_convert(out, MXP_F64, p, a->dtype, 1, NULL);
}

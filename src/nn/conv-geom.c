/* The geometry convolution and pooling share: output sizes, dense arrays,
 * outputs through a dense temporary. */
#include "core/checked.h"
#include "core/error.h"
#include "nn/conv-internal.h"

void nn_geom_out_shape(const nn_geom *g, int64_t *shape)
{
    shape[0] = g->n;
    shape[1] = g->nhwc ? g->oh : g->o;
    shape[2] = g->nhwc ? g->ow : g->oh;
    shape[3] = g->nhwc ? g->o : g->ow;
}

mxp_status nn_window_out(const char *fn, const char *axis, int64_t size, int64_t k, int64_t stride, int64_t pad,
                         int64_t dil, bool ceil, int64_t *out)
{
    int64_t span, padded;
    if (!mxp_checked_mul_i64(dil, k - 1, &span) || !mxp_checked_add_i64(span, 1, &span) ||
        !mxp_checked_mul_i64(pad, 2, &padded) || !mxp_checked_add_i64(padded, size, &padded))
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "%s: the %s sizes (input %lld, kernel %lld, padding %lld, "
                         "dilation %lld) overflow", fn, axis, (long long)size, (long long)k, (long long)pad,
                         (long long)dil);
    if (span > padded)
        return mxp_error(MXP_ERR_SHAPE, "%s: the %s window spans %lld elements, more than the %lld of the "
                         "padded input", fn, axis, (long long)span, (long long)padded);
    int64_t n = (padded - span) / stride + 1;
    if (ceil && (padded - span) % stride) {
        n++;
        if ((n - 1) * stride >= size + pad) /* the last window would start in the right padding */
            n--;
    }
    *out = n;
    return MXP_OK;
}

bool nn_dense(const mxp_array *a)
{
    int64_t want = (int64_t)mxp_dtype_itemsize(a->dtype);
    for (int i = a->ndim - 1; i >= 0; i--) {
        if (a->shape[i] == 0)
            return true;
        if (a->shape[i] != 1 && a->strides[i] != want)
            return false;
        want *= a->shape[i];
    }
    return true;
}

mxp_status nn_dense_out_begin(const char *fn, mxp_array *out, const mxp_array *const *in, int n, mxp_array **work)
{
    mxp_status st = nn_out_begin(fn, out, in, n, 1, work);
    if (st == MXP_OK && *work == out && !nn_dense(out))
        st = mxp_array_new_owner(work, out->dtype, out->ndim, out->shape);
    return st;
}

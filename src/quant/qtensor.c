/* Quantized tensors (codes + qparams) and what takes them: mxp_qmatmul
 * and mxp_qlinear combine the scales and zero points and call the int8
 * GEMM (through mxp_matmul_into).  docs/quant.md, "Quantized tensors and
 * layers". */
#include <string.h>

#include "array/array-internal.h"
#include "core/dtype-internal.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "gemm/gemm-internal.h"
#include "mxp/gemm.h"
#include "mxp/ops.h"
#include "quant/quant-internal.h"

struct mxp_qtensor {
    mxp_array *codes;         /* a view: one reference */
    mxp_qparams qp;           /* owned copy */
    mxp_int8_b_cache *packed; /* NULL, or W^T kept packed for mxp_qlinear (mxp_qtensor_prepack) */
};

static mxp_status copy_qparams(mxp_qparams *dst, const mxp_qparams *src)
{
    *dst = *src;
    dst->scales = mxp_malloc((size_t)src->count * sizeof *dst->scales);
    dst->zero_points = mxp_malloc((size_t)src->count * sizeof *dst->zero_points);
    if (!dst->scales || !dst->zero_points) {
        mxp_qparams_free(dst);
        return mxp_error(MXP_ERR_NO_MEMORY, "qtensor: out of memory for %lld quantization parameters",
                         (long long)src->count);
    }
    memcpy(dst->scales, src->scales, (size_t)src->count * sizeof *dst->scales);
    memcpy(dst->zero_points, src->zero_points, (size_t)src->count * sizeof *dst->zero_points);
    return MXP_OK;
}

/* A new qtensor owning `codes` (one reference, taken over even on failure)
 * and qp (copied when copy, else taken over). */
static mxp_status make(mxp_qtensor **out, mxp_array *codes, mxp_qparams *qp, bool copy)
{
    mxp_qtensor *qt = mxp_malloc(sizeof *qt);
    mxp_status st = qt ? MXP_OK : mxp_error(MXP_ERR_NO_MEMORY, "qtensor: out of memory");
    if (st == MXP_OK && copy)
        st = copy_qparams(&qt->qp, qp);
    else if (st == MXP_OK)
        qt->qp = *qp;
    if (st != MXP_OK) {
        mxp_free(qt);
        mxp_array_free(codes);
        if (!copy)
            mxp_qparams_free(qp);
        return st;
    }
    if (!copy)
        memset(qp, 0, sizeof *qp);
    qt->codes = codes;
    qt->packed = NULL;
    *out = qt;
    return MXP_OK;
}

void mxp_qtensor_free(mxp_qtensor *qt)
{
    if (!qt)
        return;
    mxp_int8_b_cache_free(qt->packed);
    mxp_array_free(qt->codes);
    mxp_qparams_free(&qt->qp);
    mxp_free(qt);
}

const mxp_array *mxp_qtensor_codes(const mxp_qtensor *qt)
{
    return qt ? qt->codes : NULL;
}

const mxp_qparams *mxp_qtensor_qparams(const mxp_qtensor *qt)
{
    return qt ? &qt->qp : NULL;
}

mxp_status mxp_qtensor_dequantize(mxp_array **out, const mxp_qtensor *qt, mxp_dtype out_dtype)
{
    if (!qt)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_qtensor_dequantize: the quantized tensor is NULL");
    return mxp_dequantize(out, qt->codes, &qt->qp, out_dtype);
}

static mxp_status quantize_tensor(mxp_qtensor **out, const mxp_array *x, const mxp_qparams *qp, mxp_dtype qtype,
                                  int axis)
{
    const char *what = "mxp_quantize_tensor";
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", what);
    *out = NULL;
    if (!x)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: x is NULL", what);
    mxp_qparams cal;
    memset(&cal, 0, sizeof cal);
    mxp_status st = MXP_OK;
    if (qp) {
        if (qtype != 0 && qtype != qp->qtype)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: qtype %s differs from the qparams' %s (pass 0 to take "
                             "theirs)", what, mxp_qtype_name(qtype), mxp_qtype_name(qp->qtype));
        if (axis != -1 && axis != qp->axis)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: axis %d differs from the qparams' %d (pass -1 to take "
                             "theirs)", what, axis, qp->axis);
    } else {
        const bool symmetric = !(qtype == MXP_U8 || qtype == MXP_QUINT4 || qtype == MXP_U4 || qtype == MXP_U2);
        st = mxp_calibrate_minmax(x, qtype, symmetric, axis, 0, &cal);
        if (st != MXP_OK)
            return st;
        qp = &cal;
    }
    mxp_array *codes = NULL;
    st = mxp_quantize(&codes, x, qp, NULL);
    if (st == MXP_OK)
        st = qp == &cal ? make(out, codes, &cal, false) : make(out, codes, (mxp_qparams *)qp, true);
    mxp_qparams_free(&cal);
    return st;
}

mxp_status mxp_quantize_tensor(mxp_qtensor **out, const mxp_array *x, const mxp_qparams *qp, mxp_dtype qtype,
                               int axis)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = quantize_tensor(out, x, qp, qtype, axis);
    mxp_fpenv_leave(env);
    return st;
}

mxp_status mxp_qtensor_create(mxp_qtensor **out, const mxp_array *codes, const mxp_qparams *qp)
{
    const char *what = "mxp_qtensor_create";
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", what);
    *out = NULL;
    if (!codes)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: codes is NULL", what);
    mxp_status st = mxp_quant_check_qparams(qp, codes, what);
    quant_type t;
    if (st == MXP_OK)
        st = mxp_quant_type_info(qp->qtype, what, &t);
    if (st != MXP_OK)
        return st;
    if (codes->dtype != t.code)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: %s codes live in %s arrays, not %s", what,
                         mxp_qtype_name(qp->qtype), mxp_dtype_name(t.code), mxp_dtype_name(codes->dtype));
    if (qp->qtype == MXP_QINT4 || qp->qtype == MXP_QUINT4) { /* 4-bit codes in bytes: check the range */
        mxp_array *c = NULL;
        st = mxp_array_ascontiguous(&c, codes, 'C');
        const int64_t n = st == MXP_OK ? mxp_array_size(c) : 0;
        const unsigned char *b = st == MXP_OK ? mxp_array_data(c) : NULL;
        for (int64_t i = 0; i < n && st == MXP_OK; i++) {
            const int v = t.code == MXP_S8 ? (int)(signed char)b[i] : (int)b[i];
            if (v < t.qmin || v > t.qmax)
                st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: code %d at element %lld is outside %s's [%d, %d]",
                               what, v, (long long)i, mxp_qtype_name(qp->qtype), (int)t.qmin, (int)t.qmax);
        }
        mxp_array_free(c);
        if (st != MXP_OK)
            return st;
    }
    mxp_array *view = NULL;
    st = mxp_array_new_view(&view, codes, codes->ndim, codes->shape, codes->strides, codes->data);
    if (st != MXP_OK)
        return st;
    view->flags = (view->flags & ~MXP_ARRAY_WRITEABLE) | (codes->flags & MXP_ARRAY_WRITEABLE);
    return make(out, view, (mxp_qparams *)qp, true);
}

/* ---- the products ---------------------------------------------------------- */

static bool all_equal(const int32_t *v, int64_t n)
{
    for (int64_t i = 1; i < n; i++)
        if (v[i] != v[0])
            return false;
    return true;
}

/* a's checks: uint8 or int8, per tensor. */
static mxp_status check_activation(const mxp_qparams *qp, const char *what, const char *name)
{
    if (qp->qtype != MXP_U8 && qp->qtype != MXP_S8)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: %s must be quantized to uint8 or int8, not %s", what, name,
                         mxp_qtype_name(qp->qtype));
    if (qp->axis != -1 || qp->count != 1)
        return mxp_error(MXP_ERR_UNSUPPORTED, "%s: %s must be quantized per tensor (axis -1), not along axis %d",
                         what, name, qp->axis);
    return MXP_OK;
}

/* The weights' checks: int8, per tensor or per channel along `axis` (no
 * groups), every zero point equal. */
static mxp_status check_weight(const mxp_qparams *qp, int axis, const char *what, const char *name,
                               const char *axis_name)
{
    if (qp->qtype != MXP_S8)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: %s must be quantized to int8, not %s", what, name,
                         mxp_qtype_name(qp->qtype));
    if (qp->group_size != 0 || (qp->axis != -1 && qp->axis != axis))
        return mxp_error(MXP_ERR_UNSUPPORTED, "%s: %s must be quantized per tensor or per %s (axis %d), not along "
                         "axis %d%s", what, name, axis_name, axis, qp->axis, qp->group_size ? " in groups" : "");
    if (!all_equal(qp->zero_points, qp->count))
        return mxp_error(MXP_ERR_UNSUPPORTED, "%s: %s's zero points differ between channels (the int8 GEMM takes "
                         "one; symmetric quantization gives 0)", what, name);
    return MXP_OK;
}

mxp_status mxp_qmatmul_scales(float *out, float a_scale, const float *b_scales, size_t n, double out_scale)
{
    if (n && (!out || !b_scales))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_qmatmul_scales: out or b_scales is NULL");
    if (n > PTRDIFF_MAX / sizeof(float))
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_qmatmul_scales: n = %zu scales do not fit in memory", n);
    if (!(out_scale > 0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_qmatmul_scales: out_scale %g is not > 0", out_scale);
    const mxp_fpenv env = mxp_fpenv_enter();
    for (size_t j = 0; j < n; j++) /* exact product of two floats, one rounding (and the division) */
        out[j] = (float)((double)a_scale * (double)b_scales[j] / out_scale);
    mxp_fpenv_leave(env);
    return MXP_OK;
}

/* The int8 GEMM of codes a [M, K] by b [K, N] into out (its dtype), with
 * scales scale_a * scales_b[j] / out_scale. */
static mxp_status run(mxp_array *out, const mxp_array *a, const mxp_qparams *qa, const mxp_array *b,
                      const mxp_qparams *qb, double out_scale, int32_t out_zp, const mxp_array *bias)
{
    const size_t ns = (size_t)qb->count;
    mxp_gemm_opts o;
    memset(&o, 0, sizeof o);
    o.a_zero_point = qa->zero_points[0];
    o.b_zero_point = qb->zero_points[0];
    o.c_zero_point = out_zp;
    float *scales = NULL;
    if (out->dtype != MXP_S32) {
        scales = mxp_malloc(ns * sizeof *scales);
        if (!scales)
            return mxp_error(MXP_ERR_NO_MEMORY, "qmatmul: out of memory for %zu scales", ns);
        mxp_qmatmul_scales(scales, qa->scales[0], qb->scales, ns, out_scale); /* out_scale checked */
        o.scales = scales;
        o.n_scales = ns;
    }
    if (bias) {
        o.bias = mxp_array_data(bias);
        o.bias_dtype = bias->dtype;
        o.bias_kind = MXP_BIAS_PER_COL;
        o.bias_len = (size_t)mxp_array_size(bias);
    }
    const mxp_status st = mxp_matmul_into(out, a, b, &o);
    mxp_free(scales);
    return st;
}

static mxp_status qmatmul(mxp_array **out, const mxp_qtensor *a, const mxp_qtensor *b, mxp_dtype out_dtype,
                          const mxp_qparams *out_params)
{
    const char *what = "mxp_qmatmul";
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", what);
    *out = NULL;
    if (!a || !b)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what, !a ? "a" : "b");
    mxp_status st = check_activation(&a->qp, what, "a");
    if (st == MXP_OK)
        st = check_weight(&b->qp, 1, what, "b", "column");
    if (st != MXP_OK)
        return st;
    if (a->codes->ndim != 2 || b->codes->ndim != 2 || a->codes->shape[1] != b->codes->shape[0])
        return mxp_error(MXP_ERR_SHAPE, "%s: a [M, K] and b [K, N] needed, got %d-d a (last axis %lld) and %d-d b "
                         "(first axis %lld)", what, a->codes->ndim, (long long)a->codes->shape[a->codes->ndim - 1],
                         b->codes->ndim, (long long)b->codes->shape[0]);
    double out_scale = 1.0;
    int32_t out_zp = 0;
    if (out_dtype == MXP_S8 || out_dtype == MXP_U8) {
        if (!out_params)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: a requantized %s result needs out_params (its scale and "
                             "zero point)", what, mxp_dtype_name(out_dtype));
        if (out_params->qtype != out_dtype || out_params->axis != -1 || out_params->count != 1 ||
            !out_params->scales || !out_params->zero_points)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out_params must be one %s pair per tensor", what,
                             mxp_dtype_name(out_dtype));
        out_scale = out_params->scales[0];
        out_zp = out_params->zero_points[0];
        quant_type t;
        st = mxp_quant_type_info(out_dtype, what, &t);
        if (st == MXP_OK && (!(out_scale > 0) || !(out_scale <= 3.4028234663852886e38) || out_zp < t.qmin ||
                             out_zp > t.qmax))
            st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out_params scale %g / zero point %d: the scale must be "
                           "finite and > 0, the zero point inside %s's range", what, out_scale, (int)out_zp,
                           mxp_dtype_name(out_dtype));
        if (st != MXP_OK)
            return st;
    } else if (out_dtype == MXP_S32 || mxp_is_float_dtype(out_dtype)) {
        if (out_params)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out_params is for int8/uint8 results only (%s given)",
                             what, mxp_dtype_name(out_dtype));
    } else {
        return mxp_error(mxp_dtype_is_valid(out_dtype) ? MXP_ERR_UNSUPPORTED : MXP_ERR_INVALID_DTYPE,
                         "%s: out_dtype must be int32, int8, uint8 or a float dtype", what);
    }
    const int64_t shape[2] = { a->codes->shape[0], b->codes->shape[1] };
    mxp_array *c = NULL;
    st = mxp_array_empty(&c, out_dtype, 2, shape);
    if (st == MXP_OK)
        st = run(c, a->codes, &a->qp, b->codes, &b->qp, out_scale, out_zp, NULL);
    if (st != MXP_OK) {
        mxp_array_free(c);
        return st;
    }
    *out = c;
    return MXP_OK;
}

mxp_status mxp_qmatmul(mxp_array **out, const mxp_qtensor *a, const mxp_qtensor *b, mxp_dtype out_dtype,
                       const mxp_qparams *out_params)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = qmatmul(out, a, b, out_dtype, out_params);
    mxp_fpenv_leave(env);
    return st;
}

/* reduced: x's codes in [0, 127] (mxp_qlinear_reduce_range). */
static mxp_status qlinear(mxp_array **y, const mxp_array *x, const mxp_qtensor *w, const mxp_array *bias,
                          mxp_dtype out_dtype, const mxp_qparams *x_params, bool reduced)
{
    const char *what = reduced ? "mxp_qlinear_reduce_range" : "mxp_qlinear";
    if (!y)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: y is NULL", what);
    *y = NULL;
    if (!x || !w)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what, !x ? "x" : "the weight");
    if (!mxp_is_float_dtype(x->dtype))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: x must have a float dtype, not %s", what,
                         mxp_dtype_name(x->dtype));
    if (!mxp_is_float_dtype(out_dtype))
        return mxp_error(mxp_dtype_is_valid(out_dtype) ? MXP_ERR_UNSUPPORTED : MXP_ERR_INVALID_DTYPE,
                         "%s: out_dtype must be a float dtype (the layer dequantizes), not %s", what,
                         mxp_dtype_is_valid(out_dtype) ? mxp_dtype_name(out_dtype) : "an invalid dtype");
    mxp_status st = check_weight(&w->qp, 0, what, "the weight", "output channel");
    if (st != MXP_OK)
        return st;
    const mxp_array *wc = w->codes;
    if (wc->ndim != 2)
        return mxp_error(MXP_ERR_SHAPE, "%s: the weight must be 2-d [out_features, in_features], not %d-d", what,
                         wc->ndim);
    const int64_t n = wc->shape[0], k = wc->shape[1];
    if (x->ndim < 1 || x->shape[x->ndim - 1] != k)
        return mxp_error(MXP_ERR_SHAPE, "%s: x's last axis has %lld values, the weight [out_features %lld, in_features %lld] "
                         "takes %lld", what,
                         x->ndim < 1 ? 0LL : (long long)x->shape[x->ndim - 1], (long long)n, (long long)k,
                         (long long)k);
    if (bias) {
        if (!mxp_is_float_dtype(bias->dtype))
            return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: the bias must have a float dtype, not %s", what,
                             mxp_dtype_name(bias->dtype));
        if (bias->ndim != 1 || bias->shape[0] != n)
            return mxp_error(MXP_ERR_SHAPE, "%s: the bias must be 1-d with %lld values (out_features), got %d-d "
                             "with %lld", what, (long long)n, bias->ndim, (long long)mxp_array_size(bias));
    }
    if (x_params) {
        st = check_activation(x_params, what, "x");
        if (st != MXP_OK)
            return st;
        if (reduced && x_params->qtype != MXP_U8)
            return mxp_error(MXP_ERR_UNSUPPORTED, "%s: x_params must be uint8 (codes in [0, 127]), not %s", what,
                             mxp_qtype_name(x_params->qtype));
        if (reduced && (x_params->zero_points[0] < 0 || x_params->zero_points[0] > 127))
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: x_params' zero point %d is outside [0, 127], the "
                             "7-bit codes' range", what, (int)x_params->zero_points[0]);
    }
    const int64_t m = k > 0 ? mxp_array_size(x) / k : 0;
    int64_t yshape[MXP_MAXDIMS];
    memcpy(yshape, x->shape, (size_t)x->ndim * sizeof yshape[0]);
    yshape[x->ndim - 1] = n;
    mxp_array *out = NULL, *out2 = NULL, *xq = NULL, *x2 = NULL, *wt = NULL, *b = NULL;
    mxp_qparams cal;
    memset(&cal, 0, sizeof cal);
    st = mxp_array_empty(&out, out_dtype, x->ndim, yshape);
    if (st != MXP_OK || m == 0) {
        if (st == MXP_OK)
            *y = out; /* no rows: nothing to compute */
        return st;
    }
    if (!x_params) { /* dynamic quantization: this x's range */
        st = reduced ? mxp_quant_u8_calibrate_upto(x, 127, &cal) : mxp_calibrate_minmax(x, MXP_U8, false, -1, 0, &cal);
        x_params = &cal;
    }
    if (st == MXP_OK) /* 7 bits: the codes clamped to [0, 127], as torch's reduce_range quantizes */
        st = reduced ? mxp_quant_u8_quantize_upto(&xq, x, x_params, 127) : mxp_quantize(&xq, x, x_params, NULL);
    const int64_t s2x[2] = { m, k }, s2y[2] = { m, n };
    if (st == MXP_OK) /* codes and out are new C-contiguous arrays: 2-d views */
        st = mxp_array_reshape(&x2, xq, 2, s2x);
    if (st == MXP_OK)
        st = mxp_array_reshape(&out2, out, 2, s2y);
    if (st == MXP_OK)
        st = mxp_array_transpose(&wt, wc, NULL); /* W^T [K, N], read in place */
    if (st == MXP_OK && bias && !(bias->flags & MXP_ARRAY_C_CONTIGUOUS))
        st = mxp_array_ascontiguous(&b, bias, 'C');
    if (st == MXP_OK) { /* the kept panels of W^T, if any, for the products on this thread */
        mxp_int8_b_cache *before = w->packed ? mxp_int8_b_cache_bind(w->packed) : NULL;
        st = run(out2, x2, x_params, wt, &w->qp, 1.0, 0, b ? b : bias);
        if (w->packed)
            mxp_int8_b_cache_bind(before);
    }
    mxp_qparams_free(&cal);
    mxp_array_free(xq);
    mxp_array_free(x2);
    mxp_array_free(out2);
    mxp_array_free(wt);
    mxp_array_free(b);
    if (st != MXP_OK) {
        mxp_array_free(out);
        return st;
    }
    *y = out;
    return MXP_OK;
}

mxp_status mxp_qtensor_prepack(mxp_qtensor *w)
{
    const char *what = "mxp_qtensor_prepack";
    if (!w)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: w is NULL", what);
    mxp_status st = check_weight(&w->qp, 0, what, "the weight", "output channel");
    if (st == MXP_OK && w->codes->ndim != 2)
        st = mxp_error(MXP_ERR_SHAPE, "%s: the weight must be 2-d [out_features, in_features], not %d-d", what,
                       w->codes->ndim);
    if (st != MXP_OK)
        return st;
    mxp_int8_b_cache *c = mxp_int8_b_cache_new(mxp_array_data(w->codes)); /* W^T's base: W's */
    if (!c)
        return mxp_error(MXP_ERR_NO_MEMORY, "%s: out of memory", what);
    mxp_int8_b_cache_free(w->packed); /* what an earlier call kept: the codes may have changed since */
    w->packed = c;
    return MXP_OK;
}

mxp_status mxp_qlinear(mxp_array **y, const mxp_array *x, const mxp_qtensor *w, const mxp_array *bias,
                       mxp_dtype out_dtype, const mxp_qparams *x_params)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = qlinear(y, x, w, bias, out_dtype, x_params, false);
    mxp_fpenv_leave(env);
    return st;
}

mxp_status mxp_qlinear_reduce_range(mxp_array **y, const mxp_array *x, const mxp_qtensor *w, const mxp_array *bias,
                                    mxp_dtype out_dtype, const mxp_qparams *x_params)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = qlinear(y, x, w, bias, out_dtype, x_params, true);
    mxp_fpenv_leave(env);
    return st;
}

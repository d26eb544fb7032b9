/* Affine quantization: q = clamp(round(x / scale) + zp, qmin, qmax).
 * Formulas, the zero/NaN/infinity policy and layouts are in docs/quant.md. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "array/array-internal.h"
#include "core/abi.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "core/profile-internal.h"
#include "gemm/gemm-internal.h"
#include "quant/quant-internal.h"

void mxp_qparams_free(mxp_qparams *qp)
{
    if (!qp)
        return;
    mxp_free(qp->scales);
    mxp_free(qp->zero_points);
    memset(qp, 0, sizeof *qp);
}

mxp_status mxp_quant_layout(const mxp_array *x, int axis, int64_t group, const char *what, quant_layout *L)
{
    if (!x)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: array is NULL", what);
    int64_t size = mxp_array_size(x);
    if (size == 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: the array is empty", what);
    if (axis != -1 && (axis < 0 || axis >= x->ndim))
        return mxp_error(MXP_ERR_INDEX, "%s: axis %d is out of range for %d dimensions (-1: per tensor)", what,
                         axis, x->ndim);
    if (group < 0 || (group > 0 && axis < 0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: group_size %lld needs an axis >= 0 and must be >= 0", what,
                         (long long)group);
    L->axis = axis;
    L->group = group;
    L->size = size;
    if (axis < 0) {
        L->outer = 1, L->len = size, L->inner = 1, L->count = 1;
        return MXP_OK;
    }
    L->outer = 1, L->inner = 1, L->len = x->shape[axis];
    for (int k = 0; k < axis; k++)
        L->outer *= x->shape[k];
    for (int k = axis + 1; k < x->ndim; k++)
        L->inner *= x->shape[k];
    if (group > 0 && L->len % group != 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: group_size %lld does not divide axis %d of length %lld",
                         what, (long long)group, axis, (long long)L->len);
    L->count = group > 0 ? size / group : L->len;
    return MXP_OK;
}

mxp_status mxp_quant_as_f64(mxp_array **out, const mxp_array *x)
{
    return mxp_array_astype(out, x, MXP_F64, NULL);
}

/* A float scale that is finite and > 0 (clamped to [FLT_MIN, FLT_MAX]). */
static float finite_scale(double s)
{
    if (!(s > 0.0))
        return 1.0f;
    if (s < FLT_MIN)
        return FLT_MIN;
    if (s > FLT_MAX)
        return FLT_MAX;
    return (float)s;
}

void mxp_quant_pair_from_range(const quant_type *t, bool symmetric, double lo, double hi, float *scale, int32_t *zp)
{
    if (!(lo <= hi))
        lo = hi = 0.0;
    lo = fmin(lo, 0.0); /* the range always holds 0 */
    hi = fmax(hi, 0.0);
    if (symmetric) {
        double amax = fmax(-lo, hi);
        *scale = amax > 0.0 ? finite_scale(amax / t->sym_max) : 1.0f;
        *zp = t->sym_zp;
    } else {
        double span = (double)t->qmax - (double)t->qmin;
        double s = hi / span - lo / span; /* no overflow for huge ranges */
        *scale = s > 0.0 ? finite_scale(s) : 1.0f;
        double z = nearbyint((double)t->qmin - lo / (double)*scale);
        *zp = (int32_t)fmin(fmax(z, (double)t->qmin), (double)t->qmax);
    }
}

/* mxp_qparams_from_ranges for the type t (its codes' range as given). */
static mxp_status qparams_from_ranges(mxp_qparams *out, const quant_type *tp, mxp_dtype qtype, bool symmetric,
                                      int axis, int64_t group, int64_t count, const double *mins, const double *maxs)
{
    const quant_type t = *tp;
    float *scales = mxp_malloc((size_t)count * sizeof *scales);
    int32_t *zps = mxp_malloc((size_t)count * sizeof *zps);
    if (!scales || !zps) {
        mxp_free(scales);
        mxp_free(zps);
        return mxp_error(MXP_ERR_NO_MEMORY, "calibration: out of memory for %lld pairs", (long long)count);
    }
    for (int64_t k = 0; k < count; k++)
        mxp_quant_pair_from_range(&t, symmetric, mins[k], maxs[k], &scales[k], &zps[k]);
    out->qtype = qtype;
    out->symmetric = symmetric;
    out->axis = axis;
    out->group_size = group;
    out->count = count;
    out->scales = scales;
    out->zero_points = zps;
    return MXP_OK;
}

mxp_status mxp_qparams_from_ranges(mxp_qparams *out, mxp_dtype qtype, bool symmetric, int axis, int64_t group,
                                   int64_t count, const double *mins, const double *maxs)
{
    quant_type t = { 0 };
    const mxp_status st = mxp_quant_calib_type(qtype, symmetric, "calibration", &t);
    return st == MXP_OK ? qparams_from_ranges(out, &t, qtype, symmetric, axis, group, count, mins, maxs) : st;
}

void mxp_quant_pair_ranges(const quant_layout *L, const double *v, double *mins, double *maxs)
{
    for (int64_t k = 0; k < L->count; k++)
        mins[k] = INFINITY, maxs[k] = -INFINITY;
    for (int64_t o = 0, e = 0; o < L->outer; o++)
        for (int64_t a = 0; a < L->len; a++)
            for (int64_t i = 0; i < L->inner; i++, e++) {
                if (!isfinite(v[e]))
                    continue;
                int64_t k = quant_index(L, o, a, i);
                mins[k] = fmin(mins[k], v[e]);
                maxs[k] = fmax(maxs[k], v[e]);
            }
}

/* qmax > 0: the codes' top lowered to it (7-bit uint8: 127). */
static mxp_status calibrate_minmax(const mxp_array *x, mxp_dtype qtype, bool symmetric, int axis,
                                   int64_t group_size, int32_t qmax, mxp_qparams *out)
{
    const char *what = qmax ? "calibration" : "mxp_calibrate_minmax";
    quant_type t = { 0 };
    quant_layout L;
    mxp_status st = mxp_quant_calib_type(qtype, symmetric, what, &t);
    t.qmax = qmax ? qmax : t.qmax;
    if (st == MXP_OK)
        st = mxp_quant_layout(x, axis, group_size, what, &L);
    if (st == MXP_OK && !out)
        st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", what);
    if (st != MXP_OK)
        return st;
    double lo = 0, hi = 0;
    if (axis < 0 && mxp_quant_fast_minmax(x, &lo, &hi)) /* per tensor, SIMD */
        return qparams_from_ranges(out, &t, qtype, symmetric, axis, group_size, 1, &lo, &hi);
    mxp_array *xd = NULL;
    double *mins = mxp_malloc((size_t)L.count * sizeof *mins);
    double *maxs = mxp_malloc((size_t)L.count * sizeof *maxs);
    if (!mins || !maxs)
        st = mxp_error(MXP_ERR_NO_MEMORY, "%s: out of memory", what);
    if (st == MXP_OK && group_size == 0 &&
        (axis == x->ndim - 1 ? mxp_quant_fast_minmax_cols(x, &L, mins, maxs)
                             : mxp_quant_fast_minmax_blocks(x, &L, mins, maxs))) {
        st = qparams_from_ranges(out, &t, qtype, symmetric, axis, group_size, L.count, mins, maxs);
        mxp_free(mins);
        mxp_free(maxs);
        return st;
    }
    if (st == MXP_OK)
        st = mxp_quant_as_f64(&xd, x);
    if (st == MXP_OK) {
        mxp_quant_pair_ranges(&L, mxp_array_data(xd), mins, maxs);
        st = qparams_from_ranges(out, &t, qtype, symmetric, axis, group_size, L.count, mins, maxs);
    }
    mxp_array_free(xd);
    mxp_free(mins);
    mxp_free(maxs);
    return st;
}

mxp_status mxp_calibrate_minmax(const mxp_array *x, mxp_dtype qtype, bool symmetric, int axis,
                                int64_t group_size, mxp_qparams *out)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = calibrate_minmax(x, qtype, symmetric, axis, group_size, 0, out);
    mxp_fpenv_leave(env);
    return st;
}

mxp_status mxp_quant_u8_calibrate_upto(const mxp_array *x, int32_t qmax, mxp_qparams *out)
{
    return calibrate_minmax(x, MXP_U8, false, -1, 0, qmax, out);
}

/* Checks qp against an array of x's shape. */
static mxp_status check_qparams(const mxp_qparams *qp, const mxp_array *x, const char *what, quant_layout *L,
                                quant_type *t)
{
    if (!qp)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: qparams is NULL", what);
    mxp_status st = mxp_quant_type_info(qp->qtype, what, t);
    if (st == MXP_OK)
        st = mxp_quant_layout(x, qp->axis, qp->group_size, what, L);
    if (st != MXP_OK)
        return st;
    if (qp->count != L->count || !qp->scales || !qp->zero_points)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: qparams hold %lld pairs, the array needs %lld", what,
                         (long long)qp->count, (long long)L->count);
    for (int64_t k = 0; k < qp->count; k++) {
        float s = qp->scales[k];
        int32_t z = qp->zero_points[k];
        if (!(s > 0.0f) || !isfinite(s))
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: scale %lld is %g (must be finite and > 0)", what,
                             (long long)k, (double)s);
        if (z < t->qmin || z > t->qmax)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: zero point %lld is %d, outside %s's [%d, %d]", what,
                             (long long)k, (int)z, mxp_qtype_name(qp->qtype), (int)t->qmin, (int)t->qmax);
    }
    return MXP_OK;
}

mxp_status mxp_quant_check_qparams(const mxp_qparams *qp, const mxp_array *x, const char *what)
{
    quant_layout L;
    quant_type t;
    return check_qparams(qp, x, what, &L, &t);
}

/* How each entry point begins: out given, qp checked against x, and codes
 * (NULL: none), the array that holds qp's codes, of their dtype: out of
 * mxp_quantize_into, or x itself for mxp_dequantize (named q). */
static mxp_status check_call(const void *out, const mxp_qparams *qp, const mxp_array *x, const mxp_array *codes,
                             const char *what, quant_layout *L, quant_type *t)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", what);
    mxp_status st = check_qparams(qp, x, what, L, t);
    if (st == MXP_OK && codes && codes->dtype != t->code)
        st = mxp_error(MXP_ERR_INVALID_DTYPE, "%s: %s is %s, the codes of %s are %s", what, codes == x ? "q" : "out",
                       mxp_dtype_name(codes->dtype), mxp_qtype_name(qp->qtype), mxp_dtype_name(t->code));
    return st;
}

/* The default mode without mxp_convert's generic path: exactly what it
 * gives for float64 -> int32 in nearest-even (saturation, NaN -> 0), with
 * floor() and exact subtraction, so the FP rounding mode cannot change it. */
static void round_even_to_int32(int32_t *dst, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double x = v[i];
        x = x == x ? x : 0.0; /* NaN -> 0 */
        x = x < -2147483648.0 ? -2147483648.0 : x > 2147483647.0 ? 2147483647.0 : x;
        /* floor without libm or branches: truncate, then step down below zero */
        int64_t t = (int64_t)x;
        t -= x < (double)t;
        double f = x - (double)t; /* exact: |x| < 2^52 */
        t += (f > 0.5) | ((f == 0.5) & (int)(t & 1));
        dst[i] = (int32_t)t;
    }
}

/* The byte of code k in an array of dtype code: two's complement for int8,
 * and for the sub-byte integer dtypes the value in the low bits with the
 * bits above zero, as every mxp array of them holds it. */
static uint8_t code_mask(mxp_dtype code)
{
    const int bits = mxp_dtype_get_traits(code)->bits;
    return (uint8_t)(bits < 8 ? (1u << bits) - 1 : 0xffu);
}

/* The SIMD kernels write int8 bytes: masked for the sub-byte dtypes. */
static void mask_codes(uint8_t *q, int64_t n, mxp_dtype code)
{
    const uint8_t m = code_mask(code);
    if (m != 0xff)
        for (int64_t e = 0; e < n; e++)
            q[e] &= m;
}

/* The common case (contiguous input, nearest even) in blocks, without
 * whole-array temporaries: the same arithmetic as the general path below.
 * qp->qtype is the code array's dtype (MXP_S8 or MXP_U8, also for int4 /
 * uint4, or a sub-byte integer dtype) and [qmin, qmax] the codes' range
 * ([-8, 7], [0, 15] for 4 bits). */
static mxp_status quantize_blocks(mxp_array **out, const mxp_array *x, const mxp_qparams *qp, const quant_layout *L,
                                  int32_t qmin, int32_t qmax)
{
    enum { BLOCK = 1024 };
    mxp_array *r = NULL;
    mxp_status st = mxp_array_new_owner(&r, qp->qtype, x->ndim, x->shape);
    if (st != MXP_OK)
        return st;
    uint8_t *u8 = mxp_array_data(r);
    if (mxp_quant_fast_try(u8, x, L, qp, qmin, qmax)) { /* SIMD kernels, same bytes */
        mask_codes(u8, L->size, qp->qtype);
        *out = r;
        return MXP_OK;
    }
    const size_t xs = mxp_dtype_itemsize(x->dtype);
    const char *src = x->data;
    const uint8_t mask = code_mask(qp->qtype);
    double v[BLOCK];
    int32_t ri[BLOCK];
    int64_t o = 0, a = 0, i = 0; /* element e is (o, a, i) in the layout */
    for (int64_t e0 = 0; e0 < L->size; e0 += BLOCK) {
        size_t m = (size_t)(L->size - e0 < BLOCK ? L->size - e0 : BLOCK);
        mxp_convert(v, MXP_F64, src + e0 * (int64_t)xs, x->dtype, m, NULL);
        int64_t o1 = o, a1 = a, i1 = i;
        for (size_t q = 0; q < m; q++) {
            v[q] /= (double)qp->scales[quant_index(L, o1, a1, i1)];
            if (++i1 == L->inner) {
                i1 = 0;
                if (++a1 == L->len) {
                    a1 = 0;
                    o1++;
                }
            }
        }
        round_even_to_int32(ri, v, m);
        for (size_t q = 0; q < m; q++) {
            int64_t k = (int64_t)ri[q] + qp->zero_points[quant_index(L, o, a, i)];
            k = k < qmin ? qmin : k > qmax ? qmax : k;
            u8[e0 + (int64_t)q] = (uint8_t)((uint64_t)k & mask);
            if (++i == L->inner) {
                i = 0;
                if (++a == L->len) {
                    a = 0;
                    o++;
                }
            }
        }
    }
    *out = r;
    return MXP_OK;
}

mxp_status mxp_quant_u8_quantize_upto(mxp_array **out, const mxp_array *x, const mxp_qparams *qp, int32_t qmax)
{
    quant_layout L;
    quant_type t = { 0 };
    mxp_status st = check_call(out, qp, x, NULL, "mxp_quantize", &L, &t);
    if (st == MXP_OK && qp->qtype != MXP_U8)
        st = mxp_error(MXP_ERR_UNSUPPORTED, "mxp_quantize: codes up to %d are uint8 codes, not %s", (int)qmax,
                       mxp_qtype_name(qp->qtype));
    if (st != MXP_OK)
        return st;
    if (x->flags & MXP_ARRAY_C_CONTIGUOUS)
        return quantize_blocks(out, x, qp, &L, 0, qmax);
    mxp_array *xc = NULL;
    st = mxp_array_ascontiguous(&xc, x, 'C');
    if (st == MXP_OK)
        st = quantize_blocks(out, xc, qp, &L, 0, qmax);
    mxp_array_free(xc);
    return st;
}

static mxp_status quantize(mxp_array **out, const mxp_array *x, const mxp_qparams *qp, const mxp_convert_opts *opts)
{
    const char *what = "mxp_quantize";
    quant_layout L;
    quant_type t = { 0 };
    mxp_status st = check_call(out, qp, x, NULL, what, &L, &t);
    if (st != MXP_OK)
        return st;
    const int32_t qmin = t.qmin, qmax = t.qmax;
    mxp_qparams codes; /* int4 / uint4: the same pairs, qtype the code array's int8 / uint8 */
    if (t.code != qp->qtype) {
        codes = *qp;
        codes.qtype = t.code;
        qp = &codes;
    }
    const bool nearest = !opts || (opts->rounding == MXP_ROUND_NEAREST_EVEN && !opts->flags);
    if (!t.is_float && nearest && (x->flags & MXP_ARRAY_C_CONTIGUOUS))
        return quantize_blocks(out, x, qp, &L, qmin, qmax);
    mxp_array *xd = NULL, *r = NULL;
    st = mxp_quant_as_f64(&xd, x);
    if (st == MXP_OK)
        st = mxp_array_new_owner(&r, qp->qtype, x->ndim, x->shape);
    int32_t *ri = NULL;
    if (st == MXP_OK && !t.is_float && !(ri = mxp_malloc((size_t)L.size * sizeof *ri)))
        st = mxp_error(MXP_ERR_NO_MEMORY, "%s: out of memory", what);
    if (st == MXP_OK) {
        double *v = mxp_array_data(xd); /* our own copy: scaled in place */
        for (int64_t o = 0, e = 0; o < L.outer; o++)
            for (int64_t a = 0; a < L.len; a++)
                for (int64_t i = 0; i < L.inner; i++, e++)
                    v[e] /= (double)qp->scales[quant_index(&L, o, a, i)];
        if (t.is_float) {
            /* one rounding to float8 by the mode, saturating (+-inf too), NaN stays NaN */
            mxp_convert_opts o = opts ? *opts : (mxp_convert_opts){ 0 };
            o.overflow = MXP_OVERFLOW_SATURATE;
            st = mxp_convert(mxp_array_data(r), qp->qtype, v, MXP_F64, (size_t)L.size, &o);
        } else if (nearest) { /* round(x / scale) by the mode, saturated to int32 (NaN -> 0) */
            round_even_to_int32(ri, v, (size_t)L.size);
        } else {
            st = mxp_convert(ri, MXP_S32, v, MXP_F64, (size_t)L.size, opts);
        }
    }
    if (st == MXP_OK && !t.is_float) {
        uint8_t *u8 = mxp_array_data(r);
        const uint8_t mask = code_mask(qp->qtype);
        for (int64_t o = 0, e = 0; o < L.outer; o++)
            for (int64_t a = 0; a < L.len; a++)
                for (int64_t i = 0; i < L.inner; i++, e++) {
                    int64_t q = (int64_t)ri[e] + qp->zero_points[quant_index(&L, o, a, i)];
                    q = q < qmin ? qmin : q > qmax ? qmax : q;
                    u8[e] = (uint8_t)((uint64_t)q & mask);
                }
    }
    if (st == MXP_OK) {
        *out = r;
        r = NULL;
    }
    mxp_free(ri);
    mxp_array_free(xd);
    mxp_array_free(r);
    return st;
}

static mxp_status quantize_entry(mxp_array **out, const mxp_array *x, const mxp_qparams *qp, const mxp_convert_opts *opts)
{
    MXP_ABI_IN_OUT(opts, convert_opts, "mxp_quantize", out);
    if (out)
        *out = NULL; /* as after any error */
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = quantize(out, x, qp, opts);
    mxp_fpenv_leave(env);
    return st;
}

static mxp_status quantize_into(mxp_array *out, const mxp_array *x, const mxp_qparams *qp, const mxp_convert_opts *opts)
{
    const char *what = "mxp_quantize_into";
    quant_layout L;
    quant_type t = { 0 };
    mxp_status st = check_call(out, qp, x, out, what, &L, &t);
    if (st != MXP_OK)
        return st;
    if (out->ndim != x->ndim || memcmp(out->shape, x->shape, (size_t)x->ndim * sizeof x->shape[0]) != 0)
        return mxp_error(MXP_ERR_SHAPE, "%s: out's shape differs from x's", what);
    if (!(out->flags & MXP_ARRAY_WRITEABLE))
        return mxp_error(MXP_ERR_READONLY, "%s: out is read-only", what);
    const bool nearest = !opts || (opts->rounding == MXP_ROUND_NEAREST_EVEN && !opts->flags);
    if (!t.is_float && nearest && (out->flags & MXP_ARRAY_C_CONTIGUOUS) && !mxp_arrays_may_overlap(out, x) &&
        mxp_quant_fast_try(mxp_array_data(out), x, &L, qp, t.qmin, t.qmax)) {
        mask_codes(mxp_array_data(out), L.size, t.code);
        return MXP_OK;
    }
    mxp_array *r = NULL; /* any other case: quantize, then copy */
    st = mxp_quantize(&r, x, qp, opts);
    if (st == MXP_OK)
        st = mxp_array_copyto(out, r, MXP_CASTING_NO, NULL);
    mxp_array_free(r);
    return st;
}

static mxp_status quantize_into_entry(mxp_array *out, const mxp_array *x, const mxp_qparams *qp, const mxp_convert_opts *opts)
{
    MXP_ABI_IN(opts, convert_opts, "mxp_quantize_into");
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = quantize_into(out, x, qp, opts);
    mxp_fpenv_leave(env);
    return st;
}

/* int8/uint8 codes of their own qtype (every code in range), C order,
 * into float32: (code - z) in int32, 256 at a time, and the GEMMs'
 * dequantization kernel (src/kernels/s32-dequant/: acc s rounded once to
 * float32, nearest even, as mxp_convert of the exact float64 product
 * below): three passes over float64 copies and an index a value cost
 * 2.4 ns a code.  False, nothing written, where it does not serve. */
static bool dequantize_fast(float *y, const mxp_array *q, const quant_layout *L, const quant_type *t,
                            const mxp_qparams *qp)
{
    const bool full = (q->dtype == MXP_U8 && t->qmin == 0 && t->qmax == 255) ||
                      (q->dtype == MXP_S8 && t->qmin == -128 && t->qmax == 127); /* not 4- or 2-bit codes */
    if (t->is_float || q->dtype != t->code || !full || !(q->flags & MXP_ARRAY_C_CONTIGUOUS))
        return false;
    const mxp_s32_dequant_f32_fn fn = mxp_s32_dequant_f32_kernel(mxp_isa_current(), MXP_ROUND_NEAREST_EVEN);
    if (!fn)
        return false;
    const bool u8 = q->dtype == MXP_U8, one = L->axis < 0;
    const uint8_t *cu = mxp_array_data(q);
    const int8_t *cs = mxp_array_data(q);
    int32_t acc[256];
    float sc[256];
    int64_t o = 0, a = 0, i = 0; /* element e's (outer, axis, inner) */
    for (int64_t e = 0; e < L->size;) {
        const size_t n = L->size - e < 256 ? (size_t)(L->size - e) : 256;
        if (one) {
            const int32_t z = qp->zero_points[0];
            for (size_t r = 0; r < n; r++)
                acc[r] = (u8 ? (int32_t)cu[e + (int64_t)r] : (int32_t)cs[e + (int64_t)r]) - z;
        } else {
            for (size_t r = 0; r < n; r++) {
                const int64_t k = quant_index(L, o, a, i);
                acc[r] = (u8 ? (int32_t)cu[e + (int64_t)r] : (int32_t)cs[e + (int64_t)r]) - qp->zero_points[k];
                sc[r] = qp->scales[k];
                if (++i == L->inner) {
                    i = 0;
                    if (++a == L->len)
                        a = 0, o++;
                }
            }
        }
        if (!fn(y + e, acc, n, one ? qp->scales : sc, !one, NULL, MXP_ROUND_NEAREST_EVEN))
            return false; /* the MXCSR flushes: the kernel writes nothing, the first call or none */
        e += (int64_t)n;
    }
    return true;
}

static mxp_status dequantize(mxp_array **out, const mxp_array *q, const mxp_qparams *qp, mxp_dtype out_dtype)
{
    const char *what = "mxp_dequantize";
    quant_layout L;
    quant_type t = { 0 };
    mxp_status st = check_call(out, qp, q, q, what, &L, &t);
    if (st != MXP_OK)
        return st;
    if (!mxp_dtype_is_valid(out_dtype))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: %d is not a valid mxp_dtype", what, (int)out_dtype);
    mxp_array *qd = NULL, *r = NULL;
    if (out_dtype == MXP_F32) {
        st = mxp_array_new_owner(&r, out_dtype, q->ndim, q->shape);
        if (st != MXP_OK)
            return st;
        if (dequantize_fast(mxp_array_data(r), q, &L, &t, qp)) {
            *out = r;
            return MXP_OK;
        }
        mxp_array_free(r);
        r = NULL;
    }
    st = mxp_quant_as_f64(&qd, q);
    if (st == MXP_OK)
        st = mxp_array_new_owner(&r, out_dtype, q->ndim, q->shape);
    if (st == MXP_OK && !t.is_float) { /* int4 / uint4 codes live in wider arrays */
        const double *v = mxp_array_data(qd);
        for (int64_t e = 0; e < L.size; e++)
            if (v[e] < t.qmin || v[e] > t.qmax) {
                st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: code %g at index %lld is outside %s's [%d, %d]", what,
                               v[e], (long long)e, mxp_qtype_name(qp->qtype), (int)t.qmin, (int)t.qmax);
                break;
            }
    }
    if (st == MXP_OK) {
        double *v = mxp_array_data(qd);
        for (int64_t o = 0, e = 0; o < L.outer; o++)
            for (int64_t a = 0; a < L.len; a++)
                for (int64_t i = 0; i < L.inner; i++, e++) {
                    int64_t k = quant_index(&L, o, a, i);
                    /* exact: a 9-bit integer, or a float8 (4 significant bits), times a float32 */
                    v[e] = (v[e] - (double)qp->zero_points[k]) * (double)qp->scales[k];
                }
        st = mxp_convert(mxp_array_data(r), out_dtype, v, MXP_F64, (size_t)L.size, NULL);
    }
    if (st == MXP_OK) {
        *out = r;
        r = NULL;
    }
    mxp_array_free(qd);
    mxp_array_free(r);
    return st;
}

static mxp_status dequantize_entry(mxp_array **out, const mxp_array *q, const mxp_qparams *qp, mxp_dtype out_dtype)
{
    if (out)
        *out = NULL; /* as after any error */
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = dequantize(out, q, qp, out_dtype);
    mxp_fpenv_leave(env);
    return st;
}

mxp_status mxp_fake_quantize(mxp_array **out, const mxp_array *x, const mxp_qparams *qp,
                             const mxp_convert_opts *opts)
{
    MXP_ABI_IN_OUT(opts, convert_opts, "mxp_fake_quantize", out);
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_fake_quantize: out is NULL");
    *out = NULL;
    mxp_array *q = NULL;
    mxp_status st = mxp_quantize(&q, x, qp, opts);
    if (st == MXP_OK)
        st = mxp_dequantize(out, q, qp, x->dtype);
    mxp_array_free(q);
    return st;
}

/* ---- the entry points, profiled (src/core/profile-internal.h) ---------- */

mxp_status mxp_quantize(mxp_array **out, const mxp_array *x, const mxp_qparams *qp, const mxp_convert_opts *opts)
{
    MXP_PROF_RETURN_AFTER("quantize", quantize_entry(out, x, qp, opts),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          mxp_prof_size(x));
}

mxp_status mxp_quantize_into(mxp_array *out, const mxp_array *x, const mxp_qparams *qp, const mxp_convert_opts *opts)
{
    MXP_PROF_RETURN_AFTER("quantize", quantize_into_entry(out, x, qp, opts),
                          mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(out),
                          mxp_prof_size(x));
}

mxp_status mxp_dequantize(mxp_array **out, const mxp_array *q, const mxp_qparams *qp, mxp_dtype out_dtype)
{
    MXP_PROF_RETURN_AFTER("dequantize", dequantize_entry(out, q, qp, out_dtype),
                          mxp_prof_array_bytes(q),
                          mxp_prof_array_bytes(q) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          mxp_prof_size(q));
}

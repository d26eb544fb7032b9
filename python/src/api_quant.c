/* Module functions: affine quantization (calibrate, quantize, dequantize,
 * fake-quantize, int4 packing), observers and OCP MX blocks.
 *
 * Quantization parameters cross the boundary as a tuple
 * (qtype name, symmetric, axis, group_size, scales float32[count],
 * zero_points int32[count]); mxp.QParams (mxp/_quant.py) holds them. */
#include <string.h>

#include "mxpy.h"


/* A quantized type by its name (mxp_qtype_name), or a dtype's (its aliases too). */
static int qtype_from_name(const char *s, mxp_dtype *qt)
{
    for (int i = 0; mxp_qtype_at(i); i++)
        if (!strcmp(s, mxp_qtype_name(mxp_qtype_at(i)))) {
            *qt = mxp_qtype_at(i);
            return 0;
        }
    *qt = mxp_dtype_from_name(s);
    if (mxp_qtype_code_dtype(*qt) != MXP_DTYPE_INVALID)
        return 0;
    mxpy_not_one_of("qtype", s, "QTYPES");
    return -1;
}

/* The tuple form of qp (copies its arrays). */
static PyObject *qparams_tuple(const mxp_qparams *qp)
{
    npy_intp n = (npy_intp)qp->count;
    PyObject *scales = PyArray_SimpleNew(1, &n, NPY_FLOAT32);
    PyObject *zps = PyArray_SimpleNew(1, &n, NPY_INT32);
    if (!scales || !zps) {
        Py_XDECREF(scales);
        Py_XDECREF(zps);
        return NULL;
    }
    memcpy(PyArray_DATA((PyArrayObject *)scales), qp->scales, (size_t)n * sizeof(float));
    memcpy(PyArray_DATA((PyArrayObject *)zps), qp->zero_points, (size_t)n * sizeof(int32_t));
    return Py_BuildValue("(sOiLNN)", mxp_qtype_name(qp->qtype), qp->symmetric ? Py_True : Py_False, qp->axis,
                         (long long)qp->group_size, scales, zps);
}

/* qp viewing the tuple's arrays (not owning them: never mxp_qparams_free). */
static int qparams_from_tuple(PyObject *t, mxp_qparams *qp)
{
    const char *qtype;
    int symmetric, axis;
    long long group;
    PyObject *scales, *zps;
    memset(qp, 0, sizeof *qp);
    if (!PyArg_ParseTuple(t, "spiLOO", &qtype, &symmetric, &axis, &group, &scales, &zps) ||
        qtype_from_name(qtype, &qp->qtype) < 0)
        return -1;
    if (!PyArray_Check(scales) || !PyArray_Check(zps) || PyArray_TYPE((PyArrayObject *)scales) != NPY_FLOAT32 ||
        PyArray_TYPE((PyArrayObject *)zps) != NPY_INT32 || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)scales) ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)zps) || !mxpy_is_aligned((PyArrayObject *)scales) ||
        !mxpy_is_aligned((PyArrayObject *)zps) ||
        PyArray_SIZE((PyArrayObject *)scales) != PyArray_SIZE((PyArrayObject *)zps)) {
        PyErr_SetString(PyExc_TypeError,
                        "qparams: scales must be contiguous aligned float32 and zero_points int32 of one size");
        return -1;
    }
    qp->symmetric = symmetric;
    qp->axis = axis;
    qp->group_size = group;
    qp->count = PyArray_SIZE((PyArrayObject *)scales);
    qp->scales = PyArray_DATA((PyArrayObject *)scales);
    qp->zero_points = PyArray_DATA((PyArrayObject *)zps);
    return 0;
}

/* _calibrate(x, qtype, symmetric, axis, group_size) -> qparams tuple */
static PyObject *calibrate(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *x;
    const char *qtype;
    int symmetric, axis;
    long long group;
    mxp_dtype qt;
    if (!PyArg_ParseTuple(args, "OspiL", &x, &qtype, &symmetric, &axis, &group) || qtype_from_name(qtype, &qt) < 0)
        return NULL;
    mxp_array *mx = mxpy_wrap(x, "calibrate: x", false);
    if (!mx)
        return NULL;
    mxp_qparams qp;
    memset(&qp, 0, sizeof qp);
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_calibrate_minmax(mx, qt, symmetric, axis, group, &qp);
    Py_END_ALLOW_THREADS
    mxp_array_free(mx);
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyObject *r = qparams_tuple(&qp);
    mxp_qparams_free(&qp);
    return r;
}

enum { QUANTIZE, FAKE_QUANTIZE };

/* _quantize(x, qparams, rounding, seed, fake, out or None, index_offset) ->
 * codes (or x's dtype when fake); with out, the codes are written there
 * (mxp_quantize_into) */
static PyObject *quantize(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kw[] = { "x", "qparams", "rounding", "seed", "fake", "out", "index_offset", NULL };
    PyObject *x, *qpt, *out_obj;
    const char *rounding;
    unsigned long long seed, offset = 0;
    int fake;
    mxp_qparams qp;
    mxp_convert_opts o;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOsKpO|K", kw, &x, &qpt, &rounding, &seed, &fake, &out_obj,
                                     &offset) ||
        qparams_from_tuple(qpt, &qp) < 0 || mxpy_convert_opts(rounding, "inf", seed, &o) < 0)
        return NULL;
    o.index_offset = offset;
    mxp_array *mx = mxpy_wrap(x, fake ? "fake_quantize: x" : "quantize: x", false), *out = NULL;
    PyObject *tmp = NULL; /* out unaligned: an aligned copy, copied back after */
    mxp_array *into = mx && out_obj != Py_None ? mxpy_wrap_ex(out_obj, "quantize: out", MXPY_WRITE, &tmp) : NULL;
    if (!mx || (out_obj != Py_None && !into)) {
        mxp_array_free(mx);
        return NULL;
    }
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = into ? mxp_quantize_into(into, mx, &qp, &o) : fake ? mxp_fake_quantize(&out, mx, &qp, &o)
                                                          : mxp_quantize(&out, mx, &qp, &o);
    Py_END_ALLOW_THREADS
    mxp_array_free(mx);
    mxp_array_free(into);
    if (st != MXP_OK) {
        Py_XDECREF(tmp);
        return mxpy_raise(st);
    }
    if (mxpy_copy_back(out_obj, tmp) < 0)
        return NULL;
    if (into) {
        Py_INCREF(out_obj);
        return out_obj;
    }
    return mxpy_unwrap(out);
}

/* _dequantize(q, qparams, out_dtype) -> array */
static PyObject *dequantize(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *q, *qpt, *dtype;
    mxp_qparams qp;
    if (!PyArg_ParseTuple(args, "OOO", &q, &qpt, &dtype) || qparams_from_tuple(qpt, &qp) < 0)
        return NULL;
    mxp_dtype dt = mxpy_dtype_arg(dtype, "dequantize: dtype");
    mxp_array *mq = dt ? mxpy_wrap(q, "dequantize: codes", false) : NULL, *out = NULL;
    if (!mq)
        return NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_dequantize(&out, mq, &qp, dt);
    Py_END_ALLOW_THREADS
    mxp_array_free(mq);
    return st == MXP_OK ? mxpy_unwrap(out) : mxpy_raise(st);
}

/* _pack_int4(codes) / _unpack_int4(packed, last_dim, signed) */
static PyObject *pack_int4(PyObject *self, PyObject *codes)
{
    (void)self;
    mxp_array *mc = mxpy_wrap(codes, "pack_int4: codes", false), *out = NULL;
    if (!mc)
        return NULL;
    mxp_status st = mxp_pack_int4(&out, mc);
    mxp_array_free(mc);
    return st == MXP_OK ? mxpy_unwrap(out) : mxpy_raise(st);
}

static PyObject *unpack_int4(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *packed;
    long long last;
    int is_signed;
    if (!PyArg_ParseTuple(args, "OLp", &packed, &last, &is_signed))
        return NULL;
    mxp_array *mp = mxpy_wrap(packed, "unpack_int4: packed", false), *out = NULL;
    if (!mp)
        return NULL;
    mxp_status st = mxp_unpack_int4(&out, mp, last, is_signed ? MXP_S8 : MXP_U8);
    mxp_array_free(mp);
    return st == MXP_OK ? mxpy_unwrap(out) : mxpy_raise(st);
}

/* _pack(a) -> uint8 (..., packed_bytes(n)): the sub-byte elements of each
 * row (the last axis, n elements) packed by mxp_pack; _unpack(packed, dtype,
 * n) the inverse.  Rows start on whole bytes. */
static int rows_of(const char *fn, const mxp_array *a, mxp_dtype t, size_t *n, size_t *rows)
{
    if (!mxp_packed_bytes(t, 1)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: %s is not a sub-byte type (float4/float6, int4/uint4, int2/uint2, int1/uint1)", fn,
                     mxp_dtype_name(t));
        return -1;
    }
    const int nd = mxp_array_ndim(a);
    if (nd == 0) {
        PyErr_Format(PyExc_ValueError, "%s: a 0-d array has no last axis", fn);
        return -1;
    }
    *rows = 1;
    for (int d = 0; d < nd - 1; d++)
        *rows *= (size_t)mxp_array_shape(a)[d];
    *n = (size_t)mxp_array_shape(a)[nd - 1];
    return 0;
}

static PyObject *pack_rows(PyObject *self, PyObject *arg)
{
    (void)self;
    mxp_array *a = mxpy_wrap(arg, "pack: a", false), *c = NULL, *out = NULL;
    if (!a)
        return NULL;
    const mxp_dtype t = mxp_array_dtype(a);
    const int nd = mxp_array_ndim(a);
    size_t n = 0, rows = 0;
    if (rows_of("pack", a, t, &n, &rows) < 0) {
        mxp_array_free(a);
        return NULL;
    }
    int64_t shape[MXP_MAXDIMS];
    memcpy(shape, mxp_array_shape(a), (size_t)nd * sizeof shape[0]);
    shape[nd - 1] = (int64_t)mxp_packed_bytes(t, n);
    mxp_status st = mxp_array_ascontiguous(&c, a, 'C');
    if (st == MXP_OK)
        st = mxp_array_empty(&out, MXP_U8, nd, shape);
    if (st == MXP_OK && n) {
        const size_t pb = (size_t)shape[nd - 1];
        const uint8_t *src = mxp_array_data(c);
        uint8_t *dst = mxp_array_data(out);
        Py_BEGIN_ALLOW_THREADS
        for (size_t r = 0; r < rows && st == MXP_OK; r++)
            st = mxp_pack(dst + r * pb, src + r * n, t, n);
        Py_END_ALLOW_THREADS
    }
    mxp_array_free(c);
    mxp_array_free(a);
    if (st != MXP_OK) {
        mxp_array_free(out);
        return mxpy_raise(st);
    }
    return mxpy_unwrap(out);
}

static PyObject *unpack_rows(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *packed, *dtype_obj;
    long long n;
    if (!PyArg_ParseTuple(args, "OOL", &packed, &dtype_obj, &n))
        return NULL;
    const mxp_dtype t = mxpy_dtype_arg(dtype_obj, "unpack: dtype");
    if (t == MXP_DTYPE_INVALID)
        return NULL;
    if (n < 0)
        return PyErr_Format(PyExc_ValueError, "unpack: n is %lld, not a count", n);
    mxp_array *p = mxpy_wrap(packed, "unpack: packed", false), *c = NULL, *out = NULL;
    if (!p)
        return NULL;
    const int nd = mxp_array_ndim(p);
    size_t pb = 0, rows = 0;
    if (rows_of("unpack", p, t, &pb, &rows) < 0) {
        mxp_array_free(p);
        return NULL;
    }
    if (mxp_array_dtype(p) != MXP_U8 || pb != mxp_packed_bytes(t, (size_t)n)) {
        if (mxp_array_dtype(p) != MXP_U8)
            PyErr_Format(PyExc_TypeError, "unpack: packed is %s, not uint8", mxp_dtype_name(mxp_array_dtype(p)));
        else
            PyErr_Format(PyExc_ValueError, "unpack: rows of %zu bytes, but %lld elements of %s take %zu", pb, n,
                         mxp_dtype_name(t), mxp_packed_bytes(t, (size_t)n));
        mxp_array_free(p);
        return NULL;
    }
    int64_t shape[MXP_MAXDIMS];
    memcpy(shape, mxp_array_shape(p), (size_t)nd * sizeof shape[0]);
    shape[nd - 1] = n;
    mxp_status st = mxp_array_ascontiguous(&c, p, 'C');
    if (st == MXP_OK)
        st = mxp_array_empty(&out, t, nd, shape);
    if (st == MXP_OK && n) {
        const uint8_t *src = mxp_array_data(c);
        uint8_t *dst = mxp_array_data(out);
        Py_BEGIN_ALLOW_THREADS
        for (size_t r = 0; r < rows && st == MXP_OK; r++)
            st = mxp_unpack(dst + r * (size_t)n, src + r * pb, t, (size_t)n);
        Py_END_ALLOW_THREADS
    }
    mxp_array_free(c);
    mxp_array_free(p);
    if (st != MXP_OK) {
        mxp_array_free(out);
        return mxpy_raise(st);
    }
    return mxpy_unwrap(out);
}

/* ---- observers ------------------------------------------------------------ */

/* _observer_new(kind, qtype, symmetric, axis, momentum, percentile, group_size, bins) -> capsule */
static PyObject *observer_new(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kw[] = { "kind", "qtype", "symmetric", "axis", "momentum", "percentile", "group_size", "bins", NULL };
    int kind, symmetric, axis, bins;
    const char *qtype;
    double momentum, percentile;
    long long group;
    mxp_dtype qt;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "ispiddLi", kw, &kind, &qtype, &symmetric, &axis, &momentum,
                                     &percentile, &group, &bins) ||
        qtype_from_name(qtype, &qt) < 0)
        return NULL;
    mxp_observer_opts o = { .momentum = momentum, .percentile = percentile, .group_size = group, .bins = bins };
    mxp_observer *obs = NULL;
    mxp_status st = mxp_observer_create(&obs, (mxp_calib_kind)kind, qt, symmetric, axis, &o);
    return mxpy_capsule_new(st, obs, &mxpy_kind_observer);
}

static mxp_observer *observer_of(PyObject *cap)
{
    return mxpy_capsule_get(cap, &mxpy_kind_observer);
}

static PyObject *observer_update(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap, *batch;
    if (!PyArg_ParseTuple(args, "OO", &cap, &batch))
        return NULL;
    mxp_observer *obs = observer_of(cap);
    mxp_array *mb = obs ? mxpy_wrap(batch, "update: batch", false) : NULL;
    if (!mb)
        return NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_observer_update(obs, mb);
    Py_END_ALLOW_THREADS
    mxp_array_free(mb);
    return mxpy_none(st);
}

static PyObject *observer_compute(PyObject *self, PyObject *cap)
{
    (void)self;
    mxp_observer *obs = observer_of(cap);
    if (!obs)
        return NULL;
    mxp_qparams qp;
    memset(&qp, 0, sizeof qp);
    mxp_status st = mxp_observer_compute(obs, &qp);
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyObject *r = qparams_tuple(&qp);
    mxp_qparams_free(&qp);
    return r;
}

/* _histogram_abs(x, hmax, bins) -> float64[bins]: counts of x's finite |values| */
static PyObject *histogram_abs(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *x;
    double hmax;
    int bins;
    if (!PyArg_ParseTuple(args, "Odi", &x, &hmax, &bins))
        return NULL;
    if (bins < 1)
        return PyErr_Format(PyExc_ValueError, "histogram: bins %d must be >= 1", bins);
    npy_intp n = bins;
    PyObject *counts = PyArray_ZEROS(1, &n, NPY_FLOAT64, 0);
    mxp_array *mx = counts ? mxpy_wrap(x, "histogram: x", false) : NULL;
    if (!mx) {
        Py_XDECREF(counts);
        return NULL;
    }
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_histogram_abs(mx, hmax, bins, PyArray_DATA((PyArrayObject *)counts));
    Py_END_ALLOW_THREADS
    mxp_array_free(mx);
    if (st != MXP_OK) {
        Py_DECREF(counts);
        return mxpy_raise(st);
    }
    return counts;
}

/* _observer_from_histogram(kind, qtype, symmetric, percentile, counts float64[bins], hmax, lo, hi)
 * -> qparams tuple */
static PyObject *observer_from_histogram(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kw[] = { "kind", "qtype", "symmetric", "percentile", "counts", "hmax", "lo", "hi", NULL };
    int kind, symmetric;
    const char *qtype;
    double percentile, hmax, lo, hi;
    PyObject *counts;
    mxp_dtype qt;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "ispdOddd", kw, &kind, &qtype, &symmetric, &percentile, &counts,
                                     &hmax, &lo, &hi) ||
        qtype_from_name(qtype, &qt) < 0)
        return NULL;
    if (!PyArray_Check(counts) || PyArray_TYPE((PyArrayObject *)counts) != NPY_FLOAT64 ||
        PyArray_NDIM((PyArrayObject *)counts) != 1 || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)counts) ||
        PyArray_SIZE((PyArrayObject *)counts) < 1 || PyArray_SIZE((PyArrayObject *)counts) > (1 << 30))
        return PyErr_Format(PyExc_TypeError, "observer: counts must be a contiguous 1-d float64 array");
    mxp_observer_opts o = { .percentile = percentile, .bins = (int)PyArray_SIZE((PyArrayObject *)counts) };
    mxp_qparams qp;
    memset(&qp, 0, sizeof qp);
    mxp_status st = mxp_observer_qparams_from_histogram(&qp, (mxp_calib_kind)kind, qt, symmetric, &o,
                                                        PyArray_DATA((PyArrayObject *)counts), hmax, lo, hi);
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyObject *r = qparams_tuple(&qp);
    mxp_qparams_free(&qp);
    return r;
}

/* ---- OCP MX blocks ---------------------------------------------------------- */

/* _mx_quantize(x float32 contiguous, format, rounding, seed) -> uint8 bytes */
static PyObject *mx_quantize(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *x;
    int fmt;
    const char *rounding;
    unsigned long long seed;
    mxp_convert_opts o;
    if (!PyArg_ParseTuple(args, "OisK", &x, &fmt, &rounding, &seed) || mxpy_convert_opts(rounding, "inf", seed, &o) < 0)
        return NULL;
    if (!PyArray_Check(x) || PyArray_TYPE((PyArrayObject *)x) != NPY_FLOAT32 ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)x))
        return PyErr_Format(PyExc_TypeError, "mx_quantize: expected a contiguous float32 array");
    size_t n = (size_t)PyArray_SIZE((PyArrayObject *)x);
    npy_intp nbytes = (npy_intp)mxp_mx_bytes((mxp_mx_format)fmt, n);
    PyObject *ax = mxpy_aligned(x); /* an unaligned x: an aligned copy */
    PyObject *out = ax ? PyArray_SimpleNew(1, &nbytes, NPY_UINT8) : NULL;
    if (!out) {
        Py_XDECREF(ax);
        return NULL;
    }
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_mx_quantize(PyArray_DATA((PyArrayObject *)out), (mxp_mx_format)fmt, PyArray_DATA((PyArrayObject *)ax), n,
                         &o);
    Py_END_ALLOW_THREADS
    Py_DECREF(ax);
    if (st != MXP_OK) {
        Py_DECREF(out);
        return mxpy_raise(st);
    }
    return out;
}

/* _mx_dequantize(bytes uint8 contiguous, format, n) -> float32[n] */
static PyObject *mx_dequantize(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *b;
    int fmt;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "Oin", &b, &fmt, &n))
        return NULL;
    if (!PyArray_Check(b) || PyArray_TYPE((PyArrayObject *)b) != NPY_UINT8 ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)b) || n < 0)
        return PyErr_Format(PyExc_TypeError, "mx_dequantize: expected contiguous uint8 bytes and n >= 0");
    if ((size_t)PyArray_NBYTES((PyArrayObject *)b) < mxp_mx_bytes((mxp_mx_format)fmt, (size_t)n))
        return PyErr_Format(PyExc_ValueError, "mx_dequantize: %zd bytes hold fewer than %zd elements",
                            (Py_ssize_t)PyArray_NBYTES((PyArrayObject *)b), n);
    npy_intp dim = n;
    PyObject *out = PyArray_SimpleNew(1, &dim, NPY_FLOAT32);
    if (!out)
        return NULL;
    mxp_status st = mxp_mx_dequantize(PyArray_DATA((PyArrayObject *)out), PyArray_DATA((PyArrayObject *)b),
                                      (mxp_mx_format)fmt, (size_t)n);
    if (st != MXP_OK) {
        Py_DECREF(out);
        return mxpy_raise(st);
    }
    return out;
}

/* _qtensor_prepacked(w_codes, w_qparams) -> capsule: an mxp_qtensor
 * viewing the weight's codes (the array kept alive by the view), kept
 * packed for mxp_qlinear (mxp_qtensor_prepack) */
static PyObject *qtensor_prepacked(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *wcodes, *wqt;
    mxp_qparams wqp;
    if (!PyArg_ParseTuple(args, "OO", &wcodes, &wqt) || qparams_from_tuple(wqt, &wqp) < 0)
        return NULL;
    mxp_array *mw = mxpy_wrap_ex(wcodes, "QuantizedTensor.prepack: codes", MXPY_KEEP_READ, NULL);
    if (!mw)
        return NULL;
    mxp_qtensor *w = NULL;
    mxp_status st = mxp_qtensor_create(&w, mw, &wqp);
    if (st == MXP_OK)
        st = mxp_qtensor_prepack(w);
    mxp_array_free(mw); /* the qtensor holds its own view */
    if (st != MXP_OK) {
        mxp_qtensor_free(w);
        return mxpy_raise(st);
    }
    return mxpy_capsule_new(MXP_OK, w, &mxpy_kind_qtensor);
}

/* _qlinear(x, w_codes, w_qparams, bias or None, out_dtype, x_qparams or None,
 * reduce_range=False, packed=None) -> y: mxp_qlinear (reduce_range:
 * mxp_qlinear_reduce_range) on a quantized tensor viewing the weight's
 * codes, or on packed (a _qtensor_prepacked capsule of the same weight) */
static PyObject *qlinear(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kw[] = { "x", "w_codes", "w_qparams", "bias", "out_dtype", "x_qparams", "reduce_range", "packed",
                          NULL };
    PyObject *x, *wcodes, *wqt, *bias_obj, *dtype, *xqt, *packed = Py_None;
    int reduce_range = 0;
    mxp_qparams wqp, xqp;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOO|pO", kw, &x, &wcodes, &wqt, &bias_obj, &dtype, &xqt,
                                     &reduce_range, &packed) ||
        qparams_from_tuple(wqt, &wqp) < 0 || (xqt != Py_None && qparams_from_tuple(xqt, &xqp) < 0))
        return NULL;
    mxp_dtype dt = mxpy_dtype_arg(dtype, "qlinear: out_dtype");
    if (!dt)
        return NULL;
    mxp_qtensor *kept = NULL;
    if (packed != Py_None && !(kept = mxpy_capsule_get(packed, &mxpy_kind_qtensor)))
        return NULL;
    mxp_array *mx = mxpy_wrap(x, "qlinear: x", false);
    mxp_array *mw = mx && !kept ? mxpy_wrap(wcodes, "qlinear: weight codes", false) : NULL;
    const bool have_w = kept || mw;
    mxp_array *mb = have_w && bias_obj != Py_None ? mxpy_wrap(bias_obj, "qlinear: bias", false) : NULL;
    mxp_array *y = NULL;
    mxp_qtensor *w = NULL;
    mxp_status st = MXP_OK;
    const bool wrapped = mx && have_w && (bias_obj == Py_None || mb);
    if (wrapped) {
        Py_BEGIN_ALLOW_THREADS
        if (!kept)
            st = mxp_qtensor_create(&w, mw, &wqp);
        if (st == MXP_OK)
            st = (reduce_range ? mxp_qlinear_reduce_range : mxp_qlinear)(&y, mx, kept ? kept : w, mb, dt,
                                                                          xqt != Py_None ? &xqp : NULL);
        Py_END_ALLOW_THREADS
    }
    mxp_qtensor_free(w);
    mxp_array_free(mx);
    mxp_array_free(mw);
    mxp_array_free(mb);
    if (!wrapped)
        return NULL;
    return st == MXP_OK ? mxpy_unwrap(y) : mxpy_raise(st);
}

/* _qmatmul_scales(a_scale, b_scales) -> float32 array: mxp_qmatmul_scales
 * (float32(a_scale * b_scales[j]), a float result's scales) */
static PyObject *qmatmul_scales(PyObject *self, PyObject *args)
{
    (void)self;
    float a_scale;
    PyObject *obj;
    if (!PyArg_ParseTuple(args, "fO", &a_scale, &obj))
        return NULL;
    PyArrayObject *b = (PyArrayObject *)PyArray_FROMANY(obj, NPY_FLOAT32, 1, 1, NPY_ARRAY_CARRAY_RO);
    if (!b)
        return NULL;
    npy_intp n = PyArray_DIM(b, 0);
    PyObject *out = PyArray_SimpleNew(1, &n, NPY_FLOAT32);
    mxp_status st = out ? mxp_qmatmul_scales(PyArray_DATA((PyArrayObject *)out), a_scale, PyArray_DATA(b), (size_t)n,
                                             1.0)
                        : MXP_OK;
    Py_DECREF(b);
    if (st != MXP_OK) {
        Py_XDECREF(out);
        return mxpy_raise(st);
    }
    return out;
}

/* _quantize_rows(x, qtype, symmetric, col_scale or None, out or None) ->
 * (codes, scales float32[rows], zero_points int32[rows]): mxp_quantize_rows,
 * into out when given (the code dtype, x's shape) */
static PyObject *quantize_rows(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *x, *cs_obj, *out_obj;
    const char *qtype;
    int symmetric;
    mxp_dtype qt;
    if (!PyArg_ParseTuple(args, "OspOO", &x, &qtype, &symmetric, &cs_obj, &out_obj) ||
        qtype_from_name(qtype, &qt) < 0)
        return NULL;
    if (!PyArray_Check(x)) {
        PyErr_SetString(PyExc_TypeError, "quantize_rows: x must be a NumPy array");
        return NULL;
    }
    PyArrayObject *xa = (PyArrayObject *)x;
    const npy_intp rows = PyArray_NDIM(xa) > 0 ? PyArray_DIM(xa, 0) : 0;
    const npy_intp cols = PyArray_NDIM(xa) > 1 ? PyArray_DIM(xa, 1) : 0;
    PyArrayObject *cs = NULL;
    if (cs_obj != Py_None) {
        cs = (PyArrayObject *)PyArray_FROMANY(cs_obj, NPY_FLOAT32, 1, 1, NPY_ARRAY_IN_ARRAY);
        if (!cs)
            return NULL;
        if (PyArray_SIZE(cs) != cols) {
            PyErr_Format(PyExc_ValueError, "quantize_rows: col_scale has %zd values for %zd columns",
                         (Py_ssize_t)PyArray_SIZE(cs), (Py_ssize_t)cols);
            Py_DECREF(cs);
            return NULL;
        }
    }
    const mxp_dtype code = mxp_qtype_code_dtype(qt);
    PyObject *codes = out_obj;
    if (codes == Py_None)
        codes = PyArray_SimpleNew(PyArray_NDIM(xa), PyArray_DIMS(xa), code == MXP_S8 ? NPY_INT8 : NPY_UINT8);
    else
        Py_INCREF(codes);
    PyObject *scales = PyArray_SimpleNew(1, (npy_intp *)&rows, NPY_FLOAT32);
    PyObject *zps = PyArray_SimpleNew(1, (npy_intp *)&rows, NPY_INT32);
    PyObject *tmp = NULL;
    mxp_array *mx = codes && scales && zps ? mxpy_wrap(x, "quantize_rows: x", false) : NULL;
    mxp_array *into = mx ? mxpy_wrap_ex(codes, "quantize_rows: out", MXPY_WRITE, &tmp) : NULL;
    mxp_status st = MXP_ERR_NO_MEMORY; /* a Python exception is set when into is NULL */
    if (into) {
        const float *col_scale = cs ? PyArray_DATA(cs) : NULL;
        float *sp = PyArray_DATA((PyArrayObject *)scales);
        int32_t *zp = PyArray_DATA((PyArrayObject *)zps);
        Py_BEGIN_ALLOW_THREADS
        st = mxp_quantize_rows(into, sp, zp, mx, col_scale, qt, symmetric);
        Py_END_ALLOW_THREADS
    }
    mxp_array_free(mx);
    Py_XDECREF(cs);
    if (into && st != MXP_OK) {
        Py_XDECREF(tmp);
        mxpy_raise(st);
    }
    if (!into || st != MXP_OK || mxpy_copy_back(codes, tmp) < 0) {
        mxp_array_free(into);
        Py_XDECREF(codes);
        Py_XDECREF(scales);
        Py_XDECREF(zps);
        return NULL;
    }
    mxp_array_free(into);
    return Py_BuildValue("(NNN)", codes, scales, zps);
}

PyMethodDef mxpy_quant_methods[] = {
    { "_quantize_rows", quantize_rows, METH_VARARGS, NULL },
    { "_qmatmul_scales", qmatmul_scales, METH_VARARGS, NULL },
    { "_qlinear", (PyCFunction)(void (*)(void))qlinear, METH_VARARGS | METH_KEYWORDS, NULL },
    { "_qtensor_prepacked", qtensor_prepacked, METH_VARARGS, NULL },
    { "_calibrate", calibrate, METH_VARARGS, NULL },
    { "_quantize", (PyCFunction)(void (*)(void))quantize, METH_VARARGS | METH_KEYWORDS, NULL },
    { "_dequantize", dequantize, METH_VARARGS, NULL },
    { "_pack_int4", pack_int4, METH_O, NULL },
    { "_unpack_int4", unpack_int4, METH_VARARGS, NULL },
    { "_pack", pack_rows, METH_O, NULL },
    { "_unpack", unpack_rows, METH_VARARGS, NULL },
    { "_observer_new", (PyCFunction)(void (*)(void))observer_new, METH_VARARGS | METH_KEYWORDS, NULL },
    { "_observer_update", observer_update, METH_VARARGS, NULL },
    { "_observer_compute", observer_compute, METH_O, NULL },
    { "_histogram_abs", histogram_abs, METH_VARARGS, NULL },
    { "_observer_from_histogram", (PyCFunction)(void (*)(void))observer_from_histogram,
      METH_VARARGS | METH_KEYWORDS, NULL },
    { "_mx_quantize", mx_quantize, METH_VARARGS, NULL },
    { "_mx_dequantize", mx_dequantize, METH_VARARGS, NULL },
    { NULL, NULL, 0, NULL },
};

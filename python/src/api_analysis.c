/* Module functions: precision analysis (mxp_compare, round trips per dtype,
 * the dtype advisor), their C structs turned into dicts. */
#include <string.h>

#include "mxpy.h"

static PyObject *report_dict(const mxp_compare_report *r)
{
    npy_intp nb = MXP_COMPARE_BINS, ne = MXP_COMPARE_BINS + 1;
    PyObject *hist = PyArray_SimpleNew(1, &nb, NPY_INT64), *edges = PyArray_SimpleNew(1, &ne, NPY_FLOAT64);
    if (!hist || !edges) {
        Py_XDECREF(hist);
        Py_XDECREF(edges);
        return NULL;
    }
    memcpy(PyArray_DATA((PyArrayObject *)hist), r->histogram, sizeof r->histogram);
    memcpy(PyArray_DATA((PyArrayObject *)edges), r->histogram_edges, sizeof r->histogram_edges);
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:L,s:L,s:L,s:L,s:N,s:N}",
                         "max_abs_error", r->max_abs_error, "max_rel_error", r->max_rel_error, "mean_rel_error",
                         r->mean_rel_error, "p50_rel_error", r->p50_rel_error, "p90_rel_error", r->p90_rel_error,
                         "p99_rel_error", r->p99_rel_error, "p999_rel_error", r->p999_rel_error, "mse", r->mse,
                         "rmse", r->rmse, "psnr_db", r->psnr_db, "snr_db", r->snr_db, "cosine_similarity",
                         r->cosine_similarity, "max_ulp", r->max_ulp, "mean_ulp", r->mean_ulp, "worst_index",
                         (long long)r->worst_index, "nan_mismatches", (long long)r->nan_mismatches, "inf_mismatches",
                         (long long)r->inf_mismatches, "count", (long long)r->count, "histogram", hist,
                         "histogram_edges", edges);
}

static PyObject *row_dict(const mxp_roundtrip_row *row)
{
    PyObject *rep = report_dict(&row->report);
    if (!rep)
        return NULL;
    return Py_BuildValue("{s:s,s:n,s:L,s:L,s:L,s:L,s:N}", "dtype", mxp_dtype_name(row->dtype), "bytes",
                         (Py_ssize_t)row->bytes, "overflow", (long long)row->overflow, "underflow_to_zero",
                         (long long)row->underflow_to_zero, "subnormal", (long long)row->subnormal, "nan",
                         (long long)row->nan, "report", rep);
}

/* _compare(reference, test) -> dict */
static PyObject *compare(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *ref, *test;
    if (!PyArg_ParseTuple(args, "OO", &ref, &test))
        return NULL;
    mxp_array *mr = mxpy_wrap(ref, "compare: reference", false);
    mxp_array *mt = mr ? mxpy_wrap(test, "compare: test", false) : NULL;
    mxp_compare_report r = { 0 };
    mxp_status st = MXP_OK;
    if (mt) {
        Py_BEGIN_ALLOW_THREADS
        st = mxp_compare(mr, mt, &r);
        Py_END_ALLOW_THREADS
    }
    mxp_array_free(mr);
    mxp_array_free(mt);
    if (!mt)
        return NULL;
    return st == MXP_OK ? report_dict(&r) : mxpy_raise(st);
}

static PyObject *sums_tuple(const mxp_compare_sums *s)
{
    return Py_BuildValue("(ddddddd)", s->rel, s->ulp, s->sq, s->ref2, s->test2, s->dot, s->max_ref);
}

/* _compare_piece(reference, test, want_rel) -> (dict without percentiles, sums tuple, relative errors or None):
 * sums (rel, ulp, sq, ref2, test2, dot, max_ref); the relative errors of the finite pairs, float64, in C order */
static PyObject *compare_piece(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *ref, *test, *rel = NULL;
    int want_rel;
    if (!PyArg_ParseTuple(args, "OOp", &ref, &test, &want_rel))
        return NULL;
    mxp_array *mr = mxpy_wrap(ref, "compare: reference", false);
    mxp_array *mt = mr ? mxpy_wrap(test, "compare: test", false) : NULL;
    if (mt && want_rel) {
        npy_intp n = (npy_intp)mxp_array_size(mr);
        rel = PyArray_SimpleNew(1, &n, NPY_FLOAT64);
    }
    mxp_compare_report r = { 0 };
    mxp_compare_sums sums;
    mxp_status st = MXP_OK;
    if (mt && (rel || !want_rel)) {
        double *out = rel ? PyArray_DATA((PyArrayObject *)rel) : NULL;
        Py_BEGIN_ALLOW_THREADS
        st = mxp_compare_piece(mr, mt, &r, &sums, out);
        Py_END_ALLOW_THREADS
    }
    mxp_array_free(mr);
    mxp_array_free(mt);
    if (!mt || (want_rel && !rel))
        return NULL;
    if (st != MXP_OK) {
        Py_XDECREF(rel);
        return mxpy_raise(st);
    }
    if (rel) { /* only the finite pairs' errors were written */
        PyObject *head = PySequence_GetSlice(rel, 0, (Py_ssize_t)r.count);
        Py_DECREF(rel);
        if (!head)
            return NULL;
        rel = head;
    } else {
        Py_INCREF(Py_None);
        rel = Py_None;
    }
    return Py_BuildValue("(NNN)", report_dict(&r), sums_tuple(&sums), rel);
}

/* _compare_finish(count, sums tuple, mismatches=0) -> dict of the means and
 * ratios mxp_compare_finish sets (mismatches: NaN + inf mismatches) */
static PyObject *compare_finish(PyObject *self, PyObject *args)
{
    (void)self;
    long long count, mismatches = 0;
    mxp_compare_sums s;
    if (!PyArg_ParseTuple(args, "L(ddddddd)|L", &count, &s.rel, &s.ulp, &s.sq, &s.ref2, &s.test2, &s.dot, &s.max_ref,
                          &mismatches))
        return NULL;
    mxp_compare_report r = { 0 };
    memset(&r, 0, sizeof r);
    r.count = count;
    r.nan_mismatches = mismatches;
    mxp_compare_finish(&r, &s);
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d,s:d,s:d}", "mean_rel_error", r.mean_rel_error, "mean_ulp", r.mean_ulp,
                         "mse", r.mse, "rmse", r.rmse, "psnr_db", r.psnr_db, "snr_db", r.snr_db, "cosine_similarity",
                         r.cosine_similarity);
}

/* _roundtrip(x, [dtype, ...]) -> [dict, ...] */
static PyObject *roundtrip(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *x, *list;
    if (!PyArg_ParseTuple(args, "OO!", &x, &PyList_Type, &list))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(list);
    if (n < 1 || n > 64)
        return PyErr_Format(PyExc_ValueError, "roundtrip: 1 to 64 dtypes, not %zd", n);
    mxp_dtype dts[64];
    for (Py_ssize_t i = 0; i < n; i++)
        if (!(dts[i] = mxpy_dtype_arg(PyList_GET_ITEM(list, i), "roundtrip: dtypes")))
            return NULL;
    mxp_roundtrip_row *rows = PyMem_Calloc((size_t)n, sizeof *rows);
    mxp_array *mx = rows ? mxpy_wrap(x, "roundtrip: x", false) : NULL;
    if (!mx) {
        PyMem_Free(rows);
        return rows ? NULL : PyErr_NoMemory();
    }
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_roundtrip_analysis(mx, dts, (int)n, rows);
    Py_END_ALLOW_THREADS
    mxp_array_free(mx);
    PyObject *out = st == MXP_OK ? PyList_New(n) : mxpy_raise(st);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *d = row_dict(&rows[i]);
        if (!d)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, d);
    }
    PyMem_Free(rows);
    return out;
}

/* _recommend(x, kind, value) -> dict (dtype, reason, row); kind: 0 max_rel_error, 1 min_psnr, 2 no_overflow */
static PyObject *recommend(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *x;
    int kind;
    double value;
    if (!PyArg_ParseTuple(args, "Oid", &x, &kind, &value))
        return NULL;
    mxp_array *mx = mxpy_wrap(x, "recommend_dtype: x", false);
    if (!mx)
        return NULL;
    mxp_requirement req = { (mxp_requirement_kind)kind, value };
    mxp_advice adv = { 0 };
    memset(&adv, 0, sizeof adv);
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_recommend_dtype(mx, &req, &adv);
    Py_END_ALLOW_THREADS
    mxp_array_free(mx);
    if (st != MXP_OK)
        return mxpy_raise(st);
    return Py_BuildValue("{s:s,s:s,s:N}", "dtype", mxp_dtype_name(adv.dtype), "reason", adv.reason, "row",
                         row_dict(&adv.row));
}

PyMethodDef mxpy_analysis_methods[] = {
    { "_compare", compare, METH_VARARGS, NULL },
    { "_compare_piece", compare_piece, METH_VARARGS, NULL },
    { "_compare_finish", compare_finish, METH_VARARGS, NULL },
    { "_roundtrip", roundtrip, METH_VARARGS, NULL },
    { "_recommend", recommend, METH_VARARGS, NULL },
    { NULL, NULL, 0, NULL },
};

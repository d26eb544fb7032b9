/* Module functions: precision analysis (mxp_compare, round trips per dtype,
 * the dtype advisor), their C structs turned into dicts. */
#include <stddef.h>
#include <string.h>

#include "mxpy.h"

/* The report's numbers as the dict's keys, in the struct's order ('d': a
 * double, 'L': an int64); the histogram and its edges follow as arrays. */
static const struct {
    const char *name;
    size_t offset;
    char kind;
} report_fields[] = {
#define D(f) { #f, offsetof(mxp_compare_report, f), 'd' }
#define L(f) { #f, offsetof(mxp_compare_report, f), 'L' }
    D(max_abs_error), D(max_rel_error), D(mean_rel_error), D(p50_rel_error), D(p90_rel_error), D(p99_rel_error),
    D(p999_rel_error), D(mse), D(rmse), D(psnr_db), D(snr_db), D(cosine_similarity), D(max_ulp), D(mean_ulp),
    L(worst_index), L(nan_mismatches), L(inf_mismatches), L(count),
#undef D
#undef L
};
enum { NFIELDS = sizeof report_fields / sizeof report_fields[0] };

static PyObject *report_dict(const mxp_compare_report *r)
{
    npy_intp nb = MXP_COMPARE_BINS, ne = MXP_COMPARE_BINS + 1;
    PyObject *d = PyDict_New();
    PyObject *hist = PyArray_SimpleNew(1, &nb, NPY_INT64), *edges = PyArray_SimpleNew(1, &ne, NPY_FLOAT64);
    bool ok = d && hist && edges;
    for (int i = 0; ok && i < NFIELDS; i++) {
        const char *at = (const char *)r + report_fields[i].offset;
        PyObject *v = report_fields[i].kind == 'd' ? PyFloat_FromDouble(*(const double *)(const void *)at)
                                                   : PyLong_FromLongLong(*(const int64_t *)(const void *)at);
        ok = v && PyDict_SetItemString(d, report_fields[i].name, v) == 0;
        Py_XDECREF(v);
    }
    if (ok) {
        memcpy(PyArray_DATA((PyArrayObject *)hist), r->histogram, sizeof r->histogram);
        memcpy(PyArray_DATA((PyArrayObject *)edges), r->histogram_edges, sizeof r->histogram_edges);
        ok = PyDict_SetItemString(d, "histogram", hist) == 0 && PyDict_SetItemString(d, "histogram_edges", edges) == 0;
    }
    Py_XDECREF(hist);
    Py_XDECREF(edges);
    if (!ok)
        Py_CLEAR(d);
    return d;
}

/* The inverse of report_dict (a piece's report, back from a worker). */
static int report_from_dict(PyObject *d, mxp_compare_report *r)
{
    memset(r, 0, sizeof *r);
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_TypeError, "compare: a report must be a dict");
        return -1;
    }
    for (int i = 0; i < NFIELDS; i++) {
        PyObject *v = PyDict_GetItemString(d, report_fields[i].name);
        char *at = (char *)r + report_fields[i].offset;
        if (!v)
            return PyErr_Format(PyExc_KeyError, "compare: the report lacks %s", report_fields[i].name), -1;
        if (report_fields[i].kind == 'd')
            *(double *)(void *)at = PyFloat_AsDouble(v);
        else
            *(int64_t *)(void *)at = PyLong_AsLongLong(v);
        if (PyErr_Occurred())
            return -1;
    }
    static const char *const arrays[2] = { "histogram", "histogram_edges" };
    void *dst[2] = { r->histogram, r->histogram_edges };
    const int types[2] = { NPY_INT64, NPY_FLOAT64 };
    const size_t bytes[2] = { sizeof r->histogram, sizeof r->histogram_edges };
    for (int i = 0; i < 2; i++) {
        PyObject *v = PyDict_GetItemString(d, arrays[i]);
        PyArrayObject *a = v ? (PyArrayObject *)PyArray_FROMANY(v, types[i], 1, 1, NPY_ARRAY_CARRAY_RO) : NULL;
        if (!a)
            return v ? -1 : (PyErr_Format(PyExc_KeyError, "compare: the report lacks %s", arrays[i]), -1);
        if ((size_t)PyArray_NBYTES(a) != bytes[i]) {
            Py_DECREF(a);
            return PyErr_Format(PyExc_ValueError, "compare: the report's %s has the wrong length", arrays[i]), -1;
        }
        memcpy(dst[i], PyArray_DATA(a), bytes[i]);
        Py_DECREF(a);
    }
    return 0;
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

/* ---- pieces merged (mxp.dask.compare) ----------------------------------- */

static int sums_from_tuple(PyObject *t, mxp_compare_sums *s)
{
    return PyArg_ParseTuple(t, "ddddddd", &s->rel, &s->ulp, &s->sq, &s->ref2, &s->test2, &s->dot, &s->max_ref) ? 0 : -1;
}

/* _compare_merge([(report, sums), ...]) -> (report, sums): mxp_compare_merge, left to right */
static PyObject *compare_merge(PyObject *self, PyObject *parts)
{
    (void)self;
    PyObject *seq = PySequence_Fast(parts, "compare: the pieces must be a sequence");
    if (!seq)
        return NULL;
    mxp_compare_report r = { 0 }, p = { 0 };
    mxp_compare_sums s, ps;
    int rc = PySequence_Fast_GET_SIZE(seq) > 0 ? 0 : -1;
    if (rc < 0)
        PyErr_SetString(PyExc_ValueError, "compare: no pieces to merge");
    for (Py_ssize_t i = 0; rc == 0 && i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *rep, *sums;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "OO", &rep, &sums) ||
            report_from_dict(rep, i ? &p : &r) < 0 || sums_from_tuple(sums, i ? &ps : &s) < 0)
            rc = -1;
        else if (i && mxp_compare_merge(&r, &s, &p, &ps) != MXP_OK)
            rc = (mxpy_raise(MXP_ERR_INVALID_ARGUMENT), -1);
    }
    Py_DECREF(seq);
    return rc < 0 ? NULL : Py_BuildValue("(NN)", report_dict(&r), sums_tuple(&s));
}

/* A buckets array: (n, 4) uint64, the rows mxp_compare_bucket's fields. */
_Static_assert(sizeof(mxp_compare_bucket) == 4 * sizeof(uint64_t), "mxp_compare_bucket is four uint64");

static PyObject *buckets_array(mxp_compare_bucket *b, size_t n)
{
    npy_intp dims[2] = { (npy_intp)n, 4 };
    PyObject *a = PyArray_SimpleNew(2, dims, NPY_UINT64);
    if (a && n)
        memcpy(PyArray_DATA((PyArrayObject *)a), b, n * sizeof *b);
    mxp_free(b);
    return a;
}

static PyArrayObject *buckets_arg(PyObject *obj)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, NPY_UINT64, 2, 2, NPY_ARRAY_CARRAY_RO);
    if (a && PyArray_DIM(a, 1) != 4) {
        PyErr_SetString(PyExc_ValueError, "compare: buckets must be an (n, 4) uint64 array");
        Py_CLEAR(a);
    }
    return a;
}

/* _compare_buckets(errors, prefix, prefix_shift, shift) -> (n, 4) uint64 */
static PyObject *compare_buckets(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *obj;
    unsigned long long prefix;
    int pshift, shift;
    if (!PyArg_ParseTuple(args, "OKii", &obj, &prefix, &pshift, &shift))
        return NULL;
    PyArrayObject *e = (PyArrayObject *)PyArray_FROMANY(obj, NPY_FLOAT64, 1, 1, NPY_ARRAY_CARRAY_RO);
    if (!e)
        return NULL;
    mxp_compare_bucket *b = NULL;
    size_t n = 0;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_compare_buckets(&b, &n, PyArray_DATA(e), (size_t)PyArray_SIZE(e), prefix, pshift, shift);
    Py_END_ALLOW_THREADS
    Py_DECREF(e);
    return st == MXP_OK ? buckets_array(b, n) : mxpy_raise(st);
}

/* _compare_buckets_merge([buckets, ...]) -> buckets: mxp_compare_buckets_merge, left to right */
static PyObject *compare_buckets_merge(PyObject *self, PyObject *parts)
{
    (void)self;
    PyObject *seq = PySequence_Fast(parts, "compare: the buckets must be a sequence");
    if (!seq)
        return NULL;
    mxp_compare_bucket *acc = NULL;
    size_t nacc = 0;
    mxp_status st = MXP_OK;
    for (Py_ssize_t i = 0; st == MXP_OK && i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyArrayObject *a = buckets_arg(PySequence_Fast_GET_ITEM(seq, i));
        if (!a) {
            mxp_free(acc);
            Py_DECREF(seq);
            return NULL;
        }
        mxp_compare_bucket *m = NULL;
        size_t nm = 0;
        st = mxp_compare_buckets_merge(&m, &nm, acc, nacc, PyArray_DATA(a), (size_t)PyArray_DIM(a, 0));
        Py_DECREF(a);
        mxp_free(acc);
        acc = m, nacc = nm;
    }
    Py_DECREF(seq);
    return st == MXP_OK ? buckets_array(acc, nacc) : mxpy_raise(st);
}

/* _compare_select(exact, collect) -> a capsule of mxp_compare_select */
static PyObject *compare_select(PyObject *self, PyObject *args)
{
    (void)self;
    int exact;
    long long collect;
    if (!PyArg_ParseTuple(args, "pL", &exact, &collect))
        return NULL;
    mxp_compare_select *s = NULL;
    mxp_status st = mxp_compare_select_create(&s, exact, collect);
    return mxpy_capsule_new(st, s, &mxpy_kind_compare_select);
}

static mxp_compare_select *select_arg(PyObject *cap)
{
    return mxpy_capsule_get(cap, &mxpy_kind_compare_select);
}

/* _compare_select_groups(select) -> ([(prefix, prefix_shift), ...], shift); [] when done */
static PyObject *compare_select_groups(PyObject *self, PyObject *cap)
{
    (void)self;
    mxp_compare_select *s = select_arg(cap);
    if (!s)
        return NULL;
    uint64_t prefix[8];
    int pshift[8], shift = 0;
    int n = mxp_compare_select_groups(s, prefix, pshift, &shift);
    PyObject *groups = PyList_New(n);
    for (int g = 0; groups && g < n; g++) {
        PyObject *t = Py_BuildValue("(Ki)", (unsigned long long)prefix[g], pshift[g]);
        if (!t)
            Py_CLEAR(groups);
        else
            PyList_SET_ITEM(groups, g, t);
    }
    return groups ? Py_BuildValue("(Ni)", groups, shift) : NULL;
}

/* _compare_select_step(select, [buckets of each group]) */
static PyObject *compare_select_step(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cap, *list;
    if (!PyArg_ParseTuple(args, "OO", &cap, &list))
        return NULL;
    mxp_compare_select *s = select_arg(cap);
    PyObject *seq = s ? PySequence_Fast(list, "compare: the groups' buckets must be a sequence") : NULL;
    if (!seq)
        return NULL;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyArrayObject *held[8] = { NULL };
    const mxp_compare_bucket *b[8];
    size_t nb[8];
    int rc = n == mxp_compare_select_groups(s, NULL, NULL, NULL) ? 0 : -1;
    if (rc < 0)
        PyErr_Format(PyExc_ValueError, "compare: %zd groups' buckets for a pass of %d", n,
                     mxp_compare_select_groups(s, NULL, NULL, NULL));
    for (Py_ssize_t g = 0; rc == 0 && g < n; g++) {
        held[g] = buckets_arg(PySequence_Fast_GET_ITEM(seq, g));
        rc = held[g] ? 0 : -1;
        if (held[g]) {
            b[g] = PyArray_DATA(held[g]);
            nb[g] = (size_t)PyArray_DIM(held[g], 0);
        }
    }
    mxp_status st = rc == 0 ? mxp_compare_select_step(s, b, nb) : MXP_OK;
    for (int g = 0; g < 8; g++)
        Py_XDECREF(held[g]);
    Py_DECREF(seq);
    if (rc < 0)
        return NULL;
    if (st != MXP_OK)
        return mxpy_raise(st);
    Py_RETURN_NONE;
}

/* _compare_report(report, sums, select) -> (report, (4 percentile bounds)):
 * the merged pieces' report with its means and ratios (mxp_compare_finish)
 * and percentiles (mxp_compare_select_finish) */
static PyObject *compare_report(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *rep, *sums, *cap;
    if (!PyArg_ParseTuple(args, "OOO", &rep, &sums, &cap))
        return NULL;
    mxp_compare_select *sel = select_arg(cap);
    mxp_compare_report r;
    mxp_compare_sums s;
    if (!sel || report_from_dict(rep, &r) < 0 || sums_from_tuple(sums, &s) < 0)
        return NULL;
    double bounds[4];
    mxp_status st = mxp_compare_select_finish(sel, &r, bounds);
    if (st != MXP_OK)
        return mxpy_raise(st);
    mxp_compare_finish(&r, &s);
    return Py_BuildValue("(N(dddd))", report_dict(&r), bounds[0], bounds[1], bounds[2], bounds[3]);
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

/* The advice for x (kind, value) among the n candidates dts, or n == 0:
 * mxp_recommend_dtype's six; as a dict (dtype, reason, row). */
static PyObject *advice_dict(PyObject *x, int kind, double value, const mxp_dtype *dts, int n)
{
    mxp_array *mx = mxpy_wrap(x, "recommend_dtype: x", false);
    if (!mx)
        return NULL;
    mxp_requirement req = { (mxp_requirement_kind)kind, value };
    mxp_advice adv;
    memset(&adv, 0, sizeof adv);
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = n ? mxp_recommend_dtype_among(mx, &req, dts, n, &adv, NULL) : mxp_recommend_dtype(mx, &req, &adv);
    Py_END_ALLOW_THREADS
    mxp_array_free(mx);
    if (st != MXP_OK)
        return mxpy_raise(st);
    return Py_BuildValue("{s:s,s:s,s:N}", "dtype", mxp_dtype_name(adv.dtype), "reason", adv.reason, "row",
                         row_dict(&adv.row));
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
    return advice_dict(x, kind, value, NULL, 0);
}

/* _recommend_among(x, kind, value, [dtype, ...]) -> dict as _recommend's
 * (mxp_recommend_dtype_among); no candidate meeting the requirement is
 * mxp's status, a ValueError with the sentence that names the closest */
static PyObject *recommend_among(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *x, *list;
    int kind;
    double value;
    if (!PyArg_ParseTuple(args, "OidO!", &x, &kind, &value, &PyList_Type, &list))
        return NULL;
    const Py_ssize_t n = PyList_GET_SIZE(list);
    if (n < 1 || n > MXP_ADVISOR_MAX_CANDIDATES)
        return PyErr_Format(PyExc_ValueError, "recommend_dtype: 1 to %d candidates, not %zd",
                            MXP_ADVISOR_MAX_CANDIDATES, n);
    mxp_dtype dts[MXP_ADVISOR_MAX_CANDIDATES];
    for (Py_ssize_t i = 0; i < n; i++)
        if (!(dts[i] = mxpy_dtype_arg(PyList_GET_ITEM(list, i), "recommend_dtype: candidates")))
            return NULL;
    return advice_dict(x, kind, value, dts, (int)n);
}

/* _advisor_candidates_all() -> (name, ...): mxp_advisor_candidates_all() */
static PyObject *advisor_candidates_all(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int n = 0;
    const mxp_dtype *all = mxp_advisor_candidates_all(&n);
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *name = PyUnicode_FromString(mxp_dtype_name(all[i]));
        if (!name)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, i, name);
    }
    return t;
}

PyMethodDef mxpy_analysis_methods[] = {
    { "_compare", compare, METH_VARARGS, NULL },
    { "_compare_piece", compare_piece, METH_VARARGS, NULL },
    { "_compare_merge", compare_merge, METH_O, NULL },
    { "_compare_buckets", compare_buckets, METH_VARARGS, NULL },
    { "_compare_buckets_merge", compare_buckets_merge, METH_O, NULL },
    { "_compare_select", compare_select, METH_VARARGS, NULL },
    { "_compare_select_groups", compare_select_groups, METH_O, NULL },
    { "_compare_select_step", compare_select_step, METH_VARARGS, NULL },
    { "_compare_report", compare_report, METH_VARARGS, NULL },
    { "_roundtrip", roundtrip, METH_VARARGS, NULL },
    { "_recommend", recommend, METH_VARARGS, NULL },
    { "_recommend_among", recommend_among, METH_VARARGS, NULL },
    { "_advisor_candidates_all", advisor_candidates_all, METH_NOARGS, NULL },
    { NULL, NULL, 0, NULL },
};

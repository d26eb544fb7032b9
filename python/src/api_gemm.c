/* Module functions: mxp.matmul and mxp.gemm / mxp.gemm_safe with the whole
 * epilogue (bias, activation, clamp, rounding), accumulator choice and the
 * integer GEMM's zero points and scales.  The Python layer (mxp/_api.py)
 * checks and normalises the arguments; this file maps them onto
 * mxp_gemm_opts and calls the library with the GIL released. */
#include <string.h>

#include "mxpy.h"


typedef struct gemm_args {
    PyObject *acc, *bias, *activation, *clamp, *scales, *a_zero_points, *a_scales;
    const char *rounding, *overflow;
    unsigned long long seed;
    int a_zp, b_zp, c_zp;
} gemm_args;

static int activation_from_name(PyObject *name, mxp_activation *act)
{
    const char *s = name == Py_None ? "none" : PyUnicode_AsUTF8(name);
    for (int i = 0; s && strcmp(mxp_activation_name((mxp_activation)i), "invalid"); i++)
        if (!strcmp(s, mxp_activation_name((mxp_activation)i))) {
            *act = (mxp_activation)i;
            return 0;
        }
    if (!PyErr_Occurred())
        mxpy_not_one_of("activation", s, "ACTIVATIONS");
    return -1;
}

/* A 1-d C-contiguous array argument (bias, scales) already made by the
 * Python layer; NULL pointer for None. */
static int vector_arg(PyObject *obj, const char *what, const void **data, mxp_dtype *dt, size_t *n)
{
    *data = NULL;
    *n = 0;
    if (obj == Py_None)
        return 0;
    if (!PyArray_Check(obj) || PyArray_NDIM((PyArrayObject *)obj) != 1 ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a 1-d contiguous array", what);
        return -1;
    }
    *dt = mxpy_dtype_from_typenum(PyArray_TYPE((PyArrayObject *)obj));
    *data = PyArray_DATA((PyArrayObject *)obj);
    *n = (size_t)PyArray_DIM((PyArrayObject *)obj, 0);
    return 0;
}

static int build_opts(const gemm_args *g, mxp_gemm_opts *o)
{
    memset(o, 0, sizeof *o);
    if (mxpy_convert_opts(g->rounding, g->overflow, g->seed, &o->convert) < 0)
        return -1;
    if (g->acc != Py_None && (o->acc_dtype = mxpy_dtype_arg(g->acc, "compute")) == MXP_DTYPE_INVALID)
        return -1;
    mxp_dtype bias_dt = MXP_F32, scale_dt = MXP_F32;
    size_t nbias;
    if (vector_arg(g->bias, "bias", &o->bias, &bias_dt, &nbias) < 0 ||
        vector_arg(g->scales, "scales", (const void **)&o->scales, &scale_dt, &o->n_scales) < 0 ||
        activation_from_name(g->activation, &o->activation) < 0)
        return -1;
    if (o->scales && scale_dt != MXP_F32) {
        PyErr_SetString(PyExc_TypeError, "scales: expected float32");
        return -1;
    }
    mxp_dtype zp_dt = MXP_S32, as_dt = MXP_F32;
    size_t nzp, nas;
    if (vector_arg(g->a_zero_points, "a_zero_points", (const void **)&o->a_zero_points, &zp_dt, &nzp) < 0 ||
        vector_arg(g->a_scales, "a_scales", (const void **)&o->a_scales, &as_dt, &nas) < 0)
        return -1;
    if ((o->a_zero_points && zp_dt != MXP_S32) || (o->a_scales && as_dt != MXP_F32)) {
        PyErr_SetString(PyExc_TypeError, "a_zero_points / a_scales: expected int32 / float32");
        return -1;
    }
    /* the fewer of the two: the library refuses fewer than m (mxp/_api.py checks m each; 0 values, for
       m = 0, read as "not given": m = 0 values) */
    o->a_rows_len = o->a_zero_points && o->a_scales ? (nzp < nas ? nzp : nas) : o->a_zero_points ? nzp : nas;
    o->bias_dtype = bias_dt;
    o->bias_kind = o->bias ? MXP_BIAS_PER_COL : MXP_BIAS_NONE;
    o->bias_len = nbias;
    if (g->clamp != Py_None) {
        o->clamp = true;
        if (!PyArg_ParseTuple(g->clamp, "dd", &o->clamp_lo, &o->clamp_hi))
            return -1;
    }
    o->a_zero_point = g->a_zp;
    o->b_zero_point = g->b_zp;
    o->c_zero_point = g->c_zp;
    return 0;
}

/* The options of _matmul and _gemm, keyword-only (mxp/_api.py's _gemm_args
 * names them), with mxp_gemm's defaults. */
#define GEMM_KEYWORDS "compute", "bias", "activation", "clamp", "scales", "rounding", "overflow", "seed", \
                      "a_zero_point", "b_zero_point", "c_zero_point", "a_zero_points", "a_scales"
#define GEMM_ARGS_FORMAT "OOOOOssKiiiOO"
#define GEMM_ARGS_PTRS(g) &g.acc, &g.bias, &g.activation, &g.clamp, &g.scales, &g.rounding, &g.overflow, &g.seed, \
                          &g.a_zp, &g.b_zp, &g.c_zp, &g.a_zero_points, &g.a_scales
#define GEMM_ARGS_DEFAULTS { Py_None, Py_None, Py_None, Py_None, Py_None, Py_None, Py_None, "nearest_even", "inf", \
                             0, 0, 0, 0 }

/* _matmul(a, b, out, *, <gemm options>) -> out */
static PyObject *matmul(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kw[] = { "a", "b", "out", GEMM_KEYWORDS, NULL };
    PyObject *a, *b, *out;
    gemm_args g = GEMM_ARGS_DEFAULTS;
    mxp_gemm_opts o;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|$" GEMM_ARGS_FORMAT ":_matmul", kw, &a, &b, &out,
                                     GEMM_ARGS_PTRS(g)) ||
        build_opts(&g, &o) < 0)
        return NULL;
    mxp_array *ma = mxpy_wrap(a, "matmul: a", false);
    mxp_array *mb = ma ? mxpy_wrap(b, "matmul: b", false) : NULL;
    PyObject *tmp = NULL; /* out unaligned: an aligned copy, copied back after */
    mxp_array *mo = mb ? mxpy_wrap_ex(out, "matmul: out", MXPY_WRITE, &tmp) : NULL;
    mxp_status st = MXP_OK;
    if (mo) {
        Py_BEGIN_ALLOW_THREADS
        st = mxp_matmul_into(mo, ma, mb, &o);
        Py_END_ALLOW_THREADS
    }
    mxp_array_free(ma);
    mxp_array_free(mb);
    mxp_array_free(mo);
    if (!mo)
        return NULL;
    if (st != MXP_OK) {
        Py_XDECREF(tmp);
        return mxpy_raise(st);
    }
    if (mxpy_copy_back(out, tmp) < 0)
        return NULL;
    Py_INCREF(out);
    return out;
}

/* A shape argument (a sequence of ints) into n and dims; -1 with an exception. */
static int shape_arg(PyObject *obj, int *n, int64_t *dims)
{
    PyObject *seq = PySequence_Fast(obj, "matmul: a shape must be a sequence");
    if (!seq)
        return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    int rc = len <= MXP_MAXDIMS ? 0 : -1;
    if (rc < 0)
        PyErr_Format(PyExc_ValueError, "matmul: %zd dimensions, mxp takes at most %d", len, MXP_MAXDIMS);
    for (Py_ssize_t i = 0; rc == 0 && i < len; i++) {
        dims[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        rc = dims[i] == -1 && PyErr_Occurred() ? -1 : 0;
    }
    *n = (int)len;
    Py_DECREF(seq);
    return rc;
}

/* _matmul_shape(shape_a, shape_b) -> the result's shape (mxp_matmul_shape) */
static PyObject *matmul_shape(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *sa, *sb;
    int64_t da[MXP_MAXDIMS], db[MXP_MAXDIMS], out[MXP_MAXDIMS];
    int na, nb, nd;
    if (!PyArg_ParseTuple(args, "OO", &sa, &sb) || shape_arg(sa, &na, da) < 0 || shape_arg(sb, &nb, db) < 0)
        return NULL;
    mxp_status st = mxp_matmul_shape(&nd, out, na, da, nb, db);
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyObject *t = PyTuple_New(nd);
    for (int i = 0; t && i < nd; i++) {
        PyObject *v = PyLong_FromLongLong(out[i]);
        if (!v)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

/* A 2-d array whose rows are contiguous: its leading dimension. */
/* A 2-d array whose rows mxp_gemm can take where they lie: contiguous,
 * apart (a row stride below the row's length, from broadcast or as_strided
 * views, would be read or written as separate rows) and in order. */
static bool rows_usable(PyArrayObject *x)
{
    npy_intp s = PyArray_ITEMSIZE(x);
    return PyArray_SIZE(x) == 0 ||
           !((PyArray_STRIDE(x, 1) != s && PyArray_DIM(x, 1) > 1) || PyArray_STRIDE(x, 0) % s ||
             PyArray_STRIDE(x, 0) < 0 || (PyArray_DIM(x, 0) > 1 && PyArray_STRIDE(x, 0) < PyArray_DIM(x, 1) * s));
}

/* An operand that is only read (a, b): itself, or a C-ordered copy when
 * its rows are not usable in place (a new reference). */
static PyObject *readable(PyObject *obj)
{
    if (PyArray_Check(obj) && PyArray_NDIM((PyArrayObject *)obj) == 2 && !rows_usable((PyArrayObject *)obj))
        return PyArray_NewCopy((PyArrayObject *)obj, NPY_CORDER);
    Py_INCREF(obj);
    return obj;
}

static int matrix_arg(PyObject *obj, const char *what, bool writeable, size_t *ld)
{
    if (!PyArray_Check(obj) || PyArray_NDIM((PyArrayObject *)obj) != 2) {
        PyErr_Format(PyExc_ValueError, "%s: expected a 2-d array", what);
        return -1;
    }
    PyArrayObject *x = (PyArrayObject *)obj;
    npy_intp s = PyArray_ITEMSIZE(x);
    if (!rows_usable(x) || (writeable && !PyArray_ISWRITEABLE(x))) {
        PyErr_Format(PyExc_ValueError, "%s: rows must be contiguous and apart, with a non-negative row stride%s",
                     what, writeable ? ", and the array writeable" : "");
        return -1;
    }
    npy_intp rs = PyArray_SIZE(x) > 0 ? PyArray_STRIDE(x, 0) / s : 0; /* an empty one: any stride */
    *ld = (size_t)(rs >= PyArray_DIM(x, 1) && rs > 0 ? rs : (PyArray_DIM(x, 1) > 0 ? PyArray_DIM(x, 1) : 1));
    return 0;
}

static PyObject *report_dict(const mxp_gemm_safe_report *r)
{
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d,s:O,s:s,s:i,s:s}", "max_abs_a", r->max_abs_a, "max_abs_b", r->max_abs_b,
                         "max_abs_c", r->max_abs_c, "bound", r->bound, "c_max", r->c_max, "at_risk",
                         r->at_risk ? Py_True : Py_False, "applied", mxp_overflow_strategy_name(r->applied), "scale_exponent",
                         r->scale_exponent, "what", r->what);
}

static int strategy_from_name(const char *s, mxp_overflow_strategy *out)
{
    for (int i = 0; strcmp(mxp_overflow_strategy_name((mxp_overflow_strategy)i), "invalid"); i++)
        if (!strcmp(s, mxp_overflow_strategy_name((mxp_overflow_strategy)i))) {
            *out = (mxp_overflow_strategy)i;
            return 0;
        }
    mxpy_not_one_of("strategy", s, "STRATEGIES");
    return -1;
}

static PyObject *gemm_call(int ta, int tb, double alpha, PyObject *a, PyObject *b, double beta, PyObject *c,
                           const mxp_gemm_opts *opts, PyObject *strategy, PyObject *promote, size_t ldp, size_t lda,
                           size_t ldb, size_t ldc);

static PyObject *gemm_checked(int ta, int tb, double alpha, PyObject *a, PyObject *b, double beta, PyObject *c,
                              const mxp_gemm_opts *opts, PyObject *strategy, PyObject *promote);

/* _gemm(a, b, c, *, trans_a, trans_b, alpha, beta, <gemm options>, strategy (None: mxp_gemm),
 * promote_to) -> None, or the gemm_safe report as a dict */
static PyObject *gemm(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kw[] = { "a", "b", "c", "trans_a", "trans_b", "alpha", "beta", GEMM_KEYWORDS, "strategy", "promote_to",
                          NULL };
    int ta = 0, tb = 0;
    double alpha = 1.0, beta = 0.0;
    PyObject *a0, *b0, *c, *strategy = Py_None, *promote = Py_None;
    gemm_args g = GEMM_ARGS_DEFAULTS;
    mxp_gemm_opts o;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|$ppdd" GEMM_ARGS_FORMAT "OO:_gemm", kw, &a0, &b0, &c, &ta, &tb,
                                     &alpha, &beta, GEMM_ARGS_PTRS(g), &strategy, &promote) ||
        build_opts(&g, &o) < 0)
        return NULL;
    PyObject *a = readable(a0), *b = a ? readable(b0) : NULL, *r = NULL;
    if (b)
        r = gemm_checked(ta, tb, alpha, a, b, beta, c, &o, strategy, promote);
    Py_XDECREF(a);
    Py_XDECREF(b);
    return r;
}

/* gemm after a and b are readable: c and promote_to checked, unaligned arrays aligned */
static PyObject *gemm_checked(int ta, int tb, double alpha, PyObject *a, PyObject *b, double beta, PyObject *c,
                              const mxp_gemm_opts *opts, PyObject *strategy, PyObject *promote)
{
    size_t lda, ldb, ldc, ldp = 0;
    if (matrix_arg(a, "gemm: a", false, &lda) < 0 || matrix_arg(b, "gemm: b", false, &ldb) < 0 ||
        matrix_arg(c, "gemm: c", true, &ldc) < 0 ||
        (promote != Py_None && matrix_arg(promote, "gemm: promote_to", true, &ldp) < 0))
        return NULL;
    /* unaligned arrays (an address or row stride not a multiple of the item
     * size): a and b read from aligned copies, c and promote_to computed in
     * aligned copies that are copied back after a successful call */
    PyObject *held[4] = { mxpy_aligned(a), mxpy_aligned(b), mxpy_aligned(c),
                          promote != Py_None ? mxpy_aligned(promote) : (Py_INCREF(Py_None), Py_None) };
    PyObject *r = NULL;
    if (held[0] && held[1] && held[2] && held[3] && matrix_arg(held[0], "gemm: a", false, &lda) == 0 &&
        matrix_arg(held[1], "gemm: b", false, &ldb) == 0 && matrix_arg(held[2], "gemm: c", true, &ldc) == 0 &&
        (promote == Py_None || matrix_arg(held[3], "gemm: promote_to", true, &ldp) == 0)) {
        r = gemm_call(ta, tb, alpha, held[0], held[1], beta, held[2], opts, strategy, held[3], ldp, lda, ldb, ldc);
        if (r && ((held[2] != c && PyArray_CopyInto((PyArrayObject *)c, (PyArrayObject *)held[2]) < 0) ||
                  (held[3] != promote && PyArray_CopyInto((PyArrayObject *)promote, (PyArrayObject *)held[3]) < 0)))
            Py_CLEAR(r);
    }
    for (int i = 0; i < 4; i++)
        Py_XDECREF(held[i]);
    return r;
}

/* gemm after the checks of its layouts, on aligned arrays */
static PyObject *gemm_call(int ta, int tb, double alpha, PyObject *a, PyObject *b, double beta, PyObject *c,
                           const mxp_gemm_opts *opts, PyObject *strategy, PyObject *promote, size_t ldp, size_t lda,
                           size_t ldb, size_t ldc)
{
    mxp_gemm_opts o = *opts;
    PyArrayObject *A = (PyArrayObject *)a, *B = (PyArrayObject *)b, *C = (PyArrayObject *)c;
    size_t m = (size_t)PyArray_DIM(C, 0), n = (size_t)PyArray_DIM(C, 1);
    size_t k = (size_t)PyArray_DIM(A, ta ? 0 : 1);
    size_t am = (size_t)PyArray_DIM(A, ta ? 1 : 0), bk = (size_t)PyArray_DIM(B, tb ? 1 : 0),
           bn = (size_t)PyArray_DIM(B, tb ? 0 : 1);
    if (am != m || bk != k || bn != n)
        return PyErr_Format(PyExc_ValueError, "gemm: op(a) is %zu x %zu, op(b) %zu x %zu and c %zu x %zu", am, k, bk,
                            bn, m, n);
    mxp_dtype at = mxpy_dtype_from_typenum(PyArray_TYPE(A)), bt = mxpy_dtype_from_typenum(PyArray_TYPE(B)),
              ct = mxpy_dtype_from_typenum(PyArray_TYPE(C));
    if (!at || !bt || !ct)
        return PyErr_Format(PyExc_TypeError, "gemm: a, b and c must have dtypes mxp knows");
    mxp_gemm_safe_opts so = { 0 };
    mxp_gemm_safe_report rep = { 0 };
    memset(&rep, 0, sizeof rep);
    if (strategy != Py_None && strategy_from_name(PyUnicode_AsUTF8(strategy), &so.strategy) < 0)
        return NULL;
    if (promote != Py_None) {
        PyArrayObject *P = (PyArrayObject *)promote;
        if ((size_t)PyArray_DIM(P, 0) != m || (size_t)PyArray_DIM(P, 1) != n)
            return PyErr_Format(PyExc_ValueError, "gemm_safe: promote_to is %zd x %zd, c %zu x %zu",
                                (Py_ssize_t)PyArray_DIM(P, 0), (Py_ssize_t)PyArray_DIM(P, 1), m, n);
        if (PyArray_TYPE(P) != NPY_FLOAT32 && PyArray_TYPE(P) != NPY_FLOAT64)
            return PyErr_Format(PyExc_TypeError, "gemm_safe: promote_to is %R: a float32 or float64 array is needed",
                                (PyObject *)PyArray_DESCR(P));
        so.promote_to = PyArray_DATA((PyArrayObject *)promote);
        so.promote_dtype = mxpy_dtype_from_typenum(PyArray_TYPE((PyArrayObject *)promote));
        so.ldp = ldp;
    }
    mxp_status st;
    mxp_trans TA = ta ? MXP_TRANS : MXP_NO_TRANS, TB = tb ? MXP_TRANS : MXP_NO_TRANS;
    Py_BEGIN_ALLOW_THREADS
    if (strategy == Py_None)
        st = mxp_gemm(TA, TB, m, n, k, alpha, PyArray_DATA(A), at, lda, PyArray_DATA(B), bt, ldb, beta,
                      PyArray_DATA(C), ct, ldc, &o);
    else
        st = mxp_gemm_safe(TA, TB, m, n, k, alpha, PyArray_DATA(A), at, lda, PyArray_DATA(B), bt, ldb, beta,
                           PyArray_DATA(C), ct, ldc, &o, &so, &rep);
    Py_END_ALLOW_THREADS
    if (st != MXP_OK)
        return mxpy_raise(st);
    if (strategy == Py_None)
        Py_RETURN_NONE;
    return report_dict(&rep);
}

/* _mx_matmul(a, w, format, n, out, *, <gemm options>) -> out: a (m x k,
 * C-contiguous, any float dtype) times W^T, W the n x k MX/NVFP4 bytes w;
 * out m x n C-contiguous (the Python layer makes them so). */
static PyObject *mx_matmul(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kw[] = { "a", "w", "format", "n", "out", GEMM_KEYWORDS, NULL };
    PyObject *a, *w, *out;
    int fmt;
    Py_ssize_t n;
    gemm_args g = GEMM_ARGS_DEFAULTS;
    mxp_gemm_opts o;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOinO|$" GEMM_ARGS_FORMAT ":_mx_matmul", kw, &a, &w, &fmt, &n, &out,
                                     GEMM_ARGS_PTRS(g)) ||
        build_opts(&g, &o) < 0)
        return NULL;
    PyArrayObject *pa = (PyArrayObject *)a, *pw = (PyArrayObject *)w, *po = (PyArrayObject *)out;
    if (!PyArray_Check(a) || !PyArray_Check(w) || !PyArray_Check(out) || PyArray_NDIM(pa) != 2 ||
        PyArray_NDIM(po) != 2 || !PyArray_IS_C_CONTIGUOUS(pa) || !PyArray_IS_C_CONTIGUOUS(pw) ||
        !PyArray_IS_C_CONTIGUOUS(po) || !PyArray_ISWRITEABLE(po) || PyArray_TYPE(pw) != NPY_UINT8 || n < 0 ||
        PyArray_DIM(po, 0) != PyArray_DIM(pa, 0) || PyArray_DIM(po, 1) != n)
        return PyErr_Format(PyExc_TypeError, "_mx_matmul: expected contiguous 2-d a and out (m x n) and uint8 w");
    const mxp_dtype at = mxpy_dtype_from_typenum(PyArray_TYPE(pa)), ct = mxpy_dtype_from_typenum(PyArray_TYPE(po));
    const size_t m = (size_t)PyArray_DIM(pa, 0), k = (size_t)PyArray_DIM(pa, 1);
    if ((size_t)PyArray_NBYTES(pw) < mxp_mx_bytes((mxp_mx_format)fmt, (size_t)n * k) || at == MXP_DTYPE_INVALID ||
        ct == MXP_DTYPE_INVALID)
        return PyErr_Format(PyExc_ValueError, "mx_matmul: w holds %zd bytes, not the %zu of a %zd x %zu weight",
                           PyArray_NBYTES(pw), mxp_mx_bytes((mxp_mx_format)fmt, (size_t)n * k), n, k);
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_mx_matmul(PyArray_DATA(po), ct, (size_t)n, PyArray_DATA(pa), at, k, m, k, PyArray_DATA(pw),
                       (mxp_mx_format)fmt, (size_t)n, &o);
    Py_END_ALLOW_THREADS
    if (st != MXP_OK)
        return mxpy_raise(st);
    Py_INCREF(out);
    return out;
}

PyMethodDef mxpy_gemm_methods[] = {
    { "_mx_matmul", (PyCFunction)(void (*)(void))mx_matmul, METH_VARARGS | METH_KEYWORDS, NULL },
    { "_matmul", (PyCFunction)(void (*)(void))matmul, METH_VARARGS | METH_KEYWORDS, NULL },
    { "_matmul_shape", matmul_shape, METH_VARARGS, NULL },
    { "_gemm", (PyCFunction)(void (*)(void))gemm, METH_VARARGS | METH_KEYWORDS, NULL },
    { NULL, NULL, 0, NULL },
};

/* NumPy 2 only (NumPy 1.x: promote_numpy1.c).
 *
 * Type promotion in ufuncs for the mxp float dtypes, following
 * mxp_promote_types (docs/dtypes.md): bfloat16 + float16 -> float32,
 * float8_e4m3fn + float8_e5m2 -> float16, bfloat16 + int8 -> bfloat16, and
 * NEP 50's weak Python scalars: bfloat16 array * 0.5 stays bfloat16, as
 * float16 array * 0.5 stays float16.
 *
 * NumPy 2 offers legacy user dtypes no public common_dtype hook, but its
 * ufuncs take promoters (PyUFunc_AddPromoter, the public DType API): for
 * each binary ufunc that has mxp loops and each pair (mxp type, other
 * type) -- bool, the integers, float16/32/64, the other mxp types and
 * Python's int and float -- a promoter names the loop to use.  Where the
 * promoted type is NumPy's own (float32 ...), NumPy's loop runs on inputs
 * cast exactly.  np.result_type and np.promote_types are not ufuncs; they
 * follow NumPy's legacy rules (docs/python.md has the table). */
#include "mxpy.h"

#if MXPY_NUMPY2

static PyArray_DTypeMeta *bool_dtype;

static PyArray_DTypeMeta *dtype_of_typenum(int typenum)
{
    PyArray_Descr *d = PyArray_DescrFromType(typenum);
    if (!d)
        return NULL;
    PyArray_DTypeMeta *m = NPY_DTYPE(d);
    Py_INCREF(m);
    Py_DECREF(d);
    return m;
}

static bool is_weak(PyArray_DTypeMeta *m)
{
    return m == &PyArray_PyFloatDType || m == &PyArray_PyLongDType;
}

/* The DType both inputs go to: a Python scalar takes the other's type. */
static PyArray_DTypeMeta *promoted(PyArray_DTypeMeta *a, PyArray_DTypeMeta *b)
{
    if (is_weak(a) || is_weak(b)) {
        PyArray_DTypeMeta *m = is_weak(a) ? b : a;
        Py_INCREF(m);
        return m;
    }
    mxp_dtype r = mxp_promote_types(mxpy_dtype_from_typenum(a->type_num), mxpy_dtype_from_typenum(b->type_num));
    int typenum = mxpy_typenum_from_dtype(r);
    if (typenum == NPY_NOTYPE) {
        PyErr_SetString(PyExc_TypeError, "mxp: no common type for these operands");
        return NULL;
    }
    return dtype_of_typenum(typenum);
}

/* What the caller fixed (signature=, dtype=) stays; an output dtype fixes
 * the inputs of arithmetic too, as NumPy's own promoters do. */
static int promote(PyArray_DTypeMeta *const op[], PyArray_DTypeMeta *const sig[], PyArray_DTypeMeta *new_op[],
                   bool predicate)
{
    PyArray_DTypeMeta *r;
    if (!predicate && sig[2]) {
        r = sig[2];
        Py_INCREF(r);
    } else {
        r = promoted(sig[0] ? sig[0] : op[0], sig[1] ? sig[1] : op[1]);
        if (!r)
            return -1;
    }
    for (int i = 0; i < 2; i++) {
        new_op[i] = sig[i] ? sig[i] : r;
        Py_INCREF(new_op[i]);
    }
    new_op[2] = sig[2] ? sig[2] : predicate ? bool_dtype : r;
    Py_INCREF(new_op[2]);
    Py_DECREF(r);
    return 0;
}

static int promote_arithmetic(PyObject *ufunc, PyArray_DTypeMeta *const op[], PyArray_DTypeMeta *const sig[],
                              PyArray_DTypeMeta *new_op[])
{
    (void)ufunc;
    return promote(op, sig, new_op, false);
}

static int promote_predicate(PyObject *ufunc, PyArray_DTypeMeta *const op[], PyArray_DTypeMeta *const sig[],
                             PyArray_DTypeMeta *new_op[])
{
    (void)ufunc;
    return promote(op, sig, new_op, true);
}

static int add_one(PyObject *ufunc, PyObject *promoter, PyArray_DTypeMeta *a, PyArray_DTypeMeta *b)
{
    PyObject *key = PyTuple_Pack(3, (PyObject *)a, (PyObject *)b, Py_None);
    int rc = key ? PyUFunc_AddPromoter(ufunc, key, promoter) : -1;
    Py_XDECREF(key);
    return rc;
}

/* The types an mxp type meets: NumPy's bool, integers and floats. */
static const int numpy_types[] = {
    NPY_BOOL, NPY_BYTE, NPY_UBYTE, NPY_SHORT, NPY_USHORT, NPY_INT, NPY_UINT, NPY_LONG, NPY_ULONG,
    NPY_LONGLONG, NPY_ULONGLONG, NPY_HALF, NPY_FLOAT, NPY_DOUBLE,
};
enum { NNUMPY = sizeof numpy_types / sizeof numpy_types[0] };

static int add_promoters(PyObject *ufunc, bool predicate, PyArray_DTypeMeta *const others[], int nothers)
{
    PyObject *promoter = PyCapsule_New((void *)(predicate ? promote_predicate : promote_arithmetic),
                                       "numpy._ufunc_promoter", NULL);
    if (!promoter)
        return -1;
    int rc = 0;
    for (int i = 0; i < MXPY_NFLOATS && rc == 0; i++) {
        PyArray_DTypeMeta *t = NPY_DTYPE(mxpy_floats[i].descr);
        for (int j = 0; j < MXPY_NFLOATS && rc == 0; j++) /* each ordered pair once */
            if (j != i)
                rc = add_one(ufunc, promoter, t, NPY_DTYPE(mxpy_floats[j].descr));
        for (int k = 0; k < nothers && rc == 0; k++)
            if ((rc = add_one(ufunc, promoter, t, others[k])) == 0)
                rc = add_one(ufunc, promoter, others[k], t);
    }
    Py_DECREF(promoter);
    return rc;
}

int mxpy_init_promotion(PyObject *numpy)
{
    PyArray_DTypeMeta *others[NNUMPY + 2] = { NULL };
    int rc = (bool_dtype = dtype_of_typenum(NPY_BOOL)) ? 0 : -1;
    for (int k = 0; k < NNUMPY && rc == 0; k++)
        rc = (others[k] = dtype_of_typenum(numpy_types[k])) ? 0 : -1;
    others[NNUMPY] = &PyArray_PyFloatDType;
    others[NNUMPY + 1] = &PyArray_PyLongDType;
    bool predicate;
    const char *name;
    for (int i = 0; rc == 0 && (name = mxpy_binary_ufunc(i, &predicate)); i++) {
        PyObject *ufunc = PyObject_GetAttrString(numpy, name);
        rc = ufunc ? add_promoters(ufunc, predicate, others, NNUMPY + 2) : -1;
        Py_XDECREF(ufunc);
    }
    for (int k = 0; k < NNUMPY; k++)
        Py_XDECREF(others[k]);
    return rc;
}

/* NumPy 2 keeps NumPy 1's rule that two legacy dtypes of one kind and size
 * are "equivalent", so it calls float8_e4m3fn <-> float8_e5m2 safe; no
 * public hook changes a legacy cast's safety (docs/python.md). */
int mxpy_fix_float8_casts(void)
{
    return 0;
}

#endif /* MXPY_NUMPY2 */

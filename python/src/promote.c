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
 * each binary ufunc that has mxp loops, one for each ordered pair of mxp
 * types and two wildcards per mxp type, (t, any) and (any, t).  With bool,
 * the integers, float16/32/64, mxp types and Python's int and float the
 * promoter names the loop to use; where the promoted type is NumPy's own
 * (float32 ...), NumPy's loop runs on inputs cast exactly.  Other partners
 * get the operands back unchanged, which makes NumPy drop the promoter and
 * resolve as it would without it.  (NumPy checks every new promoter
 * against all of a ufunc's loops: one per (mxp type, NumPy type) pair made
 * the import take 0.3-0.9 s.)  np.result_type and np.promote_types are not
 * ufuncs; they follow NumPy's legacy rules (docs/python.md has the table). */
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

/* NumPy's real and integer types, Python's int and float, mxp's (not
 * another package's of the same name); NULL (a reduction's first operand) */
static bool known(PyArray_DTypeMeta *m)
{
    if (!m || is_weak(m))
        return true;
    if (m->type_num < NPY_USERDEF)
        return mxpy_dtype_from_typenum(m->type_num) != MXP_DTYPE_INVALID;
    for (int i = 0; i < MXPY_NFLOATS; i++)
        if (NPY_DTYPE(mxpy_floats[i].descr) == m)
            return true;
    return false;
}

/* The DType both inputs go to: a Python scalar takes the other's type. */
static PyArray_DTypeMeta *promoted(PyArray_DTypeMeta *a, PyArray_DTypeMeta *b)
{
    if (is_weak(a) || is_weak(b)) {
        PyArray_DTypeMeta *m = is_weak(a) ? b : a;
        Py_INCREF(m);
        return m;
    }
    const mxp_dtype x = mxpy_dtype_from_typenum(a->type_num), y = mxpy_dtype_from_typenum(b->type_num);
    mxp_dtype r = mxp_promote_types(x, y);
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
    /* A partner mxp has no rule for (complex, object, strings, another
     * package's types, Python complex): the operands unchanged, which tells
     * NumPy to drop this promoter and resolve as it did without one (its
     * legacy search over the loops: bfloat16 + complex64 -> complex64). */
    if (!known(op[0]) || !known(op[1])) {
        for (int i = 0; i < 3; i++) {
            new_op[i] = op[i];
            Py_XINCREF(new_op[i]);
        }
        return 0;
    }
    PyArray_DTypeMeta *r;
    if (!predicate && sig[2]) {
        r = sig[2];
        Py_INCREF(r);
    } else {
        /* a reduction passes no first operand (NULL): it is the second's type */
        PyArray_DTypeMeta *a = sig[0] ? sig[0] : op[0], *b = sig[1] ? sig[1] : op[1];
        r = promoted(a ? a : b, b ? b : a);
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

/* (t, any) or (any, t): NumPy tries a promoter whose fixed entries match
 * (the mxp pairs above are more specific, so they win over two of these) */
static int add_wild(PyObject *ufunc, PyObject *promoter, PyArray_DTypeMeta *t, int second)
{
    PyObject *key = second ? PyTuple_Pack(3, Py_None, (PyObject *)t, Py_None)
                           : PyTuple_Pack(3, (PyObject *)t, Py_None, Py_None);
    int rc = key ? PyUFunc_AddPromoter(ufunc, key, promoter) : -1;
    Py_XDECREF(key);
    return rc;
}

static int add_promoters(PyObject *ufunc, bool predicate)
{
    PyObject *promoter = PyCapsule_New((void *)(predicate ? promote_predicate : promote_arithmetic),
                                       "numpy._ufunc_promoter", NULL);
    if (!promoter)
        return -1;
    int rc = 0;
    for (int i = 0; i < MXPY_NFLOATS && rc == 0; i++) {
        PyArray_DTypeMeta *t = NPY_DTYPE(mxpy_floats[i].descr);
        /* every ordered pair, (t, t) too: with the wildcards below two
         * mxp types would otherwise match (t, any) and (any, u) equally */
        for (int j = 0; j < MXPY_NFLOATS && rc == 0; j++)
            rc = add_one(ufunc, promoter, t, NPY_DTYPE(mxpy_floats[j].descr));
        if (rc == 0 && (rc = add_wild(ufunc, promoter, t, 0)) == 0)
            rc = add_wild(ufunc, promoter, t, 1);
    }
    Py_DECREF(promoter);
    return rc;
}

int mxpy_init_promotion(PyObject *numpy)
{
    int rc = (bool_dtype = dtype_of_typenum(NPY_BOOL)) ? 0 : -1;
    bool predicate;
    const char *name;
    for (int i = 0; rc == 0 && (name = mxpy_binary_ufunc(i, &predicate)); i++) {
        PyObject *ufunc = PyObject_GetAttrString(numpy, name);
        rc = ufunc ? add_promoters(ufunc, predicate) : -1;
        Py_XDECREF(ufunc);
    }
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

/* Another package's dtypes of mxp's formats -- ml_dtypes' bfloat16,
 * float8, float6, float4 and sub-byte integer types, registered by mxp/__init__.py when
 * ml_dtypes is installed.  The encodings are the same bits, so the casts
 * both ways are copies, registered as safe; and mxp's functions take such
 * arrays as their own (mxpy_dtype_from_typenum knows the type numbers), so
 * mxp.astype(ml_array, ...) views the array without a copy. */
#include <string.h>

#include "mxpy.h"

typedef struct foreign {
    int typenum;
    mxp_dtype dt;
} foreign;

enum { MAX_FOREIGN = 32 };
static foreign foreigns[MAX_FOREIGN];
static int nforeign;

mxp_dtype mxpy_foreign_dtype(int typenum)
{
    for (int i = 0; i < nforeign; i++)
        if (foreigns[i].typenum == typenum)
            return foreigns[i].dt;
    return MXP_DTYPE_INVALID;
}

/* By element size: the two dtypes share it. */
static void copy_cast_1(void *from, void *to, npy_intp n, void *fromarr, void *toarr)
{
    (void)fromarr, (void)toarr;
    memmove(to, from, (size_t)n);
}

static void copy_cast_2(void *from, void *to, npy_intp n, void *fromarr, void *toarr)
{
    (void)fromarr, (void)toarr;
    memmove(to, from, (size_t)n * 2);
}

static int register_both_ways(PyArray_Descr *theirs, const mxpy_float *ours)
{
    PyArray_VectorUnaryFunc *copy = mxp_dtype_itemsize(ours->dt) == 1 ? copy_cast_1 : copy_cast_2;
    if (PyArray_RegisterCanCast(theirs, ours->typenum, NPY_NOSCALAR) < 0 ||
        PyArray_RegisterCanCast(ours->descr, theirs->type_num, NPY_NOSCALAR) < 0 ||
        PyArray_RegisterCastFunc(theirs, ours->typenum, copy) < 0 ||
        PyArray_RegisterCastFunc(ours->descr, theirs->type_num, copy) < 0)
        return -1;
    return 0;
}

/* _register_foreign(dtype, name): dtype (another package's legacy user
 * dtype) holds the same encoding as mxp's type `name`. */
PyObject *mxpy_register_foreign(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *obj;
    const char *name;
    if (!PyArg_ParseTuple(args, "Os:_register_foreign", &obj, &name))
        return NULL;
    PyArray_Descr *d = NULL;
    if (!PyArray_DescrConverter(obj, &d))
        return NULL;
    const mxpy_float *ours = mxpy_float_by_dtype(mxp_dtype_from_name(name));
    PyObject *ret = NULL;
    if (!ours)
        PyErr_Format(PyExc_ValueError, "_register_foreign: mxp has no dtype %s of its own", name);
    else if (d->type_num < NPY_USERDEF || mxpy_float_by_typenum(d->type_num))
        PyErr_Format(PyExc_ValueError, "_register_foreign: %R is not another package's user dtype", (PyObject *)d);
    else if (PyDataType_ELSIZE(d) != (npy_intp)mxp_dtype_itemsize(ours->dt))
        PyErr_Format(PyExc_ValueError, "_register_foreign: %R has %zd bytes, %s has %zu", (PyObject *)d,
                     (Py_ssize_t)PyDataType_ELSIZE(d), name, mxp_dtype_itemsize(ours->dt));
    else if (mxpy_foreign_dtype(d->type_num) != MXP_DTYPE_INVALID)
        ret = Py_NewRef(Py_False); /* already registered */
    else if (nforeign == MAX_FOREIGN)
        PyErr_SetString(PyExc_RuntimeError, "_register_foreign: too many foreign dtypes");
    else if (register_both_ways(d, ours) == 0) {
        foreigns[nforeign++] = (foreign){ d->type_num, ours->dt };
        ret = Py_NewRef(Py_True);
    }
    Py_DECREF(d);
    return ret;
}

/* Casts between the mxp float dtypes and every NumPy numeric type, through
 * mxp_convert: one rounding from any source, to nearest even (NumPy's
 * astype has no rounding argument; mxp.astype has, see docs/python.md).
 *
 * NumPy 1.24 hands legacy cast functions real arrays of the two dtypes, so
 * one function serves every pair.  Safe casts are registered before the
 * cast functions: NumPy fixes a cast's safety when the function is added. */
#include <math.h>
#include <string.h>

#include "mxpy.h"

static const int numpy_types[] = {
    NPY_BOOL, NPY_BYTE, NPY_UBYTE, NPY_SHORT, NPY_USHORT, NPY_INT, NPY_UINT, NPY_LONG, NPY_ULONG,
    NPY_LONGLONG, NPY_ULONGLONG, NPY_HALF, NPY_FLOAT, NPY_DOUBLE, NPY_LONGDOUBLE,
    NPY_CFLOAT, NPY_CDOUBLE, NPY_CLONGDOUBLE,
};

/* long double to double rounded to odd (truncate, then set the last bit
 * if anything was lost): a later rounding to <= 51 bits is then the one
 * correct rounding of the long double. */
static double round_to_odd(long double x)
{
    double d = (double)x;
    if (!isfinite(d) || (long double)d == x)
        return d;
    if (fabsl((long double)d) > fabsl(x))
        d = nextafter(d, 0.0);
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    bits |= 1;
    memcpy(&d, &bits, sizeof bits);
    return d;
}

/* Sizes of the types mxp_convert lacks (no descriptor lookups: casts may
 * run without the GIL). */
static ptrdiff_t other_itemsize(int typenum)
{
    switch (typenum) {
    case NPY_CFLOAT: return 2 * sizeof(float);
    case NPY_CDOUBLE: return 2 * sizeof(double);
    case NPY_LONGDOUBLE: return sizeof(long double);
    default: return 2 * sizeof(long double); /* NPY_CLONGDOUBLE */
    }
}

/* The types mxp_convert lacks: long double and the complex types, whose
 * real part is converted (NumPy drops the imaginary part the same way). */
static void cast_other(char *to, int tt, const char *from, int ft, npy_intp n)
{
    mxp_dtype fd = mxpy_dtype_from_typenum(ft), td = mxpy_dtype_from_typenum(tt);
    if (td != MXP_DTYPE_INVALID) { /* from long double or complex */
        ptrdiff_t fs = other_itemsize(ft);
        if (ft == NPY_CFLOAT) {
            mxp_convert_strided(to, td, (ptrdiff_t)mxp_dtype_itemsize(td), from, MXP_F32, fs, (size_t)n, NULL);
            return;
        }
        if (ft == NPY_CDOUBLE) {
            mxp_convert_strided(to, td, (ptrdiff_t)mxp_dtype_itemsize(td), from, MXP_F64, fs, (size_t)n, NULL);
            return;
        }
        for (npy_intp i = 0; i < n; i++) { /* NPY_LONGDOUBLE, NPY_CLONGDOUBLE */
            long double x;
            memcpy(&x, from + i * fs, sizeof x);
            double d = round_to_odd(x);
            mxp_convert(to + i * (ptrdiff_t)mxp_dtype_itemsize(td), td, &d, MXP_F64, 1, NULL);
        }
        return;
    }
    /* to long double or complex: widen exactly through float64 */
    ptrdiff_t ts = other_itemsize(tt);
    ptrdiff_t fs = (ptrdiff_t)mxp_dtype_itemsize(fd);
    for (npy_intp i = 0; i < n; i++) {
        double d = 0;
        mxp_convert(&d, MXP_F64, from + i * fs, fd, 1, NULL);
        char *o = to + i * ts;
        memset(o, 0, (size_t)ts);
        if (tt == NPY_CFLOAT) {
            float f = (float)d;
            memcpy(o, &f, sizeof f);
        } else if (tt == NPY_CDOUBLE) {
            memcpy(o, &d, sizeof d);
        } else {
            long double l = d;
            memcpy(o, &l, sizeof l);
        }
    }
}

/* Into an integer type, NumPy's astype truncates (C's conversion):
 * [1.5, 2.5, -3.75] -> [1, 2, -3]; mxp.astype keeps every rounding mode. */
static const mxp_convert_opts truncate = { .rounding = MXP_ROUND_TOWARD_ZERO };

static void cast(void *from, void *to, npy_intp n, void *fromarr, void *toarr)
{
    int ft = PyArray_DESCR((PyArrayObject *)fromarr)->type_num;
    int tt = PyArray_DESCR((PyArrayObject *)toarr)->type_num;
    mxp_dtype fd = mxpy_dtype_from_typenum(ft), td = mxpy_dtype_from_typenum(tt);
    if (fd != MXP_DTYPE_INVALID && td != MXP_DTYPE_INVALID)
        mxp_convert(to, td, from, fd, (size_t)n, mxp_dtype_get_traits(td)->kind == MXP_KIND_FLOAT ? NULL : &truncate);
    else
        cast_other(to, tt, from, ft, n);
}

/* Whether from -> to is safe; the types mxp_convert lacks hold every
 * float32 (complex64) or float64 (the rest) value. */
static bool is_safe(int from, int to)
{
    mxp_dtype fd = mxpy_dtype_from_typenum(from), td = mxpy_dtype_from_typenum(to);
    if (fd == MXP_DTYPE_INVALID)
        return false;
    if (td != MXP_DTYPE_INVALID)
        return mxp_can_cast(fd, td, MXP_CASTING_SAFE);
    return mxp_can_cast(fd, to == NPY_CFLOAT ? MXP_F32 : MXP_F64, MXP_CASTING_SAFE);
}

static int register_pair(int from, int to)
{
    PyArray_Descr *d = PyArray_DescrFromType(from);
    if (!d)
        return -1;
    int rc = 0;
    if (is_safe(from, to))
        rc = PyArray_RegisterCanCast(d, to, NPY_NOSCALAR);
    if (rc == 0)
        rc = PyArray_RegisterCastFunc(d, to, cast);
    Py_DECREF(d);
    return rc;
}

int mxpy_init_casts(void)
{
    for (int i = 0; i < MXPY_NFLOATS; i++) {
        int t = mxpy_floats[i].typenum;
        for (size_t k = 0; k < sizeof numpy_types / sizeof numpy_types[0]; k++)
            if (register_pair(t, numpy_types[k]) < 0 || register_pair(numpy_types[k], t) < 0)
                return -1;
        for (int j = 0; j < MXPY_NFLOATS; j++)
            if (j != i && register_pair(t, mxpy_floats[j].typenum) < 0)
                return -1;
    }
    return 0;
}

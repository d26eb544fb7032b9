/* The dtypes: one descriptor and one set of array functions per row of
 * mxpy_floats[], registered with NumPy as user-defined types.
 *
 * kind 'V', as ml_dtypes does for these three: NumPy lets legacy user
 * dtypes promote only through the casts they declare safe (casts.c) and
 * mxp's hooks (promote.c, promote_numpy1.c), and code that ports from
 * ml_dtypes sees the same dtype.kind.  Not 'f': NumPy calls two legacy
 * dtypes of the same kind and size "equivalent", and bfloat16 would be
 * float16's equal; and code that serialises a dtype by its .str (dask's
 * distributed) needs '|V1', as '|f1' is no dtype NumPy can rebuild. */
#include <math.h>
#include <string.h>

#include "mxpy.h"

/* dtype.char as ml_dtypes 0.6 gives it */
mxpy_float mxpy_floats[MXPY_NFLOATS] = {
    [MXPY_BF16] = { MXP_BF16, "bfloat16", 'E', NULL, NULL, NPY_NOTYPE },
    [MXPY_E4M3] = { MXP_E4M3, "float8_e4m3fn", '4', NULL, NULL, NPY_NOTYPE },
    [MXPY_E5M2] = { MXP_E5M2, "float8_e5m2", '5', NULL, NULL, NPY_NOTYPE },
    [MXPY_E3M4] = { MXP_E3M4, "float8_e3m4", '3', NULL, NULL, NPY_NOTYPE },
    [MXPY_E4M3IEEE] = { MXP_E4M3IEEE, "float8_e4m3", '7', NULL, NULL, NPY_NOTYPE },
    [MXPY_E4M3B11] = { MXP_E4M3B11, "float8_e4m3b11fnuz", 'L', NULL, NULL, NPY_NOTYPE },
    [MXPY_E4M3FNUZ] = { MXP_E4M3FNUZ, "float8_e4m3fnuz", 'G', NULL, NULL, NPY_NOTYPE },
    [MXPY_E5M2FNUZ] = { MXP_E5M2FNUZ, "float8_e5m2fnuz", 'C', NULL, NULL, NPY_NOTYPE },
    [MXPY_E8M0] = { MXP_E8M0, "float8_e8m0fnu", 'W', NULL, NULL, NPY_NOTYPE },
    [MXPY_E2M3] = { MXP_E2M3, "float6_e2m3fn", '8', NULL, NULL, NPY_NOTYPE },
    [MXPY_E3M2] = { MXP_E3M2, "float6_e3m2fn", '9', NULL, NULL, NPY_NOTYPE },
    [MXPY_E2M1] = { MXP_E2M1, "float4_e2m1fn", '0', NULL, NULL, NPY_NOTYPE },
    [MXPY_S4] = { MXP_S4, "int4", 'a', NULL, NULL, NPY_NOTYPE },
    [MXPY_U4] = { MXP_U4, "uint4", 'A', NULL, NULL, NPY_NOTYPE },
    [MXPY_S2] = { MXP_S2, "int2", 'c', NULL, NULL, NPY_NOTYPE },
    [MXPY_U2] = { MXP_U2, "uint2", 'C', NULL, NULL, NPY_NOTYPE },
    [MXPY_S1] = { MXP_S1, "int1", 'e', NULL, NULL, NPY_NOTYPE },
    [MXPY_U1] = { MXP_U1, "uint1", 'E', NULL, NULL, NPY_NOTYPE },
};

/* Every row's per-row entry points below, by number (NumPy may call an
 * array function without an array, so each row needs its own). */
#define MXPY_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17)
_Static_assert(MXPY_NFLOATS == 18, "MXPY_ROWS lists every row");

/* What NumPy registers from; the descriptor is PyArray_DescrFromType's. */
static PyArray_DescrProto descrs[MXPY_NFLOATS];
static PyArray_ArrFuncs funcs[MXPY_NFLOATS];

mxpy_float *mxpy_float_by_typenum(int typenum)
{
    for (int i = 0; i < MXPY_NFLOATS; i++)
        if (mxpy_floats[i].typenum == typenum && typenum != NPY_NOTYPE)
            return &mxpy_floats[i];
    return NULL;
}

mxpy_float *mxpy_float_by_scalar_type(PyTypeObject *type)
{
    for (int i = 0; i < MXPY_NFLOATS; i++)
        if (mxpy_floats[i].scalar_type == type)
            return &mxpy_floats[i];
    return NULL;
}

mxpy_float *mxpy_float_by_dtype(mxp_dtype dt)
{
    for (int i = 0; i < MXPY_NFLOATS; i++)
        if (mxpy_floats[i].dt == dt)
            return &mxpy_floats[i];
    return NULL;
}

/* C types by size, so `long` and `long long` both map on LP64. */
static mxp_dtype int_dtype(size_t size, bool is_signed)
{
    switch (size) {
    case 1: return is_signed ? MXP_S8 : MXP_U8;
    case 2: return is_signed ? MXP_S16 : MXP_U16;
    case 4: return is_signed ? MXP_S32 : MXP_U32;
    case 8: return is_signed ? MXP_S64 : MXP_U64;
    default: return MXP_DTYPE_INVALID;
    }
}

mxp_dtype mxpy_dtype_from_typenum(int typenum)
{
    switch (typenum) {
    case NPY_BOOL: return MXP_BOOL;
    case NPY_BYTE: return MXP_S8;
    case NPY_UBYTE: return MXP_U8;
    case NPY_SHORT: return int_dtype(sizeof(short), true);
    case NPY_USHORT: return int_dtype(sizeof(short), false);
    case NPY_INT: return int_dtype(sizeof(int), true);
    case NPY_UINT: return int_dtype(sizeof(int), false);
    case NPY_LONG: return int_dtype(sizeof(long), true);
    case NPY_ULONG: return int_dtype(sizeof(long), false);
    case NPY_LONGLONG: return int_dtype(sizeof(long long), true);
    case NPY_ULONGLONG: return int_dtype(sizeof(long long), false);
    case NPY_HALF: return MXP_F16;
    case NPY_FLOAT: return MXP_F32;
    case NPY_DOUBLE: return MXP_F64;
    default: break;
    }
    mxpy_float *t = mxpy_float_by_typenum(typenum);
    return t ? t->dt : mxpy_foreign_dtype(typenum);
}

int mxpy_typenum_from_dtype(mxp_dtype dt)
{
    switch (dt) {
    case MXP_BOOL: return NPY_BOOL;
    case MXP_S8: return NPY_INT8;
    case MXP_S16: return NPY_INT16;
    case MXP_S32: return NPY_INT32;
    case MXP_S64: return NPY_INT64;
    case MXP_U8: return NPY_UINT8;
    case MXP_U16: return NPY_UINT16;
    case MXP_U32: return NPY_UINT32;
    case MXP_U64: return NPY_UINT64;
    case MXP_F16: return NPY_HALF;
    case MXP_F32: return NPY_FLOAT;
    case MXP_F64: return NPY_DOUBLE;
    default: break;
    }
    mxpy_float *t = mxpy_float_by_dtype(dt);
    return t ? t->typenum : NPY_NOTYPE;
}

/* ---- array functions ------------------------------------------------------
 * NumPy passes the array (or NULL) last; its descriptor says which row. */

static mxpy_float *arr_float(void *arr)
{
    return arr ? mxpy_float_by_typenum(PyArray_DESCR((PyArrayObject *)arr)->type_num) : NULL;
}

static uint16_t load(const mxpy_float *t, const void *p)
{
    uint16_t bits = 0;
    memcpy(&bits, p, mxp_dtype_itemsize(t->dt)); /* little-endian: 1-byte types in the low byte */
    return bits;
}

static void store(const mxpy_float *t, void *p, uint16_t bits)
{
    memcpy(p, &bits, mxp_dtype_itemsize(t->dt));
}

/* NumPy calls getitem for .item(), .tolist() and object casts, which give
 * Python floats for NumPy's own float types (json.dumps takes them);
 * indexing (a[0], np.sum) builds the mxp scalar from the bits itself. */
static PyObject *getitem(int idx, void *p)
{
    const mxpy_float *t = &mxpy_floats[idx];
    double v = mxpy_to_double(t, load(t, p));
    return mxp_dtype_get_traits(t->dt)->kind == MXP_KIND_FLOAT ? PyFloat_FromDouble(v) : PyLong_FromDouble(v);
}

static int setitem(int idx, PyObject *item, void *p)
{
    uint16_t bits;
    mxpy_reduction_restart();
    if (mxpy_bits_from_object(&mxpy_floats[idx], item, &bits) < 0)
        return -1;
    store(&mxpy_floats[idx], p, bits);
    return 0;
}

/* NumPy may call getitem/setitem with no array (so no descriptor): each
 * row gets its own one-line entry points. */
#define ITEM_FUNCS(i)                                                                                   \
    static PyObject *getitem_##i(void *p, void *arr) { (void)arr; return getitem(i, p); }               \
    static int setitem_##i(PyObject *o, void *p, void *arr) { (void)arr; return setitem(i, o, p); }
MXPY_ROWS(ITEM_FUNCS)
#define GETITEM_OF(i) getitem_##i,
#define SETITEM_OF(i) setitem_##i,
static PyArray_GetItemFunc *const getitems[MXPY_NFLOATS] = { MXPY_ROWS(GETITEM_OF) };
static PyArray_SetItemFunc *const setitems[MXPY_NFLOATS] = { MXPY_ROWS(SETITEM_OF) };

/* By element size, not by row: NumPy may pass no array.  s NULL: swap d's
 * elements where they are (ndarray.byteswap). */
static void copy_elements(char *d, npy_intp dstride, const char *s, npy_intp sstride, npy_intp n, size_t size,
                          int swap)
{
    mxpy_reduction_restart(); /* the start of a reduction: ufuncs.c */
    for (npy_intp i = 0; i < n; i++, d += dstride, s = s ? s + sstride : NULL) {
        if (s)
            memmove(d, s, size);
        if (swap && size == 2) {
            char c = d[0];
            d[0] = d[1];
            d[1] = c;
        }
    }
}

static void copyswapn_1(void *d, npy_intp ds, void *s, npy_intp ss, npy_intp n, int swap, void *arr)
{
    (void)arr;
    copy_elements(d, ds, s, ss, n, 1, swap);
}

static void copyswapn_2(void *d, npy_intp ds, void *s, npy_intp ss, npy_intp n, int swap, void *arr)
{
    (void)arr;
    copy_elements(d, ds, s, ss, n, 2, swap);
}

static void copyswap_1(void *d, void *s, int swap, void *arr) { copyswapn_1(d, 0, s, 0, 1, swap, arr); }
static void copyswap_2(void *d, void *s, int swap, void *arr) { copyswapn_2(d, 0, s, 0, 1, swap, arr); }

static npy_bool nonzero(void *p, void *arr)
{
    mxpy_float *t = arr_float(arr);
    return mxpy_to_double(t, load(t, p)) != 0;
}

/* arange: start, start + delta, ... from the first two elements, each
 * computed in float64 and rounded once. */
static int fill(void *buffer, npy_intp n, void *arr)
{
    mxpy_float *t = arr_float(arr);
    size_t size = mxp_dtype_itemsize(t->dt);
    char *b = buffer;
    double start = mxpy_to_double(t, load(t, b)), delta = mxpy_to_double(t, load(t, b + size)) - start;
    for (npy_intp i = 2; i < n; i++)
        store(t, b + (size_t)i * size, mxpy_from_double(t, start + (double)i * delta));
    return 0;
}

/* A dot product in float64 of the exactly widened elements, rounded once.
 * np.dot of 2-d arrays calls it once per output element (NumPy has no
 * other hook for user types); `@` and np.matmul go to mxp_gemm.  The
 * elements are widened through a table of every pattern's value (made by
 * make_tables at import), which spares two conversion calls per output. */
static float *values[MXPY_NFLOATS]; /* every bit pattern's value: exact in float32 */

static void dot(int idx, char *ip1, npy_intp is1, char *ip2, npy_intp is2, char *op, npy_intp n)
{
    const mxpy_float *t = &mxpy_floats[idx];
    const float *v = values[idx];
    double sum = 0; /* products of 8 or 16 significant bits, exact in float64 */
    if (mxp_dtype_itemsize(t->dt) == 2) {
        for (npy_intp i = 0; i < n; i++) {
            uint16_t a, b;
            memcpy(&a, ip1 + i * is1, 2);
            memcpy(&b, ip2 + i * is2, 2);
            sum += (double)v[a] * (double)v[b];
        }
    } else {
        for (npy_intp i = 0; i < n; i++)
            sum += (double)v[(unsigned char)ip1[i * is1]] * (double)v[(unsigned char)ip2[i * is2]];
    }
    store(t, op, mxpy_from_double(t, sum));
}

#define DOT_FUNC(i)                                                                                     \
    static void dot_##i(void *a, npy_intp as, void *b, npy_intp bs, void *o, npy_intp n, void *arr)    \
    {                                                                                                   \
        (void)arr;                                                                                      \
        dot(i, a, as, b, bs, o, n);                                                                     \
    }
MXPY_ROWS(DOT_FUNC)
#define DOT_OF(i) dot_##i,
static PyArray_DotFunc *const dots[MXPY_NFLOATS] = { MXPY_ROWS(DOT_OF) };

/* Sorting order: NaNs last, as NumPy sorts floats.  compare serves
 * searchsorted and NumPy's other comparison-based paths; sort, argsort and
 * argmax/argmin are the library's radix sort and scan (mxp_sort_strided
 * ...), which order the same way without a call per pair. */
static uint16_t *sort_keys[MXPY_NFLOATS]; /* mxp_sort_keys of every bit pattern */

/* One function per row: NumPy's generic quicksort (partition, median,
 * percentile) and binary search call compare once per pair. */
static inline int compare_keys(const uint16_t *k, unsigned x, unsigned y)
{
    return (k[x] > k[y]) - (k[x] < k[y]);
}

static inline int compare_row(int i, const void *a, const void *b)
{
    if (mxp_dtype_itemsize(mxpy_floats[i].dt) == 1)
        return compare_keys(sort_keys[i], *(const unsigned char *)a, *(const unsigned char *)b);
    uint16_t x, y;
    memcpy(&x, a, 2);
    memcpy(&y, b, 2);
    return compare_keys(sort_keys[i], x, y);
}

#define COMPARE_FUNC(i)                                                                                 \
    static int compare_##i(const void *a, const void *b, void *arr)                                    \
    {                                                                                                   \
        (void)arr;                                                                                      \
        return compare_row(i, a, b);                                                                    \
    }
MXPY_ROWS(COMPARE_FUNC)
#define COMPARE_OF(i) compare_##i,
static PyArray_CompareFunc *const compares[MXPY_NFLOATS] = { MXPY_ROWS(COMPARE_OF) };

/* The tables of every bit pattern of row i: its value (for dot) and its
 * sort key (for compare), both from the library, made once at import. */
static int make_tables(int i)
{
    const mxp_dtype dt = mxpy_floats[i].dt;
    const size_t size = mxp_dtype_itemsize(dt), n = (size_t)1 << (8 * size);
    uint64_t *wide = PyMem_Malloc(n * sizeof *wide);
    unsigned char *bits = PyMem_Malloc(n * size);
    values[i] = PyMem_Malloc(n * sizeof *values[i]);
    sort_keys[i] = PyMem_Malloc(n * sizeof *sort_keys[i]);
    mxp_status st = MXP_ERR_NO_MEMORY;
    if (wide && bits && values[i] && sort_keys[i]) {
        for (size_t v = 0; v < n; v++) {
            const uint16_t b = (uint16_t)v;
            memcpy(bits + v * size, &b, size); /* little-endian: one-byte patterns are the low byte */
        }
        st = mxp_convert(values[i], MXP_F32, bits, dt, n, NULL);
        if (st == MXP_OK)
            st = mxp_sort_keys(wide, bits, dt, (ptrdiff_t)size, n);
        for (size_t v = 0; st == MXP_OK && v < n; v++)
            sort_keys[i][v] = (uint16_t)wide[v]; /* keys of a 16-bit type fit in 16 bits */
    }
    PyMem_Free(wide);
    PyMem_Free(bits);
    if (st != MXP_OK) {
        mxpy_raise(st);
        return -1;
    }
    return 0;
}

_Static_assert(sizeof(npy_intp) == sizeof(int64_t), "npy_intp is int64_t");

/* NumPy may release the GIL around these (the dtype needs no Python API). */
static int fail_in_sort(mxp_status st)
{
    NPY_ALLOW_C_API_DEF
    NPY_ALLOW_C_API
    mxpy_raise(st);
    NPY_DISABLE_C_API
    return -1;
}

/* NumPy hands sort and argsort contiguous, aligned runs. */
static int sort(void *start, npy_intp n, void *arr)
{
    mxpy_float *t = arr_float(arr);
    mxp_status st = mxp_sort_strided(start, t->dt, (ptrdiff_t)mxp_dtype_itemsize(t->dt), (size_t)n);
    return st == MXP_OK ? 0 : fail_in_sort(st);
}

/* tosort holds positions into v (NumPy starts it as 0, 1, ... n-1); it is
 * reordered so that v[tosort[i]] ascends, stably. */
static int argsort(void *v, npy_intp *tosort, npy_intp n, void *arr)
{
    mxpy_float *t = arr_float(arr);
    size_t size = mxp_dtype_itemsize(t->dt);
    bool identity = true;
    for (npy_intp i = 0; i < n && identity; i++)
        identity = tosort[i] == i;
    if (identity) {
        mxp_status st = mxp_argsort_strided((int64_t *)tosort, v, t->dt, (ptrdiff_t)size, (size_t)n);
        return st == MXP_OK ? 0 : fail_in_sort(st);
    }
    /* the general case: the elements in tosort's order, argsorted, mapped back */
    size_t m = (size_t)n;
    int64_t *idx = mxp_malloc(m * (2 * sizeof(int64_t) + size) + 1);
    if (!idx)
        return fail_in_sort(MXP_ERR_NO_MEMORY);
    npy_intp *old = (npy_intp *)(idx + m);
    unsigned char *elems = (unsigned char *)(old + m);
    memcpy(old, tosort, m * sizeof *old);
    for (size_t i = 0; i < m; i++)
        memcpy(elems + i * size, (const char *)v + old[i] * (npy_intp)size, size);
    mxp_status st = mxp_argsort_strided(idx, elems, t->dt, (ptrdiff_t)size, m);
    for (size_t i = 0; st == MXP_OK && i < m; i++)
        tosort[i] = old[idx[i]];
    mxp_free(idx);
    return st == MXP_OK ? 0 : fail_in_sort(st);
}

static int argmax(void *data, npy_intp n, npy_intp *index, void *arr)
{
    mxpy_float *t = arr_float(arr);
    mxp_status st = mxp_argmax_strided((int64_t *)index, data, t->dt, (ptrdiff_t)mxp_dtype_itemsize(t->dt), (size_t)n);
    return st == MXP_OK ? 0 : fail_in_sort(st);
}

static int argmin(void *data, npy_intp n, npy_intp *index, void *arr)
{
    mxpy_float *t = arr_float(arr);
    mxp_status st = mxp_argmin_strided((int64_t *)index, data, t->dt, (ptrdiff_t)mxp_dtype_itemsize(t->dt), (size_t)n);
    return st == MXP_OK ? 0 : fail_in_sort(st);
}

static int register_one(int i)
{
    mxpy_float *t = &mxpy_floats[i];
    char qualified[64];
    snprintf(qualified, sizeof qualified, "mxp.%s", t->name);
    extern PyTypeObject *mxpy_make_scalar_type(const char *qualified_name);
    t->scalar_type = mxpy_make_scalar_type(qualified);
    if (!t->scalar_type)
        return -1;

    if (make_tables(i) < 0)
        return -1;
    PyArray_ArrFuncs *f = &funcs[i];
    PyArray_InitArrFuncs(f);
    f->getitem = getitems[i];
    f->setitem = setitems[i];
    bool one = mxp_dtype_itemsize(t->dt) == 1;
    f->copyswapn = one ? copyswapn_1 : copyswapn_2;
    f->copyswap = one ? copyswap_1 : copyswap_2;
    f->nonzero = nonzero;
    f->fill = fill;
    f->dotfunc = dots[i];
    f->compare = compares[i];
    f->argmax = argmax;
    f->argmin = argmin;
    for (int k = 0; k < NPY_NSORTS; k++) { /* quicksort, heapsort, stable: one stable sort serves all */
        f->sort[k] = sort;
        f->argsort[k] = argsort;
    }

    PyArray_DescrProto *d = &descrs[i];
    memset(d, 0, sizeof *d);
    Py_SET_TYPE(d, &PyArrayDescr_Type);
    Py_SET_REFCNT(d, 1);
    Py_INCREF(t->scalar_type);
    d->typeobj = t->scalar_type;
    d->kind = 'V';
    d->type = t->typechar;
    d->byteorder = mxp_dtype_itemsize(t->dt) > 1 ? '=' : '|';
    d->flags = 0;
    d->elsize = (int)mxp_dtype_itemsize(t->dt);
    d->alignment = d->elsize;
    d->f = f;
    d->hash = -1;
    t->typenum = PyArray_RegisterDataType(d);
    if (t->typenum < 0)
        return -1;
    t->descr = PyArray_DescrFromType(t->typenum);
    return t->descr ? 0 : -1;
}

int mxpy_init_dtypes(PyObject *module)
{
    for (int i = 0; i < MXPY_NFLOATS; i++) {
        if (register_one(i) < 0)
            return -1;
        /* bfloat16.dtype is the dtype, as for ml_dtypes' types (an instance's
         * .dtype is the same object) */
        if (PyObject_SetAttrString((PyObject *)mxpy_floats[i].scalar_type, "dtype", (PyObject *)mxpy_floats[i].descr) < 0)
            return -1;
        Py_INCREF(mxpy_floats[i].scalar_type);
        if (PyModule_AddObject(module, mxpy_floats[i].name, (PyObject *)mxpy_floats[i].scalar_type) < 0)
            return -1;
    }
    /* _TYPES: every type NumPy lacks, in the table's order (mxp/__init__.py) */
    PyObject *all = PyTuple_New(MXPY_NFLOATS);
    for (int i = 0; all && i < MXPY_NFLOATS; i++)
        PyTuple_SET_ITEM(all, i, Py_NewRef((PyObject *)mxpy_floats[i].scalar_type));
    if (!all || PyModule_AddObject(module, "_TYPES", all) < 0) {
        Py_XDECREF(all);
        return -1;
    }
    return 0;
}

/* NumPy 1.22 - 1.26 only (NumPy 2: promote.c).
 *
 * np.result_type / np.promote_types for the mxp float dtypes, following
 * mxp_promote_types (docs/dtypes.md): bfloat16 + float16 -> float32,
 * float8_e4m3fn + float8_e5m2 -> float16, bfloat16 + int8 -> bfloat16.
 *
 * NumPy 1.24 promotes a legacy user dtype only to a type one side casts to
 * safely, so bfloat16 + float16 would be an error.  Each DType class has a
 * common_dtype slot (NumPy's experimental DType API, slot 4, in the slot
 * table every DType class points to); we put ours there for our three
 * classes and keep NumPy's for every other pair.  The class layout is
 * NumPy's own definition (ndarraytypes.h, private before 2.0); it is used
 * only for the NumPy versions checked below, elsewhere NumPy's default
 * promotion stays. */
#include <string.h>

#include "mxpy.h"

#if !MXPY_NUMPY2

typedef struct dtype_meta { /* PyArray_DTypeMeta of NumPy 1.22 - 1.26 */
    PyHeapTypeObject super;
    PyArray_Descr *singleton;
    int type_num;
    PyTypeObject *scalar_type;
    npy_uint64 flags;
    void *dt_slots;
    void *reserved[3];
} dtype_meta;

enum { SLOT_COMMON_DTYPE = 4 }; /* NPY_DT_common_dtype: index 3 of dt_slots */

typedef dtype_meta *common_dtype_fn(dtype_meta *cls, dtype_meta *other);
static common_dtype_fn *numpy_common[MXPY_NFLOATS];

static dtype_meta *meta_of_typenum(int typenum)
{
    PyArray_Descr *d = PyArray_DescrFromType(typenum);
    if (!d)
        return NULL;
    dtype_meta *m = (dtype_meta *)Py_TYPE(d);
    Py_INCREF(m);
    Py_DECREF(d);
    return m;
}

static dtype_meta *common_dtype(dtype_meta *cls, dtype_meta *other)
{
    mxpy_float *t = mxpy_float_by_typenum(cls->type_num);
    mxp_dtype o = mxpy_dtype_from_typenum(other->type_num);
    if (t && o != MXP_DTYPE_INVALID) {
        int r = mxpy_typenum_from_dtype(mxp_promote_types(t->dt, o));
        if (r != NPY_NOTYPE)
            return meta_of_typenum(r);
    }
    return numpy_common[t - mxpy_floats](cls, other);
}

static bool layout_known(void)
{
    unsigned v = PyArray_GetNDArrayCFeatureVersion();
    return v >= 0x0f && v <= 0x11; /* NumPy 1.22 .. 1.26 */
}

int mxpy_init_promotion(PyObject *numpy)
{
    (void)numpy;
    if (!layout_known())
        return 0;
    for (int i = 0; i < MXPY_NFLOATS; i++) {
        dtype_meta *m = (dtype_meta *)Py_TYPE(mxpy_floats[i].descr);
        void **slots = m->dt_slots;
        if (m->type_num != mxpy_floats[i].typenum || !slots) {
            PyErr_SetString(PyExc_RuntimeError, "mxp: NumPy's DType class layout is not the expected one");
            return -1;
        }
        numpy_common[i] = (common_dtype_fn *)slots[SLOT_COMMON_DTYPE - 1];
        slots[SLOT_COMMON_DTYPE - 1] = (void *)common_dtype;
    }
    return 0;
}

/* ---- cast safety between the one-byte types ------------------------------
 * NumPy's legacy rules call two user dtypes of the same kind and size
 * "equivalent", so float8_e4m3fn <-> float8_e5m2 (and every other pair of
 * one-byte mxp types) would count as safe casts although each loses values
 * of the other.  Their cast methods (got through
 * numpy.core._multiarray_umath._get_castingimpl) are marked same_kind,
 * which is what they are; the pairs mxp_can_cast calls safe (float4 ->
 * float6_e3m2 ...) stay safe. */

typedef struct array_method { /* PyArrayMethodObject's head, NumPy 1.22 - 1.26 */
    PyObject_HEAD
    char *name;
    int nin, nout;
    NPY_CASTING casting;
} array_method;

typedef struct bound_array_method {
    PyObject_HEAD
    void **dtypes;
    array_method *method;
} bound_array_method;

static int mark_same_kind(PyObject *get_castingimpl, const mxpy_float *from, const mxpy_float *to)
{
    PyObject *bound = PyObject_CallFunctionObjArgs(get_castingimpl, (PyObject *)Py_TYPE(from->descr),
                                                   (PyObject *)Py_TYPE(to->descr), NULL);
    if (!bound)
        return -1;
    array_method *m = ((bound_array_method *)bound)->method;
    int rc = 0;
    if (strcmp(Py_TYPE(bound)->tp_name, "numpy._BoundArrayMethod") || !m || strcmp(m->name, "legacy_cast") ||
        m->nin != 1 || m->nout != 1) {
        PyErr_SetString(PyExc_RuntimeError, "mxp: NumPy's cast method layout is not the expected one");
        rc = -1;
    } else if (m->casting == NPY_SAFE_CASTING) {
        m->casting = NPY_SAME_KIND_CASTING;
    }
    Py_DECREF(bound);
    return rc;
}

int mxpy_fix_float8_casts(void)
{
    if (!layout_known())
        return 0;
    PyObject *umath = PyImport_ImportModule("numpy.core._multiarray_umath");
    PyObject *get = umath ? PyObject_GetAttrString(umath, "_get_castingimpl") : NULL;
    int rc = get ? 0 : -1;
    for (int i = 0; i < MXPY_NFLOATS && rc == 0; i++)
        for (int j = 0; j < MXPY_NFLOATS && rc == 0; j++) {
            const mxpy_float *a = &mxpy_floats[i], *b = &mxpy_floats[j];
            if (i != j && mxp_dtype_itemsize(a->dt) == mxp_dtype_itemsize(b->dt) &&
                !mxp_can_cast(a->dt, b->dt, MXP_CASTING_SAFE))
                rc = mark_same_kind(get, a, b);
        }
    Py_XDECREF(get);
    Py_XDECREF(umath);
    return rc;
}

#endif /* !MXPY_NUMPY2 */

/* DLPack exchange (zero copy) with PyTorch and any other producer.
 *
 * The structures are DLPack's stable (pre-1.0, unversioned) ABI, which
 * PyTorch 1.13 speaks, written from the specification:
 *
 *   DLManagedTensor { DLTensor dl_tensor; void *manager_ctx; deleter }
 *   DLTensor { data, device {type, id}, ndim, dtype {code, bits, lanes},
 *              shape, strides (elements; NULL: C order), byte_offset }
 *
 * A capsule named "dltensor" is consumed by renaming it "used_dltensor";
 * the consumer then owns the tensor and calls its deleter once. */
#include <stdlib.h>
#include <string.h>

#include "mxpy.h"

enum { DL_CPU = 1 };
/* DLPack 1.1's codes; its float6/float4 (15-17) and sub-byte integers
 * are packed, mxp's arrays hold one element a byte: not exchanged. */
enum { DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BFLOAT = 4, DL_COMPLEX = 5, DL_BOOL = 6,
       DL_FLOAT8_E3M4 = 7, DL_FLOAT8_E4M3 = 8, DL_FLOAT8_E4M3B11FNUZ = 9, DL_FLOAT8_E4M3FN = 10,
       DL_FLOAT8_E4M3FNUZ = 11, DL_FLOAT8_E5M2 = 12, DL_FLOAT8_E5M2FNUZ = 13, DL_FLOAT8_E8M0FNU = 14 };

/* The float8 codes, by mxp dtype. */
static const struct { uint8_t code; mxp_dtype dt; } dl_float8[] = {
    { DL_FLOAT8_E3M4, MXP_E3M4 },     { DL_FLOAT8_E4M3, MXP_E4M3IEEE },     { DL_FLOAT8_E4M3B11FNUZ, MXP_E4M3B11 },
    { DL_FLOAT8_E4M3FN, MXP_E4M3 },   { DL_FLOAT8_E4M3FNUZ, MXP_E4M3FNUZ }, { DL_FLOAT8_E5M2, MXP_E5M2 },
    { DL_FLOAT8_E5M2FNUZ, MXP_E5M2FNUZ }, { DL_FLOAT8_E8M0FNU, MXP_E8M0 },
};

typedef struct dl_device {
    int32_t device_type, device_id;
} dl_device;

typedef struct dl_datatype {
    uint8_t code, bits;
    uint16_t lanes;
} dl_datatype;

typedef struct dl_tensor {
    void *data;
    dl_device device;
    int32_t ndim;
    dl_datatype dtype;
    int64_t *shape, *strides;
    uint64_t byte_offset;
} dl_tensor;

typedef struct dl_managed_tensor {
    dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct dl_managed_tensor *self);
} dl_managed_tensor;

/* ---- DLPack dtype <-> NumPy type number ----------------------------------- */

static int typenum_from_dl(dl_datatype t)
{
    if (t.lanes != 1)
        return NPY_NOTYPE;
    mxp_dtype dt = MXP_DTYPE_INVALID;
    switch (t.code) {
    case DL_INT: dt = t.bits == 8 ? MXP_S8 : t.bits == 16 ? MXP_S16 : t.bits == 32 ? MXP_S32 : t.bits == 64 ? MXP_S64 : 0; break;
    case DL_UINT: dt = t.bits == 8 ? MXP_U8 : t.bits == 16 ? MXP_U16 : t.bits == 32 ? MXP_U32 : t.bits == 64 ? MXP_U64 : 0; break;
    case DL_FLOAT: dt = t.bits == 16 ? MXP_F16 : t.bits == 32 ? MXP_F32 : t.bits == 64 ? MXP_F64 : 0; break;
    case DL_BFLOAT: dt = t.bits == 16 ? MXP_BF16 : 0; break;
    case DL_BOOL: dt = t.bits == 8 ? MXP_BOOL : 0; break;
    case DL_COMPLEX: return t.bits == 64 ? NPY_CFLOAT : t.bits == 128 ? NPY_CDOUBLE : NPY_NOTYPE;
    default:
        for (size_t i = 0; i < sizeof dl_float8 / sizeof dl_float8[0]; i++)
            if (dl_float8[i].code == t.code && t.bits == 8)
                dt = dl_float8[i].dt;
        break;
    }
    return dt ? mxpy_typenum_from_dtype(dt) : NPY_NOTYPE;
}

static bool dl_from_typenum(int typenum, dl_datatype *t)
{
    mxp_dtype dt = mxpy_dtype_from_typenum(typenum);
    *t = (dl_datatype){ 0, 0, 1 };
    if (typenum == NPY_CFLOAT || typenum == NPY_CDOUBLE) {
        *t = (dl_datatype){ DL_COMPLEX, typenum == NPY_CFLOAT ? 64 : 128, 1 };
        return true;
    }
    if (dt == MXP_DTYPE_INVALID)
        return false;
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(dt);
    t->bits = (uint8_t)tr->bits;
    if (dt == MXP_BOOL) {
        *t = (dl_datatype){ DL_BOOL, 8, 1 };
        return true;
    }
    if (tr->bits < 8)
        return false; /* one element a byte: DLPack's sub-byte types are packed */
    if (dt == MXP_BF16) {
        t->code = DL_BFLOAT;
        return true;
    }
    for (size_t i = 0; i < sizeof dl_float8 / sizeof dl_float8[0]; i++)
        if (dl_float8[i].dt == dt) {
            t->code = dl_float8[i].code;
            return true;
        }
    t->code = tr->kind == MXP_KIND_FLOAT ? DL_FLOAT : tr->is_signed ? DL_INT : DL_UINT;
    return true;
}

/* ---- import --------------------------------------------------------------- */

/* The array's base: owns the managed tensor, calls its deleter when the
 * last view goes. */
static void owner_destructor(PyObject *capsule)
{
    dl_managed_tensor *m = PyCapsule_GetPointer(capsule, "mxp.dlpack_owner");
    if (m && m->deleter)
        m->deleter(m);
}

static PyObject *array_from_managed(dl_managed_tensor *m)
{
    dl_tensor *t = &m->dl_tensor;
    if (t->device.device_type != DL_CPU) {
        PyErr_Format(PyExc_BufferError, "from_dlpack: the tensor lives on device type %d; only CPU memory (1) can be viewed",
                     (int)t->device.device_type);
        return NULL;
    }
    int typenum = typenum_from_dl(t->dtype);
    if (typenum == NPY_NOTYPE) {
        PyErr_Format(PyExc_TypeError, "from_dlpack: DLPack dtype (code %d, bits %d, lanes %d) has no mxp or NumPy dtype",
                     t->dtype.code, t->dtype.bits, t->dtype.lanes);
        return NULL;
    }
    if (t->ndim < 0 || t->ndim > NPY_MAXDIMS) {
        PyErr_Format(PyExc_ValueError, "from_dlpack: %d dimensions (at most %d)", (int)t->ndim, NPY_MAXDIMS);
        return NULL;
    }
    PyArray_Descr *descr = PyArray_DescrFromType(typenum);
    if (!descr)
        return NULL;
    npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    for (int i = 0; i < t->ndim; i++) {
        dims[i] = (npy_intp)t->shape[i];
        if (t->strides)
            strides[i] = (npy_intp)t->strides[i] * PyDataType_ELSIZE(descr);
    }
    char *data = (char *)t->data + t->byte_offset;
    return PyArray_NewFromDescr(&PyArray_Type, descr, t->ndim, dims, t->strides ? strides : NULL, data,
                                NPY_ARRAY_WRITEABLE, NULL);
}

PyObject *mxpy_from_dlpack(PyObject *self, PyObject *obj)
{
    (void)self;
    PyObject *capsule;
    if (PyCapsule_CheckExact(obj)) {
        capsule = obj;
        Py_INCREF(capsule);
    } else if (PyObject_HasAttrString(obj, "__dlpack__")) {
        capsule = PyObject_CallMethod(obj, "__dlpack__", NULL);
        if (!capsule)
            return NULL;
    } else {
        return PyErr_Format(PyExc_TypeError, "from_dlpack: a %.200s has no __dlpack__ and is not a DLPack capsule",
                            Py_TYPE(obj)->tp_name);
    }
    if (!PyCapsule_IsValid(capsule, "dltensor")) {
        Py_DECREF(capsule);
        return PyErr_Format(PyExc_ValueError, "from_dlpack: not an unused DLPack capsule (named \"dltensor\"); "
                                              "a capsule can be consumed once");
    }
    dl_managed_tensor *m = PyCapsule_GetPointer(capsule, "dltensor");
    PyObject *arr = array_from_managed(m);
    /* The owner gets its destructor only once the array holds it: until
     * then the producer's capsule still owns the tensor. */
    PyObject *owner = arr ? PyCapsule_New(m, "mxp.dlpack_owner", NULL) : NULL;
    if (!owner) {
        Py_XDECREF(arr);
        Py_DECREF(capsule);
        return NULL;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)arr, owner) < 0) { /* steals owner */
        Py_DECREF(arr);
        Py_DECREF(capsule);
        return NULL;
    }
    PyCapsule_SetDestructor(owner, owner_destructor);
    PyCapsule_SetName(capsule, "used_dltensor");
    Py_DECREF(capsule);
    return arr;
}

/* ---- export --------------------------------------------------------------- */

typedef struct export_block {
    dl_managed_tensor managed;
    int64_t dims[2 * NPY_MAXDIMS]; /* shape, then strides */
} export_block;

/* May run on any thread, with or without the GIL. */
static void export_deleter(dl_managed_tensor *m)
{
    PyGILState_STATE g = PyGILState_Ensure();
    Py_XDECREF((PyObject *)m->manager_ctx);
    PyGILState_Release(g);
    free(m);
}

static void export_capsule_destructor(PyObject *capsule)
{
    if (!PyCapsule_IsValid(capsule, "dltensor"))
        return; /* consumed: the consumer calls the deleter */
    dl_managed_tensor *m = PyCapsule_GetPointer(capsule, "dltensor");
    m->deleter(m);
}

PyObject *mxpy_to_dlpack(PyObject *self, PyObject *obj)
{
    (void)self;
    if (!PyArray_Check(obj))
        return PyErr_Format(PyExc_TypeError, "to_dlpack: expected a numpy.ndarray, got a %.200s", Py_TYPE(obj)->tp_name);
    PyArrayObject *a = (PyArrayObject *)obj;
    PyArray_Descr *d = PyArray_DESCR(a);
    dl_datatype dt;
    if (!dl_from_typenum(d->type_num, &dt) || !PyArray_ISNBO(d->byteorder))
        return PyErr_Format(PyExc_TypeError, "to_dlpack: dtype %R has no DLPack equivalent", (PyObject *)d);
    if (!PyArray_ISWRITEABLE(a))
        return PyErr_Format(PyExc_BufferError, "to_dlpack: the array is read-only (DLPack cannot mark it so)");
    /* DLPack consumers need not take negative strides, and PyTorch aborts
     * the process on them: refuse (mxp.dlpack(a) copies such an array). */
    for (int i = 0; i < PyArray_NDIM(a); i++)
        if (PyArray_DIM(a, i) > 1 && PyArray_STRIDE(a, i) < 0)
            return PyErr_Format(PyExc_BufferError, "to_dlpack: axis %d has a negative stride (%zd bytes); export "
                                "np.ascontiguousarray(a), or mxp.dlpack(a), which copies it",
                                i, (Py_ssize_t)PyArray_STRIDE(a, i));
    /* a zero-copy export of memory that is not aligned to the item size
     * (np.frombuffer(..., offset=1), a field of a packed structured array)
     * would hand consumers pointers they may not dereference: refuse
     * (mxp.dlpack(a) copies such an array) */
    if (!mxpy_is_aligned(a))
        return PyErr_Format(PyExc_BufferError, "to_dlpack: the array is not aligned (its address or a stride is not a "
                            "multiple of its item size, %zd bytes); export np.require(a, requirements='A'), or "
                            "mxp.dlpack(a), which copies it", (Py_ssize_t)PyDataType_ELSIZE(d));
    export_block *b = calloc(1, sizeof *b);
    if (!b)
        return PyErr_NoMemory();
    int nd = PyArray_NDIM(a);
    for (int i = 0; i < nd; i++) {
        npy_intp s = PyArray_STRIDE(a, i);
        npy_intp size = PyDataType_ELSIZE(d);
        if (s % size) {
            free(b);
            return PyErr_Format(PyExc_BufferError, "to_dlpack: stride %zd is not a multiple of the item size %zd",
                                (Py_ssize_t)s, (Py_ssize_t)size);
        }
        b->dims[i] = PyArray_DIM(a, i);
        b->dims[NPY_MAXDIMS + i] = s / size;
    }
    dl_tensor *t = &b->managed.dl_tensor;
    *t = (dl_tensor){ PyArray_DATA(a), { DL_CPU, 0 }, nd, dt, b->dims, b->dims + NPY_MAXDIMS, 0 };
    b->managed.manager_ctx = obj;
    b->managed.deleter = export_deleter;
    Py_INCREF(obj);
    PyObject *capsule = PyCapsule_New(&b->managed, "dltensor", export_capsule_destructor);
    if (!capsule) {
        Py_DECREF(obj);
        free(b);
    }
    return capsule;
}

/* mxp's NumPy extension: what its C files share.
 *
 * One generic "mxp float dtype" serves bfloat16 and both float8 types: a
 * table of per-dtype facts (mxpy_floats[]) and functions that take a row
 * of it, never a copy of the code per type.  Numerics come from libmxp
 * (mxp_convert, mxp_binary_strided, mxp_gemm ...); this layer only maps
 * NumPy's calling conventions onto them. */
#ifndef MXPY_H
#define MXPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* NPY_ABI_VERSION says which NumPy generation the headers are; built
 * against NumPy 2, the module needs 2.0's API (ufunc promoters). */
#include <numpy/_numpyconfig.h>
#if NPY_ABI_VERSION >= 0x02000000
#define NPY_TARGET_VERSION 0x00000012 /* NPY_2_0_API_VERSION */
#endif
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL mxpy_ARRAY_API
#define PY_UFUNC_UNIQUE_SYMBOL mxpy_UFUNC_API
#ifndef MXPY_IMPORT_NUMPY
#define NO_IMPORT_ARRAY
#define NO_IMPORT_UFUNC
#endif
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
#include <numpy/ufuncobject.h>

/* One source for both NumPy generations.  NumPy 2 registers a legacy user
 * dtype from a PyArray_DescrProto (the old descriptor layout, kept for that
 * purpose only) and reads descriptors through PyDataType_* accessors; NumPy
 * 1.x has neither name, and there the two are the plain struct and field. */
#define MXPY_NUMPY2 (NPY_ABI_VERSION >= 0x02000000)
#if !MXPY_NUMPY2
typedef PyArray_Descr PyArray_DescrProto;
#define PyDataType_ELSIZE(d) ((npy_intp)(d)->elsize)
#endif

#include <mxp.h>

/* One row per dtype NumPy lacks (the name says float: the sub-byte
 * integers are rows too, with integer scalars). */
typedef struct mxpy_float {
    mxp_dtype dt;             /* MXP_BF16, ... */
    const char *name;         /* "bfloat16": the scalar type's and dtype's name */
    char typechar;            /* dtype.char */
    PyTypeObject *scalar_type;
    PyArray_Descr *descr;     /* the registered descriptor */
    int typenum;              /* NumPy's number for it, after registration */
} mxpy_float;

enum {
    MXPY_BF16, MXPY_E4M3, MXPY_E5M2,
    MXPY_E3M4, MXPY_E4M3IEEE, MXPY_E4M3B11, MXPY_E4M3FNUZ, MXPY_E5M2FNUZ, MXPY_E8M0,
    MXPY_E2M3, MXPY_E3M2, MXPY_E2M1,
    MXPY_S4, MXPY_U4, MXPY_S2, MXPY_U2, MXPY_S1, MXPY_U1,
    MXPY_NFLOATS
};
extern mxpy_float mxpy_floats[MXPY_NFLOATS];

/* The scalar object: the raw bits of one element (1 or 2 bytes). */
typedef struct mxpy_scalar {
    PyObject_HEAD
    uint16_t bits;
} mxpy_scalar;

/* The row whose typenum, scalar type or mxp dtype this is, or NULL. */
mxpy_float *mxpy_float_by_typenum(int typenum);
mxpy_float *mxpy_float_by_scalar_type(PyTypeObject *type);
mxpy_float *mxpy_float_by_dtype(mxp_dtype dt);

/* NumPy type number <-> mxp dtype for every type both know (NPY_NOTYPE /
 * MXP_DTYPE_INVALID otherwise). */
mxp_dtype mxpy_dtype_from_typenum(int typenum);
int mxpy_typenum_from_dtype(mxp_dtype dt);

/* Scalars: one element's bits <-> double (exact from the type; to the type
 * rounded once to nearest even). */
double mxpy_to_double(const mxpy_float *t, uint16_t bits);
uint16_t mxpy_from_double(const mxpy_float *t, double v);
/* A new scalar object of type t. */
PyObject *mxpy_scalar_new(const mxpy_float *t, uint16_t bits);
/* Reads a Python number (int, float, NumPy scalar, an mxp scalar, a
 * string) into t's bits, rounded once.  -1 with an exception set on error. */
int mxpy_bits_from_object(const mxpy_float *t, PyObject *obj, uint16_t *bits);

/* mxp_convert_opts from the Python spellings ("nearest_even", "inf"); -1
 * with ValueError for an unknown name. */
int mxpy_convert_opts(const char *rounding, const char *overflow, unsigned long long seed, mxp_convert_opts *o);

/* Raises the exception that fits st, with mxp_last_error()'s sentence;
 * returns NULL so callers can `return mxpy_raise(st);`. */
PyObject *mxpy_raise(mxp_status st);
/* numpy's AxisError (numpy.exceptions, or numpy on 1.x; IndexError if
 * neither has it): what an axis out of range raises. */
PyObject *mxpy_axis_error_type(void);

/* NumPy arrays <-> mxp_array without copies (bridge.c).  mxpy_wrap: a view
 * of the array (NULL with an exception: not an ndarray, a dtype mxp lacks,
 * read-only when writeable is asked); what names the argument in messages.
 * mxpy_unwrap: a NumPy array owning m (steals it; NULL m passes through). */
mxp_array *mxpy_wrap(PyObject *obj, const char *what, bool writeable);
PyObject *mxpy_unwrap(mxp_array *m);
/* What the C call does with a wrapped array, which decides what happens to
 * an unaligned one (an address or a stride not a multiple of the item
 * size; NumPy's np.frombuffer(..., offset=1), fields of packed structured
 * arrays): the C library is handed aligned memory only.
 *   MXPY_READ: read during the call: a view of an aligned copy;
 *   MXPY_WRITE: written (or read and written) during the call: a view of
 *     an aligned copy returned in *tmp, which the caller copies back with
 *     mxpy_copy_back after the call (tmp NULL: refused as KEEP_WRITE);
 *   MXPY_KEEP_READ, MXPY_KEEP_WRITE: kept by the C object beyond the call
 *     (an optimizer's gradients and parameters): ValueError.
 * mxpy_wrap(obj, what, false) is MXPY_READ, (obj, what, true) KEEP_WRITE. */
typedef enum mxpy_use { MXPY_READ, MXPY_WRITE, MXPY_KEEP_READ, MXPY_KEEP_WRITE } mxpy_use;
mxp_array *mxpy_wrap_ex(PyObject *obj, const char *what, mxpy_use use, PyObject **tmp);
/* tmp (from mxpy_wrap_ex; NULL: nothing to do) copied into obj and
 * released; 0, or -1 with an exception set. */
int mxpy_copy_back(PyObject *obj, PyObject *tmp);
/* The array's data and strides are multiples of its item size (and NumPy
 * calls it aligned); empty arrays and 1-byte items always are. */
bool mxpy_is_aligned(PyArrayObject *a);
/* obj itself (a new reference) when it is aligned or no array, else an
 * aligned copy (NULL with an exception set). */
PyObject *mxpy_aligned(PyObject *obj);
/* A dtype from a name ("bf16", "float8_e4m3fn") or anything np.dtype()
 * takes; MXP_DTYPE_INVALID with an exception set. */
mxp_dtype mxpy_dtype_arg(PyObject *obj, const char *what);

/* Sequences of arrays handed to C for one call (bridge.c): views of the
 * items, read (MXPY_READ) or updated in place (MXPY_WRITE), n of them in
 * v.  mxpy_views_wrap: 0, or -1 with an exception set (nothing to end);
 * mxpy_views_end frees them, first copying the aligned copies back into
 * their arrays when ok: 0, or -1 with an exception set. */
typedef struct mxpy_views {
    PyObject *fast; /* the sequence's items */
    mxp_array **v;
    PyObject **tmp; /* MXPY_WRITE: the aligned copies of unaligned arrays (or NULL) */
    Py_ssize_t n;
} mxpy_views;
int mxpy_views_wrap(PyObject *seq, const char *what, mxpy_use use, mxpy_views *l);
int mxpy_views_end(mxpy_views *l, bool ok);

/* The library's objects in PyCapsules (capsule.c): a kind is the capsule's
 * name and the object's free function, which runs when the capsule goes. */
typedef struct mxpy_kind {
    const char *name; /* "mxp.optimizer" */
    void (*free)(void *obj);
} mxpy_kind;
extern const mxpy_kind mxpy_kind_optimizer, mxpy_kind_loss_scaler, mxpy_kind_autocast, mxpy_kind_monitor,
    mxpy_kind_observer, mxpy_kind_compare_select, mxpy_kind_qtensor;
/* The capsule of obj, which a create call that returned st made: NULL with
 * st's exception when st is an error; obj freed at once when the capsule
 * cannot be made. */
PyObject *mxpy_capsule_new(mxp_status st, void *obj, const mxpy_kind *kind);
/* The object in cap, a capsule of kind; NULL with an exception set for
 * anything else. */
void *mxpy_capsule_get(PyObject *cap, const mxpy_kind *kind);
/* A PyArg "O&" converter: the object of a capsule of o->kind into o->obj
 * (mxpy_object opt = { &mxpy_kind_optimizer }; ... "O&", mxpy_object_conv, &opt). */
typedef struct mxpy_object {
    const mxpy_kind *kind;
    void *obj;
} mxpy_object;
int mxpy_object_conv(PyObject *cap, void *arg);
/* None, or NULL with st's exception: `return mxpy_none(st);` */
PyObject *mxpy_none(mxp_status st);

/* Module set-up, one per file; 0 or -1 with an exception set. */
int mxpy_init_dtypes(PyObject *module);
int mxpy_init_constants(PyObject *module); /* constants.c: the C library's names and enum values */
/* Raises ValueError "<what> '<value>' is not one of a, b, c", the names of
 * the module's tuple `tuple` (ROUNDINGS ...); returns -1. */
int mxpy_not_one_of(const char *what, const char *value, const char *tuple);
int mxpy_init_casts(void);
int mxpy_init_ufuncs(PyObject *numpy);
/* Ends the running add/multiply reduction of this thread (dtype.c calls it
 * where NumPy starts one: copyswap of the initial value, setitem). */
void mxpy_reduction_restart(void);
/* After the ufunc loops: NumPy 2 promoters (promote.c), or NumPy 1.x's
 * common_dtype slot (promote_numpy1.c). */
int mxpy_init_promotion(PyObject *numpy);
/* The i-th NumPy ufunc with mxp loops of two inputs and one output (NULL
 * past the last); *predicate: its output is bool. */
const char *mxpy_binary_ufunc(int i, bool *predicate);
/* NumPy 1.x: float8_e4m3fn <-> float8_e5m2 marked same_kind, not safe
 * (promote_numpy1.c); NumPy 2: nothing to do that its public API allows. */
int mxpy_fix_float8_casts(void);
int mxpy_init_matmul(PyObject *numpy);

/* ml_dtypes' types of mxp's formats, once registered (foreign.c):
 * MXP_DTYPE_INVALID for any other type number. */
mxp_dtype mxpy_foreign_dtype(int typenum);
PyObject *mxpy_register_foreign(PyObject *self, PyObject *args);

/* Module functions defined in other files: the method tables of the api_*.c
 * files, and DLPack. */
extern PyMethodDef mxpy_runtime_methods[], mxpy_gemm_methods[], mxpy_quant_methods[], mxpy_analysis_methods[],
    mxpy_optim_methods[], mxpy_scaler_methods[], mxpy_autocast_methods[], mxpy_monitor_methods[],
    mxpy_reduce_methods[], mxpy_io_methods[], mxpy_safetensors_methods[], mxpy_nn_methods[], mxpy_plugin_methods[],
    mxpy_profile_methods[], mxpy_fft_methods[];
PyObject *mxpy_from_dlpack(PyObject *self, PyObject *obj);
PyObject *mxpy_to_dlpack(PyObject *self, PyObject *obj);

#endif

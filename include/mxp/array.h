/* mxp — the n-d array: a dtype, a shape, byte strides and a view into a
 * reference-counted buffer.  Views share the buffer; copies do not.
 * See docs/arrays.md. */
#ifndef MXP_ARRAY_H
#define MXP_ARRAY_H

#include <stdio.h>

#include "convert.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MXP_MAXDIMS 32 /* NumPy's limit */

/* Flags (mxp_array_flags). */
#define MXP_ARRAY_C_CONTIGUOUS 0x1u
#define MXP_ARRAY_F_CONTIGUOUS 0x2u
#define MXP_ARRAY_WRITEABLE 0x4u
#define MXP_ARRAY_ALIGNED 0x8u  /* data and strides are multiples of the itemsize */
#define MXP_ARRAY_OWNDATA 0x10u /* the array is its buffer's first, full view */

typedef struct mxp_array mxp_array; /* opaque */

/* Every function that returns an array through `out` gives the caller one
 * reference; mxp_array_free releases it (NULL is fine).  On error *out is
 * left NULL and nothing leaks. */
MXP_API void mxp_array_free(mxp_array *a);

/* ---- properties ---------------------------------------------------------- */
MXP_API mxp_dtype mxp_array_dtype(const mxp_array *a);
MXP_API int mxp_array_ndim(const mxp_array *a);
MXP_API const int64_t *mxp_array_shape(const mxp_array *a);   /* ndim entries */
MXP_API const int64_t *mxp_array_strides(const mxp_array *a); /* bytes, may be < 0 */
MXP_API int64_t mxp_array_size(const mxp_array *a);           /* product of the shape */
MXP_API size_t mxp_array_itemsize(const mxp_array *a);
MXP_API void *mxp_array_data(const mxp_array *a);             /* element (0, ..., 0) */
MXP_API unsigned mxp_array_flags(const mxp_array *a);
/* The array this one views (NULL for an owner); not a new reference. */
MXP_API const mxp_array *mxp_array_base(const mxp_array *a);
/* Address of the element at idx (ndim indices, negative counts from the
 * end); NULL and an error for an index out of range. */
MXP_API void *mxp_array_at(const mxp_array *a, const int64_t *idx);

/* The element at idx (ndim indices, negative counts from the end) as a
 * double: exact for every dtype but int64/uint64 beyond 2^53 (rounded to
 * nearest even).  MXP_ERR_INDEX for an index out of range (nothing
 * written to *out), MXP_ERR_INVALID_ARGUMENT for NULL pointers (idx may
 * be NULL for a 0-d array). */
MXP_API mxp_status mxp_array_get_f64(const mxp_array *a, const int64_t *idx, double *out);

/* ---- printing (NumPy's str and repr) -------------------------------------- */

#define MXP_PRINT_PRECISION_NONE (-1) /* precision 0: no digits after the point */

/* Zero-initialized (or NULL) means NumPy's defaults: str(a). */
typedef struct mxp_print_opts {
    size_t struct_size; /* 0: this release's layout, or sizeof(mxp_print_opts); docs/abi.md */
    int precision;     /* digits after the point at most: 1..40; 0: 8; MXP_PRINT_PRECISION_NONE: 0 */
    int edgeitems;     /* elements at each end of a summarised axis: 1..1000; 0: 3 */
    int64_t threshold; /* more elements than this are summarised with "..."; 0: 1000 */
    int linewidth;     /* characters per line; 0: 75 */
    bool repr;         /* repr(a): "array([1., 2.], dtype=float32)"; false: str(a), print(a) */
} mxp_print_opts;

/* The text NumPy 1.24 prints for a (np.array2string / repr with the same
 * options) in a new NUL-terminated buffer from mxp_malloc (release it with
 * mxp_free); *len (NULL allowed) gets its length.  Floats print the fewest
 * digits that read back as the same value of a's dtype; bfloat16 and
 * float8 print like NumPy's floats with their own precision.  On error
 * *out is NULL.  See docs/arrays.md, "Printing". */
MXP_API mxp_status mxp_array_format(char **out, size_t *len, const mxp_array *a, const mxp_print_opts *opts);
/* The same text and a newline written to f, as print(a) writes it
 * (MXP_ERR_IO if the write fails). */
MXP_API mxp_status mxp_array_fprint(FILE *f, const mxp_array *a, const mxp_print_opts *opts);

/* ---- creation ------------------------------------------------------------ */
MXP_API mxp_status mxp_array_empty(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape);
MXP_API mxp_status mxp_array_zeros(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape);
MXP_API mxp_status mxp_array_ones(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape);
/* value is converted once to dt with opts (NULL: nearest even). */
MXP_API mxp_status mxp_array_full(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape, double value,
                                  const mxp_convert_opts *opts);
/* A 0-d array of dtype dt holding value rounded to nearest even
 * (np.array(value, dtype=dt)). */
MXP_API mxp_status mxp_array_scalar(mxp_array **out, double value, mxp_dtype dt);
/* NumPy's arange: ceil((stop - start) / step) elements start + i*step,
 * computed in float64 and rounded once to dt. */
MXP_API mxp_status mxp_array_arange(mxp_array **out, mxp_dtype dt, double start, double stop, double step);
MXP_API mxp_status mxp_array_linspace(mxp_array **out, mxp_dtype dt, double start, double stop, int64_t num,
                                      bool endpoint);
/* n x m with ones on diagonal k (k > 0 above the main one). */
MXP_API mxp_status mxp_array_eye(mxp_array **out, mxp_dtype dt, int64_t n, int64_t m, int64_t k);
/* Counter-based random numbers: element i (C order) depends only on seed
 * and i, so the same seed gives the same array whatever the thread count.
 * Computed in float64 and rounded once to dt. */
MXP_API mxp_status mxp_array_random_uniform(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape,
                                            double low, double high, uint64_t seed);
MXP_API mxp_status mxp_array_random_normal(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape,
                                           double mean, double stddev, uint64_t seed);
/* Wraps a caller's buffer without copying.  strides NULL means C order;
 * byte offsets that overflow int64 or leave the address space are
 * MXP_ERR_SIZE_OVERFLOW.  release(ctx, data) is called when the last view
 * goes (may be NULL). */
MXP_API mxp_status mxp_array_wrap(mxp_array **out, void *data, mxp_dtype dt, int ndim, const int64_t *shape,
                                  const int64_t *strides, bool writeable, void (*release)(void *ctx, void *data),
                                  void *ctx);

/* ---- views (no copy) -------------------------------------------------- */

/* One axis of a slice, NumPy's start:stop:step.  MXP_SLICE_NONE in start or
 * stop means "omitted" (the end that depends on the sign of step); step 0
 * is an error.  Out-of-range bounds are clipped as in NumPy. */
#define MXP_SLICE_NONE INT64_MIN
typedef struct mxp_slice {
    int64_t start, stop, step;
} mxp_slice;
#define MXP_SLICE_ALL ((mxp_slice){ MXP_SLICE_NONE, MXP_SLICE_NONE, 1 })

/* Slices the first nslices axes (the rest are kept whole). */
MXP_API mxp_status mxp_array_slice(mxp_array **out, const mxp_array *a, int nslices, const mxp_slice *slices);
/* a[..., i, ...] on one axis: that axis is removed.  Negative i counts from the end. */
MXP_API mxp_status mxp_array_index(mxp_array **out, const mxp_array *a, int axis, int64_t i);
/* Axes permuted: out axis j is a's axis perm[j]; perm NULL reverses them. */
MXP_API mxp_status mxp_array_transpose(mxp_array **out, const mxp_array *a, const int *perm);
/* A view with a new shape (one entry may be -1); MXP_ERR_SHAPE if the
 * strides do not allow a view (then mxp_array_reshape_copy copies). */
MXP_API mxp_status mxp_array_reshape(mxp_array **out, const mxp_array *a, int ndim, const int64_t *shape);
MXP_API mxp_status mxp_array_reshape_copy(mxp_array **out, const mxp_array *a, int ndim, const int64_t *shape);
/* Removes axis `axis` (size 1), or every size-1 axis when axis is MXP_ALL_AXES. */
#define MXP_ALL_AXES INT32_MIN
MXP_API mxp_status mxp_array_squeeze(mxp_array **out, const mxp_array *a, int axis);
/* Inserts a size-1 axis at position axis (-1: last). */
MXP_API mxp_status mxp_array_expand_dims(mxp_array **out, const mxp_array *a, int axis);
/* A read-only view broadcast to shape (NumPy rules; stride 0 on new axes). */
MXP_API mxp_status mxp_array_broadcast_to(mxp_array **out, const mxp_array *a, int ndim, const int64_t *shape);
/* The broadcast shape of two shapes, or an error naming both. */
MXP_API mxp_status mxp_broadcast_shapes(int *ndim_out, int64_t *shape_out, int ndim_a, const int64_t *shape_a,
                                        int ndim_b, const int64_t *shape_b);

/* ---- copies ------------------------------------------------------------ */
/* order 'C' or 'F'; returns a new reference to a itself when already so. */
MXP_API mxp_status mxp_array_ascontiguous(mxp_array **out, const mxp_array *a, char order);
/* A new C-contiguous array of dtype dt (rounding, overflow, seed from opts;
 * stochastic rounding indexes elements in C order). */
MXP_API mxp_status mxp_array_astype(mxp_array **out, const mxp_array *a, mxp_dtype dt, const mxp_convert_opts *opts);
/* Copies src into dst, broadcasting src, if mxp_can_cast(src, dst, casting). */
MXP_API mxp_status mxp_array_copyto(mxp_array *dst, const mxp_array *src, mxp_casting casting,
                                    const mxp_convert_opts *opts);

#ifdef __cplusplus
}
#endif
#endif

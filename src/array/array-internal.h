/* Internal: the array struct and helpers shared by src/array/. */
#ifndef MXP_ARRAY_INTERNAL_H
#define MXP_ARRAY_INTERNAL_H

#include <stdatomic.h>

#include "mxp/alloc.h"
#include "mxp/array.h"

/* An owner holds the memory; a view holds a reference to its owner (never
 * to another view, as NumPy collapses base chains). */
struct mxp_array {
    atomic_int refs;
    mxp_dtype dtype;
    int ndim;
    int64_t shape[MXP_MAXDIMS];
    int64_t strides[MXP_MAXDIMS];
    char *data;
    unsigned flags;
    mxp_array *owner;                   /* NULL for an owner */
    void *memory;                       /* owner: what to release */
    void (*release)(void *ctx, void *); /* owner of a wrapped buffer */
    void *release_ctx;
};

/* Checks ndim and shape; *size gets the element count. */
mxp_status mxp_check_shape(int ndim, const int64_t *shape, mxp_dtype dt, int64_t *size);

/* A new owner array, C order, uninitialized. */
mxp_status mxp_array_new_owner(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape);

/* A new view of a's memory with the given layout (flags recomputed,
 * writeable inherited unless cleared by the caller afterwards). */
mxp_status mxp_array_new_view(mxp_array **out, const mxp_array *a, int ndim, const int64_t *shape,
                              const int64_t *strides, char *data);

void mxp_array_update_flags(mxp_array *a);

/* Normalizes a possibly negative axis; error if out of range. */
mxp_status mxp_normalize_axis(int *axis, int ndim, const char *what);

/* Copies src (already broadcast to dst's shape) into dst row by row with
 * conversion; stochastic rounding indexes elements in C order. */
void mxp_array_copy_rows(mxp_array *dst, const mxp_array *src, const mxp_convert_opts *opts);

/* Elements [start, start + n) of a in C order, converted to dt into the
 * contiguous buffer dst (nearest even, no flags): a whole array streamed a
 * chunk at a time without a copy of it (range.c). */
mxp_status mxp_array_convert_range(const mxp_array *a, int64_t start, int64_t n, void *dst, mxp_dtype dt);

/* mxp's spelling of a shape in messages, into buf: (3,4), (5,), (). */
void mxp_format_shape(char *buf, size_t cap, int ndim, const int64_t *shape);

mxp_status mxp_require_array(const mxp_array *a, const char *name);

/* Do the byte ranges the two arrays can touch intersect? */
bool mxp_arrays_may_overlap(const mxp_array *a, const mxp_array *b);

/* The release function of wrapped memory that mxp must not free. */
void mxp_wrap_keep(void *ctx, void *data);

#endif

/* mxp — safetensors files (Hugging Face's format for model weights):
 * opened once (memory-mapped, every header rule checked before any tensor
 * is touched), tensors seen in place or read into arrays with any
 * conversion, files written byte for byte as the safetensors library
 * writes them.  Format, dtypes, limits and errors: docs/safetensors.md. */
#ifndef MXP_SAFETENSORS_H
#define MXP_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "array.h"
#include "common.h"
#include "convert.h"
#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An open file: its header parsed and checked, its data mapped read-only. */
typedef struct mxp_safetensors mxp_safetensors;

/* Opens path.  Everything the header says is checked first: its length
 * (at most 100,000,000 bytes, within the file), the JSON (UTF-8, nesting
 * and sizes bounded), each tensor's dtype, shape and data_offsets, the
 * offsets tiling the data from 0 to the end of the file exactly, no size
 * overflowing.  Errors: MXP_ERR_INVALID_ARGUMENT (NULL), MXP_ERR_IO (open,
 * stat, mmap), MXP_ERR_FORMAT (the rule broken, named, with the tensor),
 * MXP_ERR_NO_MEMORY.  On error *out is NULL. */
MXP_API mxp_status mxp_safetensors_open(mxp_safetensors **out, const char *path);

/* As mxp_safetensors_open, from size bytes in memory (copied). */
MXP_API mxp_status mxp_safetensors_open_buffer(mxp_safetensors **out, const void *data, size_t size);

/* Unmaps and frees; NULL is a no-op.  Views from mxp_safetensors_data and
 * the strings returned below end with it; arrays read stay valid. */
MXP_API void mxp_safetensors_close(mxp_safetensors *st);

/* Tensors, in the order of their data in the file (i < count). */
MXP_API size_t mxp_safetensors_count(const mxp_safetensors *st);
/* The tensor's name; NULL for a bad st or i. */
MXP_API const char *mxp_safetensors_name(const mxp_safetensors *st, size_t i);
/* *index of the tensor called name; MXP_ERR_INDEX with the name when none is. */
MXP_API mxp_status mxp_safetensors_find(const mxp_safetensors *st, const char *name, size_t *index);
/* The dtype as the file spells it ("BF16", "F8_E4M3", "F8_E8M0", ...). */
MXP_API const char *mxp_safetensors_dtype_name(const mxp_safetensors *st, size_t i);
/* mxp's dtype for it; MXP_DTYPE_INVALID for a dtype of the format that
 * mxp has no type for yet (C64): such a tensor is still
 * listed and seen through mxp_safetensors_data. */
MXP_API mxp_dtype mxp_safetensors_dtype(const mxp_safetensors *st, size_t i);
/* Dimensions (0 for a scalar; -1 for a bad st or i) and their sizes. */
MXP_API int mxp_safetensors_ndim(const mxp_safetensors *st, size_t i);
MXP_API const int64_t *mxp_safetensors_shape(const mxp_safetensors *st, size_t i);
/* The tensor's bytes where they lie in the file (little-endian, C order,
 * no alignment promised), *nbytes of them; NULL for a bad st or i.  F4 and
 * F6 tensors are packed there (mxp_pack's order); read unpacks them. */
MXP_API const void *mxp_safetensors_data(const mxp_safetensors *st, size_t i, size_t *nbytes);

/* Tensor i into a new C-contiguous array of dtype (MXP_DTYPE_INVALID: the
 * file's own; F4 and F6 unpacked to a byte per element), converted by mxp_convert with opts (NULL: nearest-even,
 * overflow to inf; stochastic rounding draws by element index from 0).
 * Errors: MXP_ERR_INVALID_ARGUMENT, MXP_ERR_INDEX, MXP_ERR_UNSUPPORTED (a
 * dtype mxp lacks), MXP_ERR_INVALID_DTYPE, MXP_ERR_SHAPE (more than
 * MXP_MAXDIMS dimensions), MXP_ERR_NO_MEMORY; *out NULL on error. */
MXP_API mxp_status mxp_safetensors_read(mxp_array **out, const mxp_safetensors *st, size_t i, mxp_dtype dtype,
                                        const mxp_convert_opts *opts);

/* Tensor i converted into dst, an existing writeable C-contiguous array of
 * the tensor's shape and any dtype (a buffer reused across calls, or memory
 * of the caller's, such as a NumPy array's).  Errors as mxp_safetensors_read,
 * and MXP_ERR_SHAPE for another shape, MXP_ERR_READONLY,
 * MXP_ERR_INVALID_ARGUMENT for a dst that is not C-contiguous. */
MXP_API mxp_status mxp_safetensors_read_into(mxp_array *dst, const mxp_safetensors *st, size_t i,
                                             const mxp_convert_opts *opts);

/* The "__metadata__" entries (string keys and values), in the file's order. */
MXP_API size_t mxp_safetensors_metadata_count(const mxp_safetensors *st);
MXP_API const char *mxp_safetensors_metadata_key(const mxp_safetensors *st, size_t j);
MXP_API const char *mxp_safetensors_metadata_value(const mxp_safetensors *st, size_t j);
/* The value for key; NULL when absent. */
MXP_API const char *mxp_safetensors_metadata_get(const mxp_safetensors *st, const char *key);

/* Writes n named arrays (any layout: written in C order) and nmeta
 * metadata entries (keys[j] = values[j]; none: no "__metadata__") as a
 * safetensors file, byte for byte what the safetensors library writes for
 * them: tensors sorted by dtype (widest first, as its dtype list orders
 * them) then by name, the header JSON padded with spaces to a multiple of
 * 8.  The metadata keeps the order given (the library writes a hash map's
 * order, which changes from run to run).  path is replaced atomically as
 * mxp_npy_save replaces it.  Names and metadata are UTF-8; names unique and
 * not "__metadata__", keys unique.  float4_e2m1fn and float6 arrays are
 * written packed as F4 / F6_* (the shape counts elements, as torch's
 * float4_e2m1fn_x2 files do), so their element count times their bits must
 * be whole bytes (MXP_ERR_SHAPE otherwise); other types safetensors has no
 * code for are MXP_ERR_INVALID_DTYPE.  Errors: MXP_ERR_INVALID_ARGUMENT,
 * MXP_ERR_SIZE_OVERFLOW, MXP_ERR_IO, MXP_ERR_NO_MEMORY. */
MXP_API mxp_status mxp_safetensors_save(const char *path, size_t n, const char *const *names,
                                        const mxp_array *const *arrays, size_t nmeta, const char *const *keys,
                                        const char *const *values);

/* The open file st written to path with every floating-point tensor
 * converted to the float dtype `to` by mxp_convert with opts (NULL:
 * nearest-even, overflow to inf; stochastic rounding draws one stream
 * across the tensors in the file's order, from opts->index_offset; the
 * flags counted into opts->flags), the other tensors (integers, bool, the
 * dtypes mxp lacks) and the metadata as they are: the file
 * mxp_safetensors_save writes for the converted arrays, byte for byte,
 * made a chunk at a time (6 MiB) from the mapping, so memory stays at a
 * chunk whatever the file's size.  path is replaced atomically as
 * mxp_safetensors_save replaces it (it may be the file st maps: the old
 * one stays mapped).  *converted and *elements (each may be NULL): the
 * tensors converted and their elements.  Errors as mxp_safetensors_save,
 * MXP_ERR_INVALID_DTYPE for a `to` that is not a float dtype with a
 * safetensors code, MXP_ERR_SHAPE for a float4/float6 `to` of a tensor
 * whose elements are not whole bytes, and mxp_convert's. */
MXP_API mxp_status mxp_safetensors_cast(const char *path, const mxp_safetensors *st, mxp_dtype to,
                                        const mxp_convert_opts *opts, size_t *converted, uint64_t *elements);
/* One tensor of mxp_safetensors_save_made: its name, dtype and shape, and
 * make, which writes bytes [offset, offset + len) of its data (C order;
 * float4/float6 packed, as mxp_safetensors_save writes them) into buf and
 * returns MXP_OK, or an error (with mxp_error's sentence) that stops the
 * write.  len is at most 6 MiB and offset a multiple of it (whole
 * elements of every dtype); make is called with the tensors in the file's
 * order (mxp_safetensors_save's: by dtype, then by name), each tensor's
 * pieces in order, on the calling thread. */
typedef struct mxp_safetensors_source {
    const char *name;
    mxp_dtype dtype;
    int ndim;
    const int64_t *shape;
    mxp_status (*make)(void *ctx, size_t offset, size_t len, void *buf);
    void *ctx;
    const char *dtype_name; /* NULL: dtype's code; else the format's name for
                               the dtype, used instead of dtype ("C64", any
                               the format has: bytes copied from another
                               file, mxp_safetensors_dtype_name's) */
} mxp_safetensors_source;

/* The file mxp_safetensors_save writes for these tensors and metadata,
 * byte for byte, with the tensors' bytes made while it is written, a
 * piece at a time through one 6 MiB buffer: a program that computes each
 * tensor on demand (a quantizer, a converter) holds no more than it needs
 * for one piece.  Atomic as mxp_safetensors_save; on any error (make's
 * included, returned as make gave it) path keeps its old contents.
 * Errors as mxp_safetensors_save, MXP_ERR_INVALID_ARGUMENT for a NULL
 * make or shape, an ndim outside [0, 64], MXP_ERR_SHAPE for a negative
 * extent, MXP_ERR_INVALID_DTYPE for a dtype_name the format does not
 * have. */
MXP_API mxp_status mxp_safetensors_save_made(const char *path, size_t n, const mxp_safetensors_source *tensors,
                                             size_t nmeta, const char *const *keys, const char *const *values);
/* As mxp_safetensors_save, into a new buffer of *size bytes from mxp_malloc
 * (released with mxp_free).  On error *data is NULL, *size 0. */
MXP_API mxp_status mxp_safetensors_save_buffer(void **data, size_t *size, size_t n, const char *const *names,
                                               const mxp_array *const *arrays, size_t nmeta,
                                               const char *const *keys, const char *const *values);

#ifdef __cplusplus
}
#endif

#endif

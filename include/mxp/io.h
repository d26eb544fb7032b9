/* mxp — NumPy .npy files.  Format support, the representation of bfloat16
 * and float8 (which NumPy lacks), limits and errors: docs/npy.md. */
#ifndef MXP_IO_H
#define MXP_IO_H

#include "array.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads a .npy file (format 1.0, 2.0 or 3.0; any byte order; C or Fortran
 * order) into a new array that owns its data, laid out as the file is.
 * NumPy's bool, int8..int64, uint8..uint64, float16/32/64 load as themselves;
 * bfloat16 and float8 load from the one-field structured dtypes mxp_npy_save
 * writes.  Errors: MXP_ERR_IO (open/read), MXP_ERR_FORMAT (not a .npy file,
 * a malformed header, fewer data bytes than the shape needs),
 * MXP_ERR_UNSUPPORTED (a valid dtype that mxp lacks: complex, strings,
 * objects, ...), MXP_ERR_NO_MEMORY.  On error *out is NULL. */
MXP_API mxp_status mxp_npy_load(mxp_array **out, const char *path);

/* As mxp_npy_load, from size bytes in memory (copied; data may be freed
 * after the call).  Bytes after the array's data are ignored. */
MXP_API mxp_status mxp_npy_load_buffer(mxp_array **out, const void *data, size_t size);

/* Writes a as a .npy file (format 1.0, byte for byte what NumPy's np.save
 * writes for NumPy's types): in Fortran order when a is F-contiguous and
 * not C-contiguous, else in C order (a C-order copy when a is neither).
 * An existing regular file is replaced atomically: the bytes go to a
 * temporary file in the same directory (".NAME.XXXXXX", with the old
 * file's permissions, else 0666 & ~umask), are fsync'ed and renamed over
 * path, so a failure (full disk, size limit, a kill) leaves the old file
 * byte for byte and removes only the temporary file.  A character device
 * (/dev/null), FIFO or socket at path is written in place and never
 * removed.  See docs/npy.md, "Saving".  Errors: MXP_ERR_INVALID_ARGUMENT,
 * MXP_ERR_IO, MXP_ERR_NO_MEMORY. */
MXP_API mxp_status mxp_npy_save(const char *path, const mxp_array *a);

/* As mxp_npy_save, into a new buffer of *size bytes from mxp_malloc; the
 * caller releases it with mxp_free.  On error *data is NULL, *size 0. */
MXP_API mxp_status mxp_npy_save_buffer(void **data, size_t *size, const mxp_array *a);

/* The dtype a header's 'descr' value stands for, given as the header
 * writes it ("'<f4'", "[('bfloat16', '<u2')]": the repr of NumPy's
 * np.lib.format.dtype_to_descr), and whether its bytes are in the other
 * byte order than this machine's: what mxp_npy_load reads a file of that
 * descr as.  MXP_ERR_UNSUPPORTED for a well-formed descr of a dtype mxp
 * lacks (complex, strings, other structured dtypes), MXP_ERR_FORMAT for a
 * malformed one (a bfloat16 field that does not hold u2 bits), with
 * mxp_npy_load's sentence. */
MXP_API mxp_status mxp_npy_descr_dtype(mxp_dtype *dt, bool *swapped, const char *descr);

/* Writes size bytes as the whole contents of path with mxp_npy_save's file
 * guarantees (atomic replacement of a regular file keeping its mode, a
 * symbolic link followed and kept, a device/FIFO/socket written in place),
 * for files whose bytes the caller formats itself (the Python package's
 * .npy files of NumPy's other dtypes).  Errors: MXP_ERR_INVALID_ARGUMENT,
 * MXP_ERR_IO, MXP_ERR_NO_MEMORY. */
MXP_API mxp_status mxp_file_write(const char *path, const void *data, size_t size);

#ifdef __cplusplus
}
#endif
#endif

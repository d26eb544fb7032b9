/* Internal: the .npy preamble (npy-prefix.c) and header (npy-header.c),
 * parsed and formatted without any I/O, so that files and memory buffers
 * share one parser (and the fuzzer reaches all of it through
 * mxp_npy_load_buffer).
 *
 * A .npy file (docs/npy.md):
 *
 *   offset 0   "\x93NUMPY"          magic, 6 bytes
 *          6   major, minor          1.0, 2.0 or 3.0
 *          8   header length         uint16 LE (1.0) or uint32 LE (2.0, 3.0)
 *   10 or 12   header                {'descr': ..., 'fortran_order': ..., 'shape': (...), }
 *                                    padded with spaces and '\n' to a multiple of 64
 *     offset   data                  size * itemsize bytes, C or Fortran order
 */
#ifndef MXP_IO_NPY_INTERNAL_H
#define MXP_IO_NPY_INTERNAL_H

#include "core/dtype-internal.h"
#include "mxp/array.h"

enum {
    MXP_NPY_MAGIC_LEN = 6,
    MXP_NPY_PREAMBLE_MAX = 12,     /* magic + version + 4-byte length */
    MXP_NPY_HEADER_MAX = 65536,    /* longer headers are refused */
    MXP_NPY_MSG = 320,             /* room for one error sentence */
    MXP_NPY_PREFIX_MAX = 2048      /* preamble + header that mxp writes */
};

typedef struct mxp_npy_header {
    int major, minor;
    size_t header_len;  /* bytes of the header text */
    size_t data_offset; /* preamble + header: where the data starts */
    mxp_dtype dtype;
    bool swap;          /* stored in the other byte order than this machine's */
    bool fortran;
    int ndim;
    int64_t shape[MXP_MAXDIMS];
    int64_t size;       /* elements */
    size_t data_bytes;  /* size * itemsize, checked */
} mxp_npy_header;

/* Reads magic, version and header length from the first n bytes (n may be
 * less than MXP_NPY_PREAMBLE_MAX near the end of a short input).  Sets
 * major, minor, header_len and data_offset.  On error: MXP_ERR_FORMAT with
 * the sentence in msg. */
mxp_status mxp_npy_parse_preamble(const unsigned char *p, size_t n, mxp_npy_header *h, char msg[MXP_NPY_MSG]);

/* Bytes of the preamble for a version: 10 for 1.0, 12 for 2.0 and 3.0. */
size_t mxp_npy_preamble_len(int major);

/* Parses h->header_len bytes of header text (the dict literal); sets dtype,
 * swap, fortran, ndim, shape, size and data_bytes.  MXP_ERR_FORMAT (or
 * MXP_ERR_UNSUPPORTED for a well-formed descr that mxp has no dtype for)
 * with the sentence in msg. */
mxp_status mxp_npy_parse_header(const char *text, mxp_npy_header *h, char msg[MXP_NPY_MSG]);

/* Writes the preamble and header NumPy's np.save would write for this
 * dtype, order and shape into buf (MXP_NPY_PREFIX_MAX bytes); returns
 * their length, a multiple of 64. */
size_t mxp_npy_format_prefix(char *buf, mxp_dtype dt, bool fortran, int ndim, const int64_t *shape);

/* True on a little-endian machine. */
bool mxp_npy_host_little(void);

/* bfloat16 and float8 are not NumPy types: mxp stores them as a one-field
 * structured dtype whose field name is the type and whose field holds the
 * raw bits as an unsigned integer of the same size. */
static inline bool mxp_npy_is_numpy_type(mxp_dtype dt)
{
    return mxp_is_numpy_dtype(dt);
}

#endif

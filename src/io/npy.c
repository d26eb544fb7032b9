/* NumPy .npy files: mxp_npy_load / mxp_npy_save and their in-memory twins.
 * The header is parsed (npy-header.c) and the data size is checked against
 * the bytes present before the array is allocated (a buffer's size, a
 * regular file's size; a pipe's data as it arrives), so a short or hostile
 * input costs no more memory than a small multiple of what it delivers.
 * Saving goes through write-file.c (atomic replace).  See docs/npy.md. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "array/array-internal.h"
#include "core/error.h"
#include "core/profile-internal.h"
#include "io/npy-internal.h"
#include "core/write-file.h"
#include "mxp/io.h"

enum { NPY_FIRST_READ = 1 << 20 }; /* a stream's data is read 1 MiB first, then doubling */

/* "npy: PATH: sentence" for a file, "npy: sentence" for a buffer. */
static mxp_status npy_error(mxp_status st, const char *path, const char *msg)
{
    if (path)
        return mxp_error(st, "npy: %s: %s", path, msg);
    return mxp_error(st, "npy: %s", msg);
}

static mxp_status io_error(const char *path, const char *what, int err)
{
    return mxp_error(MXP_ERR_IO, "npy: %s: %s: %s", path, what, err ? strerror(err) : "unknown error");
}

/* "(3, 4) float32" for messages. */
static const char *describe(char *buf, size_t cap, const mxp_npy_header *h)
{
    int n = snprintf(buf, cap, "(");
    for (int i = 0; i < h->ndim && (size_t)n < cap; i++)
        n += snprintf(buf + n, cap - (size_t)n, "%s%lld", i ? ", " : "", (long long)h->shape[i]);
    if ((size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, "%s) %s", h->ndim == 1 ? "," : "", mxp_dtype_name(h->dtype));
    return buf;
}

/* "file has 16 data bytes, shape (2,) float64 needs 16"; a stream says
 * "the stream ended after". */
static mxp_status short_data(const mxp_npy_header *h, const char *path, const char *has, uint64_t have)
{
    char msg[MXP_NPY_MSG], shape[160];
    snprintf(msg, sizeof msg, "%s %llu data bytes, shape %s needs %zu", has, (unsigned long long)have,
             describe(shape, sizeof shape, h), h->data_bytes);
    return npy_error(MXP_ERR_FORMAT, path, msg);
}

/* A new owner laid out as the file says; the data is filled by the caller. */
static mxp_status new_array(mxp_array **out, const mxp_npy_header *h)
{
    mxp_status st = mxp_array_new_owner(out, h->dtype, h->ndim, h->shape);
    if (st != MXP_OK || !h->fortran)
        return st;
    mxp_array *a = *out;
    int64_t s = (int64_t)mxp_dtype_itemsize(a->dtype);
    for (int i = 0; i < a->ndim; i++) {
        a->strides[i] = s;
        s *= a->shape[i] ? a->shape[i] : 1;
    }
    mxp_array_update_flags(a);
    return MXP_OK;
}

/* Reverses the bytes of each element stored in the other byte order. */
static void swap_bytes(mxp_array *a, const mxp_npy_header *h)
{
    const size_t size = mxp_dtype_itemsize(h->dtype);
    if (!h->swap || size == 1)
        return;
    unsigned char *p = (unsigned char *)a->data;
    for (int64_t i = 0; i < h->size; i++, p += size) {
        for (size_t j = 0; j < size / 2; j++) {
            unsigned char t = p[j];
            p[j] = p[size - 1 - j];
            p[size - 1 - j] = t;
        }
    }
}

/* ---- loading --------------------------------------------------------- */

static mxp_status load_buffer(mxp_array **out, const void *data, size_t size)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_npy_load_buffer: out is NULL");
    *out = NULL;
    if (!data && size)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_npy_load_buffer: data is NULL with size %zu", size);
    const unsigned char *p = data;
    mxp_npy_header h;
    char msg[MXP_NPY_MSG];
    mxp_status st = mxp_npy_parse_preamble(p, size < MXP_NPY_PREAMBLE_MAX ? size : MXP_NPY_PREAMBLE_MAX, &h, msg);
    if (st == MXP_OK && h.data_offset > size) {
        size_t pre = h.data_offset - h.header_len;
        snprintf(msg, sizeof msg, "the file ends inside the header (%zu of %zu header bytes)", size - pre,
                 h.header_len);
        st = MXP_ERR_FORMAT;
    }
    if (st == MXP_OK)
        st = mxp_npy_parse_header((const char *)p + (h.data_offset - h.header_len), &h, msg);
    if (st != MXP_OK)
        return npy_error(st, NULL, msg);
    if (h.data_bytes > size - h.data_offset)
        return short_data(&h, NULL, "file has", size - h.data_offset);
    mxp_array *a = NULL;
    if ((st = new_array(&a, &h)) != MXP_OK)
        return st;
    if (h.data_bytes)
        memcpy(a->data, p + h.data_offset, h.data_bytes);
    swap_bytes(a, &h);
    *out = a;
    return MXP_OK;
}

/* Reads exactly n bytes; a short read is MXP_ERR_FORMAT (the file ended)
 * or MXP_ERR_IO (the system failed), *got says how many came. */
static mxp_status read_exact(FILE *f, void *buf, size_t n, size_t *got, const char *path)
{
    *got = n ? fread(buf, 1, n, f) : 0;
    if (*got == n)
        return MXP_OK;
    return ferror(f) ? io_error(path, "read failed", errno) : MXP_ERR_FORMAT;
}

/* Parses preamble and header from f; *h is ready for the data. */
static mxp_status read_header(FILE *f, const char *path, mxp_npy_header *h)
{
    unsigned char pre[MXP_NPY_PREAMBLE_MAX];
    char msg[MXP_NPY_MSG];
    size_t got;
    mxp_status st = read_exact(f, pre, sizeof pre, &got, path);
    if (st == MXP_ERR_IO)
        return st;
    if ((st = mxp_npy_parse_preamble(pre, got, h, msg)) != MXP_OK)
        return npy_error(st, path, msg);
    /* A 1.0 preamble is 10 bytes: the last 2 read are header text. */
    const size_t pre_len = h->data_offset - h->header_len, extra = got - pre_len;
    char *text = mxp_malloc(h->header_len + 1);
    if (!text)
        return MXP_ERR_NO_MEMORY;
    memcpy(text, pre + pre_len, extra < h->header_len ? extra : h->header_len);
    if (extra < h->header_len) {
        st = read_exact(f, text + extra, h->header_len - extra, &got, path);
        if (st == MXP_ERR_FORMAT) {
            snprintf(msg, sizeof msg, "the file ends inside the header (%zu of %zu header bytes)", extra + got,
                     h->header_len);
            st = npy_error(st, path, msg);
        }
    } /* else a 0- or 1-byte header, which the parser refuses */
    if (st == MXP_OK && (st = mxp_npy_parse_header(text, h, msg)) != MXP_OK)
        st = npy_error(st, path, msg);
    mxp_free(text);
    return st;
}

/* Reads up to limit bytes into a buffer that starts at 1 MiB and doubles
 * as it fills, so that it never holds much more than what has arrived.
 * *buf (the caller frees it) and *have say what came. */
static mxp_status read_growing(FILE *f, const char *path, size_t limit, char **buf, size_t *have)
{
    size_t cap = 0;
    while (*have < limit) {
        if (*have == cap) {
            const size_t next = !cap ? (limit < NPY_FIRST_READ ? limit : NPY_FIRST_READ)
                                     : cap > limit / 2 ? limit : 2 * cap;
            char *b = mxp_malloc(next);
            if (!b)
                return MXP_ERR_NO_MEMORY;
            if (*have)
                memcpy(b, *buf, *have);
            mxp_free(*buf);
            *buf = b;
            cap = next;
        }
        size_t got;
        mxp_status st = read_exact(f, *buf + *have, cap - *have, &got, path);
        *have += got;
        if (st != MXP_OK)
            return st;
    }
    return MXP_OK;
}

/* The data.  A regular file holds the bytes its size says (a sparse
 * file's holes read as zeros), checked before the array is allocated.
 * Any other source (a pipe, a device, a socket) is believed only as it
 * delivers: the first half of the declared data is read into a growing
 * buffer, and only then is the array allocated and the rest read into it.
 * So memory stays within 3x the bytes read (1 MiB at least), whatever the
 * header declares, and a whole stream peaks at 1.5x its data. */
static mxp_status read_data(mxp_array **out, FILE *f, const char *path, const mxp_npy_header *h)
{
    struct stat sb;
    const bool sized = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode);
    if (sized) {
        uint64_t have = (uint64_t)sb.st_size > h->data_offset ? (uint64_t)sb.st_size - h->data_offset : 0;
        if (h->data_bytes > have)
            return short_data(h, path, "file has", have);
    }
    char *buf = NULL;
    size_t have = 0, got = 0;
    mxp_status st = sized ? MXP_OK : read_growing(f, path, h->data_bytes / 2, &buf, &have);
    if (st == MXP_OK && (st = new_array(out, h)) == MXP_OK) {
        if (have)
            memcpy((*out)->data, buf, have);
        st = read_exact(f, (*out)->data + have, h->data_bytes - have, &got, path);
        have += got;
    }
    mxp_free(buf);
    if (st != MXP_OK) {
        mxp_array_free(*out);
        *out = NULL;
    }
    if (st == MXP_ERR_FORMAT)
        return short_data(h, path, sized ? "file has" : "the stream ended after", have);
    return st;
}

static mxp_status load_file(mxp_array **out, FILE *f, const char *path)
{
    mxp_npy_header h;
    mxp_status st = read_header(f, path, &h);
    if (st == MXP_OK)
        st = read_data(out, f, path, &h);
    if (st == MXP_OK)
        swap_bytes(*out, &h);
    return st;
}

static mxp_status load_path(mxp_array **out, const char *path)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_npy_load: out is NULL");
    *out = NULL;
    if (!path)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_npy_load: path is NULL");
    FILE *f = fopen(path, "rb");
    if (!f)
        return io_error(path, "cannot open", errno);
    mxp_status st = load_file(out, f, path);
    fclose(f);
    return st;
}

/* ---- saving ---------------------------------------------------------- */

/* What is written: the prefix, then the data of c (a itself when it is
 * C- or F-contiguous, else a C-order copy). */
typedef struct npy_out {
    char prefix[MXP_NPY_PREFIX_MAX];
    size_t prefix_len;
    mxp_array *c;
    size_t data_bytes;
} npy_out;

static mxp_status prepare(npy_out *o, const mxp_array *a, const char *fn)
{
    o->c = NULL;
    if (!a)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: array is NULL", fn);
    /* np.save: Fortran order for F- and not C-contiguous; NumPy calls an
     * array without elements both (whatever its strides), so C order */
    const bool fortran = !(a->flags & MXP_ARRAY_C_CONTIGUOUS) && (a->flags & MXP_ARRAY_F_CONTIGUOUS) &&
                         mxp_array_size(a) > 0;
    mxp_status st = mxp_array_ascontiguous(&o->c, a, fortran ? 'F' : 'C');
    if (st != MXP_OK)
        return st;
    o->prefix_len = mxp_npy_format_prefix(o->prefix, a->dtype, fortran, a->ndim, a->shape);
    o->data_bytes = (size_t)mxp_array_size(a) * mxp_dtype_itemsize(a->dtype);
    return MXP_OK;
}

static mxp_status save_buffer(void **data, size_t *size, const mxp_array *a)
{
    if (!data || !size)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_npy_save_buffer: data or size is NULL");
    *data = NULL;
    *size = 0;
    npy_out o;
    mxp_status st = prepare(&o, a, "mxp_npy_save_buffer");
    if (st != MXP_OK)
        return st;
    char *buf = mxp_malloc(o.prefix_len + o.data_bytes);
    if (buf) {
        memcpy(buf, o.prefix, o.prefix_len);
        if (o.data_bytes)
            memcpy(buf + o.prefix_len, o.c->data, o.data_bytes);
        *data = buf;
        *size = o.prefix_len + o.data_bytes;
    }
    mxp_array_free(o.c);
    return buf ? MXP_OK : MXP_ERR_NO_MEMORY;
}

static mxp_status save_path(const char *path, const mxp_array *a)
{
    if (!path)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_npy_save: path is NULL");
    npy_out o;
    mxp_status st = prepare(&o, a, "mxp_npy_save");
    if (st != MXP_OK)
        return st;
    const mxp_write_piece pieces[2] = { { o.prefix, o.prefix_len, NULL, NULL }, { o.c->data, o.data_bytes, NULL, NULL } };
    st = mxp_write_file("npy", path, pieces, 2);
    mxp_array_free(o.c);
    return st;
}

mxp_status mxp_file_write(const char *path, const void *data, size_t size)
{
    if (!path || (!data && size))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_file_write: %s is NULL", path ? "data" : "path");
    const mxp_write_piece piece = { data, size, NULL, NULL };
    return mxp_write_file("mxp_file_write", path, &piece, 1);
}

/* ---- the profiler's kinds npy_load and npy_save ------------------------- */
/* Bytes: the data twice, once in the file (or buffer) and once in the
 * array; a load's page faults are counted when the file reaches 4 MiB. */

static double file_bytes(const char *path)
{
    struct stat sb;
    return path && stat(path, &sb) == 0 ? (double)sb.st_size : 0;
}

mxp_status mxp_npy_load(mxp_array **out, const char *path)
{
    MXP_PROF_RETURN_AFTER("npy_load", load_path(out, path), file_bytes(path),
                          2 * mxp_prof_array_bytes(mxp_prof_made(out)), 0);
}

mxp_status mxp_npy_load_buffer(mxp_array **out, const void *data, size_t size)
{
    MXP_PROF_RETURN_AFTER("npy_load", load_buffer(out, data, size), (double)size,
                          2 * mxp_prof_array_bytes(mxp_prof_made(out)), 0);
}

mxp_status mxp_npy_save(const char *path, const mxp_array *a)
{
    MXP_PROF_RETURN("npy_save", 2 * mxp_prof_array_bytes(a), 0, save_path(path, a));
}

mxp_status mxp_npy_save_buffer(void **data, size_t *size, const mxp_array *a)
{
    MXP_PROF_RETURN("npy_save", 2 * mxp_prof_array_bytes(a), 0, save_buffer(data, size, a));
}

/* safetensors files: opened by mapping them read-only, the header parsed
 * (safetensors-header.c) and every rule of the format checked before a
 * tensor is seen (the offsets tile the data exactly, each tensor's bytes
 * are what its dtype and shape need, nothing overflows); tensors seen in
 * place or converted into new arrays; files written as the safetensors
 * library writes them, through write-file.c (atomic replace).  See
 * docs/safetensors.md. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/profile-internal.h"
#include "io/safetensors-internal.h"
#include "core/write-file.h"
#include "mxp/alloc.h"
#include "mxp/safetensors.h"

struct mxp_safetensors {
    mxp_st_header h;           /* tensors sorted by their offsets */
    unsigned char *bytes;      /* the whole file */
    size_t size;
    int mapped;                /* bytes from mmap (else malloc) */
    const unsigned char *data; /* the data section */
};

static int by_offsets(const void *x, const void *y)
{
    const mxp_st_tensor *a = x, *b = y;
    return a->begin != b->begin ? (a->begin > b->begin) - (a->begin < b->begin)
                                : (a->end > b->end) - (a->end < b->end);
}

/* The offsets tile [0, data_size) in order, each tensor's bytes exactly
 * what its dtype and shape need. */
static mxp_status check_offsets(mxp_st_header *h, uint64_t data_size)
{
    if (h->count) /* (qsort wants a non-NULL base even for none) */
        qsort(h->tensors, h->count, sizeof *h->tensors, by_offsets);
    uint64_t at = 0;
    for (size_t i = 0; i < h->count; i++) {
        const mxp_st_tensor *t = &h->tensors[i];
        if (t->begin != at || t->end < t->begin)
            return mxp_error(MXP_ERR_FORMAT,
                             "safetensors: tensor '%.60s': data_offsets [%llu, %llu] do not follow the previous "
                             "tensor's data (which ends at %llu)",
                             t->name, (unsigned long long)t->begin, (unsigned long long)t->end,
                             (unsigned long long)at);
        uint64_t bits = (uint64_t)t->dtype->bits;
        for (int d = 0; d < t->ndim; d++)
            if (t->shape[d] != 0 && bits > UINT64_MAX / (uint64_t)t->shape[d])
                return mxp_error(MXP_ERR_FORMAT, "safetensors: tensor '%.60s': its shape overflows a size", t->name);
            else
                bits *= (uint64_t)t->shape[d];
        if (bits % 8)
            return mxp_error(MXP_ERR_FORMAT, "safetensors: tensor '%.60s': %llu bits of %s are not whole bytes",
                             t->name, (unsigned long long)bits, t->dtype->name);
        if (t->end - t->begin != bits / 8)
            return mxp_error(MXP_ERR_FORMAT,
                             "safetensors: tensor '%.60s': data_offsets hold %llu bytes, its dtype %s and shape "
                             "need %llu",
                             t->name, (unsigned long long)(t->end - t->begin), t->dtype->name,
                             (unsigned long long)(bits / 8));
        at = t->end;
    }
    if (at != data_size)
        return mxp_error(MXP_ERR_FORMAT,
                         "safetensors: the tensors' data ends at byte %llu of the data, the file's at %llu",
                         (unsigned long long)at, (unsigned long long)data_size);
    return MXP_OK;
}

/* Parses and checks the whole file in st->bytes. */
static mxp_status parse(mxp_safetensors *st)
{
    if (st->size < 8)
        return mxp_error(MXP_ERR_FORMAT, "safetensors: %zu bytes: shorter than the 8-byte header length", st->size);
    uint64_t n = 0;
    for (int b = 7; b >= 0; b--) /* little-endian */
        n = n << 8 | st->bytes[b];
    if (n > MXP_ST_MAX_HEADER)
        return mxp_error(MXP_ERR_FORMAT, "safetensors: a header of %llu bytes: more than the format's %d",
                         (unsigned long long)n, MXP_ST_MAX_HEADER);
    if (n > st->size - 8)
        return mxp_error(MXP_ERR_FORMAT, "safetensors: a header of %llu bytes runs past the end of the file (%zu bytes)",
                         (unsigned long long)n, st->size);
    mxp_status s = mxp_st_header_parse(&st->h, (const char *)st->bytes + 8, (size_t)n);
    if (s != MXP_OK)
        return s;
    st->data = st->bytes + 8 + n;
    return check_offsets(&st->h, st->size - 8 - n);
}

static mxp_status finish_open(mxp_safetensors **out, mxp_safetensors *st, const char *path)
{
    const mxp_status s = parse(st);
    if (s == MXP_OK) {
        *out = st;
        return MXP_OK;
    }
    if (path && s == MXP_ERR_FORMAT) { /* "safetensors: PATH: the rule" */
        char rule[512];
        const char *m = mxp_last_error();
        snprintf(rule, sizeof rule, "%s", strncmp(m, "safetensors: ", 13) == 0 ? m + 13 : m);
        mxp_error(s, "safetensors: %s: %s", path, rule);
    }
    mxp_safetensors_close(st);
    return s;
}

mxp_status mxp_safetensors_open(mxp_safetensors **out, const char *path)
{
    if (out)
        *out = NULL;
    if (!out || !path)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_safetensors_open: %s is NULL", out ? "path" : "out");
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return mxp_error(MXP_ERR_IO, "safetensors: %s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        const int err = errno;
        close(fd);
        return mxp_error(MXP_ERR_IO, "safetensors: %s: cannot stat: %s", path, strerror(err));
    }
    if (!S_ISREG(sb.st_mode)) { /* a directory, a FIFO, a device: nothing to map */
        close(fd);
        return mxp_error(MXP_ERR_IO, "safetensors: %s: %s", path,
                         S_ISDIR(sb.st_mode) ? "a directory, not a file" : "not a regular file");
    }
    mxp_safetensors *st = calloc(1, sizeof *st);
    if (!st) {
        close(fd);
        return MXP_ERR_NO_MEMORY;
    }
    st->size = (size_t)sb.st_size;
    if (st->size >= 8) {
        void *m = mmap(NULL, st->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            const int err = errno;
            close(fd);
            free(st);
            return mxp_error(MXP_ERR_IO, "safetensors: %s: cannot map: %s", path, strerror(err));
        }
        st->bytes = m;
        st->mapped = 1;
    }
    close(fd);
    return finish_open(out, st, path);
}

mxp_status mxp_safetensors_open_buffer(mxp_safetensors **out, const void *data, size_t size)
{
    if (out)
        *out = NULL;
    if (!out || (!data && size))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_safetensors_open_buffer: %s is NULL", out ? "data" : "out");
    mxp_safetensors *st = calloc(1, sizeof *st);
    if (!st || (size && !(st->bytes = malloc(size)))) {
        free(st);
        return MXP_ERR_NO_MEMORY;
    }
    if (size)
        memcpy(st->bytes, data, size);
    st->size = size;
    return finish_open(out, st, NULL);
}

void mxp_safetensors_close(mxp_safetensors *st)
{
    if (!st)
        return;
    mxp_st_header_free(&st->h);
    if (st->mapped)
        munmap(st->bytes, st->size);
    else
        free(st->bytes);
    free(st);
}

static const mxp_st_tensor *tensor(const mxp_safetensors *st, size_t i)
{
    return st && i < st->h.count ? &st->h.tensors[i] : NULL;
}

size_t mxp_safetensors_count(const mxp_safetensors *st)
{
    return st ? st->h.count : 0;
}

const char *mxp_safetensors_name(const mxp_safetensors *st, size_t i)
{
    const mxp_st_tensor *t = tensor(st, i);
    return t ? t->name : NULL;
}

mxp_status mxp_safetensors_find(const mxp_safetensors *st, const char *name, size_t *index)
{
    if (!st || !name || !index)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_safetensors_find: %s is NULL",
                         !st ? "st" : !name ? "name" : "index");
    for (size_t i = 0; i < st->h.count; i++)
        if (strcmp(st->h.tensors[i].name, name) == 0) {
            *index = i;
            return MXP_OK;
        }
    return mxp_error(MXP_ERR_INDEX, "safetensors: no tensor named '%.200s'", name);
}

const char *mxp_safetensors_dtype_name(const mxp_safetensors *st, size_t i)
{
    const mxp_st_tensor *t = tensor(st, i);
    return t ? t->dtype->name : NULL;
}

mxp_dtype mxp_safetensors_dtype(const mxp_safetensors *st, size_t i)
{
    const mxp_st_tensor *t = tensor(st, i);
    return t ? t->dtype->dtype : MXP_DTYPE_INVALID;
}

int mxp_safetensors_ndim(const mxp_safetensors *st, size_t i)
{
    const mxp_st_tensor *t = tensor(st, i);
    return t ? t->ndim : -1;
}

const int64_t *mxp_safetensors_shape(const mxp_safetensors *st, size_t i)
{
    const mxp_st_tensor *t = tensor(st, i);
    return t ? t->shape : NULL;
}

const void *mxp_safetensors_data(const mxp_safetensors *st, size_t i, size_t *nbytes)
{
    const mxp_st_tensor *t = tensor(st, i);
    if (nbytes)
        *nbytes = t ? (size_t)(t->end - t->begin) : 0;
    return t ? st->data + t->begin : NULL;
}

/* F4 and F6 tensors are stored packed: unpacked straight into a
 * destination of their own type, otherwise into a byte per element (no
 * more than the destination takes) and converted in one call, so that a
 * stochastic stream and the all-or-nothing rule are the plain read's. */
static mxp_status read_packed(void *dst, mxp_dtype to, const unsigned char *src, mxp_dtype from, size_t count,
                              const mxp_convert_opts *opts)
{
    if (to == from || count == 0)
        return mxp_unpack(dst, src, from, count);
    unsigned char *tmp = malloc(count);
    if (!tmp)
        return MXP_ERR_NO_MEMORY;
    mxp_status s = mxp_unpack(tmp, src, from, count);
    if (s == MXP_OK)
        s = mxp_convert(dst, to, tmp, from, count, opts);
    free(tmp);
    return s;
}

/* Tensor i's checks for reading into dtype: its own dtype in *from. */
static mxp_status readable(const mxp_safetensors *st, size_t i, mxp_dtype to, const char *fn, mxp_dtype *from)
{
    if (!st)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: st is NULL", fn);
    const mxp_st_tensor *t = tensor(st, i);
    if (!t)
        return mxp_error(MXP_ERR_INDEX, "%s: tensor %zu of %zu", fn, i, st->h.count);
    *from = t->dtype->dtype;
    if (*from == MXP_DTYPE_INVALID)
        return mxp_error(MXP_ERR_UNSUPPORTED, "safetensors: tensor '%.60s' has dtype %s, which mxp has no type for yet",
                         t->name, t->dtype->name);
    if (to != MXP_DTYPE_INVALID && mxp_dtype_itemsize(to) == 0)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: dtype %d is not an mxp_dtype", fn, (int)to);
    if (t->ndim > MXP_MAXDIMS)
        return mxp_error(MXP_ERR_SHAPE, "safetensors: tensor '%.60s' has %d dimensions, more than mxp's %d", t->name,
                         t->ndim, MXP_MAXDIMS);
    return MXP_OK;
}

static mxp_status read_new(mxp_array **out, const mxp_safetensors *st, size_t i, mxp_dtype dtype,
                           const mxp_convert_opts *opts)
{
    if (out)
        *out = NULL;
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_safetensors_read: out is NULL");
    mxp_dtype from = MXP_DTYPE_INVALID;
    mxp_status s = readable(st, i, dtype, "mxp_safetensors_read", &from);
    if (s != MXP_OK)
        return s;
    const mxp_st_tensor *t = tensor(st, i);
    mxp_array *a;
    if ((s = mxp_array_empty(&a, dtype == MXP_DTYPE_INVALID ? from : dtype, t->ndim, t->shape)) != MXP_OK)
        return s;
    if ((s = mxp_safetensors_read_into(a, st, i, opts)) != MXP_OK) {
        mxp_array_free(a);
        return s;
    }
    *out = a;
    return MXP_OK;
}

static mxp_status read_into(mxp_array *dst, const mxp_safetensors *st, size_t i, const mxp_convert_opts *opts)
{
    if (!dst)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_safetensors_read_into: dst is NULL");
    mxp_dtype from = MXP_DTYPE_INVALID;
    mxp_status s = readable(st, i, mxp_array_dtype(dst), "mxp_safetensors_read_into", &from);
    if (s != MXP_OK)
        return s;
    const mxp_st_tensor *t = tensor(st, i);
    if (mxp_array_ndim(dst) != t->ndim || memcmp(mxp_array_shape(dst), t->shape, (size_t)t->ndim * sizeof(int64_t)))
        return mxp_error(MXP_ERR_SHAPE, "mxp_safetensors_read_into: dst's shape is not tensor '%.60s''s", t->name);
    if (!(mxp_array_flags(dst) & MXP_ARRAY_WRITEABLE))
        return mxp_error(MXP_ERR_READONLY, "mxp_safetensors_read_into: dst is read-only");
    if (!(mxp_array_flags(dst) & MXP_ARRAY_C_CONTIGUOUS))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_safetensors_read_into: dst is not C-contiguous");
    const size_t count = (size_t)mxp_array_size(dst);
    if (t->dtype->bits < 8)
        return read_packed(mxp_array_data(dst), mxp_array_dtype(dst), st->data + t->begin, from, count, opts);
    return count ? mxp_convert(mxp_array_data(dst), mxp_array_dtype(dst), st->data + t->begin, from, count, opts)
                 : MXP_OK;
}

size_t mxp_safetensors_metadata_count(const mxp_safetensors *st)
{
    return st ? st->h.nmeta : 0;
}

const char *mxp_safetensors_metadata_key(const mxp_safetensors *st, size_t j)
{
    return st && j < st->h.nmeta ? st->h.keys[j] : NULL;
}

const char *mxp_safetensors_metadata_value(const mxp_safetensors *st, size_t j)
{
    return st && j < st->h.nmeta ? st->h.values[j] : NULL;
}

const char *mxp_safetensors_metadata_get(const mxp_safetensors *st, const char *key)
{
    for (size_t j = 0; st && key && j < st->h.nmeta; j++)
        if (strcmp(st->h.keys[j], key) == 0)
            return st->h.values[j];
    return NULL;
}

/* ---- the profiler's kind safetensors_read ------------------------------ */
/* Bytes: the tensor as stored (read from the mapping: its page faults are
 * the file's, counted from 4 MiB) and the array written. */

static double stored_bytes(const mxp_safetensors *st, size_t i)
{
    const mxp_st_tensor *t = tensor(st, i);
    return t ? (double)(t->end - t->begin) : 0;
}

mxp_status mxp_safetensors_read(mxp_array **out, const mxp_safetensors *st, size_t i, mxp_dtype dtype,
                                const mxp_convert_opts *opts)
{
    MXP_PROF_RETURN_AFTER("safetensors_read", read_new(out, st, i, dtype, opts), stored_bytes(st, i),
                          stored_bytes(st, i) + mxp_prof_array_bytes(mxp_prof_made(out)), 0);
}

mxp_status mxp_safetensors_read_into(mxp_array *dst, const mxp_safetensors *st, size_t i,
                                     const mxp_convert_opts *opts)
{
    MXP_PROF_RETURN("safetensors_read", stored_bytes(st, i) + mxp_prof_array_bytes(dst), 0,
                    read_into(dst, st, i, opts));
}

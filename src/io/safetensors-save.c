/* Writing safetensors files, byte for byte as the safetensors library
 * does: tensors sorted by the format's dtype order (widest rank first),
 * then by name; the header {"__metadata__":{...},"name":{"dtype":...,
 * "shape":[...],"data_offsets":[b,e]},...} with serde_json's escapes,
 * padded with spaces to a multiple of 8; then each tensor's bytes in C
 * order.  The file is written through write-file.c (atomic replace). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/profile-internal.h"
#include "core/strbuf.h"
#include "io/safetensors-internal.h"
#include "core/write-file.h"
#include "mxp/alloc.h"
#include "mxp/safetensors.h"

/* A JSON string as serde_json writes it: \" \\ \b \f \n \r \t, other
 * controls as \u00xx, everything else (DEL, non-ASCII UTF-8) as is. */
static void put_string(strbuf *t, const char *s)
{
    sb_add(t, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        static const char short_esc[] = "\b\f\n\r\t\"\\", short_to[] = "bfnrt\"\\";
        const char *e = *c ? strchr(short_esc, *c) : NULL;
        char buf[8];
        if (e) {
            buf[0] = '\\', buf[1] = short_to[e - short_esc];
            sb_add(t, buf, 2);
        } else if (*c < 0x20) {
            snprintf(buf, sizeof buf, "\\u%04x", *c);
            sb_add(t, buf, 6);
        } else {
            sb_add(t, (const char *)c, 1);
        }
    }
    sb_add(t, "\"", 1);
}

static void put_u64(strbuf *t, unsigned long long v)
{
    char buf[24];
    sb_add(t, buf, (size_t)snprintf(buf, sizeof buf, "%llu", v));
}

/* Well-formed UTF-8 (names and metadata are Rust Strings in the library). */
static int utf8_ok(const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c;) {
        size_t k = *c < 0x80 ? 1 : *c >= 0xc2 && *c <= 0xdf ? 2 : *c >= 0xe0 && *c <= 0xef ? 3
                   : *c >= 0xf0 && *c <= 0xf4 ? 4 : 0;
        if (!k)
            return 0;
        unsigned cp = k == 1 ? *c : *c & (0x7f >> k);
        for (size_t i = 1; i < k; i++) {
            if ((c[i] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (c[i] & 0x3f);
        }
        static const unsigned min[] = { 0, 0, 0x80, 0x800, 0x10000 };
        if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        c += k;
    }
    return 1;
}

typedef struct entry {
    const char *name;
    const mxp_st_dtype *dtype;
    int ndim;
    const int64_t *shape;
    const mxp_array *a;  /* C-contiguous: the argument or a copy (NULL for a cast's tensor) */
    mxp_array *copy;
    void *packed;      /* F4 and F6: the elements packed, as the file holds them */
    const void *data;  /* the bytes that go into the file */
    size_t nbytes;
    const void *make;  /* a cast's tensor: its cast_part (data NULL), made while written */
} entry;

static int entry_order(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    if (a->dtype->rank != b->dtype->rank)
        return b->dtype->rank - a->dtype->rank;
    return strcmp(a->name, b->name);
}

static mxp_status bad(const char *fn, const char *what, size_t i)
{
    return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s %zu", fn, what, i);
}

/* Tensor i's name (unique among names[0..i)) and dtype (one with a code;
 * MXP_DTYPE_INVALID: not checked). */
static mxp_status check_tensor(const char *fn, size_t i, const char *const *names, mxp_dtype t)
{
    if (!utf8_ok(names[i]))
        return bad(fn, "a name that is not UTF-8: tensor", i);
    if (strcmp(names[i], "__metadata__") == 0)
        return bad(fn, "the name __metadata__ (the header's own key) for tensor", i);
    for (size_t j = 0; j < i; j++)
        if (strcmp(names[i], names[j]) == 0)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: tensor name '%.60s' twice", fn, names[i]);
    if (t != MXP_DTYPE_INVALID && !mxp_st_dtype_of(t))
        return mxp_error(MXP_ERR_INVALID_DTYPE,
                         "%s: tensor %zu is %s, a dtype safetensors has no code for (convert it first)", fn, i,
                         mxp_dtype_name(t));
    return MXP_OK;
}

static mxp_status check_meta(const char *fn, size_t nmeta, const char *const *keys, const char *const *values)
{
    if (nmeta && (!keys || !values))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !keys ? "keys" : "values");
    for (size_t i = 0; i < nmeta; i++) {
        if (!keys[i] || !values[i])
            return bad(fn, !keys[i] ? "NULL metadata key" : "NULL metadata value", i);
        if (!utf8_ok(keys[i]) || !utf8_ok(values[i]))
            return bad(fn, "metadata that is not UTF-8: entry", i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(keys[i], keys[j]) == 0)
                return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: metadata key '%.60s' twice", fn, keys[i]);
    }
    return MXP_OK;
}

static mxp_status check_args(const char *fn, size_t n, const char *const *names, const mxp_array *const *arrays,
                             size_t nmeta, const char *const *keys, const char *const *values)
{
    if (n && (!names || !arrays))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !names ? "names" : "arrays");
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || !arrays[i])
            return bad(fn, !names[i] ? "NULL name of tensor" : "NULL array of tensor", i);
        mxp_status s = check_tensor(fn, i, names, mxp_array_dtype(arrays[i]));
        if (s != MXP_OK)
            return s;
    }
    return check_meta(fn, nmeta, keys, values);
}

/* The bytes of one entry: the array's own, or for F4 and F6 its elements
 * packed (a whole number of bytes, as the reader requires). */
static mxp_status file_bytes(const char *fn, entry *e)
{
    const size_t count = (size_t)mxp_array_size(e->a);
    e->data = mxp_array_data(e->a);
    if (e->dtype->bits >= 8) {
        e->nbytes = count * mxp_array_itemsize(e->a);
        return MXP_OK;
    }
    if (count % 8 * (size_t)e->dtype->bits % 8)
        return mxp_error(MXP_ERR_SHAPE, "%s: tensor '%.60s': %zu elements of %s are not whole bytes", fn, e->name,
                         count, e->dtype->name);
    e->nbytes = mxp_packed_bytes(mxp_array_dtype(e->a), count);
    if (count && !(e->packed = malloc(e->nbytes)))
        return MXP_ERR_NO_MEMORY;
    e->data = e->packed;
    return count ? mxp_pack(e->packed, mxp_array_data(e->a), mxp_array_dtype(e->a), count) : MXP_OK;
}

static mxp_status header(strbuf *hdr, entry *e, size_t n, size_t nmeta, const char *const *keys,
                         const char *const *values);

/* The entries of the arrays in the file's order and the header. */
static mxp_status prepare(const char *fn, entry **out, strbuf *hdr, size_t n, const char *const *names,
                          const mxp_array *const *arrays, size_t nmeta, const char *const *keys,
                          const char *const *values)
{
    mxp_status s = check_args(fn, n, names, arrays, nmeta, keys, values);
    if (s != MXP_OK)
        return s;
    entry *e = calloc(n ? n : 1, sizeof *e);
    if (!e)
        return MXP_ERR_NO_MEMORY;
    *out = e;
    for (size_t i = 0; i < n; i++) {
        e[i].name = names[i];
        e[i].dtype = mxp_st_dtype_of(mxp_array_dtype(arrays[i]));
        e[i].a = arrays[i];
        if (!(mxp_array_flags(arrays[i]) & MXP_ARRAY_C_CONTIGUOUS)) {
            if ((s = mxp_array_ascontiguous(&e[i].copy, arrays[i], 'C')) != MXP_OK)
                return s;
            e[i].a = e[i].copy;
        }
        e[i].ndim = mxp_array_ndim(e[i].a);
        e[i].shape = mxp_array_shape(e[i].a);
        if ((s = file_bytes(fn, &e[i])) != MXP_OK)
            return s;
    }
    return header(hdr, e, n, nmeta, keys, values);
}

/* The entries sorted into the file's order and the header for them
 * (length prefix included: hdr[0..8) is the little-endian length). */
static mxp_status header(strbuf *hdr, entry *e, size_t n, size_t nmeta, const char *const *keys,
                         const char *const *values)
{
    qsort(e, n, sizeof *e, entry_order);
    sb_add(hdr, "\0\0\0\0\0\0\0\0{", 9);
    if (nmeta) {
        sb_puts(hdr, "\"__metadata__\":{");
        for (size_t j = 0; j < nmeta; j++) {
            if (j)
                sb_add(hdr, ",", 1);
            put_string(hdr, keys[j]);
            sb_add(hdr, ":", 1);
            put_string(hdr, values[j]);
        }
        sb_puts(hdr, n ? "}," : "}");
    }
    unsigned long long at = 0;
    for (size_t i = 0; i < n; i++) {
        if (i)
            sb_add(hdr, ",", 1);
        put_string(hdr, e[i].name);
        sb_puts(hdr, ":{\"dtype\":\"");
        sb_puts(hdr, e[i].dtype->name);
        sb_puts(hdr, "\",\"shape\":[");
        for (int d = 0; d < e[i].ndim; d++) {
            if (d)
                sb_add(hdr, ",", 1);
            put_u64(hdr, (unsigned long long)e[i].shape[d]);
        }
        sb_puts(hdr, "],\"data_offsets\":[");
        put_u64(hdr, at);
        sb_add(hdr, ",", 1);
        at += e[i].nbytes;
        put_u64(hdr, at);
        sb_puts(hdr, "]}");
    }
    sb_add(hdr, "}", 1);
    while ((hdr->len - 8) % 8)
        sb_add(hdr, " ", 1);
    if (hdr->failed)
        return MXP_ERR_NO_MEMORY;
    const unsigned long long hl = hdr->len - 8;
    for (int b = 0; b < 8; b++)
        hdr->p[b] = (char)(hl >> (8 * b) & 0xff);
    return MXP_OK;
}

static void release(entry *e, size_t n, strbuf *hdr)
{
    for (size_t i = 0; e && i < n; i++) {
        mxp_array_free(e[i].copy);
        free(e[i].packed);
    }
    free(e);
    free(hdr->p);
}

static mxp_status save_path(const char *path, size_t n, const char *const *names, const mxp_array *const *arrays,
                            size_t nmeta, const char *const *keys, const char *const *values)
{
    if (!path)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_safetensors_save: path is NULL");
    if (n > (size_t)(1 << 24))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_safetensors_save: %zu tensors (at most 2^24)", n);
    entry *e = NULL;
    strbuf hdr = { 0 };
    mxp_status s = prepare("mxp_safetensors_save", &e, &hdr, n, names, arrays, nmeta, keys, values);
    mxp_write_piece *pieces = s == MXP_OK ? malloc((n + 1) * sizeof *pieces) : NULL;
    if (s == MXP_OK && !pieces)
        s = MXP_ERR_NO_MEMORY;
    if (s == MXP_OK) {
        pieces[0] = (mxp_write_piece){ hdr.p, hdr.len, NULL, NULL };
        for (size_t i = 0; i < n; i++)
            pieces[i + 1] = (mxp_write_piece){ e[i].data, e[i].nbytes, NULL, NULL };
        s = mxp_write_file("safetensors", path, pieces, (int)(n + 1));
    }
    free(pieces);
    release(e, n, &hdr);
    return s;
}

static mxp_status save_buffer(void **data, size_t *size, size_t n, const char *const *names,
                              const mxp_array *const *arrays, size_t nmeta, const char *const *keys,
                              const char *const *values)
{
    if (data)
        *data = NULL;
    if (size)
        *size = 0;
    if (!data || !size)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_safetensors_save_buffer: %s is NULL", data ? "size" : "data");
    entry *e = NULL;
    strbuf hdr = { 0 };
    mxp_status s = prepare("mxp_safetensors_save_buffer", &e, &hdr, n, names, arrays, nmeta, keys, values);
    size_t total = hdr.len;
    for (size_t i = 0; s == MXP_OK && i < n; i++)
        if (e[i].nbytes > SIZE_MAX - total)
            s = mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_safetensors_save_buffer: the file's size overflows");
        else
            total += e[i].nbytes;
    unsigned char *buf = s == MXP_OK ? mxp_malloc(total) : NULL;
    if (s == MXP_OK && !buf)
        s = MXP_ERR_NO_MEMORY;
    if (s == MXP_OK) {
        memcpy(buf, hdr.p, hdr.len);
        size_t at = hdr.len;
        for (size_t i = 0; i < n; i++) {
            if (e[i].nbytes)
                memcpy(buf + at, e[i].data, e[i].nbytes);
            at += e[i].nbytes;
        }
        *data = buf;
        *size = total;
    }
    release(e, n, &hdr);
    return s;
}

/* ---- a whole file cast, a chunk at a time --------------------------------- */

/* One converted tensor of a cast: its elements from the mapped file. */
typedef struct cast_part {
    const unsigned char *src;
    mxp_dtype from, to;
    int from_bits, to_bits;
    mxp_convert_opts opts; /* index_offset: the tensor's first element in the file's stream */
} cast_part;

/* Bytes [offset, offset + len) of the converted tensor (write-file.h's
 * make): elements first .. first + count, a whole number of bytes on both
 * sides (offset is a multiple of MXP_WRITE_CHUNK, 6 MiB: of 8 elements of
 * any width); packed float4/float6 through a byte per element. */
static mxp_status cast_make(const void *ctx, size_t offset, size_t len, void *buf)
{
    const cast_part *c = ctx;
    const size_t first = offset * 8 / (size_t)c->to_bits, count = len * 8 / (size_t)c->to_bits;
    const unsigned char *src = c->src + first * (size_t)c->from_bits / 8;
    mxp_convert_opts o = c->opts;
    o.index_offset += first;
    const bool unpack = c->from_bits < 8, pack = c->to_bits < 8;
    unsigned char *tmp = NULL;
    if ((unpack || pack) && !(tmp = malloc(count ? count : 1)))
        return mxp_error(MXP_ERR_NO_MEMORY, "safetensors: no memory to convert %zu packed elements", count);
    mxp_status s = MXP_OK;
    if (unpack) {
        s = mxp_unpack(tmp, src, c->from, count);
        src = tmp;
    }
    if (s == MXP_OK)
        s = mxp_convert(pack ? (void *)tmp : buf, c->to, src, c->from, count, &o); /* in place when both are packed */
    if (s == MXP_OK && pack)
        s = mxp_pack(buf, tmp, c->to, count);
    free(tmp);
    return s;
}

static bool is_float(mxp_dtype t)
{
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(t);
    return tr && tr->kind == MXP_KIND_FLOAT;
}

static mxp_status cast(const char *path, const mxp_safetensors *st, mxp_dtype to, const mxp_convert_opts *opts,
                       size_t *converted, uint64_t *elements)
{
    static const char fn[] = "mxp_safetensors_cast";
    if (!path || !st)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, path ? "st" : "path");
    const mxp_st_dtype *out = mxp_st_dtype_of(to);
    if (!is_float(to) || !out)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: %s is not a floating-point dtype safetensors has a code for",
                         fn, mxp_dtype_name(to));
    mxp_convert_opts base = opts ? *opts : (mxp_convert_opts){ .rounding = MXP_ROUND_NEAREST_EVEN };
    mxp_status s = mxp_convert(NULL, to, NULL, MXP_F32, 0, &base); /* the options checked once */
    if (s != MXP_OK)
        return s;
    const size_t n = mxp_safetensors_count(st), nmeta = mxp_safetensors_metadata_count(st);
    entry *e = calloc(n ? n : 1, sizeof *e);
    cast_part *parts = calloc(n ? n : 1, sizeof *parts);
    mxp_write_piece *pieces = malloc((n + 1) * sizeof *pieces);
    const char **keys = calloc(nmeta ? nmeta : 1, sizeof *keys), **values = calloc(nmeta ? nmeta : 1, sizeof *values);
    strbuf hdr = { 0 };
    size_t nconv = 0;
    uint64_t nel = 0;
    if (!e || !parts || !pieces || !keys || !values)
        s = MXP_ERR_NO_MEMORY;
    for (size_t i = 0; s == MXP_OK && i < n; i++) { /* the file's order: the stochastic stream's */
        const mxp_dtype from = mxp_safetensors_dtype(st, i);
        e[i].name = mxp_safetensors_name(st, i);
        e[i].ndim = mxp_safetensors_ndim(st, i);
        e[i].shape = mxp_safetensors_shape(st, i);
        const char *dn = mxp_safetensors_dtype_name(st, i);
        e[i].dtype = mxp_st_dtype_named(dn, strlen(dn));
        e[i].data = mxp_safetensors_data(st, i, &e[i].nbytes);
        if (!is_float(from)) /* integers, bool, the dtypes mxp lacks: their bytes as they are */
            continue;
        uint64_t count = 1;
        for (int d = 0; d < e[i].ndim; d++)
            count *= (uint64_t)e[i].shape[d]; /* the reader checked that the bytes hold them */
        if (count % 8 * (uint64_t)out->bits % 8) {
            s = mxp_error(MXP_ERR_SHAPE, "%s: tensor '%.60s': %llu elements of %s are not whole bytes", fn, e[i].name,
                          (unsigned long long)count, out->name);
            break;
        }
        parts[i] = (cast_part){ e[i].data, from, to, e[i].dtype->bits, out->bits, base };
        parts[i].opts.index_offset = base.index_offset + nel;
        e[i].dtype = out;
        e[i].nbytes = (size_t)(count * (uint64_t)out->bits / 8);
        e[i].data = NULL;
        e[i].make = &parts[i];
        nconv++;
        nel += count;
    }
    for (size_t j = 0; s == MXP_OK && j < nmeta; j++)
        keys[j] = mxp_safetensors_metadata_key(st, j), values[j] = mxp_safetensors_metadata_value(st, j);
    if (s == MXP_OK)
        s = header(&hdr, e, n, nmeta, keys, values);
    if (s == MXP_OK) {
        pieces[0] = (mxp_write_piece){ hdr.p, hdr.len, NULL, NULL };
        for (size_t i = 0; i < n; i++)
            pieces[i + 1] = (mxp_write_piece){ e[i].data, e[i].nbytes, e[i].make ? cast_make : NULL, e[i].make };
        s = mxp_write_file("safetensors", path, pieces, (int)(n + 1));
    }
    if (s == MXP_OK && converted)
        *converted = nconv;
    if (s == MXP_OK && elements)
        *elements = nel;
    free(e), free(parts), free(pieces), free(keys), free(values), free(hdr.p);
    return s;
}

mxp_status mxp_safetensors_cast(const char *path, const mxp_safetensors *st, mxp_dtype to,
                                const mxp_convert_opts *opts, size_t *converted, uint64_t *elements)
{
    if (converted)
        *converted = 0;
    if (elements)
        *elements = 0;
    MXP_PROF_RETURN("safetensors_cast", 0, 0, cast(path, st, to, opts, converted, elements));
}

/* ---- a file of tensors made while it is written --------------------------- */

static mxp_status made_make(const void *ctx, size_t offset, size_t len, void *buf)
{
    const mxp_safetensors_source *t = ctx;
    mxp_clear_error();
    const mxp_status s = t->make(t->ctx, offset, len, buf);
    if (s != MXP_OK && !*mxp_last_error()) /* a make that said nothing */
        mxp_error(s, "mxp_safetensors_save_made: tensor '%.60s': make failed (%s)",
                  t->name, mxp_status_str(s));
    return s;
}

/* Tensor i of mxp_safetensors_save_made checked (names[0..i] its and the
 * earlier ones' names) into its entry. */
static mxp_status made_entry(const char *fn, size_t i, const mxp_safetensors_source *t, const char **names, entry *e)
{
    if (!t->name || !t->make || t->ndim < 0 || t->ndim > MXP_ST_MAX_NDIM || (t->ndim && !t->shape))
        return bad(fn, !t->name ? "NULL name of tensor" : !t->make ? "NULL make of tensor"
                   : t->ndim < 0 || t->ndim > MXP_ST_MAX_NDIM ? "an ndim out of range for tensor"
                                                              : "NULL shape of tensor", i);
    names[i] = t->name;
    mxp_status s = check_tensor(fn, i, names, t->dtype_name ? MXP_DTYPE_INVALID : t->dtype);
    if (s != MXP_OK)
        return s;
    const mxp_st_dtype *d = t->dtype_name ? mxp_st_dtype_named(t->dtype_name, strlen(t->dtype_name))
                                          : mxp_st_dtype_of(t->dtype);
    if (!d && t->dtype_name)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: tensor %zu: '%.20s' is not a safetensors dtype", fn, i,
                         t->dtype_name);
    if (!d) /* MXP_DTYPE_INVALID, which check_tensor lets through */
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: tensor %zu has no dtype (MXP_DTYPE_INVALID, no dtype_name)", fn,
                         i);
    uint64_t count = 1;
    for (int k = 0; k < t->ndim; k++) {
        if (t->shape[k] < 0)
            return mxp_error(MXP_ERR_SHAPE, "%s: tensor '%.60s' has a negative extent", fn, t->name);
        if (count && (uint64_t)t->shape[k] > (UINT64_MAX >> 4) / count)
            return mxp_error(MXP_ERR_SIZE_OVERFLOW, "%s: tensor '%.60s': its element count overflows", fn, t->name);
        count *= (uint64_t)t->shape[k];
    }
    if (count % 8 * (uint64_t)d->bits % 8)
        return mxp_error(MXP_ERR_SHAPE, "%s: tensor '%.60s': %llu elements of %s are not whole bytes", fn, t->name,
                         (unsigned long long)count, d->name);
    if (count * (uint64_t)d->bits / 8 > SIZE_MAX / 2)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "%s: tensor '%.60s' is too large", fn, t->name);
    *e = (entry){ .name = t->name, .dtype = d, .ndim = t->ndim, .shape = t->shape,
                  .nbytes = (size_t)(count * (uint64_t)d->bits / 8), .make = t };
    return MXP_OK;
}

static mxp_status save_made(const char *path, size_t n, const mxp_safetensors_source *tensors, size_t nmeta,
                            const char *const *keys, const char *const *values)
{
    static const char fn[] = "mxp_safetensors_save_made";
    if (!path || (n && !tensors))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, path ? "tensors" : "path");
    if (n > (size_t)(1 << 24))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %zu tensors (at most 2^24)", fn, n);
    entry *e = calloc(n ? n : 1, sizeof *e);
    const char **names = calloc(n ? n : 1, sizeof *names);
    mxp_write_piece *pieces = malloc((n + 1) * sizeof *pieces);
    strbuf hdr = { 0 };
    mxp_status s = e && names && pieces ? MXP_OK : MXP_ERR_NO_MEMORY;
    for (size_t i = 0; s == MXP_OK && i < n; i++)
        s = made_entry(fn, i, &tensors[i], names, &e[i]);
    if (s == MXP_OK)
        s = check_meta(fn, nmeta, keys, values);
    if (s == MXP_OK)
        s = header(&hdr, e, n, nmeta, keys, values);
    if (s == MXP_OK) {
        pieces[0] = (mxp_write_piece){ hdr.p, hdr.len, NULL, NULL };
        for (size_t i = 0; i < n; i++)
            pieces[i + 1] = (mxp_write_piece){ NULL, e[i].nbytes, made_make, e[i].make };
        s = mxp_write_file("safetensors", path, pieces, (int)(n + 1));
    }
    free(e), free(names), free(pieces), free(hdr.p);
    return s;
}

mxp_status mxp_safetensors_save_made(const char *path, size_t n, const mxp_safetensors_source *tensors, size_t nmeta,
                                     const char *const *keys, const char *const *values)
{
    MXP_PROF_RETURN("safetensors_save", 0, 0, save_made(path, n, tensors, nmeta, keys, values));
}

/* ---- the profiler's kind safetensors_save ------------------------------ */
/* Bytes: every array's data twice, read from the array and written to the
 * file (or buffer); the header is not counted. */

static double arrays_bytes(size_t n, const mxp_array *const *arrays)
{
    double b = 0;
    for (size_t i = 0; arrays && i < n && i <= (size_t)(1 << 24); i++)
        b += 2 * mxp_prof_array_bytes(arrays[i]);
    return b;
}

mxp_status mxp_safetensors_save(const char *path, size_t n, const char *const *names, const mxp_array *const *arrays,
                                size_t nmeta, const char *const *keys, const char *const *values)
{
    MXP_PROF_RETURN("safetensors_save", arrays_bytes(n, arrays), 0,
                    save_path(path, n, names, arrays, nmeta, keys, values));
}

mxp_status mxp_safetensors_save_buffer(void **data, size_t *size, size_t n, const char *const *names,
                                       const mxp_array *const *arrays, size_t nmeta, const char *const *keys,
                                       const char *const *values)
{
    MXP_PROF_RETURN("safetensors_save", arrays_bytes(n, arrays), 0,
                    save_buffer(data, size, n, names, arrays, nmeta, keys, values));
}

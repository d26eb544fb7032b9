/* The safetensors header: the format's dtypes, and a JSON parser for just
 * what a header may hold -- an object of tensor entries ({"dtype": name,
 * "shape": [sizes], "data_offsets": [begin, end]}, other keys skipped) and
 * "__metadata__", an object of strings.  Strict where serde_json (the
 * library's parser) is strict: UTF-8, escapes, unsigned integers without
 * sign, fraction or exponent, nothing after the object but whitespace;
 * nesting bounded, every length bounded by the header's.  Errors name the
 * byte offset in the header. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/safetensors-internal.h"

/* In the library's order (rank = index): files list higher ranks first.
 * F4 and F6 are stored packed (mxp_pack's order: element i at bits
 * [i*bits, (i+1)*bits) of a little-endian bit string, as torch's
 * float4_e2m1fn_x2 keeps element 0 in the low nibble). */
static const mxp_st_dtype dtypes[] = {
    { "BOOL", 8, 0, MXP_BOOL },          { "F4", 4, 1, MXP_E2M1 },
    { "F6_E2M3", 6, 2, MXP_E2M3 },    { "F6_E3M2", 6, 3, MXP_E3M2 },
    { "U8", 8, 4, MXP_U8 },              { "I8", 8, 5, MXP_S8 },
    { "F8_E5M2", 8, 6, MXP_E5M2 },       { "F8_E4M3", 8, 7, MXP_E4M3 },
    { "F8_E8M0", 8, 8, MXP_E8M0 }, { "I16", 16, 9, MXP_S16 },
    { "U16", 16, 10, MXP_U16 },          { "F16", 16, 11, MXP_F16 },
    { "BF16", 16, 12, MXP_BF16 },        { "I32", 32, 13, MXP_S32 },
    { "U32", 32, 14, MXP_U32 },          { "F32", 32, 15, MXP_F32 },
    { "C64", 64, 16, MXP_DTYPE_INVALID }, { "F64", 64, 17, MXP_F64 },
    { "I64", 64, 18, MXP_S64 },          { "U64", 64, 19, MXP_U64 },
};

const mxp_st_dtype *mxp_st_dtype_named(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strlen(dtypes[i].name) == len && memcmp(dtypes[i].name, name, len) == 0)
            return &dtypes[i];
    return NULL;
}

const mxp_st_dtype *mxp_st_dtype_of(mxp_dtype dt)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dt != MXP_DTYPE_INVALID && dtypes[i].dtype == dt)
            return &dtypes[i];
    return NULL;
}

typedef struct parser {
    const unsigned char *s;
    size_t len, pos;
    int depth;
} parser;

static mxp_status syntax(const parser *p, const char *what)
{
    return mxp_error(MXP_ERR_FORMAT, "safetensors: header byte %zu: %s", p->pos, what);
}

static void skip_ws(parser *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' ||
                               p->s[p->pos] == '\r'))
        p->pos++;
}

/* The next non-space byte is c: consumed. */
static int accept(parser *p, unsigned char c)
{
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == c) {
        p->pos++;
        return 1;
    }
    return 0;
}

static int hex4(const unsigned char *h, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        const unsigned char c = h[i];
        const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return 0;
        *v = *v * 16 + (unsigned)d;
    }
    return 1;
}

/* Length of the well-formed UTF-8 sequence at s (< n bytes left), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    const unsigned char c = s[0];
    size_t k;
    unsigned min, cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        k = 2, min = 0x80, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        k = 3, min = 0x800, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        k = 4, min = 0x10000, cp = c & 0x07;
    else
        return 0;
    if (k > n)
        return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    return cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? 0 : k;
}

static size_t put_utf8(char *d, unsigned cp)
{
    if (cp < 0x80) {
        d[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (char)(0xc0 | cp >> 6), d[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (char)(0xe0 | cp >> 12), d[1] = (char)(0x80 | (cp >> 6 & 0x3f)), d[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    d[0] = (char)(0xf0 | cp >> 18), d[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    d[2] = (char)(0x80 | (cp >> 6 & 0x3f)), d[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A JSON string into *out (malloc'ed, NUL-terminated; NULL out: skipped).
 * U+0000 is refused: names and metadata are C strings here. */
static mxp_status string(parser *p, char **out)
{
    if (out)
        *out = NULL;
    if (!accept(p, '"'))
        return syntax(p, "a string was expected");
    const size_t start = p->pos;
    /* the decoded text is never longer than its JSON form */
    size_t end = start;
    while (end < p->len && p->s[end] != '"')
        end += p->s[end] == '\\' && end + 1 < p->len ? 2 : 1;
    if (end >= p->len)
        return syntax(p, "a string is not closed");
    char *d = out ? malloc(end - start + 1) : NULL;
    if (out && !d)
        return MXP_ERR_NO_MEMORY;
    size_t n = 0;
    while (p->pos < end) {
        const unsigned char c = p->s[p->pos];
        if (c < 0x20) {
            free(d);
            return syntax(p, "a control character in a string");
        }
        if (c != '\\') {
            const size_t k = utf8_len(p->s + p->pos, end - p->pos);
            if (!k) {
                free(d);
                return syntax(p, "a string is not valid UTF-8");
            }
            if (d)
                memcpy(d + n, p->s + p->pos, k);
            n += k, p->pos += k;
            continue;
        }
        const unsigned char e = p->s[p->pos + 1];
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            static const char to[] = "\"\\/\b\f\n\r\t";
            if (d)
                d[n] = to[simple - "\"\\/bfnrt"];
            n++, p->pos += 2;
            continue;
        }
        unsigned cp, lo;
        if (e != 'u' || p->pos + 6 > end || !hex4(p->s + p->pos + 2, &cp)) {
            free(d);
            return syntax(p, "a bad escape in a string");
        }
        p->pos += 6;
        if (cp >= 0xd800 && cp <= 0xdbff) { /* a surrogate pair */
            if (p->pos + 6 > end || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u' ||
                !hex4(p->s + p->pos + 2, &lo) || lo < 0xdc00 || lo > 0xdfff) {
                free(d);
                return syntax(p, "a lone surrogate in a string");
            }
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            p->pos += 6;
        } else if ((cp >= 0xdc00 && cp <= 0xdfff) || cp == 0) {
            free(d);
            return syntax(p, cp ? "a lone surrogate in a string" : "U+0000 in a string");
        }
        if (d)
            put_utf8(d + n, cp);
        n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    }
    p->pos = end + 1;
    if (d) {
        d[n] = '\0';
        *out = d;
    }
    return MXP_OK;
}

/* An unsigned integer below 2^63 (serde's usize: no sign, fraction, exponent). */
static mxp_status uint(parser *p, uint64_t *v)
{
    skip_ws(p);
    const size_t start = p->pos;
    *v = 0;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
        if (*v > (UINT64_C(1) << 63) / 10 || (p->pos > start && *v == 0))
            return syntax(p, *v ? "an integer of 2^63 or more" : "an integer with a leading zero");
        *v = *v * 10 + (uint64_t)(p->s[p->pos++] - '0');
        if (*v >= UINT64_C(1) << 63)
            return syntax(p, "an integer of 2^63 or more");
    }
    if (p->pos == start)
        return syntax(p, "an unsigned integer was expected");
    if (p->pos < p->len && (p->s[p->pos] == '.' || p->s[p->pos] == 'e' || p->s[p->pos] == 'E'))
        return syntax(p, "an integer was expected, not a fraction");
    return MXP_OK;
}

static mxp_status skip_value(parser *p);

/* Digits at p (consumed); how many. */
static size_t digits(parser *p)
{
    const size_t start = p->pos;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
        p->pos++;
    return p->pos - start;
}

/* Skips the members of an object (is_object: "key": value) or the
 * elements of an array, after its opening bracket, and the closing one. */
static mxp_status skip_items(parser *p, unsigned char close, int is_object)
{
    if (accept(p, close))
        return MXP_OK;
    do {
        mxp_status st;
        if (is_object && ((st = string(p, NULL)) != MXP_OK || (!accept(p, ':') && (st = syntax(p, "':' was expected")))))
            return st;
        if ((st = skip_value(p)) != MXP_OK)
            return st;
    } while (accept(p, ','));
    return accept(p, close) ? MXP_OK : syntax(p, close == '}' ? "'}' or ',' was expected" : "']' or ',' was expected");
}

static mxp_status literal(parser *p, const char *word)
{
    const size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
        return syntax(p, "a JSON value was expected");
    p->pos += n;
    return MXP_OK;
}

/* Any JSON value (an entry's key mxp does not use). */
static mxp_status skip_value(parser *p)
{
    skip_ws(p);
    if (p->pos >= p->len)
        return syntax(p, "a value was expected");
    const unsigned char c = p->s[p->pos];
    if (c == '"')
        return string(p, NULL);
    if (c == '{' || c == '[') {
        if (++p->depth > MXP_ST_MAX_DEPTH)
            return syntax(p, "JSON nested too deep");
        p->pos++;
        const mxp_status st = skip_items(p, c == '{' ? '}' : ']', c == '{');
        p->depth--;
        return st;
    }
    if (c == 't')
        return literal(p, "true");
    if (c == 'f')
        return literal(p, "false");
    if (c == 'n')
        return literal(p, "null");
    /* a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
    const size_t start = p->pos;
    p->pos += c == '-';
    const size_t int_start = p->pos;
    if (!digits(p) || (p->s[int_start] == '0' && p->pos - int_start > 1)) {
        p->pos = start;
        return syntax(p, "a JSON value was expected");
    }
    if (p->pos < p->len && p->s[p->pos] == '.' && (p->pos++, !digits(p)))
        return syntax(p, "a digit was expected");
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
            p->pos++;
        if (!digits(p))
            return syntax(p, "a digit was expected");
    }
    return MXP_OK;
}

/* [u, u, ...] into v (at most cap; *n of them). */
static mxp_status uint_array(parser *p, uint64_t *v, int cap, int *n, const char *what)
{
    *n = 0;
    if (!accept(p, '['))
        return syntax(p, what);
    if (accept(p, ']'))
        return MXP_OK;
    do {
        if (*n == cap)
            return syntax(p, "too many entries in a shape or data_offsets");
        const mxp_status st = uint(p, &v[(*n)++]);
        if (st != MXP_OK)
            return st;
    } while (accept(p, ','));
    return accept(p, ']') ? MXP_OK : syntax(p, "']' or ',' was expected");
}

static mxp_status tensor_entry(parser *p, mxp_st_tensor *t)
{
    int have_dtype = 0, have_shape = 0, have_offsets = 0;
    if (!accept(p, '{'))
        return syntax(p, "a tensor entry must be an object");
    if (!accept(p, '}')) {
        do {
            char *key;
            mxp_status st = string(p, &key);
            if (st != MXP_OK)
                return st;
            if (!accept(p, ':')) {
                free(key);
                return syntax(p, "':' was expected");
            }
            if (strcmp(key, "dtype") == 0) {
                char *name;
                if ((st = string(p, &name)) == MXP_OK) {
                    t->dtype = mxp_st_dtype_named(name, strlen(name));
                    if (!t->dtype)
                        st = mxp_error(MXP_ERR_FORMAT, "safetensors: tensor '%s': dtype '%.40s' is not one of the format's",
                                       t->name, name);
                    free(name);
                }
                have_dtype++;
            } else if (strcmp(key, "shape") == 0) {
                uint64_t v[MXP_ST_MAX_NDIM];
                if ((st = uint_array(p, v, MXP_ST_MAX_NDIM, &t->ndim, "a shape must be a list")) == MXP_OK)
                    for (int d = 0; d < t->ndim; d++)
                        t->shape[d] = (int64_t)v[d];
                have_shape++;
            } else if (strcmp(key, "data_offsets") == 0) {
                uint64_t v[3];
                int n;
                if ((st = uint_array(p, v, 3, &n, "data_offsets must be a list")) == MXP_OK && n != 2)
                    st = syntax(p, "data_offsets must hold two integers");
                t->begin = v[0], t->end = v[1];
                have_offsets++;
            } else {
                st = skip_value(p);
            }
            free(key);
            if (st != MXP_OK)
                return st;
        } while (accept(p, ','));
        if (!accept(p, '}'))
            return syntax(p, "'}' or ',' was expected");
    }
    if (have_dtype != 1 || have_shape != 1 || have_offsets != 1)
        return mxp_error(MXP_ERR_FORMAT, "safetensors: tensor '%s': wants one dtype, shape and data_offsets each",
                         t->name);
    return MXP_OK;
}

static mxp_status metadata(parser *p, mxp_st_header *h)
{
    if (h->has_metadata++)
        return syntax(p, "__metadata__ twice");
    if (!accept(p, '{'))
        return syntax(p, "__metadata__ must be an object of strings");
    if (accept(p, '}'))
        return MXP_OK;
    do {
        if (h->nmeta == h->meta_cap) {
            const size_t cap = h->meta_cap ? 2 * h->meta_cap : 8;
            char **k = realloc(h->keys, cap * sizeof *k);
            if (k)
                h->keys = k;
            char **v = k ? realloc(h->values, cap * sizeof *v) : NULL;
            if (!v)
                return MXP_ERR_NO_MEMORY;
            h->values = v, h->meta_cap = cap;
        }
        char *key = NULL, *value = NULL;
        mxp_status st = string(p, &key);
        if (st == MXP_OK && !accept(p, ':'))
            st = syntax(p, "':' was expected");
        if (st == MXP_OK && (skip_ws(p), p->pos < p->len && p->s[p->pos] != '"'))
            st = syntax(p, "__metadata__ values must be strings");
        if (st == MXP_OK)
            st = string(p, &value);
        for (size_t j = 0; st == MXP_OK && j < h->nmeta; j++)
            if (strcmp(h->keys[j], key) == 0)
                st = mxp_error(MXP_ERR_FORMAT, "safetensors: __metadata__ key '%.60s' twice", key);
        if (st != MXP_OK) {
            free(key), free(value);
            return st;
        }
        h->keys[h->nmeta] = key, h->values[h->nmeta++] = value;
    } while (accept(p, ','));
    return accept(p, '}') ? MXP_OK : syntax(p, "'}' or ',' was expected");
}

static mxp_status add_tensor(mxp_st_header *h, char *name)
{
    for (size_t i = 0; i < h->count; i++)
        if (strcmp(h->tensors[i].name, name) == 0) {
            const mxp_status st = mxp_error(MXP_ERR_FORMAT, "safetensors: tensor '%.60s' named twice", name);
            free(name);
            return st;
        }
    if (h->count == h->cap) {
        const size_t cap = h->cap ? 2 * h->cap : 16;
        mxp_st_tensor *t = realloc(h->tensors, cap * sizeof *t);
        if (!t) {
            free(name);
            return MXP_ERR_NO_MEMORY;
        }
        h->tensors = t, h->cap = cap;
    }
    mxp_st_tensor *t = &h->tensors[h->count++];
    memset(t, 0, sizeof *t);
    t->name = name;
    return MXP_OK;
}

mxp_status mxp_st_header_parse(mxp_st_header *h, const char *json, size_t len)
{
    parser p = { (const unsigned char *)json, len, 0, 0 };
    if (!accept(&p, '{'))
        return syntax(&p, "the header must be a JSON object");
    if (!accept(&p, '}')) {
        do {
            char *key;
            mxp_status st = string(&p, &key);
            if (st == MXP_OK && !accept(&p, ':'))
                st = syntax(&p, "':' was expected");
            if (st != MXP_OK) {
                free(key);
                return st;
            }
            if (strcmp(key, "__metadata__") == 0) {
                free(key);
                st = metadata(&p, h);
            } else if ((st = add_tensor(h, key)) == MXP_OK) {
                st = tensor_entry(&p, &h->tensors[h->count - 1]);
            }
            if (st != MXP_OK)
                return st;
        } while (accept(&p, ','));
        if (!accept(&p, '}'))
            return syntax(&p, "'}' or ',' was expected");
    }
    skip_ws(&p);
    if (p.pos != len)
        return syntax(&p, "bytes after the header's object");
    return MXP_OK;
}

void mxp_st_header_free(mxp_st_header *h)
{
    for (size_t i = 0; i < h->count; i++)
        free(h->tensors[i].name);
    for (size_t j = 0; j < h->nmeta; j++)
        free(h->keys[j]), free(h->values[j]);
    free(h->tensors), free(h->keys), free(h->values);
    memset(h, 0, sizeof *h);
}

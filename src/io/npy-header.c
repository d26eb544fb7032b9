/* The .npy header: parsing the Python dict literal that NumPy writes.
 * No I/O here; the preamble and the writer are in npy-prefix.c.
 *
 * The parser accepts the subset of Python literal syntax a header can use:
 *
 *   header := ws '{' ws [entry (ws ',' ws entry)* ws [',']] ws '}' ws
 *   entry  := string ws ':' ws value      keys: 'descr' 'fortran_order' 'shape'
 *   descr  := string | '[' ws '(' ws string ws ',' ws string ws [','] ws ')' ws [','] ws ']'
 *   shape  := '(' ws ')' | '(' int ws ',' ws ')' | '(' int (ws ',' ws int)+ ws [','] ws ')'
 *   string := "'" chars "'" | '"' chars '"'   (no escapes)
 *   int    := digits ['L' in versions 1.0 and 2.0: a Python 2 long]
 *
 * and refuses everything else, naming what it found and where. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "io/npy-internal.h"
#include "mxp/io.h"

/* The message into msg; returns st (MXP_ERR_FORMAT or MXP_ERR_UNSUPPORTED). */
static mxp_status fail(char msg[MXP_NPY_MSG], mxp_status st, const char *fmt, ...) MXP_PRINTF(3, 4);
static mxp_status fail(char msg[MXP_NPY_MSG], mxp_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, MXP_NPY_MSG, fmt, ap);
    va_end(ap);
    return st;
}

/* ---- header text ----------------------------------------------------- */

typedef struct parser {
    const char *start, *p, *end;
    int major;
    char *msg;
} parser;

static size_t offset(const parser *ps) { return (size_t)(ps->p - ps->start); }

/* Up to 60 bytes of s for a message, quoted as written; the header holds
 * only printable ASCII by the time this runs. */
static const char *span(char *buf, size_t cap, const char *s, size_t n)
{
    const size_t max = 60;
    snprintf(buf, cap, "%.*s%s", (int)(n < max ? n : max), s, n > max ? "..." : "");
    return buf;
}

/* The token at the cursor, for "expected X, found Y": up to the next
 * space or delimiter, at least one byte, at most 12. */
static const char *here(parser *ps, char *buf, size_t cap)
{
    if (ps->p >= ps->end)
        return "the end of the header";
    size_t n = 1;
    while (n < 12 && ps->p + n < ps->end && !strchr(" \t\n\r\f\v,:)}", ps->p[n]))
        n++;
    char tmp[24];
    snprintf(buf, cap, "'%s'", span(tmp, sizeof tmp, ps->p, n));
    return buf;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r' ||
                               *ps->p == '\f' || *ps->p == '\v'))
        ps->p++;
}

static bool eat(parser *ps, char c)
{
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == c) {
        ps->p++;
        skip_ws(ps);
        return true;
    }
    return false;
}

static mxp_status expect(parser *ps, char c, const char *where)
{
    char buf[40];
    if (eat(ps, c))
        return MXP_OK;
    return fail(ps->msg, MXP_ERR_FORMAT, "expected '%c' %s at offset %zu of the header, found %s", c, where, offset(ps),
                here(ps, buf, sizeof buf));
}

/* A quoted string without escapes; *s and *n give its contents. */
static mxp_status parse_string(parser *ps, const char **s, size_t *n, const char *what)
{
    char buf[40];
    skip_ws(ps);
    if (ps->p >= ps->end || (*ps->p != '\'' && *ps->p != '"'))
        return fail(ps->msg, MXP_ERR_FORMAT, "expected a quoted string for %s at offset %zu of the header, found %s",
                    what, offset(ps), here(ps, buf, sizeof buf));
    const char quote = *ps->p++;
    const char *b = ps->p;
    while (ps->p < ps->end && *ps->p != quote) {
        if (*ps->p == '\\')
            return fail(ps->msg, MXP_ERR_FORMAT, "escape sequence in a string at offset %zu of the header", offset(ps));
        if (*ps->p == '\n' || *ps->p == '\r')
            return fail(ps->msg, MXP_ERR_FORMAT, "line break in a string at offset %zu of the header", offset(ps));
        ps->p++;
    }
    if (ps->p >= ps->end)
        return fail(ps->msg, MXP_ERR_FORMAT, "unterminated string at offset %zu of the header",
                    (size_t)(b - 1 - ps->start));
    *s = b;
    *n = (size_t)(ps->p - b);
    ps->p++;
    return MXP_OK;
}

static bool span_is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static mxp_status parse_bool(parser *ps, bool *v)
{
    char buf[40];
    skip_ws(ps);
    const size_t left = (size_t)(ps->end - ps->p);
    for (int b = 0; b < 2; b++) {
        const char *word = b ? "True" : "False";
        const size_t n = strlen(word);
        if (left >= n && !memcmp(ps->p, word, n) && (left == n || !ident_char(ps->p[n]))) {
            ps->p += n;
            *v = b;
            return MXP_OK;
        }
    }
    return fail(ps->msg, MXP_ERR_FORMAT, "'fortran_order' must be True or False, found %s", here(ps, buf, sizeof buf));
}

/* ---- shape ----------------------------------------------------------- */

static mxp_status parse_dim(parser *ps, int64_t *v)
{
    char buf[40];
    skip_ws(ps);
    const char *b = ps->p;
    if (ps->p < ps->end && *ps->p == '-')
        return fail(ps->msg, MXP_ERR_FORMAT, "shape entry at offset %zu of the header is negative", offset(ps));
    int64_t x = 0;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
        int d = *ps->p++ - '0';
        if (x > (INT64_MAX - d) / 10)
            return fail(ps->msg, MXP_ERR_FORMAT, "shape entry at offset %zu of the header is too large",
                        (size_t)(b - ps->start));
        x = 10 * x + d;
    }
    if (ps->p == b)
        return fail(ps->msg, MXP_ERR_FORMAT,
                    "expected a non-negative integer in 'shape' at offset %zu of the header, found %s", offset(ps),
                    here(ps, buf, sizeof buf));
    if (ps->major < 3 && ps->p < ps->end && *ps->p == 'L') /* a Python 2 long */
        ps->p++;
    if (ps->p < ps->end && (ident_char(*ps->p) || *ps->p == '.'))
        return fail(ps->msg, MXP_ERR_FORMAT, "shape entry at offset %zu of the header is not a decimal integer",
                    (size_t)(b - ps->start));
    *v = x;
    return MXP_OK;
}

static mxp_status parse_shape(parser *ps, mxp_npy_header *h)
{
    char buf[40];
    mxp_status st = expect(ps, '(', "to open the 'shape' tuple");
    if (st != MXP_OK)
        return st;
    h->ndim = 0;
    while (!eat(ps, ')')) {
        if (h->ndim == MXP_MAXDIMS)
            return fail(ps->msg, MXP_ERR_FORMAT, "shape has more than %d dimensions", MXP_MAXDIMS);
        if ((st = parse_dim(ps, &h->shape[h->ndim++])) != MXP_OK)
            return st;
        if (eat(ps, ','))
            continue;
        if (eat(ps, ')')) {
            if (h->ndim == 1) /* (3) is the integer 3 in Python */
                return fail(ps->msg, MXP_ERR_FORMAT, "'shape' must be a tuple: write (%lld,), not (%lld)",
                            (long long)h->shape[0], (long long)h->shape[0]);
            break;
        }
        return fail(ps->msg, MXP_ERR_FORMAT, "expected ',' or ')' in 'shape' at offset %zu of the header, found %s",
                    offset(ps), here(ps, buf, sizeof buf));
    }
    return MXP_OK;
}

/* ---- descr ----------------------------------------------------------- */

static const char *kind_word(char kind)
{
    switch (kind) {
    case 'O': return "an object array holds pickled Python objects, which mxp never loads";
    case 'c': return "complex numbers are not an mxp dtype";
    case 'S': case 'a': return "byte strings are not an mxp dtype";
    case 'U': return "unicode strings are not an mxp dtype";
    case 'V': return "raw void bytes: the element type is lost (as for an ml_dtypes array saved by np.save)";
    case 'M': case 'm': return "datetime and timedelta are not mxp dtypes";
    default: return NULL;
    }
}

/* A simple descr such as '<f4', '|u1', '>i8', '=f2' or 'f2' (native). */
static mxp_status simple_descr(parser *ps, const char *s, size_t n, mxp_dtype *dt, bool *swap)
{
    char d[80];
    span(d, sizeof d, s, n);
    char order = '=';
    if (n > 0 && (*s == '<' || *s == '>' || *s == '|' || *s == '=')) {
        order = *s++;
        n--;
    }
    if (n == 0)
        return fail(ps->msg, MXP_ERR_FORMAT, "descr '%s' is not a dtype", d);
    const char kind = *s;
    const char *why = kind_word(kind);
    if (why)
        return fail(ps->msg, MXP_ERR_UNSUPPORTED, "descr '%s' is not supported: %s", d, why);
    size_t size = 0;
    if (n == 1) /* 'f', '<i', 'd': NumPy type codes that np.save never writes */
        return fail(ps->msg, MXP_ERR_FORMAT, "descr '%s' is not a dtype that mxp knows", d);
    for (size_t i = 1; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || size > 1000)
            return fail(ps->msg, MXP_ERR_FORMAT, "descr '%s' is not a dtype that mxp knows", d);
        size = 10 * size + (size_t)(s[i] - '0');
    }
    *dt = MXP_DTYPE_INVALID;
    for (int t = 1; t < MXP_DTYPE_COUNT; t++) {
        const mxp_dtype_traits *tr = mxp_dtype_get_traits((mxp_dtype)t);
        if (mxp_npy_is_numpy_type(tr->dtype) && (char)tr->kind == kind && tr->itemsize == size)
            *dt = tr->dtype;
    }
    if (*dt == MXP_DTYPE_INVALID) {
        if (kind == 'f' || kind == 'i' || kind == 'u' || kind == 'b')
            return fail(ps->msg, MXP_ERR_UNSUPPORTED, "descr '%s' is not supported: no mxp dtype is a %zu-byte '%c'", d,
                        size, kind);
        return fail(ps->msg, MXP_ERR_FORMAT, "descr '%s' is not a dtype that mxp knows", d);
    }
    if (order == '|' && size > 1)
        return fail(ps->msg, MXP_ERR_FORMAT, "descr '%s' does not say the byte order of a %zu-byte type", d, size);
    *swap = (order == '<' && !mxp_npy_host_little()) || (order == '>' && mxp_npy_host_little());
    return MXP_OK;
}

/* [('bfloat16', '<u2')]: the field name says the dtype. */
static mxp_status struct_descr(parser *ps, mxp_dtype *dt, bool *swap)
{
    char d[80], f[80];
    /* The descr as written, up to its ']', names it in messages. */
    const char *open = ps->p, *close = memchr(ps->p, ']', (size_t)(ps->end - ps->p));
    span(d, sizeof d, open, close ? (size_t)(close - open + 1) : (size_t)(ps->end - open));
    ps->p++; /* '[' */
    const char *name, *type;
    size_t nname, ntype;
    mxp_status st = expect(ps, '(', "to open a field of the structured descr");
    if (st == MXP_OK)
        st = parse_string(ps, &name, &nname, "a field name");
    if (st == MXP_OK)
        st = expect(ps, ',', "after the field name");
    if (st == MXP_OK)
        st = parse_string(ps, &type, &ntype, "a field type");
    if (st != MXP_OK)
        return st;
    if (eat(ps, ',') && ps->p < ps->end && *ps->p != ')')
        return fail(ps->msg, MXP_ERR_UNSUPPORTED,
                    "descr %s is not supported: a field with a subarray shape or other extras", d);
    if ((st = expect(ps, ')', "to close the field")) != MXP_OK)
        return st;
    eat(ps, ',');
    if (!eat(ps, ']')) {
        if (ps->p < ps->end && *ps->p == '(')
            return fail(ps->msg, MXP_ERR_UNSUPPORTED,
                        "descr %s is not supported: mxp reads one-field structured dtypes only", d);
        return fail(ps->msg, MXP_ERR_FORMAT, "expected ']' to close the descr %s at offset %zu of the header", d,
                    offset(ps));
    }
    *dt = MXP_DTYPE_INVALID;
    for (int t = 1; t < MXP_DTYPE_COUNT; t++) {
        if (!mxp_npy_is_numpy_type((mxp_dtype)t) && span_is(name, nname, mxp_dtype_name((mxp_dtype)t)))
            *dt = (mxp_dtype)t;
    }
    if (*dt == MXP_DTYPE_INVALID)
        return fail(ps->msg, MXP_ERR_UNSUPPORTED,
                    "descr %s is not supported: field '%s' names no mxp type beyond NumPy's (bfloat16, the "
                    "float8/float6/float4 types, int4/uint4/int2/uint2/int1/uint1, as ml_dtypes spells them)", d,
                    span(f, sizeof f, name, nname));
    const size_t size = mxp_dtype_itemsize(*dt);
    mxp_dtype bits;
    st = simple_descr(ps, type, ntype, &bits, swap);
    if (st != MXP_OK || bits != (size == 1 ? MXP_U8 : MXP_U16))
        return fail(ps->msg, MXP_ERR_FORMAT, "descr %s: field '%s' must hold the bits as u%zu", d, mxp_dtype_name(*dt),
                    size);
    return MXP_OK;
}

static mxp_status parse_descr(parser *ps, mxp_npy_header *h)
{
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '[')
        return struct_descr(ps, &h->dtype, &h->swap);
    if (ps->p < ps->end && *ps->p == '{')
        return fail(ps->msg, MXP_ERR_UNSUPPORTED,
                    "a descr given as a dict (a structured dtype with offsets) is not supported");
    const char *s;
    size_t n;
    mxp_status st = parse_string(ps, &s, &n, "'descr'");
    return st != MXP_OK ? st : simple_descr(ps, s, n, &h->dtype, &h->swap);
}

/* ---- the dict -------------------------------------------------------- */

static mxp_status parse_entry(parser *ps, mxp_npy_header *h, unsigned *seen)
{
    static const char *const keys[3] = { "descr", "fortran_order", "shape" };
    const char *k;
    size_t n;
    char buf[80];
    mxp_status st = parse_string(ps, &k, &n, "a key");
    if (st != MXP_OK)
        return st;
    int key = -1;
    for (int i = 0; i < 3; i++) {
        if (span_is(k, n, keys[i]))
            key = i;
    }
    if (key < 0)
        return fail(ps->msg, MXP_ERR_FORMAT,
                    "unknown key '%s' in the header (a .npy header has 'descr', 'fortran_order' and 'shape')",
                    span(buf, sizeof buf, k, n));
    if (*seen & 1u << key)
        return fail(ps->msg, MXP_ERR_FORMAT, "key '%s' appears twice in the header", keys[key]);
    *seen |= 1u << key;
    if ((st = expect(ps, ':', "after a key")) != MXP_OK)
        return st;
    if (key == 0)
        return parse_descr(ps, h);
    if (key == 1)
        return parse_bool(ps, &h->fortran);
    return parse_shape(ps, h);
}

/* Only printable ASCII and whitespace: a NUL, a control byte or non-ASCII
 * text is refused before parsing. */
static mxp_status check_bytes(const char *text, size_t n, char msg[MXP_NPY_MSG])
{
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)text[i];
        if (c == 0)
            return fail(msg, MXP_ERR_FORMAT, "NUL byte at offset %zu of the header", i);
        if ((c < 0x20 && !(c >= '\t' && c <= '\r')) || c >= 0x7f)
            return fail(msg, MXP_ERR_FORMAT, "byte 0x%02x at offset %zu of the header is not printable ASCII", c, i);
    }
    return MXP_OK;
}

/* As NumPy: the product of the nonzero dimensions times the itemsize must
 * fit in a ptrdiff_t, even when another dimension is 0 (so the C or
 * Fortran strides of the array fit too). */
static mxp_status check_size(mxp_npy_header *h, char msg[MXP_NPY_MSG])
{
    const int64_t itemsize = (int64_t)mxp_dtype_itemsize(h->dtype);
    const int64_t limit = PTRDIFF_MAX / itemsize;
    int64_t n = 1;
    bool empty = false;
    for (int i = 0; i < h->ndim; i++) {
        if (h->shape[i] == 0) {
            empty = true;
            continue;
        }
        if (n > limit / h->shape[i])
            return fail(msg, MXP_ERR_FORMAT, "shape entry %d (%lld) makes the array larger than memory", i,
                        (long long)h->shape[i]);
        n *= h->shape[i];
    }
    h->size = empty ? 0 : n;
    h->data_bytes = (size_t)(h->size * itemsize);
    return MXP_OK;
}

mxp_status mxp_npy_parse_header(const char *text, mxp_npy_header *h, char msg[MXP_NPY_MSG])
{
    mxp_status st = check_bytes(text, h->header_len, msg);
    if (st != MXP_OK)
        return st;
    parser ps = { text, text, text + h->header_len, h->major, msg };
    unsigned seen = 0;
    if ((st = expect(&ps, '{', "to open the header dict")) != MXP_OK)
        return st;
    bool closed = eat(&ps, '}');
    while (!closed) {
        if ((st = parse_entry(&ps, h, &seen)) != MXP_OK)
            return st;
        if (eat(&ps, ','))
            closed = eat(&ps, '}'); /* a trailing comma */
        else if ((st = expect(&ps, '}', "or ',' after a value")) != MXP_OK)
            return st;
        else
            closed = true;
    }
    skip_ws(&ps);
    if (ps.p != ps.end)
        return fail(msg, MXP_ERR_FORMAT, "unexpected text after the header dict at offset %zu", offset(&ps));
    static const char *const keys[3] = { "descr", "fortran_order", "shape" };
    for (int i = 0; i < 3; i++) {
        if (!(seen & 1u << i))
            return fail(msg, MXP_ERR_FORMAT, "the header has no '%s' key", keys[i]);
    }
    return check_size(h, msg);
}

/* ---- a descr alone (mxp_npy_descr_dtype) ------------------------------- */

mxp_status mxp_npy_descr_dtype(mxp_dtype *dt, bool *swapped, const char *descr)
{
    if (!dt || !swapped || !descr)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_npy_descr_dtype: a NULL argument");
    char msg[MXP_NPY_MSG];
    const size_t n = strlen(descr);
    mxp_npy_header h = { .major = 1, .header_len = n };
    parser ps = { descr, descr, descr + n, 1, msg };
    mxp_status st = check_bytes(descr, n, msg);
    if (st == MXP_OK)
        st = parse_descr(&ps, &h);
    if (st == MXP_OK) {
        skip_ws(&ps);
        if (ps.p != ps.end)
            st = fail(msg, MXP_ERR_FORMAT, "unexpected text after the descr at offset %zu", offset(&ps));
    }
    if (st != MXP_OK)
        return mxp_error(st, "npy: %s", msg);
    *dt = h.dtype;
    *swapped = h.swap;
    return MXP_OK;
}

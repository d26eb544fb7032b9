/* mxp_array_format / mxp_array_fprint: an array as NumPy 1.24 prints it —
 * str(a) (np.array2string with its defaults) or repr(a).  The layout is
 * arrayprint.py's _formatArray (nested brackets, lines wrapped at the
 * line width, a summary with "..." past the threshold); the element
 * formats are print-format.c's.  `mxp show` prints through this. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/array-internal.h"
#include "array/print-internal.h"
#include "core/abi.h"
#include "core/error.h"
#include "core/strbuf.h"
#include "mxp/alloc.h"

enum { MAX_PRECISION = 40, MAX_LINEWIDTH = 100000 };

typedef struct print_ctx {
    const char *data;
    const int64_t *shape, *strides;
    int ndim, edge;
    bool summarise;
    const char *sep; /* " " (str) or ", " (repr) */
    mxp_print_format fmt;
    const void **elems; /* the elements shown, for the format */
    size_t count, cap;
    bool failed;
} print_ctx;

static const void *element(const print_ctx *c, const int64_t *index)
{
    const char *p = c->data;
    for (int d = 0; d < c->ndim; d++)
        p += index[d] * c->strides[d];
    return p;
}

static bool summarised(const print_ctx *c, int axis)
{
    return c->summarise && c->shape[axis] > 2 * (int64_t)c->edge;
}

/* Collects the elements that will be shown (_leading_trailing). */
static void gather(print_ctx *c, int64_t *index, int axis)
{
    if (axis == c->ndim) {
        if (c->count == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 1024;
            const void **e = realloc(c->elems, cap * sizeof *e);
            if (!e) {
                c->failed = true;
                return;
            }
            c->elems = e;
            c->cap = cap;
        }
        c->elems[c->count++] = element(c, index);
        return;
    }
    const int64_t len = c->shape[axis];
    for (int64_t i = 0; i < len && !c->failed; i++) {
        if (summarised(c, axis) && i == c->edge)
            i = len - c->edge;
        index[axis] = i;
        gather(c, index, axis + 1);
    }
}

/* _extendLine: wraps before `word` when it would pass `width`, unless the
 * line holds only its indent. */
static void extend_line(strbuf *s, strbuf *line, const char *word, int width, const char *indent)
{
    if (line->len + strlen(word) > (size_t)width && line->len > strlen(indent)) {
        while (line->len > 0 && line->p[line->len - 1] == ' ')
            line->p[--line->len] = '\0';
        sb_add(s, line->p, line->len);
        sb_puts(s, "\n");
        line->len = 0;
        sb_puts(line, indent);
    }
    sb_puts(line, word);
}

static void format_axis(const print_ctx *c, int64_t *index, int axis, const char *indent, int width, strbuf *out);

/* Element i of this axis (a number, or a nested array) as one string. */
static void word_at(const print_ctx *c, int64_t *index, int axis, int64_t i, const char *indent, int width,
                    strbuf *w)
{
    w->len = 0;
    index[axis] = i;
    format_axis(c, index, axis + 1, indent, width, w);
}

/* _formatArray's recurser: the array index[0..axis-1] into out. */
static void format_axis(const print_ctx *c, int64_t *index, int axis, const char *indent, int width, strbuf *out)
{
    if (axis == c->ndim) {
        char w[512];
        mxp_print_format_element(&c->fmt, element(c, index), w, sizeof w);
        sb_puts(out, w);
        return;
    }
    strbuf next = { 0 };
    sb_puts(&next, indent);
    sb_puts(&next, " ");
    const int64_t len = c->shape[axis];
    const bool summary = summarised(c, axis);
    const int64_t leading = summary ? c->edge : 0, trailing = summary ? c->edge : len;
    const int64_t words = leading + (summary ? 1 : 0) + trailing;
    strbuf s = { 0 }, w = { 0 };
    const char *nx = next.p ? next.p : " ";
    if (axis == c->ndim - 1) { /* the last axis: words wrapped to the width */
        strbuf line = { 0 };
        sb_puts(&line, indent);
        for (int64_t i = 0; i < words; i++) {
            if (summary && i == leading)
                sb_puts(&w, "...");
            else
                word_at(c, index, axis, i < leading ? i : len - (words - i), nx, width - 1, &w);
            extend_line(&s, &line, w.len ? w.p : "", width - 1, indent);
            w.len = 0;
            if (i + 1 < words)
                sb_puts(&line, c->sep);
        }
        sb_add(&s, line.p ? line.p : "", line.len);
        s.failed |= line.failed;
        free(line.p);
    } else { /* rows of nested arrays: the separator's comma, then ndim - axis - 1 newlines */
        char sep[72];
        const int lines = c->ndim - axis - 1 < 60 ? c->ndim - axis - 1 : 60;
        size_t n = 0;
        if (c->sep[0] == ',')
            sep[n++] = ',';
        memset(sep + n, '\n', (size_t)lines);
        sep[n + (size_t)lines] = '\0';
        for (int64_t i = 0; i < words; i++) {
            sb_puts(&s, indent);
            if (summary && i == leading) {
                sb_puts(&s, "...");
            } else {
                word_at(c, index, axis, i < leading ? i : len - (words - i), nx, width - 1, &w);
                sb_add(&s, w.p ? w.p : "", w.len);
            }
            if (i + 1 < words)
                sb_puts(&s, sep);
        }
    }
    const size_t skip = strlen(indent) < s.len ? strlen(indent) : s.len;
    sb_puts(out, "[");
    sb_add(out, s.p ? s.p + skip : "", s.len - skip);
    sb_puts(out, "]");
    out->failed |= s.failed || w.failed || next.failed;
    free(s.p);
    free(w.p);
    free(next.p);
}

static mxp_status check_opts(const mxp_print_opts *o)
{
    if (o->precision < MXP_PRINT_PRECISION_NONE || o->precision > MAX_PRECISION)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT,
                         "print: precision %d is not 1..%d, 0 (the default 8) or MXP_PRINT_PRECISION_NONE",
                         o->precision, MAX_PRECISION);
    if (o->edgeitems < 0 || o->edgeitems > 1000)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "print: edgeitems %d is not 1..1000 (0: the default 3)",
                         o->edgeitems);
    if (o->threshold < 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "print: threshold %lld is negative (0: the default 1000)",
                         (long long)o->threshold);
    if (o->linewidth < 0 || o->linewidth > MAX_LINEWIDTH)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "print: linewidth %d is not 1..%d (0: the default 75)",
                         o->linewidth, MAX_LINEWIDTH);
    return MXP_OK;
}

/* NumPy's dtypes that repr leaves out (np.core.arrayprint's _typelessdata). */
static bool dtype_implied(mxp_dtype dt)
{
    return dt == MXP_F64 || dt == MXP_S64 || dt == MXP_BOOL;
}

static void shape_text(strbuf *s, const mxp_array *a)
{
    char t[32];
    sb_puts(s, "(");
    for (int d = 0; d < a->ndim; d++) {
        snprintf(t, sizeof t, d ? ", %lld" : "%lld", (long long)a->shape[d]);
        sb_puts(s, t);
    }
    sb_puts(s, a->ndim == 1 ? ",)" : ")");
}

/* The text into out (a strbuf). */
static mxp_status format(strbuf *out, const mxp_array *a, const mxp_print_opts *o)
{
    const int precision = o->precision == MXP_PRINT_PRECISION_NONE ? 0 : o->precision ? o->precision : 8;
    const int edge = o->edgeitems ? o->edgeitems : 3, width = o->linewidth ? o->linewidth : 75;
    const int64_t threshold = o->threshold ? o->threshold : 1000;
    const int64_t size = mxp_array_size(a);
    const char *prefix = o->repr ? "array(" : "";
    const bool typeless = dtype_implied(a->dtype) && size > 0;
    sb_puts(out, prefix);
    if (size == 0) {
        sb_puts(out, "[]");
        if (o->repr && !(a->ndim == 1)) {
            sb_puts(out, ", shape=");
            shape_text(out, a);
        }
    } else {
        print_ctx c = { .data = a->data, .shape = a->shape, .strides = a->strides, .ndim = a->ndim,
                        .edge = edge, .summarise = size > threshold, .sep = o->repr ? ", " : " " };
        int64_t index[MXP_MAXDIMS] = { 0 };
        gather(&c, index, 0);
        if (!c.failed) {
            mxp_print_format_init(&c.fmt, a->dtype, c.ndim, precision, c.elems, c.count);
            /* the hanging indent: array2string's " " plus the prefix's width;
             * the suffix ("," or ")") takes from the width */
            char indent[16];
            snprintf(indent, sizeof indent, "%*s", (int)strlen(prefix) + 1, "");
            format_axis(&c, index, 0, indent, width - (o->repr ? 1 : 0), out);
        }
        free(c.elems);
        if (c.failed)
            out->failed = true;
    }
    if (o->repr) {
        if (typeless) {
            sb_puts(out, ")");
        } else {
            sb_puts(out, ",");
            char dt[48];
            snprintf(dt, sizeof dt, "dtype=%s)", mxp_dtype_name(a->dtype));
            const char *nl = out->p ? strrchr(out->p, '\n') : NULL;
            const size_t last = out->len - (nl ? (size_t)(nl - out->p) + 1 : 0);
            sb_puts(out, last + strlen(dt) + 1 > (size_t)width ? "\n      " : " ");
            sb_puts(out, dt);
        }
    }
    return out->failed ? mxp_error(MXP_ERR_NO_MEMORY, "print: out of memory formatting the array") : MXP_OK;
}

mxp_status mxp_array_format(char **out, size_t *len, const mxp_array *a, const mxp_print_opts *opts)
{
    MXP_ABI_IN_OUT(opts, print_opts, "mxp_array_format", out);
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_array_format: out is NULL");
    *out = NULL;
    if (len)
        *len = 0;
    mxp_status st = mxp_require_array(a, "mxp_array_format: array");
    const mxp_print_opts defaults = { 0 };
    const mxp_print_opts *o = opts ? opts : &defaults;
    if (st == MXP_OK)
        st = check_opts(o);
    if (st != MXP_OK)
        return st;
    strbuf s = { 0 };
    st = format(&s, a, o);
    if (st == MXP_OK) {
        *out = mxp_malloc(s.len + 1);
        if (!*out)
            st = mxp_error(MXP_ERR_NO_MEMORY, "mxp_array_format: out of memory for %zu bytes of text", s.len + 1);
        else {
            memcpy(*out, s.p ? s.p : "", s.len + 1);
            if (len)
                *len = s.len;
        }
    }
    free(s.p);
    return st;
}

mxp_status mxp_array_fprint(FILE *f, const mxp_array *a, const mxp_print_opts *opts)
{
    MXP_ABI_IN(opts, print_opts, "mxp_array_fprint");
    if (!f)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_array_fprint: the FILE is NULL");
    char *s = NULL;
    size_t n = 0;
    mxp_status st = mxp_array_format(&s, &n, a, opts);
    if (st == MXP_OK && (fwrite(s, 1, n, f) != n || fputc('\n', f) == EOF))
        st = mxp_error(MXP_ERR_IO, "mxp_array_fprint: writing %zu bytes failed", n + 1);
    mxp_free(s);
    return st;
}

/* mxp show — a .npy file's array as NumPy prints it (print(np.load(f)),
 * np.array2string with its defaults: line width 75, a summary with "..."
 * beyond 1000 elements).  The layout is arrayprint.py's _formatArray; the
 * element formats are in show_format.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { LINE_WIDTH = 75, THRESHOLD = 1000, MAX_PRECISION = 40, MAX_EDGEITEMS = 1000 };

typedef struct strbuf {
    char *p;
    size_t len, cap;
    bool failed;
} strbuf;

static void sb_add(strbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_puts(strbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

typedef struct show_ctx {
    const char *data;
    const int64_t *shape, *strides;
    int ndim, edge;
    bool summarise;
    show_format fmt;
    const void **elems; /* the elements shown, for the format */
    size_t count, cap;
    bool failed;
} show_ctx;

static const void *element(const show_ctx *c, const int64_t *index)
{
    const char *p = c->data;
    for (int d = 0; d < c->ndim; d++)
        p += index[d] * c->strides[d];
    return p;
}

static bool summarised(const show_ctx *c, int axis)
{
    return c->summarise && c->shape[axis] > 2 * (int64_t)c->edge;
}

/* Collects the elements that will be shown (_leading_trailing). */
static void gather(show_ctx *c, int64_t *index, int axis)
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

static void format_axis(const show_ctx *c, int64_t *index, int axis, const char *indent, int width, strbuf *out);

/* Element i of this axis (a number, or a nested array) as one string. */
static void word_at(const show_ctx *c, int64_t *index, int axis, int64_t i, const char *indent, int width,
                    strbuf *w)
{
    w->len = 0;
    index[axis] = i;
    format_axis(c, index, axis + 1, indent, width, w);
}

/* _formatArray's recurser: the array index[0..axis-1] into out. */
static void format_axis(const show_ctx *c, int64_t *index, int axis, const char *indent, int width, strbuf *out)
{
    if (axis == c->ndim) {
        char w[512];
        show_format_element(&c->fmt, element(c, index), w, sizeof w);
        sb_puts(out, w);
        return;
    }
    char next[128];
    snprintf(next, sizeof next, "%s ", indent);
    const int64_t len = c->shape[axis];
    const bool summary = summarised(c, axis);
    const int64_t leading = summary ? c->edge : 0, trailing = summary ? c->edge : len;
    strbuf s = { 0 }, w = { 0 };
    if (axis == c->ndim - 1) { /* the last axis: words wrapped to the width */
        strbuf line = { 0 };
        sb_puts(&line, indent);
        for (int64_t i = 0; i < leading + (summary ? 1 : 0) + trailing; i++) {
            if (summary && i == leading)
                sb_puts(&w, "...");
            else
                word_at(c, index, axis, i < leading ? i : len - (leading + (summary ? 1 : 0) + trailing - i), next,
                        width - 1, &w);
            extend_line(&s, &line, w.len ? w.p : "", width - 1, indent);
            w.len = 0;
            if (i + 1 < leading + (summary ? 1 : 0) + trailing)
                sb_puts(&line, " ");
        }
        sb_add(&s, line.p ? line.p : "", line.len);
        s.failed |= line.failed;
        free(line.p);
    } else { /* rows of nested arrays, ndim - axis - 1 newlines apart */
        char sep[64];
        const int lines = c->ndim - axis - 1 < 60 ? c->ndim - axis - 1 : 60;
        memset(sep, '\n', (size_t)lines);
        sep[lines] = '\0';
        for (int64_t i = 0; i < leading + (summary ? 1 : 0) + trailing; i++) {
            sb_puts(&s, indent);
            if (summary && i == leading) {
                sb_puts(&s, "...");
            } else {
                word_at(c, index, axis, i < leading ? i : len - (leading + (summary ? 1 : 0) + trailing - i), next,
                        width - 1, &w);
                sb_add(&s, w.p ? w.p : "", w.len);
            }
            if (i + 1 < leading + (summary ? 1 : 0) + trailing)
                sb_puts(&s, sep);
        }
    }
    const size_t skip = strlen(indent) < s.len ? strlen(indent) : s.len;
    sb_puts(out, "[");
    sb_add(out, s.p ? s.p + skip : "", s.len - skip);
    sb_puts(out, "]");
    out->failed |= s.failed || w.failed;
    free(s.p);
    free(w.p);
}

static void print_help(void)
{
    printf("usage: mxp show FILE.npy [--precision P] [--edgeitems E]\n\n"
           "Prints the array in FILE.npy as NumPy prints it (print(np.load(FILE)), i.e.\n"
           "np.array2string with its defaults: lines of at most 75 characters; over 1000\n"
           "elements, a summary of the first and last E along each axis with '...').\n"
           "Floats show the fewest digits that read back as the same value of the\n"
           "array's dtype, at most P after the point, in scientific notation when a\n"
           "nonzero |x| is >= 1e8 or < 1e-4 or their ratio is over 1000.\n\n"
           "  --precision P   digits after the point at most (default 8; 0..%d)\n"
           "  --edgeitems E   elements shown at each end of a summarised axis (default 3)\n\n"
           "bfloat16 and float8 print like the float dtypes NumPy has, with the digits\n"
           "their own precision needs (NumPy itself prints them through ml_dtypes).\n",
           MAX_PRECISION);
}

static int parse_int(const char *opt, const char *v, int lo, int hi, int *out)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < lo || x > hi)
        return cli_usage_error("show", "%s wants %d..%d, not '%s'", opt, lo, hi, v);
    *out = (int)x;
    return CLI_OK;
}

static int show(const mxp_array *a, int precision, int edge)
{
    if (mxp_array_size(a) == 0) {
        printf("[]\n");
        return CLI_OK;
    }
    show_ctx c = { .data = mxp_array_data(a), .shape = mxp_array_shape(a), .strides = mxp_array_strides(a),
                   .ndim = mxp_array_ndim(a), .edge = edge, .summarise = mxp_array_size(a) > THRESHOLD };
    int64_t index[64] = { 0 };
    gather(&c, index, 0);
    strbuf out = { 0 };
    if (!c.failed) {
        show_format_init(&c.fmt, mxp_array_dtype(a), c.ndim, precision, c.elems, c.count);
        format_axis(&c, index, 0, " ", LINE_WIDTH, &out);
    }
    const bool failed = c.failed || out.failed;
    if (!failed)
        printf("%s\n", out.p);
    free(out.p);
    free(c.elems);
    return failed ? cli_mxp_error("show", "formatting", MXP_ERR_NO_MEMORY) : CLI_OK;
}

int cli_show(int argc, char **argv)
{
    const char *path = NULL, *v;
    int precision = 8, edge = 3, rc = CLI_OK;
    for (int i = 1; i < argc && rc == CLI_OK; i++) {
        int m;
        if (cli_is_help(argv[i])) {
            print_help();
            return CLI_OK;
        } else if ((m = cli_option(argc, argv, &i, "--precision", &v)) != 0) {
            rc = m < 0 ? cli_usage_error("show", "--precision needs a value")
                       : parse_int("--precision", v, 0, MAX_PRECISION, &precision);
        } else if ((m = cli_option(argc, argv, &i, "--edgeitems", &v)) != 0) {
            rc = m < 0 ? cli_usage_error("show", "--edgeitems needs a value")
                       : parse_int("--edgeitems", v, 1, MAX_EDGEITEMS, &edge);
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            rc = cli_bad_argument("show", argv[i]);
        } else if (path) {
            rc = cli_usage_error("show", "more than one FILE ('%s' and '%s')", path, argv[i]);
        } else {
            path = argv[i];
        }
    }
    if (rc == CLI_OK && !path)
        rc = cli_usage_error("show", "missing FILE.npy");
    mxp_array *a = NULL;
    if (rc == CLI_OK && (rc = cli_load_npy("show", path, &a)) == CLI_OK)
        rc = show(a, precision, edge);
    mxp_array_free(a);
    return rc;
}

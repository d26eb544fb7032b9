/* The round trip of x through each candidate dtype, compared with x:
 * mxp_roundtrip_analysis and the advisor's rows, streamed.  No float64
 * copy of x is made and memory does not grow with x.
 *
 * An input of 1 or 2 bytes has at most 65536 bit patterns.  Each pattern
 * is converted once (to float64, and through each candidate and back) and
 * its terms are tabled; one pass over x counts each pattern and notes
 * where it first occurs, and adds the terms to the sums in C order (so the
 * sums are those of a loop over every element; candidates whose terms are
 * all the same, such as those that hold x exactly, share one sum).  Everything else, the
 * percentiles included, follows from the counts: each distinct value is
 * analysed once, not once per element.
 *
 * A wider input is read in C order a chunk at a time: xd = x in float64
 * and, per candidate, yd = x through the candidate and back, into the
 * candidate's accumulator (errstats.c); the percentiles may take more
 * passes, for the candidates that need them. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "array/array-internal.h"
#include "core/error.h"
#include "mxp/alloc.h"

typedef struct rt_stream {
    const mxp_array *x;
    const mxp_dtype *cand;
    int ncand;
    mxp_roundtrip_row *rows;
    mxp_err_acc *acc;     /* one per candidate */
    bool *busy;           /* the candidate's accumulator wants another pass */
    double max_abs;
    int64_t chunk;        /* elements per chunk: MXP_ANALYSIS_CHUNK, or all of a smaller x */
    void *buf;            /* a chunk of x in x's or a candidate's dtype */
    double *xd, *yd;      /* wide input: a chunk in float64 */
    double *narrow;       /* wide input: per candidate of 1 or 2 bytes, its value per pattern */
    size_t *column;       /* wide input: where in `narrow` (SIZE_MAX: not narrow) */
    size_t patterns;      /* narrow input: 256 or 65536, else 0 */
    double *value;        /* narrow: x's value per pattern, then each candidate's round trip */
    mxp_err_terms *terms; /* narrow: per candidate and pattern */
    int *same_as;         /* narrow: an earlier candidate with the same round trip of every pattern, or -1 */
    int64_t *count, *first;
} rt_stream;

/* Does finite a overflow a float format with neither infinity nor NaN
 * (float6, float4: it saturates to +-max)?  Where IEEE rounding would give
 * +-inf: |a| at or beyond max + half its ulp (max's significand is odd, so
 * the tie rounds up). */
static bool saturates(const mxp_dtype_traits *t, double a)
{
    if (t->has_inf || t->has_nan || !(fabs(a) > t->max))
        return false;
    int e;
    (void)frexp(t->max, &e); /* max = m 2^e, m in [0.5, 1): its ulp is 2^(e - 1 - mant_bits) */
    return fabs(a) >= t->max + ldexp(0.5, e - 1 - t->mant_bits);
}

/* The row's own counts (docs/analysis.md) for a pair seen `times` times. */
static void count_pair(mxp_roundtrip_row *row, const mxp_dtype_traits *t, double a, double b, int64_t times)
{
    const bool is_float = t->kind == MXP_KIND_FLOAT;
    if (isfinite(a) &&
        (!isfinite(b) || (!is_float && (a > t->max || a < t->lowest)) || (is_float && saturates(t, a))))
        row->overflow += times;
    if (isfinite(a) && a != 0 && b == 0)
        row->underflow_to_zero += times;
    if (is_float && b != 0 && fabs(b) < t->min_normal)
        row->subnormal += times;
    if (!isnan(a) && isnan(b))
        row->nan += times;
}

/* Elements [off, off + k) of x in its own dtype: in x itself when it is
 * C-contiguous, else copied into s->buf. */
static mxp_status raw_chunk(rt_stream *s, int64_t off, int64_t k, const void **bits)
{
    if (mxp_array_flags(s->x) & MXP_ARRAY_C_CONTIGUOUS) {
        *bits = (const char *)mxp_array_data(s->x) + (size_t)off * mxp_array_itemsize(s->x);
        return MXP_OK;
    }
    *bits = s->buf;
    return mxp_array_convert_range(s->x, off, k, s->buf, mxp_array_dtype(s->x));
}

/* ---- narrow inputs: per pattern ------------------------------------------- */

/* value[0..p) = pattern i of x's dtype in float64, value[(c + 1) p + i] =
 * its round trip through candidate c; terms[c p + i] its terms. */
static mxp_status fill_tables(rt_stream *s)
{
    const mxp_dtype xt = mxp_array_dtype(s->x);
    const size_t p = s->patterns;
    void *pat = mxp_malloc(p * 2), *mid = mxp_malloc(p * 8);
    mxp_status st = pat && mid ? MXP_OK : MXP_ERR_NO_MEMORY;
    for (size_t i = 0; st == MXP_OK && i < p; i++) { /* every pattern, native byte order */
        if (p == 256)
            ((uint8_t *)pat)[i] = (uint8_t)i;
        else
            ((uint16_t *)pat)[i] = (uint16_t)i;
    }
    if (st == MXP_OK)
        st = mxp_convert(s->value, MXP_F64, pat, xt, p, NULL);
    for (int c = 0; st == MXP_OK && c < s->ncand; c++) {
        double *y = s->value + (size_t)(c + 1) * p;
        st = mxp_convert(mid, s->cand[c], pat, xt, p, NULL);
        if (st == MXP_OK)
            st = mxp_convert(y, MXP_F64, mid, s->cand[c], p, NULL);
        for (size_t i = 0; st == MXP_OK && i < p; i++)
            s->terms[(size_t)c * p + i] = mxp_err_acc_terms(&s->acc[c], s->value[i], y[i]);
        s->same_as[c] = -1;
        for (int d = 0; st == MXP_OK && d < c && s->same_as[c] < 0; d++) {
            if (!memcmp(s->terms + (size_t)c * p, s->terms + (size_t)d * p, p * sizeof *s->terms))
                s->same_as[c] = d; /* (e.g. every candidate that holds x exactly) */
        }
    }
    mxp_free(pat);
    mxp_free(mid);
    return st;
}

/* Adds the terms of a chunk's patterns to candidate c's sums, in order. */
static void add_sums(rt_stream *s, int c, const void *bits, int64_t k)
{
    const mxp_err_terms *t = s->terms + (size_t)c * s->patterns;
    mxp_err_terms sum = s->acc[c].sum;
    for (int64_t i = 0; i < k; i++) {
        const mxp_err_terms *e = &t[s->patterns == 256 ? ((const uint8_t *)bits)[i] : ((const uint16_t *)bits)[i]];
        sum.rel += e->rel;
        sum.ulp += e->ulp;
        sum.sq += e->sq;
        sum.ref2 += e->ref2;
        sum.test2 += e->test2;
        sum.dot += e->dot;
    }
    s->acc[c].sum = sum;
}

/* The one pass over x: counts, first indices, sums. */
static mxp_status count_patterns(rt_stream *s)
{
    const int64_t n = mxp_array_size(s->x);
    for (int64_t off = 0; off < n; off += s->chunk) {
        const int64_t k = n - off < s->chunk ? n - off : s->chunk;
        const void *bits;
        mxp_status st = raw_chunk(s, off, k, &bits);
        if (st != MXP_OK)
            return st;
        for (int64_t i = 0; i < k; i++) {
            const size_t v = s->patterns == 256 ? ((const uint8_t *)bits)[i] : ((const uint16_t *)bits)[i];
            if (s->count[v]++ == 0)
                s->first[v] = off + i;
        }
        for (int c = 0; c < s->ncand; c++) {
            if (s->same_as[c] < 0)
                add_sums(s, c, bits, k);
        }
    }
    for (int c = 0; c < s->ncand; c++) { /* the same terms in the same order: the same sums */
        if (s->same_as[c] >= 0)
            s->acc[c].sum = s->acc[s->same_as[c]].sum;
    }
    return MXP_OK;
}

/* The rest from the counts: pass 0 and each later pass of the percentiles
 * go over the distinct patterns only. */
static mxp_status analyse_patterns(rt_stream *s)
{
    mxp_status st = count_patterns(s);
    const size_t p = s->patterns;
    for (size_t v = 0; st == MXP_OK && v < p; v++) {
        const double a = s->value[v];
        if (s->count[v] && isfinite(a) && fabs(a) > s->max_abs)
            s->max_abs = fabs(a);
        for (int c = 0; s->count[v] && c < s->ncand; c++)
            count_pair(&s->rows[c], mxp_dtype_get_traits(s->cand[c]), a, s->value[(size_t)(c + 1) * p + v], s->count[v]);
    }
    for (bool more = true; st == MXP_OK && more;) {
        more = false;
        for (int c = 0; st == MXP_OK && c < s->ncand; c++) {
            if (!s->busy[c])
                continue;
            for (size_t v = 0; v < p; v++) {
                if (s->count[v])
                    mxp_err_acc_add_counted(&s->acc[c], s->value[v], s->value[(size_t)(c + 1) * p + v], s->count[v],
                                            s->first[v]);
            }
            if ((st = mxp_err_acc_end_pass(&s->acc[c], &s->busy[c])) == MXP_OK)
                more |= s->busy[c];
        }
    }
    return st;
}

/* ---- wide inputs: a chunk at a time --------------------------------------- */

/* Elements [off, off + k) through candidate c and back, in *y.  Through
 * float64 or x's own dtype, a value comes back as it was (a NaN stays a
 * NaN), so *y is xd; a 1- or 2-byte candidate's values are looked up. */
static mxp_status round_trip(rt_stream *s, int c, int64_t off, int64_t k, const double **y)
{
    const mxp_dtype dt = s->cand[c];
    *y = s->xd;
    if (dt == MXP_F64 || dt == mxp_array_dtype(s->x))
        return MXP_OK;
    *y = s->yd;
    mxp_status st = mxp_array_convert_range(s->x, off, k, s->buf, dt);
    if (st != MXP_OK || s->column[c] == SIZE_MAX)
        return st != MXP_OK ? st : mxp_convert(s->yd, MXP_F64, s->buf, dt, (size_t)k, NULL);
    const double *v = s->narrow + s->column[c];
    if (mxp_dtype_itemsize(dt) == 1) {
        for (int64_t i = 0; i < k; i++)
            s->yd[i] = v[((const uint8_t *)s->buf)[i]];
    } else {
        for (int64_t i = 0; i < k; i++)
            s->yd[i] = v[((const uint16_t *)s->buf)[i]];
    }
    return MXP_OK;
}

/* The value of every pattern of each 1- or 2-byte candidate (their
 * conversion to float64 is exact, and a lookup is cheaper) -- where x
 * has at least as many elements as the candidate has patterns. */
static mxp_status fill_narrow(rt_stream *s)
{
    size_t total = 0;
    for (int c = 0; c < s->ncand; c++) {
        const size_t size = mxp_dtype_itemsize(s->cand[c]);
        const bool table = size <= 2 && (int64_t)((size_t)1 << (8 * size)) <= mxp_array_size(s->x);
        s->column[c] = table ? total : SIZE_MAX;
        total += table ? (size_t)1 << (8 * size) : 0;
    }
    s->narrow = mxp_malloc(total * sizeof *s->narrow + 1);
    mxp_status st = s->narrow ? MXP_OK : MXP_ERR_NO_MEMORY;
    for (int c = 0; st == MXP_OK && c < s->ncand; c++) {
        const size_t p = s->column[c] == SIZE_MAX ? 0 : (size_t)1 << (8 * mxp_dtype_itemsize(s->cand[c]));
        for (size_t i = 0; i < p && st == MXP_OK; i += (size_t)s->chunk) {
            const size_t k = p - i < (size_t)s->chunk ? p - i : (size_t)s->chunk;
            for (size_t j = 0; j < k; j++) { /* patterns i .. i + k, native byte order */
                if (p == 256)
                    ((uint8_t *)s->buf)[j] = (uint8_t)(i + j);
                else
                    ((uint16_t *)s->buf)[j] = (uint16_t)(i + j);
            }
            st = mxp_convert(s->narrow + s->column[c] + i, MXP_F64, s->buf, s->cand[c], k, NULL);
        }
    }
    return st;
}

/* One pass over x for the busy candidates; *more: does one want another. */
static mxp_status run_pass(rt_stream *s, int pass, bool *more)
{
    const int64_t n = mxp_array_size(s->x);
    mxp_status st = MXP_OK;
    for (int64_t off = 0; st == MXP_OK && off < n; off += s->chunk) {
        const int64_t k = n - off < s->chunk ? n - off : s->chunk;
        st = mxp_array_convert_range(s->x, off, k, s->xd, MXP_F64);
        for (int64_t i = 0; st == MXP_OK && pass == 0 && i < k; i++)
            s->max_abs = isfinite(s->xd[i]) && fabs(s->xd[i]) > s->max_abs ? fabs(s->xd[i]) : s->max_abs;
        for (int c = 0; st == MXP_OK && c < s->ncand; c++) {
            const double *y;
            if (!s->busy[c] || (st = round_trip(s, c, off, k, &y)) != MXP_OK)
                continue;
            mxp_err_acc_add(&s->acc[c], s->xd, y, k);
            const mxp_dtype_traits *t = mxp_dtype_get_traits(s->cand[c]);
            for (int64_t i = 0; pass == 0 && i < k; i++)
                count_pair(&s->rows[c], t, s->xd[i], y[i], 1);
        }
    }
    *more = false;
    for (int c = 0; st == MXP_OK && c < s->ncand; c++) {
        if (s->busy[c] && (st = mxp_err_acc_end_pass(&s->acc[c], &s->busy[c])) == MXP_OK)
            *more |= s->busy[c];
    }
    return st;
}

static mxp_status analyse_chunks(rt_stream *s)
{
    mxp_status st = MXP_OK;
    bool more = true;
    for (int pass = 0; st == MXP_OK && more; pass++)
        st = run_pass(s, pass, &more);
    return st;
}

/* ---- setup ---------------------------------------------------------------- */

static mxp_status alloc_buffers(rt_stream *s)
{
    const size_t nc = (size_t)s->ncand, p = s->patterns;
    s->buf = mxp_malloc((size_t)s->chunk * 8);
    if (!p) {
        s->xd = mxp_malloc(2 * (size_t)s->chunk * sizeof *s->xd);
        s->yd = s->xd ? s->xd + s->chunk : NULL;
        s->column = mxp_malloc(nc * sizeof *s->column);
        return s->buf && s->xd && s->column ? fill_narrow(s) : MXP_ERR_NO_MEMORY;
    }
    s->value = mxp_malloc((nc + 1) * p * sizeof *s->value);
    s->terms = mxp_malloc(nc * p * sizeof *s->terms);
    s->count = mxp_malloc(2 * p * sizeof *s->count);
    s->same_as = mxp_malloc(nc * sizeof *s->same_as);
    if (!s->buf || !s->value || !s->terms || !s->count || !s->same_as)
        return MXP_ERR_NO_MEMORY;
    memset(s->count, 0, p * sizeof *s->count);
    s->first = s->count + p;
    return MXP_OK;
}

static mxp_status open_stream(rt_stream *s)
{
    const size_t nc = (size_t)s->ncand, itemsize = mxp_array_itemsize(s->x);
    const int64_t n = mxp_array_size(s->x);
    /* Tabled per pattern when x has at least as many elements as its dtype
     * has patterns; a smaller x is cheaper element by element (the same
     * sums, in the same order). */
    s->patterns = itemsize <= 2 && (int64_t)((size_t)1 << (8 * itemsize)) <= n ? (size_t)1 << (8 * itemsize) : 0;
    s->chunk = mxp_analysis_chunk(n);
    s->acc = mxp_malloc(nc * sizeof *s->acc + nc * sizeof *s->busy);
    if (!s->acc)
        return MXP_ERR_NO_MEMORY;
    memset(s->acc, 0, nc * sizeof *s->acc); /* mxp_err_acc_free is safe on these */
    s->busy = (bool *)(s->acc + nc);
    mxp_status st = MXP_OK;
    for (int c = 0; c < s->ncand; c++) {
        s->busy[c] = false;
        memset(&s->rows[c], 0, sizeof s->rows[c]);
        s->rows[c].dtype = s->cand[c];
        const size_t packed = mxp_packed_bytes(s->cand[c], (size_t)n); /* 0 unless sub-byte */
        s->rows[c].bytes = packed ? packed : (size_t)n * mxp_dtype_itemsize(s->cand[c]);
        if (st == MXP_OK && (st = mxp_err_acc_init(&s->acc[c], s->cand[c], n, &s->rows[c].report)) == MXP_OK)
            s->busy[c] = true;
    }
    if (st == MXP_OK)
        st = alloc_buffers(s);
    return st == MXP_OK && s->patterns ? fill_tables(s) : st;
}

static void close_stream(rt_stream *s)
{
    for (int c = 0; s->acc && c < s->ncand; c++)
        mxp_err_acc_free(&s->acc[c]);
    mxp_free(s->acc);
    mxp_free(s->buf);
    mxp_free(s->xd);
    mxp_free(s->narrow);
    mxp_free(s->column);
    mxp_free(s->value);
    mxp_free(s->terms);
    mxp_free(s->count);
    mxp_free(s->same_as);
}

mxp_status mxp_roundtrip_rows(const mxp_array *x, const mxp_dtype *candidates, int ncandidates,
                              mxp_roundtrip_row *rows, double *max_abs)
{
    rt_stream s = { .x = x, .cand = candidates, .ncand = ncandidates, .rows = rows };
    if (ncandidates == 0)
        return MXP_OK;
    mxp_status st = open_stream(&s);
    if (st == MXP_OK)
        st = s.patterns ? analyse_patterns(&s) : analyse_chunks(&s);
    close_stream(&s);
    if (st == MXP_OK && max_abs)
        *max_abs = s.max_abs;
    if (st == MXP_ERR_NO_MEMORY)
        return mxp_error(st, "roundtrip analysis: no memory for the statistics");
    return st;
}

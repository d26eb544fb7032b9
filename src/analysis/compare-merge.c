/* mxp_compare's statistics of an array too large for one machine, from its
 * pieces (mxp.dask): the pieces' reports and sums merged, and the
 * percentiles of all pieces' relative errors found in passes over them,
 * digit by digit on the errors' bit patterns, each pass's counts merged
 * from the pieces (analysis.h draws the passes).  select.c does the same
 * for one stream in one process, with dense tables; here the counts travel
 * between machines, so they are lists of the buckets that hold errors. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "core/abi.h"
#include "core/error.h"
#include "mxp/alloc.h"

enum {
    RANKS = 8,
    FIRST_SHIFT = 47,       /* pass 0 counts bits 62..47 */
    DENSE_BITS = 16,        /* digits this wide are counted in tables ... */
    DENSE_MIN = 4096,       /* ... when a piece has more errors than this to count */
    COLLECT = 1 << 19       /* the default of `collect` */
};
static const int next_shifts[] = { 31, 15, 0 }; /* then 16 bits a pass */

/* ---- reports ----------------------------------------------------------- */

static bool has_mismatch(const mxp_compare_report *r) { return r->nan_mismatches > 0 || r->inf_mismatches > 0; }

static double max_of(double a, double b) { return b > a ? b : a; }

mxp_status mxp_compare_merge(mxp_compare_report *report, mxp_compare_sums *sums, const mxp_compare_report *piece,
                             const mxp_compare_sums *piece_sums)
{
    MXP_ABI_OUT(report, compare_report, "mxp_compare_merge");
    MXP_ABI_IN(piece, compare_report, "mxp_compare_merge");
    if (!report || !sums || !piece || !piece_sums)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_compare_merge: a NULL argument");
    mxp_compare_report whole = { 0 }; /* the caller's report in this release's layout */
    memcpy(&whole, report, report_abi_n_);
    mxp_compare_report *const caller = report;
    report = &whole;
    const bool mr = has_mismatch(report), mp = has_mismatch(piece);
    if (mr || mp) { /* the first mismatch in the whole */
        if (!mr || (mp && piece->worst_index < report->worst_index))
            report->worst_index = piece->worst_index;
    } else if (piece->worst_index >= 0 &&
               (report->worst_index < 0 || piece->max_abs_error > report->max_abs_error ||
                (piece->max_abs_error == report->max_abs_error && piece->worst_index < report->worst_index))) {
        report->worst_index = piece->worst_index;
    }
    report->max_abs_error = max_of(report->max_abs_error, piece->max_abs_error);
    report->max_rel_error = max_of(report->max_rel_error, piece->max_rel_error);
    report->max_ulp = max_of(report->max_ulp, piece->max_ulp);
    report->count += piece->count;
    report->nan_mismatches += piece->nan_mismatches;
    report->inf_mismatches += piece->inf_mismatches;
    for (int i = 0; i < MXP_COMPARE_BINS; i++)
        report->histogram[i] += piece->histogram[i];
    sums->rel += piece_sums->rel;
    sums->ulp += piece_sums->ulp;
    sums->sq += piece_sums->sq;
    sums->ref2 += piece_sums->ref2;
    sums->test2 += piece_sums->test2;
    sums->dot += piece_sums->dot;
    sums->max_ref = max_of(sums->max_ref, piece_sums->max_ref);
    mxp_abi_out(caller, &whole, report_abi_n_, &mxp_abi_compare_report);
    return MXP_OK;
}

/* ---- buckets ----------------------------------------------------------- */

static uint64_t bits_of(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static double value_of(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Buckets of the m sorted values v by v >> shift. */
static size_t sweep(mxp_compare_bucket *out, const uint64_t *v, size_t m, int shift)
{
    size_t nb = 0;
    for (size_t i = 0; i < m; i++) {
        if (nb && out[nb - 1].key == v[i] >> shift) {
            out[nb - 1].count++;
            out[nb - 1].hi = v[i];
        } else {
            out[nb++] = (mxp_compare_bucket){ v[i] >> shift, 1, v[i], v[i] };
        }
    }
    return nb;
}

/* The values with the prefix, counted in a table of 2^bits digits. */
static mxp_status count_dense(mxp_compare_bucket **out, size_t *nout, const double *e, size_t n, uint64_t prefix,
                              int prefix_shift, int shift)
{
    const int bits = prefix_shift - shift;
    const size_t nd = (size_t)1 << bits;
    mxp_compare_bucket *t = mxp_malloc(nd * sizeof *t);
    if (!t)
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_compare_buckets: out of memory");
    for (size_t d = 0; d < nd; d++)
        t[d] = (mxp_compare_bucket){ prefix << bits | d, 0, UINT64_MAX, 0 };
    for (size_t i = 0; i < n; i++) {
        const uint64_t b = bits_of(e[i]);
        if (b >> prefix_shift != prefix)
            continue;
        mxp_compare_bucket *k = &t[(b >> shift) & (nd - 1)];
        k->count++;
        k->lo = b < k->lo ? b : k->lo;
        k->hi = b > k->hi ? b : k->hi;
    }
    size_t nb = 0;
    for (size_t d = 0; d < nd; d++)
        nb += t[d].count > 0;
    *out = mxp_malloc(nb * sizeof **out);
    if (!*out) {
        mxp_free(t);
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_compare_buckets: out of memory");
    }
    for (size_t d = 0, j = 0; d < nd; d++)
        if (t[d].count > 0)
            (*out)[j++] = t[d];
    *nout = nb;
    mxp_free(t);
    return MXP_OK;
}

mxp_status mxp_compare_buckets(mxp_compare_bucket **out, size_t *nout, const double *errors, size_t n,
                               uint64_t prefix, int prefix_shift, int shift)
{
    if (!out || !nout || (!errors && n))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_compare_buckets: a NULL argument");
    *out = NULL;
    *nout = 0;
    if (n > PTRDIFF_MAX / sizeof(mxp_compare_bucket))
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_compare_buckets: n = %zu errors do not fit in memory", n);
    if (shift < 0 || prefix_shift < shift || prefix_shift > 63)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_compare_buckets: shift %d and prefix_shift %d: "
                                                   "0 <= shift <= prefix_shift <= 63 is needed", shift, prefix_shift);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += bits_of(errors[i]) >> prefix_shift == prefix;
    if (m == 0)
        return MXP_OK;
    if (prefix_shift - shift <= DENSE_BITS && m > DENSE_MIN)
        return count_dense(out, nout, errors, n, prefix, prefix_shift, shift);
    uint64_t *v = mxp_malloc(m * sizeof *v);
    mxp_compare_bucket *b = v ? mxp_malloc(m * sizeof *b) : NULL;
    if (!b) {
        mxp_free(v);
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_compare_buckets: out of memory");
    }
    for (size_t i = 0, j = 0; i < n; i++)
        if (bits_of(errors[i]) >> prefix_shift == prefix)
            v[j++] = bits_of(errors[i]);
    qsort(v, m, sizeof *v, cmp_u64);
    *nout = sweep(b, v, m, shift);
    *out = b;
    mxp_free(v);
    return MXP_OK;
}

mxp_status mxp_compare_buckets_merge(mxp_compare_bucket **out, size_t *nout, const mxp_compare_bucket *a, size_t na,
                                     const mxp_compare_bucket *b, size_t nb)
{
    if (!out || !nout || (!a && na) || (!b && nb))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_compare_buckets_merge: a NULL argument");
    *out = NULL;
    *nout = 0;
    if (na > PTRDIFF_MAX / sizeof *a || nb > PTRDIFF_MAX / sizeof *b - na)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_compare_buckets_merge: %zu and %zu buckets do not fit in memory",
                         na, nb);
    if (na + nb == 0)
        return MXP_OK;
    mxp_compare_bucket *o = mxp_malloc((na + nb) * sizeof *o);
    if (!o)
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_compare_buckets_merge: out of memory");
    size_t i = 0, j = 0, k = 0;
    while (i < na || j < nb) {
        if (j == nb || (i < na && a[i].key < b[j].key)) {
            o[k++] = a[i++];
        } else if (i == na || b[j].key < a[i].key) {
            o[k++] = b[j++];
        } else { /* one key in both */
            o[k] = a[i++];
            o[k].count += b[j].count;
            o[k].lo = b[j].lo < o[k].lo ? b[j].lo : o[k].lo;
            o[k].hi = b[j].hi > o[k].hi ? b[j].hi : o[k].hi;
            j++, k++;
        }
    }
    *out = o;
    *nout = k;
    return MXP_OK;
}

/* ---- the select -------------------------------------------------------- */

struct mxp_compare_select {
    bool exact, done;
    int pass, nshifts;          /* passes so far, next_shifts used */
    int64_t collect, m;
    int64_t rank[RANKS], inside[RANKS], size[RANKS];
    bool pending[RANKS];
    uint64_t prefix[RANKS];     /* a pending rank's bucket: the errors whose */
    int pshift[RANKS];          /* bits above pshift are prefix */
    double value[RANKS], width[RANKS];
    int ngroups, shift;         /* the next pass */
    uint64_t gprefix[RANKS];
    int gpshift[RANKS];
};

mxp_status mxp_compare_select_create(mxp_compare_select **out, bool exact, int64_t collect)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_compare_select_create: out is NULL");
    *out = NULL;
    if (collect < 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_compare_select_create: collect %lld < 0", (long long)collect);
    mxp_compare_select *s = mxp_malloc(sizeof *s);
    if (!s)
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_compare_select_create: out of memory");
    memset(s, 0, sizeof *s);
    s->exact = exact;
    s->collect = collect ? collect : COLLECT;
    s->ngroups = 1; /* pass 0: every error (bit 63, the sign, is 0) */
    s->gpshift[0] = 63;
    s->shift = FIRST_SHIFT;
    *out = s;
    return MXP_OK;
}

void mxp_compare_select_free(mxp_compare_select *s)
{
    mxp_free(s);
}

int mxp_compare_select_groups(const mxp_compare_select *s, uint64_t *prefix, int *prefix_shift, int *shift)
{
    if (!s || s->done)
        return 0;
    for (int g = 0; g < s->ngroups; g++) {
        if (prefix)
            prefix[g] = s->gprefix[g];
        if (prefix_shift)
            prefix_shift[g] = s->gpshift[g];
    }
    if (shift)
        *shift = s->shift;
    return s->ngroups;
}

/* Finds rank i's inside the buckets: settled (one distinct value), read
 * linearly (the estimate), or pending in its bucket for the next pass. */
static mxp_status locate(mxp_compare_select *s, int i, const mxp_compare_bucket *b, size_t nb, int64_t want)
{
    size_t k = 0;
    uint64_t below = 0;
    while (k < nb && below + b[k].count <= (uint64_t)want)
        below += b[k++].count;
    if (k == nb)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_compare_select_step: the buckets hold %llu errors, "
                                                   "rank %lld needs more", (unsigned long long)below, (long long)want);
    const int64_t inside = want - (int64_t)below;
    s->pending[i] = false;
    s->width[i] = 0.0;
    if (b[k].lo == b[k].hi) {
        s->value[i] = value_of(b[k].lo);
    } else if (s->exact) {
        s->pending[i] = true;
        s->prefix[i] = b[k].key;
        s->pshift[i] = s->shift; /* the bits this pass counted */
        s->inside[i] = inside;
        s->size[i] = (int64_t)b[k].count;
    } else {
        const double lo = value_of(b[k].lo), hi = value_of(b[k].hi);
        s->value[i] = lo + (hi - lo) * ((double)inside + 0.5) / (double)b[k].count;
        s->width[i] = hi - lo;
    }
    return MXP_OK;
}

/* The next pass: one group per distinct pending bucket, in increasing
 * (prefix, prefix_shift); collected (shift 0) when they hold few errors. */
static void plan(mxp_compare_select *s)
{
    int64_t total = 0;
    s->ngroups = 0;
    for (int i = 0; i < RANKS; i++) {
        if (!s->pending[i])
            continue;
        int g = 0;
        while (g < s->ngroups && (s->gprefix[g] != s->prefix[i] || s->gpshift[g] != s->pshift[i]))
            g++;
        if (g < s->ngroups)
            continue;
        int at = s->ngroups++;
        for (; at > 0 && (s->gprefix[at - 1] > s->prefix[i] ||
                          (s->gprefix[at - 1] == s->prefix[i] && s->gpshift[at - 1] > s->pshift[i])); at--) {
            s->gprefix[at] = s->gprefix[at - 1];
            s->gpshift[at] = s->gpshift[at - 1];
        }
        s->gprefix[at] = s->prefix[i];
        s->gpshift[at] = s->pshift[i];
        total += s->size[i];
    }
    const int nshift = (int)(sizeof next_shifts / sizeof next_shifts[0]);
    const bool collect = total <= s->collect || s->nshifts == nshift;
    s->shift = collect ? 0 : next_shifts[s->nshifts++];
    s->done = s->ngroups == 0;
}

mxp_status mxp_compare_select_step(mxp_compare_select *s, const mxp_compare_bucket *const *buckets,
                                   const size_t *nbuckets)
{
    if (!s || !buckets || !nbuckets)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_compare_select_step: a NULL argument");
    if (s->done)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_compare_select_step: the select needs no more passes");
    mxp_status st = MXP_OK;
    if (s->pass == 0) {
        for (size_t k = 0; k < nbuckets[0]; k++)
            s->m += (int64_t)buckets[0][k].count;
        if (s->m > 0)
            mxp_compare_ranks(s->m, s->rank);
        for (int i = 0; i < RANKS && s->m > 0 && st == MXP_OK; i++)
            st = locate(s, i, buckets[0], nbuckets[0], s->rank[i]);
    } else {
        mxp_compare_select next = *s; /* the ranks move to this pass's buckets */
        for (int i = 0; i < RANKS && st == MXP_OK; i++) {
            if (!s->pending[i])
                continue;
            int g = 0;
            while (s->gprefix[g] != s->prefix[i] || s->gpshift[g] != s->pshift[i])
                g++;
            st = locate(&next, i, buckets[g], nbuckets[g], s->inside[i]);
        }
        if (st == MXP_OK)
            *s = next;
    }
    if (st != MXP_OK)
        return st;
    s->pass++;
    plan(s);
    return MXP_OK;
}

mxp_status mxp_compare_select_finish(const mxp_compare_select *s, mxp_compare_report *report, double *bounds)
{
    MXP_ABI_OUT(report, compare_report, "mxp_compare_select_finish");
    if (!s || !report)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_compare_select_finish: a NULL argument");
    if (!s->done)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_compare_select_finish: the select needs another pass");
    mxp_compare_report whole = { 0 }; /* the caller's report in this release's layout */
    memcpy(&whole, report, report_abi_n_);
    double *p[4] = { &whole.p50_rel_error, &whole.p90_rel_error, &whole.p99_rel_error, &whole.p999_rel_error };
    for (int q = 0; q < 4; q++) {
        const int lo = 2 * q, hi = 2 * q + 1;
        *p[q] = s->m > 0 ? mxp_compare_percentile(s->m, q, s->value[lo], s->value[hi]) : 0.0;
        if (bounds)
            bounds[q] = s->m > 0 ? max_of(s->width[lo], s->width[hi]) : 0.0;
    }
    mxp_abi_out(report, &whole, report_abi_n_, &mxp_abi_compare_report);
    return MXP_OK;
}

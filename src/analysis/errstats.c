/* mxp_compare's statistics over a stream of float64 pairs: one pass for
 * the maxima, sums, counts and histogram, more for the exact percentiles
 * (see analysis-internal.h and docs/analysis.md). */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "core/abi.h"
#include "core/error.h"
#include "mxp/alloc.h"

/* ---- the histogram bin ------------------------------------------------ */

/* The definition: bin floor((log10(rel) + 12) * 32 / 15), clamped to the
 * bins; below 1e-12 (and 0) the first, +inf the last. */
static int bin_formula(double rel)
{
    if (!(rel > 1e-12))
        return 0;
    if (isinf(rel))
        return MXP_COMPARE_BINS - 1;
    const int b = (int)floor((log10(rel) + 12.0) * MXP_COMPARE_BINS / 15.0);
    return b < 0 ? 0 : b >= MXP_COMPARE_BINS ? MXP_COMPARE_BINS - 1 : b;
}

/* The same bin without a log10 per value.  A bin spans 15/32 of a decade,
 * 1.56 binary octaves, so an octave [2^e, 2^(e+1)) meets at most two bins:
 * `lo` below the edge `split` inside it, `hi` from there.  Values within
 * 2^-30 of the edge, and octaves with an edge within 2^-30 of their ends,
 * take the formula, so the result is the formula's, bit for bit. */
enum { BIN_EMIN = -40, BIN_EMAX = 9 }; /* the octaves from 1e-12 to 1024 */

static struct {
    double split[BIN_EMAX - BIN_EMIN + 1];
    unsigned char lo[BIN_EMAX - BIN_EMIN + 1], hi[BIN_EMAX - BIN_EMIN + 1];
    bool formula[BIN_EMAX - BIN_EMIN + 1];
} bins;
static pthread_once_t bins_once = PTHREAD_ONCE_INIT;

static void fill_bins(void)
{
    for (int k = 0; k <= BIN_EMAX - BIN_EMIN; k++) {
        const double lo = ldexp(1.0, k + BIN_EMIN), hi = 2 * lo;
        bins.lo[k] = bins.hi[k] = (unsigned char)bin_formula(lo);
        bins.split[k] = 4 * lo; /* none inside: beyond the octave, and far from its values */
        for (int i = 0; i <= MXP_COMPARE_BINS; i++) {
            const double edge = pow(10.0, -12.0 + 15.0 * i / MXP_COMPARE_BINS);
            if (edge > lo && edge < hi) {
                bins.split[k] = edge;
                bins.hi[k] = (unsigned char)(i < MXP_COMPARE_BINS ? i : MXP_COMPARE_BINS - 1);
            }
            bins.formula[k] |= fabs(edge - lo) <= lo * 0x1p-30 || fabs(edge - hi) <= hi * 0x1p-30;
        }
    }
}

static inline int bin_of(double rel)
{
    if (!(rel > 1e-12))
        return 0;
    if (!(rel < 1024.0)) /* above 1e3, +inf too */
        return MXP_COMPARE_BINS - 1;
    uint64_t b;
    memcpy(&b, &rel, sizeof b);
    const int k = (int)(b >> 52) - 1023 - BIN_EMIN;
    const double split = bins.split[k];
    if (bins.formula[k] || fabs(rel - split) <= split * 0x1p-30)
        return bin_formula(rel);
    return rel < split ? bins.lo[k] : bins.hi[k];
}

/* ---- one pair ---------------------------------------------------------- */

/* 2^k for k >= -1074, from its bits. */
static inline double pow2(int k)
{
    const uint64_t b = k >= -1022 ? (uint64_t)(k + 1023) << 52 : (uint64_t)1 << (k + 1074);
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* The test dtype's ulp at r (finite): 2^(max(floor(log2 |r|), emin) - mant),
 * the exponent read from r's bits (a subnormal double is below every
 * dtype's emin). */
static inline double ulp_at(const mxp_err_acc *acc, double r)
{
    if (!acc->float_ulp)
        return 1.0;
    uint64_t b;
    memcpy(&b, &r, sizeof b);
    int e = (int)((b >> 52) & 0x7ff) - 1023;
    e = e < acc->emin ? acc->emin : e;
    return pow2(e - acc->mant);
}

static inline double rel_error(const mxp_err_acc *acc, double a, double d)
{
    return a != 0 ? d / fabs(a) : d / acc->zero_scale;
}

/* A NaN or inf mismatch at index i: the first one is the worst index. */
static void mismatch_at(mxp_err_acc *acc, int64_t i, int64_t *counter)
{
    (*counter)++;
    if (!acc->mismatch) {
        acc->mismatch = true;
        acc->rep->worst_index = i;
    }
}

/* ---- the passes -------------------------------------------------------- */

static mxp_status acc_init(mxp_err_acc *acc, mxp_dtype test_dt, int64_t n, mxp_compare_report *rep, bool piece,
                           double *rel_out)
{
    const mxp_dtype_traits *tt = mxp_dtype_get_traits(test_dt);
    if (!tt)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "compare: test dtype %d is not valid", (int)test_dt);
    pthread_once(&bins_once, fill_bins);
    memset(acc, 0, sizeof *acc);
    memset(rep, 0, sizeof *rep);
    acc->piece = piece;
    acc->rel_out = rel_out;
    acc->rep = rep;
    rep->worst_index = -1;
    acc->first_worst = -1;
    for (int i = 0; i <= MXP_COMPARE_BINS; i++)
        rep->histogram_edges[i] = pow(10.0, -12.0 + 15.0 * i / MXP_COMPARE_BINS);
    acc->float_ulp = tt->kind == MXP_KIND_FLOAT;
    acc->zero_scale = acc->float_ulp ? tt->min_normal : 1.0;
    acc->emin = 1 - tt->bias;
    acc->mant = tt->mant_bits;
    acc->rel = mxp_malloc((size_t)mxp_analysis_chunk(n) * sizeof *acc->rel);
    mxp_status st = !acc->rel ? MXP_ERR_NO_MEMORY : acc->piece ? MXP_OK : mxp_select_init(&acc->sel, n);
    if (st != MXP_OK) {
        mxp_free(acc->rel);
        acc->rel = NULL;
        return mxp_error(st, "compare: no memory for the statistics");
    }
    return MXP_OK;
}

mxp_status mxp_err_acc_init(mxp_err_acc *acc, mxp_dtype test_dt, int64_t n, mxp_compare_report *rep)
{
    return acc_init(acc, test_dt, n, rep, false, NULL);
}

mxp_status mxp_err_acc_init_piece(mxp_err_acc *acc, mxp_dtype test_dt, int64_t n, mxp_compare_report *rep,
                                  double *rel_out)
{
    return acc_init(acc, test_dt, n, rep, true, rel_out);
}

static inline mxp_err_terms terms(double a, double b, double d, double e, double u)
{
    return (mxp_err_terms){ e, u, d * d, a * a, b * b, a * b };
}

static inline void add_terms(mxp_err_terms *s, const mxp_err_terms *t)
{
    s->rel += t->rel;
    s->ulp += t->ulp;
    s->sq += t->sq;
    s->ref2 += t->ref2;
    s->test2 += t->test2;
    s->dot += t->dot;
}

mxp_err_terms mxp_err_acc_terms(const mxp_err_acc *acc, double a, double b)
{
    if (!isfinite(a) || !isfinite(b))
        return (mxp_err_terms){ 0, 0, 0, 0, 0, 0 };
    const double d = fabs(b - a);
    return terms(a, b, d, rel_error(acc, a, d), d / ulp_at(acc, a));
}

/* The order-free statistics of a finite pair. */
static inline void add_maxima(mxp_err_acc *acc, double a, double d, double e, double u)
{
    mxp_compare_report *rep = acc->rep;
    rep->max_abs_error = d > rep->max_abs_error ? d : rep->max_abs_error;
    rep->max_rel_error = e > rep->max_rel_error ? e : rep->max_rel_error;
    rep->max_ulp = u > rep->max_ulp ? u : rep->max_ulp;
    acc->max_ref = fabs(a) > acc->max_ref ? fabs(a) : acc->max_ref;
}

/* Pass 0: everything.  m counts the finite pairs of this chunk. */
static void add_all(mxp_err_acc *acc, const double *r, const double *t, int64_t n)
{
    mxp_compare_report *rep = acc->rep;
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        const double a = r[i], b = t[i];
        if (isnan(a) || isnan(b)) {
            if (isnan(a) != isnan(b))
                mismatch_at(acc, acc->next + i, &rep->nan_mismatches);
            continue;
        }
        if (isinf(a) || isinf(b)) {
            if (a != b)
                mismatch_at(acc, acc->next + i, &rep->inf_mismatches);
            continue;
        }
        const double d = fabs(b - a), e = rel_error(acc, a, d), u = d / ulp_at(acc, a);
        if (!acc->mismatch && (rep->worst_index < 0 || d > rep->max_abs_error))
            rep->worst_index = acc->next + i;
        add_maxima(acc, a, d, e, u);
        rep->histogram[bin_of(e)]++;
        const mxp_err_terms tm = terms(a, b, d, e, u);
        add_terms(&acc->sum, &tm);
        acc->rel[m++] = e;
    }
    if (acc->rel_out)
        memcpy(acc->rel_out + rep->count, acc->rel, (size_t)m * sizeof *acc->rel);
    rep->count += m;
    if (!acc->piece)
        mxp_select_add(&acc->sel, acc->rel, m);
}

/* As add_all for a pair occurring count times, first at index first; the
 * worst index is the first occurrence of the largest error (or of a
 * mismatch), as the loop in C order finds it. */
static void add_counted_all(mxp_err_acc *acc, double a, double b, int64_t count, int64_t first)
{
    mxp_compare_report *rep = acc->rep;
    acc->counted = true;
    if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) {
        const bool nan = isnan(a) || isnan(b);
        if (nan ? isnan(a) == isnan(b) : a == b)
            return;
        *(nan ? &rep->nan_mismatches : &rep->inf_mismatches) += count;
        acc->first_mismatch = acc->mismatch && acc->first_mismatch < first ? acc->first_mismatch : first;
        acc->mismatch = true;
        return;
    }
    const double d = fabs(b - a), e = rel_error(acc, a, d), u = d / ulp_at(acc, a);
    if (acc->first_worst < 0 || d > rep->max_abs_error || (d == rep->max_abs_error && first < acc->first_worst))
        acc->first_worst = first;
    add_maxima(acc, a, d, e, u);
    rep->histogram[bin_of(e)] += count;
    rep->count += count;
    mxp_select_add_counted(&acc->sel, e, count);
}

void mxp_err_acc_add_counted(mxp_err_acc *acc, double r, double t, int64_t count, int64_t first)
{
    if (acc->sel.pass == 0)
        add_counted_all(acc, r, t, count, first);
    else if (isfinite(r) && isfinite(t))
        mxp_select_add_counted(&acc->sel, rel_error(acc, r, fabs(t - r)), count);
}

/* Later passes: only the relative errors of the finite pairs. */
static void add_rel(mxp_err_acc *acc, const double *r, const double *t, int64_t n)
{
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isfinite(r[i]) && isfinite(t[i]))
            acc->rel[m++] = rel_error(acc, r[i], fabs(t[i] - r[i]));
    }
    mxp_select_add(&acc->sel, acc->rel, m);
}

void mxp_err_acc_add(mxp_err_acc *acc, const double *r, const double *t, int64_t n)
{
    if (acc->sel.pass == 0)
        add_all(acc, r, t, n);
    else
        add_rel(acc, r, t, n);
    acc->next += n;
}

/* NumPy's linear method reads sorted[lo] and sorted[hi], lo = floor(q (m
 * - 1)), hi = lo + 1. */
static const double quantiles[4] = { 0.5, 0.9, 0.99, 0.999 };

void mxp_compare_ranks(int64_t m, int64_t ranks[8])
{
    for (int q = 0; q < 4; q++) {
        const int64_t lo = (int64_t)floor(quantiles[q] * (double)(m - 1));
        ranks[2 * q] = lo;
        ranks[2 * q + 1] = lo + 1 < m ? lo + 1 : lo;
    }
}

double mxp_compare_percentile(int64_t m, int q, double lo, double hi)
{
    const double pos = quantiles[q] * (double)(m - 1);
    return lo + (pos - floor(pos)) * (hi - lo);
}

mxp_compare_sums mxp_err_acc_sums(const mxp_err_acc *acc)
{
    const mxp_err_terms *s = &acc->sum;
    return (mxp_compare_sums){ s->rel, s->ulp, s->sq, s->ref2, s->test2, s->dot, acc->max_ref };
}

/* A NaN or inf mismatch is an infinite error: MSE and RMSE +inf, PSNR and
 * SNR -inf, so that no ranking by them puts a dtype that overflows above
 * one that does not (docs/analysis.md). */
static void mark_mismatches(mxp_compare_report *rep)
{
    if (rep->nan_mismatches > 0 || rep->inf_mismatches > 0) {
        rep->mse = rep->rmse = INFINITY;
        rep->psnr_db = rep->snr_db = -INFINITY;
    }
}

static void compare_finish(mxp_compare_report *rep, const mxp_compare_sums *s)
{
    const int64_t m = rep->count;
    if (m <= 0) {
        rep->mean_rel_error = rep->mean_ulp = rep->mse = rep->rmse = 0.0;
        rep->psnr_db = rep->snr_db = rep->cosine_similarity = 0.0;
        mark_mismatches(rep);
        return;
    }
    rep->mean_rel_error = s->rel / (double)m;
    rep->mean_ulp = s->ulp / (double)m;
    rep->mse = s->sq / (double)m;
    rep->rmse = sqrt(rep->mse);
    rep->psnr_db = s->sq == 0 ? INFINITY : 10.0 * log10(s->max_ref * s->max_ref / rep->mse);
    rep->snr_db = s->sq == 0 ? INFINITY : 10.0 * log10(s->ref2 / s->sq);
    if (s->ref2 == 0 && s->test2 == 0) {
        rep->cosine_similarity = 1.0;
    } else if (s->ref2 == 0 || s->test2 == 0) {
        rep->cosine_similarity = 0.0;
    } else { /* equal norms divide by the sum itself: identical arrays give exactly 1 */
        const double c = s->ref2 == s->test2 ? s->dot / s->ref2 : s->dot / (sqrt(s->ref2) * sqrt(s->test2));
        rep->cosine_similarity = c > 1.0 ? 1.0 : c < -1.0 ? -1.0 : c; /* rounding may step past +-1 */
    }
    mark_mismatches(rep);
}

/* The caller's report read and written within its struct_size. */
void mxp_compare_finish(mxp_compare_report *report, const mxp_compare_sums *s)
{
    MXP_ABI_OUT_RET(report, compare_report, "mxp_compare_finish", /* nothing: a bad size changes nothing */);
    if (!report || !s) /* nothing to finish (the function returns no status) */
        return;
    mxp_compare_report r = { 0 };
    memcpy(&r, report, report_abi_n_);
    compare_finish(&r, s);
    mxp_abi_out(report, &r, report_abi_n_, &mxp_abi_compare_report);
}

/* The report from the sums, once the percentiles are known. */
static void finish(mxp_err_acc *acc)
{
    mxp_compare_report *rep = acc->rep;
    const int64_t m = rep->count;
    if (acc->counted)
        rep->worst_index = acc->mismatch ? acc->first_mismatch : acc->first_worst;
    if (acc->mismatch) {
        rep->max_abs_error = INFINITY;
        rep->max_rel_error = INFINITY;
    }
    if (m == 0) {
        mark_mismatches(rep);
        return;
    }
    if (!acc->piece) {
        double *p[4] = { &rep->p50_rel_error, &rep->p90_rel_error, &rep->p99_rel_error, &rep->p999_rel_error };
        for (int q = 0; q < 4; q++)
            *p[q] = mxp_compare_percentile(m, q, mxp_select_value(&acc->sel, 2 * q),
                                           mxp_select_value(&acc->sel, 2 * q + 1));
    }
    const mxp_compare_sums sums = mxp_err_acc_sums(acc);
    compare_finish(rep, &sums);
}

mxp_status mxp_err_acc_end_pass(mxp_err_acc *acc, bool *again)
{
    const int64_t m = acc->rep->count;
    *again = false;
    if (m > 0 && !acc->piece) {
        int64_t ranks[8];
        mxp_compare_ranks(m, ranks);
        mxp_status st = mxp_select_next(&acc->sel, ranks, 8, again);
        if (st != MXP_OK)
            return mxp_error(st, "compare: no memory for the percentiles");
    }
    acc->next = 0;
    if (!*again)
        finish(acc);
    return MXP_OK;
}

void mxp_err_acc_free(mxp_err_acc *acc)
{
    if (!acc->piece)
        mxp_select_free(&acc->sel);
    mxp_free(acc->rel);
    acc->rel = NULL;
}

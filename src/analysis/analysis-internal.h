/* Internal: what compare.c, errstats.c, roundtrip.c and advisor.c share. */
#ifndef MXP_ANALYSIS_INTERNAL_H
#define MXP_ANALYSIS_INTERNAL_H

#include "analysis/select.h"
#include "mxp/analysis.h"

/* Pairs are streamed this many at a time (128 KiB of float64). */
enum { MXP_ANALYSIS_CHUNK = 16384 };

/* Checks both arrays (non-NULL, same shape, not empty). */
mxp_status mxp_analysis_check_pair(const mxp_array *reference, const mxp_array *test);

/* What a finite pair (r, t) adds to the sums: |t - r| / |r| (or / the
 * zero scale), the same in ulps, (t - r)^2, r^2, t^2, r t. */
typedef struct mxp_err_terms {
    double rel, ulp, sq, ref2, test2, dot;
} mxp_err_terms;

/* mxp_compare's statistics of a stream of float64 pairs (reference r, test
 * t).  Every statistic but the percentiles is complete after one pass over
 * the pairs; the percentiles are exact order statistics that may take more
 * passes over the same pairs (select.h).  The sums run left to right in C
 * order, as a loop over the whole arrays would, so the pairs come either
 *
 *   - one by one in C order, a chunk at a time (mxp_err_acc_add), or
 *   - as distinct pairs with their counts and first C-order indices
 *     (mxp_err_acc_add_counted) while the caller adds the terms to `sum`
 *     itself, in C order (the round trip of a 1- or 2-byte input). */
typedef struct mxp_err_acc {
    mxp_compare_report *rep;
    double zero_scale;   /* the relative error's divisor where r == 0 */
    int emin, mant;      /* the test dtype's ulp: 2^(max(e, emin) - mant) */
    bool float_ulp;      /* false: an integer test dtype, ulp 1 */
    bool mismatch;
    bool counted;        /* the pairs come counted */
    int64_t next;        /* one by one: C-order index of the next pair */
    int64_t first_mismatch, first_worst; /* counted: where they first occur */
    mxp_err_terms sum;
    double max_ref;
    double *rel;         /* a chunk's relative errors, for the select */
    mxp_select sel;
    bool piece;          /* mxp_compare_piece: one pass, no percentiles */
    double *rel_out;     /* piece: every relative error, in C order (or NULL) */
} mxp_err_acc;

/* Ready for the first pass over n pairs (n > 0; what is allocated follows
 * it, so a small input costs microseconds); test_dt decides the ulp and
 * the relative error at r == 0.  rep is filled in by the last
 * mxp_err_acc_end_pass. */
mxp_status mxp_err_acc_init(mxp_err_acc *acc, mxp_dtype test_dt, int64_t n, mxp_compare_report *rep);

/* As mxp_err_acc_init for one pass without percentiles (mxp_compare_piece);
 * rel_out as there. */
mxp_status mxp_err_acc_init_piece(mxp_err_acc *acc, mxp_dtype test_dt, int64_t n, mxp_compare_report *rep,
                                  double *rel_out);

/* The chunk size for n pairs: MXP_ANALYSIS_CHUNK, or n when smaller. */
static inline int64_t mxp_analysis_chunk(int64_t n)
{
    return n < MXP_ANALYSIS_CHUNK ? (n > 0 ? n : 1) : MXP_ANALYSIS_CHUNK;
}

/* The sums so far (mxp_compare_piece's). */
mxp_compare_sums mxp_err_acc_sums(const mxp_err_acc *acc);

/* The next n <= MXP_ANALYSIS_CHUNK pairs of this pass, in C order. */
void mxp_err_acc_add(mxp_err_acc *acc, const double *r, const double *t, int64_t n);

/* A distinct pair occurring count > 0 times, first at C-order index
 * first: every statistic but the sums; in any order, each pass. */
void mxp_err_acc_add_counted(mxp_err_acc *acc, double r, double t, int64_t count, int64_t first);

/* The pair's terms; all zero (adding them changes no sum) unless both
 * values are finite. */
mxp_err_terms mxp_err_acc_terms(const mxp_err_acc *acc, double r, double t);

/* After a pass over all the pairs: *again says whether they must be given
 * once more (from the first, in the same way); when not, the report is
 * complete. */
mxp_status mxp_err_acc_end_pass(mxp_err_acc *acc, bool *again);

void mxp_err_acc_free(mxp_err_acc *acc);

/* The ranks of p50, p90, p99 and p999 among m sorted errors (m > 0), two
 * each: NumPy's linear method reads ranks[2q] and ranks[2q + 1]
 * (errstats.c).  mxp_compare_percentile: percentile q from the errors lo
 * and hi at those ranks. */
void mxp_compare_ranks(int64_t m, int64_t ranks[8]);
double mxp_compare_percentile(int64_t m, int q, double lo, double hi);

/* The round trip of x through each candidate (roundtrip.c): rows as
 * mxp_roundtrip_analysis fills them, and max |x| over its finite values
 * (max_abs may be NULL).  Candidates are checked by the caller. */
mxp_status mxp_roundtrip_rows(const mxp_array *x, const mxp_dtype *candidates, int ncandidates,
                              mxp_roundtrip_row *rows, double *max_abs);

#endif

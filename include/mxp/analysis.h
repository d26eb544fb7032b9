/* mxp — precision analysis: how far one array is from another, what a
 * round trip through a narrower dtype costs, and which dtype is the
 * smallest that meets a requirement.  Definitions in docs/analysis.md. */
#ifndef MXP_ANALYSIS_H
#define MXP_ANALYSIS_H

#include "array.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MXP_COMPARE_BINS 32

/* Error statistics of `test` against `reference`, computed in float64.
 *
 * Pairs where both values are finite enter the statistics; `count` is how
 * many.  A pair where exactly one side is NaN is a NaN mismatch; a pair
 * with no NaN where the infinities differ (one side infinite, or opposite
 * infinities) is an inf mismatch.  A mismatch is an infinite error: it
 * makes max_abs_error, max_rel_error, mse and rmse +inf and psnr_db and
 * snr_db -inf (worst_index points at the first one), so that no ranking by
 * them hides it; the means, percentiles, ULP, cosine and histogram describe
 * the finite pairs.  NaN-NaN pairs and equal infinities are left out of
 * everything.
 *
 * Relative error is |t - r| / |r|; where r == 0 it is 0 if t == 0, else
 * |t - r| / (the test dtype's smallest normal; 1 for integer types).
 * ULP distance is |t - r| in units of the test dtype's ulp at r (1 for
 * integer test dtypes).  Percentiles interpolate linearly between sorted
 * values (NumPy's default); they are exact.  The histogram counts relative
 * errors in 32 log-spaced bins with edges 10^(-12 + 15 i / 32), i = 0..32;
 * values below 1e-12 (zero too) go to the first bin, above 1e3 (+inf too)
 * to the last, so the counts sum to `count`.  The arrays are streamed in C
 * order: memory does not grow with them (docs/analysis.md).  PSNR = 10 log10(max|r|^2 / MSE) and SNR = 10
 * log10(sum r^2 / sum (t-r)^2): +inf when there is no error. */
typedef struct mxp_compare_report {
    size_t struct_size;  /* set before the call: 0 (this release's layout) or sizeof(mxp_compare_report);
                            the library fills only the fields within it (docs/abi.md) */
    double max_abs_error, max_rel_error, mean_rel_error;
    double p50_rel_error, p90_rel_error, p99_rel_error, p999_rel_error;
    double mse, rmse, psnr_db, snr_db, cosine_similarity;
    double max_ulp, mean_ulp;
    int64_t worst_index; /* C-order index of the largest absolute error (-1: none) */
    int64_t nan_mismatches, inf_mismatches;
    int64_t count;       /* pairs in the statistics (both finite) */
    int64_t histogram[MXP_COMPARE_BINS];
    double histogram_edges[MXP_COMPARE_BINS + 1];
} mxp_compare_report;

/* Any dtypes and layouts; the same shape (else MXP_ERR_SHAPE); empty arrays
 * are MXP_ERR_INVALID_ARGUMENT. */
MXP_API mxp_status mxp_compare(const mxp_array *reference, const mxp_array *test, mxp_compare_report *report);

/* ---- comparing in pieces ----------------------------------------------------
 * A pair too large for one machine is compared piece by piece (blocks of a
 * distributed array, mxp.dask): mxp_compare_piece gives each piece's report
 * without the percentiles, with the sums its means and ratios come from and
 * optionally the relative errors themselves; the pieces' sums merge by
 * addition (max_ref by max) and mxp_compare_finish turns the merged sums
 * into the report's means and ratios exactly as mxp_compare does. */
typedef struct mxp_compare_sums {
    double rel, ulp;         /* sum of the relative errors, of the ulp distances */
    double sq;               /* sum of (t - r)^2 */
    double ref2, test2, dot; /* sums of r^2, t^2, r t */
    double max_ref;          /* max |r| */
} mxp_compare_sums;         /* all over the finite pairs */

/* As mxp_compare but in one pass: p50..p999_rel_error are left 0.  *sums
 * gets the piece's sums; rel_errors (NULL, or room for as many doubles as
 * the arrays have elements) gets the relative error of each finite pair in
 * C order, report->count of them. */
MXP_API mxp_status mxp_compare_piece(const mxp_array *reference, const mxp_array *test, mxp_compare_report *report,
                                     mxp_compare_sums *sums, double *rel_errors);
/* Sets report's mean_rel_error, mean_ulp, mse, rmse, psnr_db, snr_db and
 * cosine_similarity from sums over report->count finite pairs (count 0:
 * they are set to 0), then the mismatch rule from report's nan_mismatches
 * and inf_mismatches (mse, rmse +inf; psnr_db, snr_db -inf); every other
 * field is left as it is. */
MXP_API void mxp_compare_finish(mxp_compare_report *report, const mxp_compare_sums *sums);

/* Merges a piece's report and sums into report and sums (which start as
 * the first piece's; piece->worst_index already counted in the whole, C
 * order): counts, mismatches and the histogram add, the sums add (max_ref
 * by max), max_abs_error, max_rel_error and max_ulp by max, worst_index
 * is the first mismatch if either has one, else the index of the larger
 * absolute error (the smaller index at equal errors; -1 for none).
 * Percentiles, means and ratios are left for mxp_compare_select_finish and
 * mxp_compare_finish; merged in one tree order the sums are the same bits
 * in any run.  MXP_ERR_INVALID_ARGUMENT for a NULL pointer. */
MXP_API mxp_status mxp_compare_merge(mxp_compare_report *report, mxp_compare_sums *sums,
                                     const mxp_compare_report *piece, const mxp_compare_sums *piece_sums);

/* ---- percentiles of the pieces' relative errors ------------------------------
 * Non-negative doubles order as their bit patterns do, so the percentiles
 * of all pieces' relative errors (mxp_compare_piece's rel_errors) are found
 * digit by digit, most significant first, in passes over the pieces:
 *
 *   - mxp_compare_select_groups says what the next pass counts: up to 8
 *     groups, the errors whose bits above prefix_shift equal prefix, each
 *     counted by its bits above `shift` (pass 0: every error by bits 62..47);
 *   - every piece counts its errors of each group (mxp_compare_buckets), and
 *     the pieces' buckets of a group merge, in any order and grouping
 *     (mxp_compare_buckets_merge);
 *   - mxp_compare_select_step reads the merged buckets of each group: a
 *     percentile's rank is settled where its bucket holds one distinct
 *     value, else the bucket is the next pass's group (16 bits more), or,
 *     once the wanted buckets hold `collect` errors or fewer, its errors are
 *     counted one bucket per distinct value (shift 0);
 *   - mxp_compare_select_finish gives mxp_compare's p50 .. p999 (NumPy's
 *     linear interpolation between the ranks).
 *
 * exact false: one pass, each rank read linearly inside its bucket's
 * [smallest, largest] (a relative width below 2^-5) and bounds[q] the
 * width (0 where the bucket held one value).  Exact: as many passes as
 * needed (usually one more), bounds 0, the percentiles mxp_compare's. */
typedef struct mxp_compare_bucket {
    uint64_t key;    /* the bits above `shift` of every error in it */
    uint64_t count;  /* errors in it */
    uint64_t lo, hi; /* the bit patterns of the smallest and the largest */
} mxp_compare_bucket;

/* The buckets, in increasing key, of the n errors (non-negative doubles)
 * whose bits >> prefix_shift equal prefix (0 <= shift <= prefix_shift <=
 * 63), in a new buffer from mxp_malloc that the caller releases with
 * mxp_free (NULL when there are none); *nout gets their number. */
MXP_API mxp_status mxp_compare_buckets(mxp_compare_bucket **out, size_t *nout, const double *errors, size_t n,
                                       uint64_t prefix, int prefix_shift, int shift);
/* Two pieces' buckets of one group (each in increasing key) as one list:
 * counts added, the smallest and largest kept; *out from mxp_malloc. */
MXP_API mxp_status mxp_compare_buckets_merge(mxp_compare_bucket **out, size_t *nout, const mxp_compare_bucket *a,
                                             size_t na, const mxp_compare_bucket *b, size_t nb);

typedef struct mxp_compare_select mxp_compare_select; /* opaque */

/* collect: the most errors collected one bucket per value (0: 2^19). */
MXP_API mxp_status mxp_compare_select_create(mxp_compare_select **out, bool exact, int64_t collect);
MXP_API void mxp_compare_select_free(mxp_compare_select *s);
/* The next pass's groups (prefix[i], prefix_shift[i]), i < the returned
 * number (at most 8), and the shift they are counted by; 0: no more
 * passes (and for NULL). */
MXP_API int mxp_compare_select_groups(const mxp_compare_select *s, uint64_t *prefix, int *prefix_shift, int *shift);
/* The merged buckets of every group of this pass, in the order
 * mxp_compare_select_groups gave them.  Pass 0's give the number of
 * errors.  MXP_ERR_INVALID_ARGUMENT for buckets that hold fewer errors
 * than the ranks need, or a call after the last pass. */
MXP_API mxp_status mxp_compare_select_step(mxp_compare_select *s, const mxp_compare_bucket *const *buckets,
                                           const size_t *nbuckets);
/* After the last pass: report's p50_rel_error .. p999_rel_error (0 without
 * errors) and, unless NULL, bounds[0..3] (above). */
MXP_API mxp_status mxp_compare_select_finish(const mxp_compare_select *s, mxp_compare_report *report,
                                             double *bounds);

/* x converted to `dtype` (nearest even, IEEE overflow) and compared with x. */
typedef struct mxp_roundtrip_row {
    size_t struct_size;        /* set before the call: 0 (this release's layout) or sizeof(mxp_roundtrip_row);
                                  the same in every row of an array (docs/abi.md) */
    mxp_dtype dtype;
    size_t bytes;              /* size of x stored as dtype (sub-byte types
                                  packed: mxp_packed_bytes) */
    mxp_compare_report report; /* reference x, test x as dtype (its struct_size: 0 or its sizeof) */
    int64_t overflow;          /* finite input that became inf/NaN (integers: outside the range;
                                  float6/float4, which have neither: saturated where IEEE gives inf) */
    int64_t underflow_to_zero; /* nonzero finite input that became zero */
    int64_t subnormal;         /* nonzero results below the dtype's smallest normal */
    int64_t nan;               /* NaN results from non-NaN input */
} mxp_roundtrip_row;

/* Fills rows[0..ncandidates-1], one per candidate dtype. */
MXP_API mxp_status mxp_roundtrip_analysis(const mxp_array *x, const mxp_dtype *candidates, int ncandidates,
                                          mxp_roundtrip_row *rows);

typedef enum mxp_requirement_kind {
    MXP_REQUIRE_MAX_REL_ERROR, /* report.max_rel_error <= value (value >= 0) */
    MXP_REQUIRE_MIN_PSNR,      /* report.psnr_db >= value, no overflow or NaN */
    MXP_REQUIRE_NO_OVERFLOW,   /* no overflow, no NaN, no mismatch; value unused */
    MXP_REQUIREMENT_KIND_COUNT
} mxp_requirement_kind;

typedef struct mxp_requirement {
    mxp_requirement_kind kind;
    double value;
} mxp_requirement;

typedef struct mxp_advice {
    size_t struct_size;  /* set before the call: 0 (this release's layout) or sizeof(mxp_advice) (docs/abi.md) */
    mxp_dtype dtype;
    char reason[256];    /* one sentence, e.g. "max |x| = 1.2e+05 exceeds float16's 65504; ..." */
    mxp_roundtrip_row row; /* the chosen dtype's round trip (its struct_size and row.report's: 0 or their sizeof) */
} mxp_advice;

/* The number of float candidates mxp_recommend_dtype tries and their order
 * (smallest first: e4m3, e5m2, float16, bfloat16, float32, float64). */
#define MXP_ADVISOR_CANDIDATES 6
MXP_API const mxp_dtype *mxp_advisor_candidates(void);

/* The smallest float dtype whose round trip of x meets req; at equal size,
 * the one with the better metric (lower max rel error, else higher PSNR). */
MXP_API mxp_status mxp_recommend_dtype(const mxp_array *x, const mxp_requirement *req, mxp_advice *advice);

/* As mxp_recommend_dtype, and rows[0..MXP_ADVISOR_CANDIDATES-1] (unless
 * NULL) get every candidate's round trip, as mxp_roundtrip_analysis with
 * mxp_advisor_candidates() gives them: the table and the advice from one
 * analysis (what `mxp analyze` prints). */
MXP_API mxp_status mxp_recommend_dtype_rows(const mxp_array *x, const mxp_requirement *req, mxp_advice *advice,
                                            mxp_roundtrip_row *rows);

/* ---- the advisor among any float formats -------------------------------------
 * Every float storage format mxp has, smallest first by bits (*count, unless
 * count is NULL, gets their number: 14 in this release, and it grows with
 * the formats, so size arrays by *count, not by a constant):
 * float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, float8_e4m3fn, float8_e4m3,
 * float8_e4m3fnuz, float8_e4m3b11fnuz, float8_e5m2, float8_e5m2fnuz,
 * float8_e3m4, float16, bfloat16, float32, float64.  Left out: float8_e8m0fnu,
 * a scale format (unsigned powers of two, no zero: it stores no ordinary
 * data), and the integer types (no float round trip; quantization is
 * mxp/quant.h's). */
MXP_API const mxp_dtype *mxp_advisor_candidates_all(int *count);

/* The most candidates mxp_recommend_dtype_among takes. */
#define MXP_ADVISOR_MAX_CANDIDATES 64

/* As mxp_recommend_dtype among candidates[0..ncandidates-1] (1 to
 * MXP_ADVISOR_MAX_CANDIDATES float dtypes, each once; any order): the
 * smallest by storage bits (mxp_dtype_traits.bits: float4 4, float6 6,
 * float8 8, ...) whose round trip meets req; at equal bits the better
 * metric (lower max rel error, else higher PSNR), then the earlier one.
 * rows (unless NULL) gets every candidate's round trip in the caller's
 * order (an array of ncandidates rows, each with the same struct_size).
 *
 * NULL x, req or advice, ncandidates out of range, NULL candidates and a
 * candidate given twice are MXP_ERR_INVALID_ARGUMENT; a candidate that is
 * not a dtype, or not a float dtype, MXP_ERR_INVALID_DTYPE.  When no
 * candidate meets req the call returns MXP_ERR_INVALID_ARGUMENT and still
 * fills advice and rows (as mxp_gemm_safe's report when it refuses):
 * advice->dtype is MXP_DTYPE_INVALID, advice->reason says why each
 * candidate fell short and names the closest (the fewest values that
 * overflow, saturate or turn into NaN, then the better metric),
 * advice->row is the closest's round trip; mxp_last_error() holds
 * "recommend dtype: " and the same sentence.  (mxp_recommend_dtype never
 * does this: float64 is its answer when nothing smaller meets req.)
 * float8_e8m0fnu, left out of mxp_advisor_candidates_all, may be named. */
MXP_API mxp_status mxp_recommend_dtype_among(const mxp_array *x, const mxp_requirement *req,
                                             const mxp_dtype *candidates, int ncandidates, mxp_advice *advice,
                                             mxp_roundtrip_row *rows);

#ifdef __cplusplus
}
#endif
#endif

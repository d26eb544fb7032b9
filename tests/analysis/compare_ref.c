/* The whole-array analysis as it was before it was streamed (mxp 0.1:
 * float64 copies of both arrays, every relative error stored and sorted),
 * kept as the reference twin that the streamed one must equal. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_ref.h"

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* NumPy's default (linear) percentile of n sorted values, q in [0, 1]. */
static double percentile(const double *sorted, int64_t n, double q)
{
    if (n == 0)
        return 0;
    const double pos = q * (double)(n - 1);
    const int64_t lo = (int64_t)floor(pos);
    const int64_t hi = lo + 1 < n ? lo + 1 : lo;
    const double f = pos - (double)lo;
    return sorted[lo] + f * (sorted[hi] - sorted[lo]);
}

/* The test dtype's ulp at value r. */
static double ulp_at(double r, const mxp_dtype_traits *t)
{
    if (t->kind != MXP_KIND_FLOAT)
        return 1.0;
    const int emin = 1 - t->bias;
    int e = emin;
    if (r != 0) {
        (void)frexp(r, &e); /* |r| = m 2^e, m in [0.5, 1) */
        e -= 1;
        if (e < emin)
            e = emin;
    }
    return ldexp(1.0, e - t->mant_bits);
}

static int bin_of(double rel)
{
    if (!(rel > 1e-12))
        return 0;
    if (isinf(rel)) /* was (int)floor(inf): undefined; now the last bin, as documented */
        return MXP_COMPARE_BINS - 1;
    const int b = (int)floor((log10(rel) + 12.0) * MXP_COMPARE_BINS / 15.0);
    return b < 0 ? 0 : b >= MXP_COMPARE_BINS ? MXP_COMPARE_BINS - 1 : b;
}

static mxp_status ref_compare_f64(const double *r, const double *t, int64_t n, mxp_dtype test_dt,
                                  mxp_compare_report *rep)
{
    const mxp_dtype_traits *tt = mxp_dtype_get_traits(test_dt);
    if (!tt)
        return MXP_ERR_INVALID_DTYPE;
    memset(rep, 0, sizeof *rep);
    rep->worst_index = -1;
    for (int i = 0; i <= MXP_COMPARE_BINS; i++)
        rep->histogram_edges[i] = pow(10.0, -12.0 + 15.0 * i / MXP_COMPARE_BINS);
    double *rel = malloc((size_t)n * sizeof *rel + 1);
    if (!rel)
        return MXP_ERR_NO_MEMORY;
    const double zero_scale = tt->kind == MXP_KIND_FLOAT ? tt->min_normal : 1.0;
    double sum_rel = 0, sum_ulp = 0, sum_sq = 0, sum_ref2 = 0, sum_test2 = 0, dot = 0, max_ref = 0;
    bool mismatch = false;
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        const double a = r[i], b = t[i];
        if (isnan(a) || isnan(b)) {
            if (isnan(a) != isnan(b)) {
                rep->nan_mismatches++;
                if (!mismatch) {
                    mismatch = true;
                    rep->worst_index = i;
                }
            }
            continue;
        }
        if (isinf(a) || isinf(b)) {
            if (a != b) {
                rep->inf_mismatches++;
                if (!mismatch) {
                    mismatch = true;
                    rep->worst_index = i;
                }
            }
            continue;
        }
        const double d = fabs(b - a);
        const double e = a != 0 ? d / fabs(a) : d / zero_scale;
        const double u = d / ulp_at(a, tt);
        if (!mismatch && (rep->worst_index < 0 || d > rep->max_abs_error))
            rep->worst_index = i;
        if (d > rep->max_abs_error)
            rep->max_abs_error = d;
        if (e > rep->max_rel_error)
            rep->max_rel_error = e;
        if (u > rep->max_ulp)
            rep->max_ulp = u;
        if (fabs(a) > max_ref)
            max_ref = fabs(a);
        sum_rel += e;
        sum_ulp += u;
        sum_sq += d * d;
        sum_ref2 += a * a;
        sum_test2 += b * b;
        dot += a * b;
        rep->histogram[bin_of(e)]++;
        rel[m++] = e;
    }
    rep->count = m;
    if (mismatch) {
        rep->max_abs_error = INFINITY;
        rep->max_rel_error = INFINITY;
    }
    if (m > 0) {
        qsort(rel, (size_t)m, sizeof *rel, cmp_double);
        rep->p50_rel_error = percentile(rel, m, 0.5);
        rep->p90_rel_error = percentile(rel, m, 0.9);
        rep->p99_rel_error = percentile(rel, m, 0.99);
        rep->p999_rel_error = percentile(rel, m, 0.999);
        rep->mean_rel_error = sum_rel / (double)m;
        rep->mean_ulp = sum_ulp / (double)m;
        rep->mse = sum_sq / (double)m;
        rep->rmse = sqrt(rep->mse);
        rep->psnr_db = sum_sq == 0 ? INFINITY : 10.0 * log10(max_ref * max_ref / rep->mse);
        rep->snr_db = sum_sq == 0 ? INFINITY : 10.0 * log10(sum_ref2 / sum_sq);
        if (sum_ref2 == 0 && sum_test2 == 0)
            rep->cosine_similarity = 1.0;
        else if (sum_ref2 == 0 || sum_test2 == 0)
            rep->cosine_similarity = 0.0;
        else { /* equal norms divide by the sum itself: identical arrays give exactly 1 */
            double c = sum_ref2 == sum_test2 ? dot / sum_ref2 : dot / (sqrt(sum_ref2) * sqrt(sum_test2));
            rep->cosine_similarity = c > 1.0 ? 1.0 : c < -1.0 ? -1.0 : c; /* rounding may step past +-1 */
        }
    }
    if (mismatch) { /* an infinite error: no ranking by MSE or PSNR hides it */
        rep->mse = rep->rmse = INFINITY;
        rep->psnr_db = rep->snr_db = -INFINITY;
    }
    free(rel);
    return MXP_OK;
}


mxp_status ref_compare(const mxp_array *reference, const mxp_array *test, mxp_compare_report *report)
{
    mxp_array *r = NULL, *t = NULL;
    mxp_status st;
    if ((st = mxp_array_astype(&r, reference, MXP_F64, NULL)) == MXP_OK &&
        (st = mxp_array_astype(&t, test, MXP_F64, NULL)) == MXP_OK)
        st = ref_compare_f64(mxp_array_data(r), mxp_array_data(t), mxp_array_size(r), mxp_array_dtype(test), report);
    mxp_array_free(r);
    mxp_array_free(t);
    return st;
}

/* Does finite a overflow dt, a float format with neither inf nor NaN that
 * saturates?  The converter's own IEEE overflow flag for that one value. */
static bool saturates(const mxp_dtype_traits *t, double a)
{
    if (t->kind != MXP_KIND_FLOAT || t->has_inf || t->has_nan || !(fabs(a) > t->max))
        return false;
    mxp_convert_flags flags = { 0 };
    const mxp_convert_opts opts = { .flags = &flags };
    uint8_t out[8];
    return mxp_convert(out, t->dtype, &a, MXP_F64, 1, &opts) == MXP_OK && flags.overflow == 1;
}

/* One row: x (as float64 in xd, n values) through dt and back. */
static mxp_status roundtrip_row(const mxp_array *x, const double *xd, int64_t n, mxp_dtype dt, mxp_roundtrip_row *row)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(dt);
    mxp_array *y = NULL, *yd = NULL;
    mxp_status st = mxp_array_astype(&y, x, dt, NULL);
    if (st == MXP_OK)
        st = mxp_array_astype(&yd, y, MXP_F64, NULL);
    if (st == MXP_OK) {
        const double *v = mxp_array_data(yd);
        memset(row, 0, sizeof *row);
        row->dtype = dt;
        /* sub-byte types packed: n * bits / 8 rounded up */
        row->bytes = t->bits < 8 ? ((size_t)n * (size_t)t->bits + 7) / 8 : (size_t)n * t->itemsize;
        st = ref_compare_f64(xd, v, n, dt, &row->report);
        for (int64_t i = 0; st == MXP_OK && i < n; i++) {
            const double a = xd[i], b = v[i];
            if (isfinite(a) &&
                (!isfinite(b) || (t->kind != MXP_KIND_FLOAT && (a > t->max || a < t->lowest)) || saturates(t, a)))
                row->overflow++;
            if (isfinite(a) && a != 0 && b == 0)
                row->underflow_to_zero++;
            if (t->kind == MXP_KIND_FLOAT && b != 0 && fabs(b) < t->min_normal)
                row->subnormal++;
            if (!isnan(a) && isnan(b))
                row->nan++;
        }
    }
    mxp_array_free(y);
    mxp_array_free(yd);
    return st;
}

mxp_status ref_roundtrip(const mxp_array *x, const mxp_dtype *candidates, int ncandidates, mxp_roundtrip_row *rows)
{
    mxp_array *xd = NULL;
    mxp_status st = mxp_array_astype(&xd, x, MXP_F64, NULL);
    for (int i = 0; st == MXP_OK && i < ncandidates; i++)
        st = roundtrip_row(x, mxp_array_data(xd), mxp_array_size(xd), candidates[i], &rows[i]);
    mxp_array_free(xd);
    return st;
}

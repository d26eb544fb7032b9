/* Precision analysis: mxp_compare's metrics against a float64 computation
 * written here, hand-computed cases, NaN/inf mismatches, ULP distances,
 * percentiles, the histogram, the round trip counts, the dtype advisor
 * and bad input.  Also writes analyze_input.npy for the `mxp analyze` test
 * when given a path argument. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "array_from.h"

static void assert_close(double got, double want, double tol)
{
    if (isinf(want)) {
        assert_true(got == want);
        return;
    }
    if (fabs(got - want) > tol * (fabs(want) > 1 ? fabs(want) : 1)) {
        fail_msg("got %.17g, want %.17g", got, want);
    }
}

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(const double *s, int64_t n, double q)
{
    double pos = q * (double)(n - 1);
    int64_t lo = (int64_t)pos;
    int64_t hi = lo + 1 < n ? lo + 1 : lo;
    return s[lo] + (pos - (double)lo) * (s[hi] - s[lo]);
}

/* Every field against a direct float64 computation (f32 reference in a
 * strided view, bf16 test). */
static void test_random_against_float64(void **state)
{
    (void)state;
    enum { N = 4001 };
    int64_t shape[2] = { N, 2 };
    mxp_array *big = NULL, *ref = NULL, *test = NULL, *rd = NULL, *td = NULL;
    assert_int_equal(mxp_array_random_normal(&big, MXP_F32, 2, shape, 0.5, 3.0, 7), MXP_OK);
    mxp_slice sl[2] = { MXP_SLICE_ALL, { 1, 2, 1 } };
    assert_int_equal(mxp_array_slice(&ref, big, 2, sl), MXP_OK); /* non-contiguous (N, 1) */
    assert_int_equal(mxp_array_astype(&test, ref, MXP_BF16, NULL), MXP_OK);
    assert_int_equal(mxp_array_astype(&rd, ref, MXP_F64, NULL), MXP_OK);
    assert_int_equal(mxp_array_astype(&td, test, MXP_F64, NULL), MXP_OK);
    const double *r = mxp_array_data(rd), *t = mxp_array_data(td);

    mxp_compare_report rep = { 0 };
    assert_int_equal(mxp_compare(ref, test, &rep), MXP_OK);

    double rel[N], maxabs = 0, maxrel = 0, sumrel = 0, sq = 0, r2 = 0, t2 = 0, dot = 0, maxref = 0, maxulp = 0,
                   sumulp = 0;
    int64_t worst = 0;
    for (int i = 0; i < N; i++) {
        double d = fabs(t[i] - r[i]);
        rel[i] = d / fabs(r[i]);
        int e;
        frexp(r[i], &e);
        double ulp = ldexp(1.0, (e - 1 < -126 ? -126 : e - 1) - 7); /* bfloat16 */
        if (d > maxabs) {
            maxabs = d;
            worst = i;
        }
        maxrel = fmax(maxrel, rel[i]);
        maxulp = fmax(maxulp, d / ulp);
        sumulp += d / ulp;
        sumrel += rel[i];
        sq += d * d;
        r2 += r[i] * r[i];
        t2 += t[i] * t[i];
        dot += r[i] * t[i];
        maxref = fmax(maxref, fabs(r[i]));
    }
    qsort(rel, N, sizeof rel[0], cmp_d);
    assert_int_equal(rep.count, N);
    assert_int_equal(rep.nan_mismatches, 0);
    assert_int_equal(rep.inf_mismatches, 0);
    assert_int_equal(rep.worst_index, worst);
    assert_close(rep.max_abs_error, maxabs, 1e-15);
    assert_close(rep.max_rel_error, maxrel, 1e-15);
    assert_close(rep.mean_rel_error, sumrel / N, 1e-12);
    assert_close(rep.p50_rel_error, pct(rel, N, 0.5), 1e-15);
    assert_close(rep.p90_rel_error, pct(rel, N, 0.9), 1e-15);
    assert_close(rep.p99_rel_error, pct(rel, N, 0.99), 1e-15);
    assert_close(rep.p999_rel_error, pct(rel, N, 0.999), 1e-15);
    assert_close(rep.mse, sq / N, 1e-12);
    assert_close(rep.rmse, sqrt(sq / N), 1e-12);
    assert_close(rep.psnr_db, 10 * log10(maxref * maxref / (sq / N)), 1e-12);
    assert_close(rep.snr_db, 10 * log10(r2 / sq), 1e-12);
    assert_close(rep.cosine_similarity, dot / sqrt(r2 * t2), 1e-12);
    assert_close(rep.max_ulp, maxulp, 1e-15);
    assert_close(rep.mean_ulp, sumulp / N, 1e-12);
    assert_true(rep.max_ulp <= 0.5); /* round to nearest */
    int64_t total = 0;
    for (int i = 0; i < 32; i++)
        total += rep.histogram[i];
    assert_int_equal(total, rep.count);
    assert_close(rep.histogram_edges[0], 1e-12, 1e-12);
    assert_close(rep.histogram_edges[32], 1e3, 1e-12);
    for (int i = 0; i < 32; i++)
        assert_true(rep.histogram_edges[i] < rep.histogram_edges[i + 1]);
    /* bfloat16's relative error is at most 2^-8: nothing above that edge. */
    for (int i = 0; i < 32; i++) {
        if (rep.histogram_edges[i] > 0x1p-8)
            assert_int_equal(rep.histogram[i], 0);
    }
    mxp_array_free(big);
    mxp_array_free(ref);
    mxp_array_free(test);
    mxp_array_free(rd);
    mxp_array_free(td);
}

static void test_hand_computed(void **state)
{
    (void)state;
    const double r[] = { 1, 2, 3, 4 }, t[] = { 1, 2, 3, 5 };
    mxp_array *a = from_doubles(r, 4, MXP_F64), *b = from_doubles(t, 4, MXP_S32);
    mxp_compare_report rep = { 0 };
    assert_int_equal(mxp_compare(a, b, &rep), MXP_OK);
    assert_int_equal(rep.count, 4);
    assert_true(rep.max_abs_error == 1.0);
    assert_true(rep.max_rel_error == 0.25);
    assert_true(rep.mean_rel_error == 0.0625);
    assert_int_equal(rep.worst_index, 3);
    assert_true(rep.mse == 0.25);
    assert_true(rep.rmse == 0.5);
    assert_close(rep.psnr_db, 10 * log10(16 / 0.25), 1e-15);
    assert_close(rep.snr_db, 10 * log10(30 / 1.0), 1e-15);
    assert_close(rep.cosine_similarity, 34 / sqrt(30.0 * 39.0), 1e-15); /* 1+4+9+20 over sqrt(30 * 39) */
    assert_true(rep.max_ulp == 1.0); /* integer test dtype: ulp 1 */
    assert_true(rep.mean_ulp == 0.25);
    assert_true(rep.p50_rel_error == 0.0);
    assert_close(rep.p90_rel_error, 0.25 * (0.9 * 3 - 2), 1e-15); /* 0.7 of the way from 0 to 0.25 */
    assert_close(rep.p99_rel_error, 0.25 * (0.99 * 3 - 2), 1e-15);
    assert_int_equal(rep.histogram[0], 3);
    assert_int_equal(rep.histogram[(int)floor((log10(0.25) + 12) * 32 / 15)], 1);
    mxp_array_free(b);

    /* Identical arrays: infinite PSNR/SNR, cosine 1. */
    assert_int_equal(mxp_compare(a, a, &rep), MXP_OK);
    assert_true(isinf(rep.psnr_db) && rep.psnr_db > 0);
    assert_true(isinf(rep.snr_db));
    assert_true(rep.cosine_similarity == 1.0);
    assert_true(rep.max_abs_error == 0 && rep.mse == 0);
    mxp_array_free(a);

    /* Reference zero: |t - r| / smallest normal of the test dtype. */
    const double z[] = { 0, 1 }, zt[] = { 0x1p-24, 1 };
    a = from_doubles(z, 2, MXP_F64);
    b = from_doubles(zt, 2, MXP_F16);
    assert_int_equal(mxp_compare(a, b, &rep), MXP_OK);
    assert_true(rep.max_rel_error == 0x1p-24 / 0x1p-14);
    assert_true(rep.max_ulp == 1.0); /* float16's ulp at 0 is 2^-24 */
    mxp_array_free(a);
    mxp_array_free(b);
}

static void test_ulp(void **state)
{
    (void)state;
    const double r[] = { 1.0, 1.0, 2048.0, 0x1p-20 }, t[] = { 1.0 + 0x1p-10, 1.0 - 0x1p-11, 2050.0, 0x1p-20 + 0x1p-24 };
    mxp_array *a = from_doubles(r, 4, MXP_F32), *b = from_doubles(t, 4, MXP_F16);
    mxp_compare_report rep = { 0 };
    assert_int_equal(mxp_compare(a, b, &rep), MXP_OK);
    /* 1 ulp above 1; half an ulp (of 1's binade) below; 2048 + 1 ulp (2);
     * the subnormal range's ulp 2^-24. */
    assert_true(rep.max_ulp == 1.0);
    assert_true(rep.mean_ulp == (1.0 + 0.5 + 1.0 + 1.0) / 4);
    mxp_array_free(a);
    mxp_array_free(b);

    /* e4m3: ulp at 1 is 2^-3. */
    const double r8[] = { 1.0 }, t8[] = { 1.125 };
    a = from_doubles(r8, 1, MXP_F64);
    b = from_doubles(t8, 1, MXP_E4M3);
    assert_int_equal(mxp_compare(a, b, &rep), MXP_OK);
    assert_true(rep.max_ulp == 1.0);
    mxp_array_free(a);
    mxp_array_free(b);
}

static void test_nan_inf_mismatches(void **state)
{
    (void)state;
    const double r[] = { NAN, NAN, 1.0, INFINITY, INFINITY, 2.0, -INFINITY, 3.0 };
    const double t[] = { NAN, 1.0, NAN, INFINITY, -INFINITY, INFINITY, 5.0, 3.5 };
    mxp_array *a = from_doubles(r, 8, MXP_F64), *b = from_doubles(t, 8, MXP_F32);
    mxp_compare_report rep = { 0 };
    assert_int_equal(mxp_compare(a, b, &rep), MXP_OK);
    assert_int_equal(rep.nan_mismatches, 2);
    assert_int_equal(rep.inf_mismatches, 3);
    assert_int_equal(rep.count, 1); /* only 3 vs 3.5 */
    assert_int_equal(rep.worst_index, 1);
    assert_true(isinf(rep.max_abs_error) && isinf(rep.max_rel_error));
    /* a mismatch is an infinite error: MSE/RMSE +inf, PSNR/SNR -inf */
    assert_true(isinf(rep.mse) && rep.mse > 0 && isinf(rep.rmse));
    assert_true(isinf(rep.psnr_db) && rep.psnr_db < 0 && isinf(rep.snr_db) && rep.snr_db < 0);
    assert_close(rep.mean_rel_error, 0.5 / 3, 1e-15); /* the finite pairs' means stay */
    /* one NaN among finite pairs is enough; no finite pair at all too */
    const double r2[] = { 1.0, 2.0, 3.0 }, t2[] = { 1.0, NAN, 3.0 };
    mxp_array *c = from_doubles(r2, 3, MXP_F64), *d = from_doubles(t2, 3, MXP_F64);
    assert_int_equal(mxp_compare(c, d, &rep), MXP_OK);
    assert_true(rep.count == 2 && isinf(rep.mse) && rep.psnr_db < 0 && isinf(rep.psnr_db));
    mxp_array_free(c);
    mxp_array_free(d);
    const double r3[] = { NAN }, t3[] = { 1.0 };
    c = from_doubles(r3, 1, MXP_F64);
    d = from_doubles(t3, 1, MXP_F64);
    assert_int_equal(mxp_compare(c, d, &rep), MXP_OK);
    assert_true(rep.count == 0 && isinf(rep.mse) && isinf(rep.psnr_db) && rep.psnr_db < 0);
    mxp_array_free(c);
    mxp_array_free(d);
    mxp_array_free(a);
    mxp_array_free(b);
}

static void test_percentiles_and_histogram(void **state)
{
    (void)state;
    enum { N = 1000 };
    double r[N], t[N];
    for (int i = 0; i < N; i++) {
        r[i] = 1.0;
        t[i] = 1.0 + (i + 1) * 1e-6; /* relative errors 1e-6 .. 1e-3 */
    }
    t[0] = 1.0 + 1e-15; /* below the first edge: first bin */
    t[1] = 1e6;         /* above the last edge: last bin */
    mxp_array *a = from_doubles(r, N, MXP_F64), *b = from_doubles(t, N, MXP_F64);
    mxp_compare_report rep = { 0 };
    assert_int_equal(mxp_compare(a, b, &rep), MXP_OK);
    double rel[N];
    for (int i = 0; i < N; i++)
        rel[i] = fabs(t[i] - 1.0);
    qsort(rel, N, sizeof rel[0], cmp_d);
    assert_close(rep.p50_rel_error, pct(rel, N, 0.5), 1e-12);
    assert_close(rep.p90_rel_error, pct(rel, N, 0.9), 1e-12);
    assert_close(rep.p99_rel_error, pct(rel, N, 0.99), 1e-12);
    assert_close(rep.p999_rel_error, pct(rel, N, 0.999), 1e-12);
    assert_true(rep.p50_rel_error <= rep.p90_rel_error && rep.p90_rel_error <= rep.p99_rel_error &&
                rep.p99_rel_error <= rep.p999_rel_error && rep.p999_rel_error <= rep.max_rel_error);
    assert_int_equal(rep.histogram[0], 1);
    assert_int_equal(rep.histogram[31], 1);
    int64_t total = 0;
    for (int i = 0; i < 32; i++)
        total += rep.histogram[i];
    assert_int_equal(total, N);
    mxp_array_free(a);
    mxp_array_free(b);
}

/* mxp_compare_piece: mxp_compare's report without the percentiles, the
 * relative errors in C order, and sums that, merged over two pieces and
 * finished, give the whole pair's means and ratios (to rounding). */
static void test_compare_pieces(void **state)
{
    (void)state;
    enum { N = 3000, H = 1234 };
    double r[N], t[N];
    for (int i = 0; i < N; i++) {
        r[i] = sin(i * 0.37) * (1 + i % 7);
        t[i] = r[i] + cos(i * 1.3) * 1e-3;
    }
    r[5] = 0.0;
    t[9] = NAN;
    t[11] = INFINITY;
    mxp_array *a = from_doubles(r, N, MXP_F64), *b = from_doubles(t, N, MXP_BF16);
    mxp_compare_report whole = { 0 }, piece = { 0 };
    mxp_compare_sums sums;
    double *rel = malloc(N * sizeof *rel);
    assert_int_equal(mxp_compare(a, b, &whole), MXP_OK);
    assert_int_equal(mxp_compare_piece(a, b, &piece, &sums, rel), MXP_OK);
    assert_true(piece.p50_rel_error == 0 && piece.p999_rel_error == 0);
    piece.p50_rel_error = whole.p50_rel_error, piece.p90_rel_error = whole.p90_rel_error;
    piece.p99_rel_error = whole.p99_rel_error, piece.p999_rel_error = whole.p999_rel_error;
    assert_memory_equal(&piece, &whole, sizeof whole); /* every other field, bit for bit */
    qsort(rel, (size_t)piece.count, sizeof *rel, cmp_d);
    assert_true(pct(rel, piece.count, 0.5) == whole.p50_rel_error);
    assert_true(pct(rel, piece.count, 0.999) == whole.p999_rel_error);

    /* two pieces merged */
    mxp_array *a1 = from_doubles(r, H, MXP_F64), *b1 = from_doubles(t, H, MXP_BF16);
    mxp_array *a2 = from_doubles(r + H, N - H, MXP_F64), *b2 = from_doubles(t + H, N - H, MXP_BF16);
    mxp_compare_report p1 = { 0 }, p2 = { 0 };
    mxp_compare_sums s1, s2;
    assert_int_equal(mxp_compare_piece(a1, b1, &p1, &s1, NULL), MXP_OK);
    assert_int_equal(mxp_compare_piece(a2, b2, &p2, &s2, NULL), MXP_OK);
    mxp_compare_sums m = { s1.rel + s2.rel, s1.ulp + s2.ulp, s1.sq + s2.sq, s1.ref2 + s2.ref2,
                           s1.test2 + s2.test2, s1.dot + s2.dot, fmax(s1.max_ref, s2.max_ref) };
    mxp_compare_report merged = { .count = p1.count + p2.count,
                                  .nan_mismatches = p1.nan_mismatches + p2.nan_mismatches,
                                  .inf_mismatches = p1.inf_mismatches + p2.inf_mismatches };
    mxp_compare_finish(&merged, &m);
    assert_int_equal(merged.count, whole.count);
    assert_close(merged.mean_rel_error, whole.mean_rel_error, 1e-13);
    assert_close(merged.mean_ulp, whole.mean_ulp, 1e-13);
    if (whole.nan_mismatches + whole.inf_mismatches > 0) { /* the data has mismatches: infinite errors */
        assert_true(isinf(merged.mse) && merged.mse == whole.mse);
        assert_true(merged.psnr_db == whole.psnr_db && merged.snr_db == whole.snr_db && merged.psnr_db < 0);
        /* without the counts, the finite pairs' values */
        mxp_compare_report finite = { .count = merged.count };
        mxp_compare_finish(&finite, &m);
        assert_true(isfinite(finite.mse) && isfinite(finite.psnr_db));
    } else {
        assert_close(merged.mse, whole.mse, 1e-13);
        assert_close(merged.psnr_db, whole.psnr_db, 1e-13);
        assert_close(merged.snr_db, whole.snr_db, 1e-13);
    }
    assert_close(merged.cosine_similarity, whole.cosine_similarity, 1e-15);
    mxp_compare_report none = { .count = 0, .mse = 5 };
    mxp_compare_finish(&none, &m);
    assert_true(none.mse == 0 && none.psnr_db == 0);
    assert_int_equal(mxp_compare_piece(a, b, &piece, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_compare_piece(a, b1, &piece, &sums, NULL), MXP_ERR_SHAPE);
    free(rel);
    mxp_array_free(a);
    mxp_array_free(b);
    mxp_array_free(a1);
    mxp_array_free(b1);
    mxp_array_free(a2);
    mxp_array_free(b2);
}

static void test_roundtrip(void **state)
{
    (void)state;
    const double v[] = { 1.0, 1e5, 1e-9, 3e-6, NAN, -0.0, 0.1 };
    mxp_array *x = from_doubles(v, 7, MXP_F64);
    const mxp_dtype c[] = { MXP_F16, MXP_E4M3, MXP_F64, MXP_S8 };
    mxp_roundtrip_row rows[4] = { 0 };
    assert_int_equal(mxp_roundtrip_analysis(x, c, 4, rows), MXP_OK);
    /* float16: 1e5 -> inf, 1e-9 -> 0, 3e-6 subnormal. */
    assert_int_equal(rows[0].dtype, MXP_F16);
    assert_int_equal(rows[0].bytes, 14);
    assert_int_equal(rows[0].overflow, 1);
    assert_int_equal(rows[0].underflow_to_zero, 1);
    assert_int_equal(rows[0].subnormal, 1);
    assert_int_equal(rows[0].nan, 0);
    assert_int_equal(rows[0].report.inf_mismatches, 1);
    assert_int_equal(rows[0].report.nan_mismatches, 0);
    /* e4m3 has no infinity: 1e5 -> NaN. */
    assert_int_equal(rows[1].bytes, 7);
    assert_int_equal(rows[1].overflow, 1);
    assert_int_equal(rows[1].nan, 1);
    assert_int_equal(rows[1].underflow_to_zero, 2);
    assert_int_equal(rows[1].report.nan_mismatches, 1);
    /* float64 is exact. */
    assert_int_equal(rows[2].overflow + rows[2].underflow_to_zero + rows[2].subnormal + rows[2].nan, 0);
    assert_true(rows[2].report.max_abs_error == 0);
    /* int8: 1e5 is out of range. */
    assert_int_equal(rows[3].overflow, 1);
    mxp_array_free(x);
}

static void test_advisor(void **state)
{
    (void)state;
    int64_t n = 20000;
    mxp_array *x = NULL;
    mxp_advice adv = { 0 };
    assert_int_equal(mxp_array_random_normal(&x, MXP_F32, 1, &n, 0.0, 1.0, 3), MXP_OK);
    mxp_requirement req = { MXP_REQUIRE_MIN_PSNR, 60 };
    assert_int_equal(mxp_recommend_dtype(x, &req, &adv), MXP_OK);
    assert_int_equal(mxp_dtype_itemsize(adv.dtype), 2);
    assert_int_equal(adv.dtype, MXP_F16); /* the better PSNR of the two 16-bit types */
    assert_true(adv.row.report.psnr_db >= 60);
    assert_int_equal(adv.row.dtype, adv.dtype);
    assert_non_null(strstr(adv.reason, "float16"));
    assert_non_null(strstr(adv.reason, "PSNR"));

    /* 8 bits meet a loose requirement; relative error picks per its metric. */
    req = (mxp_requirement){ MXP_REQUIRE_MIN_PSNR, 20 };
    assert_int_equal(mxp_recommend_dtype(x, &req, &adv), MXP_OK);
    assert_int_equal(mxp_dtype_itemsize(adv.dtype), 1);
    req = (mxp_requirement){ MXP_REQUIRE_MAX_REL_ERROR, 1e-6 };
    assert_int_equal(mxp_recommend_dtype(x, &req, &adv), MXP_OK);
    assert_int_equal(adv.dtype, MXP_F32); /* x is float32: exact */
    req = (mxp_requirement){ MXP_REQUIRE_MAX_REL_ERROR, 0 };
    assert_int_equal(mxp_recommend_dtype(x, &req, &adv), MXP_OK);
    assert_int_equal(adv.dtype, MXP_F32);
    mxp_array_free(x);

    /* Outliers at 1e5: not float16; the reason names its 65504. */
    n = 4096;
    assert_int_equal(mxp_array_random_normal(&x, MXP_F64, 1, &n, 0.0, 1.0, 5), MXP_OK);
    double *v = mxp_array_data(x);
    v[10] = 1.2e5;
    v[2000] = -1e5;
    req = (mxp_requirement){ MXP_REQUIRE_MIN_PSNR, 40 };
    assert_int_equal(mxp_recommend_dtype(x, &req, &adv), MXP_OK);
    assert_int_equal(adv.dtype, MXP_BF16);
    assert_non_null(strstr(adv.reason, "65504"));
    assert_non_null(strstr(adv.reason, "1.2e+05"));
    assert_non_null(strstr(adv.reason, "bfloat16"));
    req = (mxp_requirement){ MXP_REQUIRE_NO_OVERFLOW, 0 };
    assert_int_equal(mxp_recommend_dtype(x, &req, &adv), MXP_OK);
    assert_int_equal(adv.dtype, MXP_BF16);
    assert_int_equal(adv.row.overflow, 0);
    assert_non_null(strstr(adv.reason, "65504"));
    mxp_array_free(x);

    /* No overflow with small values: the first 8-bit type that holds them. */
    const double small[] = { 1, -2, 100, 0.5 };
    x = from_doubles(small, 4, MXP_F64);
    assert_int_equal(mxp_recommend_dtype(x, &req, &adv), MXP_OK);
    assert_int_equal(mxp_dtype_itemsize(adv.dtype), 1);
    mxp_array_free(x);
}

static void test_bad_input(void **state)
{
    (void)state;
    const double v[] = { 1, 2, 3 };
    mxp_array *a = from_doubles(v, 3, MXP_F64), *b = from_doubles(v, 2, MXP_F64), *e = NULL;
    int64_t zero = 0;
    assert_int_equal(mxp_array_empty(&e, MXP_F32, 1, &zero), MXP_OK);
    mxp_compare_report rep = { 0 };
    assert_int_equal(mxp_compare(NULL, a, &rep), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_compare(a, NULL, &rep), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_compare(a, a, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_compare(a, b, &rep), MXP_ERR_SHAPE);
    assert_int_equal(mxp_compare(e, e, &rep), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "empty"));

    mxp_roundtrip_row rows[1] = { 0 };
    const mxp_dtype bad = (mxp_dtype)99, good = MXP_F16;
    assert_int_equal(mxp_roundtrip_analysis(NULL, &good, 1, rows), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_roundtrip_analysis(a, NULL, 1, rows), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_roundtrip_analysis(a, &good, 1, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_roundtrip_analysis(a, &good, -1, rows), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_roundtrip_analysis(a, &bad, 1, rows), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_roundtrip_analysis(e, &good, 1, rows), MXP_ERR_INVALID_ARGUMENT);

    mxp_advice adv = { 0 };
    mxp_requirement req = { MXP_REQUIRE_MIN_PSNR, 40 };
    assert_int_equal(mxp_recommend_dtype(NULL, &req, &adv), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_recommend_dtype(a, NULL, &adv), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_recommend_dtype(a, &req, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_recommend_dtype(e, &req, &adv), MXP_ERR_INVALID_ARGUMENT);
    req.value = NAN;
    assert_int_equal(mxp_recommend_dtype(a, &req, &adv), MXP_ERR_INVALID_ARGUMENT);
    req = (mxp_requirement){ MXP_REQUIRE_MAX_REL_ERROR, -1 };
    assert_int_equal(mxp_recommend_dtype(a, &req, &adv), MXP_ERR_INVALID_ARGUMENT);
    req = (mxp_requirement){ (mxp_requirement_kind)42, 1 };
    assert_int_equal(mxp_recommend_dtype(a, &req, &adv), MXP_ERR_INVALID_ARGUMENT);
    mxp_array_free(a);
    mxp_array_free(b);
    mxp_array_free(e);
}

int main(int argc, char **argv)
{
    if (argc == 2) { /* write the `mxp analyze` test's input: normal data, two outliers */
        int64_t n = 1000;
        mxp_array *x = NULL;
        if (mxp_array_random_normal(&x, MXP_F32, 1, &n, 0.0, 1.0, 11) != MXP_OK)
            return 1;
        float *v = mxp_array_data(x);
        v[3] = 1.2e5f;
        v[500] = -7e4f;
        mxp_status st = mxp_npy_save(argv[1], x);
        mxp_array_free(x);
        return st == MXP_OK ? 0 : 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_against_float64),
        cmocka_unit_test(test_hand_computed),
        cmocka_unit_test(test_ulp),
        cmocka_unit_test(test_nan_inf_mismatches),
        cmocka_unit_test(test_percentiles_and_histogram),
        cmocka_unit_test(test_compare_pieces),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_advisor),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

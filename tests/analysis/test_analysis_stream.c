/* The streamed analysis equals the whole-array one it replaced
 * (compare_ref.c, the old code kept as a reference twin), field for field
 * and bit for bit: every input dtype through every candidate, views,
 * NaN/inf mismatches, ties, percentiles that need more than one pass,
 * histogram bins next to their edges.  And its memory does not grow with
 * the input, nor leaks when an allocation fails. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compare_ref.h"
#include "support/alloc_failures.h"

enum { N = 16384 + 5 }; /* a chunk and a bit */

static void assert_same_double(double got, double want, const char *what)
{
    if (memcmp(&got, &want, sizeof got) != 0)
        fail_msg("%s: streamed %.17g, reference %.17g", what, got, want);
}

static void assert_same_report(const mxp_compare_report *got, const mxp_compare_report *want)
{
#define SAME(f) assert_same_double(got->f, want->f, #f)
    SAME(max_abs_error); SAME(max_rel_error); SAME(mean_rel_error);
    SAME(p50_rel_error); SAME(p90_rel_error); SAME(p99_rel_error); SAME(p999_rel_error);
    SAME(mse); SAME(rmse); SAME(psnr_db); SAME(snr_db); SAME(cosine_similarity);
    SAME(max_ulp); SAME(mean_ulp);
#undef SAME
    assert_int_equal(got->worst_index, want->worst_index);
    assert_int_equal(got->nan_mismatches, want->nan_mismatches);
    assert_int_equal(got->inf_mismatches, want->inf_mismatches);
    assert_int_equal(got->count, want->count);
    for (int i = 0; i < MXP_COMPARE_BINS; i++)
        assert_int_equal(got->histogram[i], want->histogram[i]);
    for (int i = 0; i <= MXP_COMPARE_BINS; i++)
        assert_same_double(got->histogram_edges[i], want->histogram_edges[i], "histogram edge");
}

static void assert_same_rows(const mxp_roundtrip_row *got, const mxp_roundtrip_row *want, int n)
{
    for (int c = 0; c < n; c++) {
        assert_int_equal(got[c].dtype, want[c].dtype);
        assert_int_equal(got[c].bytes, want[c].bytes);
        assert_int_equal(got[c].overflow, want[c].overflow);
        assert_int_equal(got[c].underflow_to_zero, want[c].underflow_to_zero);
        assert_int_equal(got[c].subnormal, want[c].subnormal);
        assert_int_equal(got[c].nan, want[c].nan);
        assert_same_report(&got[c].report, &want[c].report);
    }
}

/* Random bytes: every bit pattern (NaN, inf, subnormal, huge) appears. */
static mxp_array *random_bits(mxp_dtype dt, int64_t n, uint64_t seed)
{
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_empty(&a, dt, 1, &n), MXP_OK);
    unsigned char *p = mxp_array_data(a);
    for (size_t i = 0; i < (size_t)n * mxp_dtype_itemsize(dt); i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (unsigned char)(seed >> 56);
    }
    return a;
}

/* x through every dtype, streamed and whole-array. */
static void check_roundtrip(const mxp_array *x)
{
    mxp_dtype cand[MXP_DTYPE_COUNT];
    int nc = 0;
    for (int t = 1; t < MXP_DTYPE_COUNT; t++)
        cand[nc++] = (mxp_dtype)t;
    mxp_roundtrip_row got[MXP_DTYPE_COUNT] = { 0 }, want[MXP_DTYPE_COUNT] = { 0 };
    assert_int_equal(mxp_roundtrip_analysis(x, cand, nc, got), MXP_OK);
    assert_int_equal(ref_roundtrip(x, cand, nc, want), MXP_OK);
    assert_same_rows(got, want, nc);
}

static void test_roundtrip_equals_the_reference_for_every_input_dtype(void **state)
{
    (void)state;
    for (int t = 1; t < MXP_DTYPE_COUNT; t++) {
        mxp_array *x = random_bits((mxp_dtype)t, N, (uint64_t)t);
        check_roundtrip(x);
        mxp_array_free(x);
    }
}

/* Finite values in a range each candidate mostly holds; ties (few
 * distinct values); a strided view (no C-contiguous buffer). */
static void test_roundtrip_equals_the_reference_on_ordinary_data_ties_and_views(void **state)
{
    (void)state;
    const int64_t n = N;
    mxp_array *x = NULL, *v = NULL, *t = NULL;
    assert_int_equal(mxp_array_random_normal(&x, MXP_F32, 1, &n, 0.0, 100.0, 1), MXP_OK);
    check_roundtrip(x);
    float *f = mxp_array_data(x);
    for (int64_t i = 0; i < n; i++)
        f[i] = (float)((i * 7919) % 13) - 6.0f;
    check_roundtrip(x);
    const int64_t shape[2] = { 211, 233 };
    mxp_array_free(x);
    assert_int_equal(mxp_array_random_uniform(&x, MXP_F16, 2, shape, -3, 3, 2), MXP_OK);
    assert_int_equal(mxp_array_transpose(&t, x, NULL), MXP_OK);
    mxp_slice s[2] = { { MXP_SLICE_NONE, MXP_SLICE_NONE, -2 }, { 3, 200, 1 } };
    assert_int_equal(mxp_array_slice(&v, t, 2, s), MXP_OK);
    check_roundtrip(t); /* 2-byte input, transposed */
    check_roundtrip(v);
    mxp_array_free(v);
    mxp_array_free(t);
    assert_int_equal(mxp_array_astype(&t, x, MXP_F64, NULL), MXP_OK);
    assert_int_equal(mxp_array_slice(&v, t, 2, s), MXP_OK);
    check_roundtrip(v); /* wide input, a strided view */
    mxp_array_free(v);
    mxp_array_free(t);
    mxp_array_free(x);
}

static void check_compare(const mxp_array *r, const mxp_array *t)
{
    mxp_compare_report got = { 0 }, want = { 0 };
    assert_int_equal(mxp_compare(r, t, &got), MXP_OK);
    assert_int_equal(ref_compare(r, t, &want), MXP_OK);
    assert_same_report(&got, &want);
}

static void test_compare_equals_the_reference_on_views_and_mismatches(void **state)
{
    (void)state;
    const int64_t shape[2] = { 300, 170 };
    mxp_array *r = NULL, *t = NULL, *rt = NULL, *tt = NULL;
    assert_int_equal(mxp_array_random_normal(&r, MXP_F32, 2, shape, 0, 1, 3), MXP_OK);
    assert_int_equal(mxp_array_random_normal(&t, MXP_F32, 2, shape, 0, 1, 4), MXP_OK);
    float *tv = mxp_array_data(t), *rv = mxp_array_data(r);
    for (int i = 0; i < 300 * 170; i++)
        tv[i] = i % 97 == 0 ? NAN : i % 89 == 0 ? INFINITY : rv[i] + 1e-3f * tv[i];
    rv[5000] = NAN;
    rv[7000] = -INFINITY;
    check_compare(r, t);
    assert_int_equal(mxp_array_transpose(&rt, r, NULL), MXP_OK);
    assert_int_equal(mxp_array_transpose(&tt, t, NULL), MXP_OK);
    check_compare(rt, tt);
    mxp_array_free(tt);
    assert_int_equal(mxp_array_astype(&tt, rt, MXP_BF16, NULL), MXP_OK); /* other dtypes, layouts */
    check_compare(rt, tt);
    mxp_array_free(r);
    mxp_array_free(t);
    mxp_array_free(rt);
    mxp_array_free(tt);
}

/* 600 000 distinct relative errors within one bucket of the first pass:
 * more than may be collected, so the percentiles take a counting pass on
 * the next 12 bits before the collecting one. */
static void test_compare_percentiles_that_need_three_passes(void **state)
{
    (void)state;
    const int64_t n = 600000;
    mxp_array *r = NULL, *t = NULL;
    assert_int_equal(mxp_array_ones(&r, MXP_F64, 1, &n), MXP_OK);
    assert_int_equal(mxp_array_empty(&t, MXP_F64, 1, &n), MXP_OK);
    double *tv = mxp_array_data(t);
    for (int64_t i = 0; i < n; i++)
        tv[i] = 1.0 + 0x1p-20 * (1.0 + (double)((i * 7919) % n) * 0x1p-27);
    check_compare(r, t);
    mxp_array_free(r);
    mxp_array_free(t);
}

/* Relative errors next to each histogram edge land where log10 says. */
static void test_compare_histogram_bins_next_to_their_edges(void **state)
{
    (void)state;
    enum { PER_EDGE = 2001 };
    const int64_t n = (MXP_COMPARE_BINS + 1) * PER_EDGE;
    mxp_array *r = NULL, *t = NULL;
    assert_int_equal(mxp_array_empty(&r, MXP_F64, 1, &n), MXP_OK);
    assert_int_equal(mxp_array_empty(&t, MXP_F64, 1, &n), MXP_OK);
    double *rv = mxp_array_data(r), *tv = mxp_array_data(t);
    for (int i = 0; i <= MXP_COMPARE_BINS; i++) {
        const double edge = pow(10.0, -12.0 + 15.0 * i / MXP_COMPARE_BINS);
        for (int k = 0; k < PER_EDGE; k++) {
            const int64_t j = (int64_t)i * PER_EDGE + k;
            rv[j] = 1.0 + (double)k * 0x1p-12;
            tv[j] = rv[j] * (1.0 + edge * (1.0 + (k - PER_EDGE / 2) * 1e-7));
        }
    }
    check_compare(r, t);
    mxp_array_free(r);
    mxp_array_free(t);
}

/* Peak bytes over the input's own, for a round trip of x through the six
 * advisor candidates and a compare of x with itself: a few MiB, where the
 * whole-array code held three float64 copies and all the errors. */
static uint64_t analysis_peak(const mxp_array *x)
{
    mxp_memory_stats before = { 0 }, after = { 0 };
    mxp_roundtrip_row rows[MXP_ADVISOR_CANDIDATES] = { 0 };
    mxp_compare_report rep = { 0 };
    mxp_memory_stats_get(&before);
    mxp_memory_stats_reset();
    assert_int_equal(mxp_roundtrip_analysis(x, mxp_advisor_candidates(), MXP_ADVISOR_CANDIDATES, rows), MXP_OK);
    assert_int_equal(mxp_compare(x, x, &rep), MXP_OK);
    mxp_memory_stats_get(&after);
    assert_int_equal(after.current_bytes, before.current_bytes);
    return after.peak_bytes - before.current_bytes;
}

static void test_analysis_memory_does_not_grow_with_the_input(void **state)
{
    (void)state;
    mxp_array *u8 = random_bits(MXP_U8, 2 << 20, 5), *f32 = NULL;
    const int64_t n = 1 << 20;
    assert_int_equal(mxp_array_random_normal(&f32, MXP_F32, 1, &n, 0, 1, 6), MXP_OK);
    const uint64_t limit = 16u << 20; /* about 11 MiB now; the old code: 50 MiB and 28 MiB */
    uint64_t peak = analysis_peak(u8);
    if (peak > limit)
        fail_msg("uint8, 2 Mi elements: peak %llu bytes", (unsigned long long)peak);
    peak = analysis_peak(f32);
    if (peak > limit)
        fail_msg("float32, 1 Mi elements: peak %llu bytes", (unsigned long long)peak);
    mxp_array_free(u8);
    mxp_array_free(f32);
}

/* Small inputs are analysed element by element with buffers of their own
 * size (issue 24 item 12: 256 elements cost a 1.5 MiB table cleared per
 * call, 1.2 ms): the same reports as the reference at every size around
 * the switches (1-byte inputs at 256 patterns, 2-byte at 65536, the
 * select's collect-at-once limit 65536, the chunk 16384), and a small
 * analysis holds a few KiB, not MiB. */
static void test_small_inputs_equal_the_reference_and_allocate_little(void **state)
{
    (void)state;
    static const int64_t sizes[] = { 1, 2, 3, 255, 256, 257, 1000, 16383, 16385, 65535, 65536, 65537 };
    static const mxp_dtype types[] = { MXP_U8, MXP_E4M3, MXP_BF16, MXP_F16, MXP_F32 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (size_t j = 0; j < sizeof types / sizeof types[0]; j++) {
            if (sizes[i] > 4096 && types[j] != MXP_BF16 && types[j] != MXP_U8)
                continue; /* the big sizes once per pattern count */
            mxp_array *x = random_bits(types[j], sizes[i], (uint64_t)(i * 31 + j));
            check_roundtrip(x);
            mxp_array *y = random_bits(types[j], sizes[i], (uint64_t)(i * 31 + j + 1000));
            check_compare(x, y);
            mxp_array_free(y);
            mxp_array_free(x);
        }
    }
    const int64_t n = 256;
    mxp_array *x = NULL;
    assert_int_equal(mxp_array_random_normal(&x, MXP_F32, 1, &n, 0, 1, 9), MXP_OK);
    uint64_t peak = analysis_peak(x);
    if (peak > (64u << 10))
        fail_msg("float32, 256 elements: peak %llu bytes (want under 64 KiB)", (unsigned long long)peak);
    mxp_array_free(x);
    mxp_array *b = random_bits(MXP_BF16, 256, 10);
    peak = analysis_peak(b);
    if (peak > (64u << 10))
        fail_msg("bfloat16, 256 elements: peak %llu bytes (want under 64 KiB)", (unsigned long long)peak);
    mxp_array_free(b);
}

static mxp_array *workload_u8, *workload_f32;

static mxp_status analysis_workload(void)
{
    mxp_roundtrip_row rows[MXP_ADVISOR_CANDIDATES] = { 0 };
    mxp_compare_report rep = { 0 };
    mxp_advice adv = { 0 };
    const mxp_requirement req = { MXP_REQUIRE_MIN_PSNR, 40 };
    mxp_status st = mxp_roundtrip_analysis(workload_u8, mxp_advisor_candidates(), MXP_ADVISOR_CANDIDATES, rows);
    if (st == MXP_OK)
        st = mxp_recommend_dtype_rows(workload_f32, &req, &adv, rows);
    if (st == MXP_OK)
        st = mxp_compare(workload_f32, workload_u8, &rep);
    return st;
}

static void test_every_allocation_failure_in_the_analysis_is_reported(void **state)
{
    (void)state;
    const int64_t n = 1000;
    workload_u8 = random_bits(MXP_U8, n, 7);
    assert_int_equal(mxp_array_random_normal(&workload_f32, MXP_F32, 1, &n, 0, 1, 8), MXP_OK);
    assert_true(check_every_allocation_failure(analysis_workload) >= 10);
    mxp_array_free(workload_u8);
    mxp_array_free(workload_f32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_equals_the_reference_for_every_input_dtype),
        cmocka_unit_test(test_roundtrip_equals_the_reference_on_ordinary_data_ties_and_views),
        cmocka_unit_test(test_compare_equals_the_reference_on_views_and_mismatches),
        cmocka_unit_test(test_compare_percentiles_that_need_three_passes),
        cmocka_unit_test(test_compare_histogram_bins_next_to_their_edges),
        cmocka_unit_test(test_analysis_memory_does_not_grow_with_the_input),
        cmocka_unit_test(test_small_inputs_equal_the_reference_and_allocate_little),
        cmocka_unit_test(test_every_allocation_failure_in_the_analysis_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

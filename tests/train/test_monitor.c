/* The stability monitor: counts on hand-picked values at every rounding
 * boundary of float16 and float8_e4m3fn, and on random data against what
 * mxp_convert actually does in float16, bfloat16, e4m3 and e5m2; norms;
 * flags (overflow, underflow, non-finite, exploding, vanishing); the
 * history and its limit; dtype suggestions; the text and JSON reports; bad
 * input. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static mxp_array *f64_array(const double *v, int64_t n)
{
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_empty(&a, MXP_F64, 1, &n), MXP_OK);
    memcpy(mxp_array_data(a), v, (size_t)n * sizeof *v);
    return a;
}

static mxp_monitor *monitor(mxp_dtype target)
{
    mxp_monitor_opts o = { .target = target };
    mxp_monitor *m = NULL;
    assert_int_equal(mxp_monitor_create(&m, &o), MXP_OK);
    return m;
}

/* float16: overflow from 65520 (the tie goes to 65536 = inf), flush to zero
 * up to 2^-25 (the tie goes to 0), subnormal below 2^-14 - 2^-25. */
static void test_monitor_counts_at_float16_boundaries(void **state)
{
    (void)state;
    const double v[] = { NAN, INFINITY, -INFINITY, 0.0, -0.0, 70000, 65519.99, 65520, -65520, 0x1p-25, 1e-8,
                         0x1p-25 * (1 + 0x1p-20), 1e-5, 0x1p-14 - 0x1p-25, 1.0, -3.0 };
    const int64_t n = sizeof v / sizeof v[0];
    mxp_array *a = f64_array(v, n);
    mxp_monitor *m = monitor(0); /* default target: float16 */
    mxp_tensor_stats s = { 0 };
    assert_int_equal(mxp_monitor_record(m, 7, "act", MXP_ROLE_ACTIVATION, a, &s), MXP_OK);
    assert_int_equal(s.step, 7);
    assert_int_equal(s.count, n);
    assert_int_equal(s.nan, 1);
    assert_int_equal(s.inf, 2);
    assert_int_equal(s.zeros, 2);
    assert_int_equal(s.overflow, 3);
    assert_int_equal(s.underflow, 2);
    assert_int_equal(s.subnormal, 2);
    assert_true(s.max_abs == 70000 && s.min_abs == 1e-8);
    assert_true(s.overflow_share == 3.0 / 13 && s.underflow_share == 2.0 / 11);
    double sq = 0, flushed = 0x1p-50 + 1e-16;
    for (int64_t i = 0; i < n; i++)
        sq += isfinite(v[i]) ? v[i] * v[i] : 0;
    assert_true(fabs(s.norm - sqrt(sq)) <= 1e-15 * sqrt(sq));
    assert_true(fabs(s.underflow_norm_share - flushed / sq) <= 1e-12 * flushed / sq);
    assert_int_equal(s.flags, MXP_MONITOR_NONFINITE | MXP_MONITOR_OVERFLOW | MXP_MONITOR_UNDERFLOW);
    assert_int_equal(mxp_monitor_target(m), MXP_F16);
    mxp_array_free(a);
    mxp_monitor_free(m);
}

/* float8_e4m3fn: 464 (max 448 + half an ulp) rounds to even = 448, 465 is
 * NaN; 2^-10 (half of 2^-9) flushes. */
static void test_monitor_counts_at_e4m3_boundaries(void **state)
{
    (void)state;
    const double v[] = { 448, 464, 465, -500, 0x1p-10, 0x1p-10 * 1.01, 0.014, 0.0156250 };
    mxp_array *a = f64_array(v, 8);
    mxp_monitor *m = monitor(MXP_E4M3);
    mxp_tensor_stats s = { 0 };
    assert_int_equal(mxp_monitor_record(m, 0, "w", MXP_ROLE_WEIGHT, a, &s), MXP_OK);
    assert_int_equal(s.overflow, 2);
    assert_int_equal(s.underflow, 1);
    assert_int_equal(s.subnormal, 2); /* 2^-10 * 1.01 and 0.014 (below 7 * 2^-9 + 2^-10); 2^-6 is normal */
    mxp_array_free(a);
    mxp_monitor_free(m);
}

/* Random float32 values over 2^-40 .. 2^20 (and their negatives): the
 * counts equal what converting them to the target gives. */
static void test_monitor_counts_match_conversion(void **state)
{
    (void)state;
    enum { N = 20000 };
    static float x[N];
    uint64_t seed = 99;
    for (int i = 0; i < N; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const double e = (double)(seed >> 11) * 0x1p-53 * 60.0 - 40.0;
        x[i] = (float)((seed & 1 ? -1 : 1) * exp2(e));
    }
    const int64_t n = N;
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_empty(&a, MXP_F32, 1, &n), MXP_OK);
    memcpy(mxp_array_data(a), x, sizeof x);
    const mxp_dtype targets[] = { MXP_F16, MXP_BF16, MXP_E4M3, MXP_E5M2 };
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        const mxp_dtype_traits *tr = mxp_dtype_get_traits(targets[t]);
        mxp_monitor *m = monitor(targets[t]);
        mxp_tensor_stats s = { 0 };
        assert_int_equal(mxp_monitor_record(m, 0, "g", MXP_ROLE_GRADIENT, a, &s), MXP_OK);
        int64_t over = 0, flush = 0, sub = 0;
        for (int i = 0; i < N; i++) {
            uint8_t bits[2];
            double y;
            assert_int_equal(mxp_convert(bits, targets[t], &x[i], MXP_F32, 1, NULL), MXP_OK);
            assert_int_equal(mxp_convert(&y, MXP_F64, bits, targets[t], 1, NULL), MXP_OK);
            over += !isfinite(y);
            flush += y == 0;
            sub += y != 0 && fabs(y) < tr->min_normal;
        }
        assert_int_equal(s.overflow, over);
        assert_int_equal(s.underflow, flush);
        assert_int_equal(s.subnormal, sub);
        assert_true(over > 0 || targets[t] == MXP_BF16);
        assert_true(flush > 0 || targets[t] == MXP_BF16);
        mxp_monitor_free(m);
    }
    mxp_array_free(a);
}

/* Any layout: a transposed view gives the same record as its copy. */
static void test_monitor_reads_any_layout(void **state)
{
    (void)state;
    const int64_t shape[2] = { 30, 7 };
    mxp_array *a = NULL, *t = NULL, *c = NULL;
    assert_int_equal(mxp_array_random_normal(&a, MXP_BF16, 2, shape, 0, 100, 4), MXP_OK);
    assert_int_equal(mxp_array_transpose(&t, a, NULL), MXP_OK);
    assert_int_equal(mxp_array_ascontiguous(&c, t, 'C'), MXP_OK);
    mxp_monitor *m = monitor(0);
    mxp_tensor_stats s1 = { 0 }, s2 = { 0 };
    assert_int_equal(mxp_monitor_record(m, 0, "t", MXP_ROLE_WEIGHT, t, &s1), MXP_OK);
    assert_int_equal(mxp_monitor_record(m, 0, "c", MXP_ROLE_WEIGHT, c, &s2), MXP_OK);
    assert_true(s1.norm == s2.norm && s1.max_abs == s2.max_abs && s1.count == 210);
    mxp_array_free(a);
    mxp_array_free(t);
    mxp_array_free(c);
    mxp_monitor_free(m);
}

static mxp_tensor_stats record_value(mxp_monitor *m, int64_t step, const char *name, mxp_tensor_role role, double v)
{
    double values[4] = { v, -v, v, -v };
    mxp_array *a = f64_array(values, 4);
    mxp_tensor_stats s = { 0 };
    assert_int_equal(mxp_monitor_record(m, step, name, role, a, &s), MXP_OK);
    mxp_array_free(a);
    return s;
}

/* Gradients: exploding above exploding_norm or 100x the previous record;
 * vanishing below vanishing_norm (0 included); weights get neither. */
static void test_monitor_flags_exploding_and_vanishing_gradients(void **state)
{
    (void)state;
    mxp_monitor *m = monitor(MXP_F32);
    assert_int_equal(record_value(m, 0, "g", MXP_ROLE_GRADIENT, 1.0).flags, 0);
    assert_int_equal(record_value(m, 1, "g", MXP_ROLE_GRADIENT, 150.0).flags, MXP_MONITOR_EXPLODING);
    assert_int_equal(record_value(m, 2, "g", MXP_ROLE_GRADIENT, 160.0).flags, 0);
    assert_int_equal(record_value(m, 3, "g", MXP_ROLE_GRADIENT, 1e5).flags, MXP_MONITOR_EXPLODING);
    assert_int_equal(record_value(m, 4, "g", MXP_ROLE_GRADIENT, 1e-9).flags, MXP_MONITOR_VANISHING);
    assert_int_equal(record_value(m, 5, "g", MXP_ROLE_GRADIENT, 0.0).flags, MXP_MONITOR_VANISHING);
    assert_int_equal(record_value(m, 6, "w", MXP_ROLE_WEIGHT, 1e5).flags, 0);
    assert_int_equal(record_value(m, 7, "w", MXP_ROLE_WEIGHT, 0.0).flags, 0);
    assert_int_equal(mxp_monitor_flags(m), MXP_MONITOR_EXPLODING | MXP_MONITOR_VANISHING);
    const mxp_tensor_stats *h = NULL;
    size_t count = 0;
    assert_int_equal(mxp_monitor_history(m, "g", &h, &count), MXP_OK);
    assert_int_equal(count, 6);
    assert_int_equal(h[3].step, 3);
    assert_true(h[3].norm == 2e5);
    assert_int_equal(mxp_monitor_tensor_count(m), 2);
    assert_string_equal(mxp_monitor_tensor_name(m, 1), "w");
    assert_int_equal(mxp_monitor_tensor_role(m, 0), MXP_ROLE_GRADIENT);
    assert_null(mxp_monitor_tensor_name(m, 2));
    mxp_monitor_free(m);
}

/* max_history keeps the newest records. */
static void test_monitor_history_limit_keeps_the_newest(void **state)
{
    (void)state;
    mxp_monitor_opts o = { .max_history = 3 };
    mxp_monitor *m = NULL;
    assert_int_equal(mxp_monitor_create(&m, &o), MXP_OK);
    for (int64_t k = 0; k < 5; k++)
        record_value(m, 10 * k, "a", MXP_ROLE_ACTIVATION, k == 0 ? 1e6 : 1.0);
    const mxp_tensor_stats *h = NULL;
    size_t count = 0;
    assert_int_equal(mxp_monitor_history(m, "a", &h, &count), MXP_OK);
    assert_int_equal(count, 3);
    assert_int_equal(h[0].step, 20);
    assert_int_equal(h[2].step, 40);
    assert_int_equal(mxp_monitor_flags(m), 0); /* the overflowing record was dropped */
    mxp_monitor_free(m);
}

static mxp_dtype suggest(mxp_monitor *m, const char *name, char *reason)
{
    mxp_dtype dt = MXP_DTYPE_INVALID;
    assert_int_equal(mxp_monitor_suggest(m, name, &dt, reason, 256), MXP_OK);
    return dt;
}

/* float16 when the range fits with headroom and little flushes; bfloat16
 * for a large or tiny range; float32 beyond bfloat16 or with inf/NaN. */
static void test_monitor_suggests_dtypes_from_the_range(void **state)
{
    (void)state;
    mxp_monitor *m = monitor(0);
    char reason[256];
    record_value(m, 0, "small", MXP_ROLE_WEIGHT, 3.0);
    record_value(m, 1, "small", MXP_ROLE_WEIGHT, 0.01);
    assert_int_equal(suggest(m, "small", reason), MXP_F16);
    assert_non_null(strstr(reason, "float16 holds max |x| 3"));
    record_value(m, 0, "big", MXP_ROLE_ACTIVATION, 40000.0); /* fits float16, not with x2 headroom */
    assert_int_equal(suggest(m, "big", reason), MXP_BF16);
    assert_non_null(strstr(reason, "exceeds float16's 65504 with x2 headroom"));
    record_value(m, 0, "tiny", MXP_ROLE_GRADIENT, 1e-9);
    assert_int_equal(suggest(m, "tiny", reason), MXP_BF16);
    assert_non_null(strstr(reason, "100.00% of the values would flush to zero in float16"));
    record_value(m, 0, "huge", MXP_ROLE_ACTIVATION, 3e38);
    assert_int_equal(suggest(m, "huge", reason), MXP_F32);
    record_value(m, 0, "nan", MXP_ROLE_ACTIVATION, NAN);
    assert_int_equal(suggest(m, "nan", reason), MXP_F32);
    assert_non_null(strstr(reason, "inf/NaN"));
    mxp_monitor_free(m);
}

static void test_monitor_reports_text_and_json(void **state)
{
    (void)state;
    mxp_monitor *m = monitor(0);
    record_value(m, 0, "layer1.grad", MXP_ROLE_GRADIENT, 1e-9);
    record_value(m, 1, "layer1.grad", MXP_ROLE_GRADIENT, INFINITY);
    record_value(m, 0, "odd \"name\"", MXP_ROLE_WEIGHT, 2.0);
    char *text = NULL, *json = NULL;
    assert_int_equal(mxp_monitor_report(m, false, &text), MXP_OK);
    assert_int_equal(mxp_monitor_report(m, true, &json), MXP_OK);
    assert_non_null(strstr(text, "layer1.grad"));
    assert_non_null(strstr(text, "nonfinite,underflow,vanishing"));
    assert_non_null(strstr(json, "\"name\": \"odd \\\"name\\\"\""));
    assert_non_null(strstr(json, "\"flags\": [\"nonfinite\", \"underflow\", \"vanishing\"]"));
    assert_non_null(strstr(json, "\"suggest\": \"float32\""));
    assert_null(strstr(json, "inf,")); /* non-finite numbers are null */
    mxp_free(text);
    mxp_free(json);
    mxp_monitor_free(m);
}

static void expect_error(mxp_status got, mxp_status want)
{
    assert_int_equal(got, want);
    assert_true(strlen(mxp_last_error()) > 10);
    mxp_clear_error();
}

static void test_monitor_rejects_bad_input(void **state)
{
    (void)state;
    mxp_monitor *m = NULL;
    const mxp_monitor_opts bad[] = {
        { .target = MXP_S8 }, { .target = (mxp_dtype)77 }, { .overflow_share = 2 }, { .underflow_share = -1 },
        { .exploding_ratio = 0.5 }, { .headroom = 0.5 }, { .max_history = -1 }, { .vanishing_norm = NAN },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mxp_status st = mxp_monitor_create(&m, &bad[i]);
        assert_true(st == MXP_ERR_INVALID_ARGUMENT || st == MXP_ERR_INVALID_DTYPE);
        assert_null(m);
        mxp_clear_error();
    }
    m = monitor(0);
    const double v[2] = { 1, 2 };
    mxp_array *a = f64_array(v, 2), *b = NULL;
    const int64_t n = 2;
    assert_int_equal(mxp_array_zeros(&b, MXP_BOOL, 1, &n), MXP_OK);
    char long_name[80];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[79] = '\0';
    expect_error(mxp_monitor_record(m, 0, "", MXP_ROLE_WEIGHT, a, NULL), MXP_ERR_INVALID_ARGUMENT);
    expect_error(mxp_monitor_record(m, 0, long_name, MXP_ROLE_WEIGHT, a, NULL), MXP_ERR_INVALID_ARGUMENT);
    expect_error(mxp_monitor_record(m, 0, "x", MXP_ROLE_COUNT, a, NULL), MXP_ERR_INVALID_ARGUMENT);
    expect_error(mxp_monitor_record(m, 0, "x", MXP_ROLE_WEIGHT, b, NULL), MXP_ERR_INVALID_DTYPE);
    expect_error(mxp_monitor_record(m, 0, "x", MXP_ROLE_WEIGHT, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_monitor_record(m, 0, "x", MXP_ROLE_WEIGHT, a, NULL), MXP_OK);
    assert_int_equal(mxp_monitor_record(m, 1, "x", MXP_ROLE_GRADIENT, a, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "'x' was recorded as a weight, not a gradient"));
    mxp_dtype dt;
    const mxp_tensor_stats *h;
    size_t count;
    expect_error(mxp_monitor_suggest(m, "y", &dt, NULL, 0), MXP_ERR_INVALID_ARGUMENT);
    expect_error(mxp_monitor_history(m, "y", &h, &count), MXP_ERR_INVALID_ARGUMENT);
    expect_error(mxp_monitor_report(NULL, true, (char *[]){ NULL }), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_monitor_tensor_count(m), 1);
    assert_string_equal(mxp_monitor_flag_name(3), "invalid");
    assert_string_equal(mxp_tensor_role_name(MXP_ROLE_ACTIVATION), "activation");
    mxp_array_free(a);
    mxp_array_free(b);
    mxp_monitor_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_monitor_counts_at_float16_boundaries),
        cmocka_unit_test(test_monitor_counts_at_e4m3_boundaries),
        cmocka_unit_test(test_monitor_counts_match_conversion),
        cmocka_unit_test(test_monitor_reads_any_layout),
        cmocka_unit_test(test_monitor_flags_exploding_and_vanishing_gradients),
        cmocka_unit_test(test_monitor_history_limit_keeps_the_newest),
        cmocka_unit_test(test_monitor_suggests_dtypes_from_the_range),
        cmocka_unit_test(test_monitor_reports_text_and_json),
        cmocka_unit_test(test_monitor_rejects_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

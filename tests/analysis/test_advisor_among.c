/* The dtype advisor among any float formats: mxp_recommend_dtype_among and
 * mxp_advisor_candidates_all.  Exact choices and sentences on constructed
 * arrays (float4's values, float6's range, a value beyond every float8's,
 * equal bits decided by the metric), the rows in the caller's order, no
 * candidate meeting the requirement (the status, the sentence naming the
 * closest, advice and rows still filled), mxp_recommend_dtype's six given
 * to it (the same advice and rows as mxp_recommend_dtype_rows), float6
 * and float4's saturation counted as overflow, and bad input with the
 * exact status. */
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

#define ARRAY_F32(...) from_doubles((const double[]){ __VA_ARGS__ }, \
                                    (int64_t)(sizeof((const double[]){ __VA_ARGS__ }) / sizeof(double)), MXP_F32)

static const mxp_requirement psnr40 = { MXP_REQUIRE_MIN_PSNR, 40 };
static const mxp_requirement no_overflow = { MXP_REQUIRE_NO_OVERFLOW, 0 };

/* Every float storage format, smallest first; float8_e8m0fnu and the
 * integers left out. */
static void test_candidates_all(void **state)
{
    (void)state;
    static const mxp_dtype want[] = {
        MXP_FLOAT4_E2M1FN, MXP_FLOAT6_E2M3FN, MXP_FLOAT6_E3M2FN, MXP_FLOAT8_E4M3FN, MXP_FLOAT8_E4M3,
        MXP_FLOAT8_E4M3FNUZ, MXP_FLOAT8_E4M3B11FNUZ, MXP_FLOAT8_E5M2, MXP_FLOAT8_E5M2FNUZ, MXP_FLOAT8_E3M4,
        MXP_FLOAT16, MXP_BFLOAT16, MXP_FLOAT32, MXP_FLOAT64,
    };
    int n = -1;
    const mxp_dtype *all = mxp_advisor_candidates_all(&n);
    assert_int_equal(n, 14);
    assert_memory_equal(all, want, sizeof want);
    assert_ptr_equal(mxp_advisor_candidates_all(NULL), all);
    int floats = 0;
    for (int d = 1; d < MXP_DTYPE_COUNT; d++)
        floats += mxp_dtype_get_traits((mxp_dtype)d)->kind == MXP_KIND_FLOAT;
    assert_int_equal(n, floats - 1); /* every float but e8m0 */
    for (int i = 0; i < n; i++) {
        assert_int_equal(mxp_dtype_get_traits(all[i])->kind, MXP_KIND_FLOAT);
        assert_int_not_equal(all[i], MXP_FLOAT8_E8M0FNU);
        if (i)
            assert_true(mxp_dtype_get_traits(all[i - 1])->bits <= mxp_dtype_get_traits(all[i])->bits);
    }
}

/* Values float4_e2m1fn holds exactly: it wins, 4 bits, and the rows come in
 * the caller's order. */
static void test_float4_values(void **state)
{
    (void)state;
    mxp_array *x = ARRAY_F32(0, 0.5, 1, 1.5, 2, 3, 4, 6, -6, -0.5, -3, 0.5);
    int n = 0;
    const mxp_dtype *all = mxp_advisor_candidates_all(&n);
    mxp_advice adv = { 0 };
    mxp_roundtrip_row rows[14] = { 0 };
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, all, n, &adv, rows), MXP_OK);
    assert_int_equal(adv.dtype, MXP_FLOAT4_E2M1FN);
    assert_string_equal(adv.reason, "float4_e2m1fn holds the range with PSNR inf dB >= 40 dB");
    assert_int_equal(adv.row.dtype, MXP_FLOAT4_E2M1FN);
    assert_int_equal(adv.row.bytes, 6); /* 12 values of 4 bits, packed */
    for (int i = 0; i < n; i++)
        assert_int_equal(rows[i].dtype, all[i]);

    /* Any order: the smallest by bits still wins; rows as given. */
    const mxp_dtype shuffled[] = { MXP_F64, MXP_F16, MXP_FLOAT6_E3M2FN, MXP_FLOAT4_E2M1FN, MXP_E4M3 };
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, shuffled, 5, &adv, rows), MXP_OK);
    assert_int_equal(adv.dtype, MXP_FLOAT4_E2M1FN);
    for (int i = 0; i < 5; i++)
        assert_int_equal(rows[i].dtype, shuffled[i]);
    assert_true(isinf(rows[3].report.psnr_db) && rows[3].report.max_abs_error == 0);
    assert_memory_equal(&adv.row, &rows[3], sizeof adv.row);
    mxp_array_free(x);
}

/* Storage bits, not bytes: 1.25 costs float4 a little (PSNR 36.1 dB), so
 * with psnr>=30 the 4-bit format wins over the exact 6- and 8-bit ones,
 * all a byte per element in memory. */
static void test_bits_not_bytes(void **state)
{
    (void)state;
    mxp_array *x = ARRAY_F32(1, 2, 3, 4, 6, 0.5, 1.25);
    int n = 0;
    const mxp_dtype *all = mxp_advisor_candidates_all(&n);
    mxp_advice adv = { 0 };
    const mxp_requirement psnr30 = { MXP_REQUIRE_MIN_PSNR, 30 };
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr30, all, n, &adv, NULL), MXP_OK);
    assert_int_equal(adv.dtype, MXP_FLOAT4_E2M1FN);
    assert_string_equal(adv.reason, "float4_e2m1fn holds the range with PSNR 36.1 dB >= 30 dB");
    /* psnr>=40: float4 falls short, float6_e2m3fn is exact. */
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, all, n, &adv, NULL), MXP_OK);
    assert_int_equal(adv.dtype, MXP_FLOAT6_E2M3FN);
    assert_string_equal(adv.reason, "float4_e2m1fn's PSNR 36.1 dB < 40 dB; "
                                    "float6_e2m3fn holds the range with PSNR inf dB >= 40 dB");
    mxp_array_free(x);
}

/* Values up to 28: beyond float4's 6 and float6_e2m3fn's 7.5 (they
 * saturate: counted overflow), exact in float6_e3m2fn. */
static void test_float6_range(void **state)
{
    (void)state;
    mxp_array *x = ARRAY_F32(28, 24, 20, 16, 12, -10, 1, 0.5, 0.25, 1.5, 0);
    int n = 0;
    const mxp_dtype *all = mxp_advisor_candidates_all(&n);
    mxp_advice adv = { 0 };
    mxp_roundtrip_row rows[14] = { 0 };
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, all, n, &adv, rows), MXP_OK);
    assert_int_equal(adv.dtype, MXP_FLOAT6_E3M2FN);
    assert_string_equal(adv.reason, "max |x| = 28 exceeds float4_e2m1fn's 6, float6_e2m3fn's 7.5; "
                                    "float6_e3m2fn holds the range with PSNR inf dB >= 40 dB");
    assert_int_equal(rows[0].overflow, 6);   /* float4: 28 .. -10 (|x| >= 7) */
    assert_int_equal(rows[1].overflow, 6);   /* float6_e2m3fn: |x| >= 7.75 */
    assert_int_equal(rows[2].overflow, 0);
    assert_int_equal(mxp_recommend_dtype_among(x, &no_overflow, all, n, &adv, rows), MXP_OK);
    assert_int_equal(adv.dtype, MXP_FLOAT6_E3M2FN);
    assert_string_equal(adv.reason, "max |x| = 28 exceeds float4_e2m1fn's 6, float6_e2m3fn's 7.5; "
                                    "float6_e3m2fn holds the range (max |x| = 28) with PSNR inf dB");
    mxp_array_free(x);
}

/* 64000: beyond every float8's range (e5m2's 57344 overflows from 61440),
 * exact in float16 and bfloat16: float16, the first of the two at equal
 * metric.  The clauses follow the bits, equal bits in the caller's order. */
static void test_beyond_float8(void **state)
{
    (void)state;
    mxp_array *x = ARRAY_F32(64000, 1, -2, 0.5);
    const mxp_dtype cand[] = { MXP_F64, MXP_E5M2, MXP_F16, MXP_E4M3, MXP_BF16 };
    mxp_advice adv = { 0 };
    mxp_roundtrip_row rows[5] = { 0 };
    assert_int_equal(mxp_recommend_dtype_among(x, &no_overflow, cand, 5, &adv, rows), MXP_OK);
    assert_int_equal(adv.dtype, MXP_F16);
    assert_string_equal(adv.reason, "max |x| = 6.4e+04 exceeds float8_e5m2's 57344, float8_e4m3fn's 448; "
                                    "float16 holds the range (max |x| = 6.4e+04) with PSNR inf dB");
    for (int i = 0; i < 5; i++)
        assert_int_equal(rows[i].dtype, cand[i]);
    assert_int_equal(rows[1].overflow, 1);
    assert_int_equal(rows[3].overflow, 1);

    /* Among all: 16 bits; the sentence keeps whole clauses within 255 characters. */
    int n = 0;
    const mxp_dtype *all = mxp_advisor_candidates_all(&n);
    assert_int_equal(mxp_recommend_dtype_among(x, &no_overflow, all, n, &adv, NULL), MXP_OK);
    assert_int_equal(adv.dtype, MXP_F16);
    assert_true(strlen(adv.reason) < sizeof adv.reason);
    const char *head = "max |x| = 6.4e+04 exceeds float4_e2m1fn's 6, float6_e2m3fn's 7.5, float6_e3m2fn's 28, "
                       "float8_e4m3fn's 448";
    const char *tail = "; float16 holds the range (max |x| = 6.4e+04) with PSNR inf dB";
    assert_memory_equal(adv.reason, head, strlen(head));
    assert_string_equal(adv.reason + strlen(adv.reason) - strlen(tail), tail);
    mxp_array_free(x);
}

/* Equal bits: the better metric among those that meet (the float8s on
 * normal data: the highest PSNR), as mxp_recommend_dtype does. */
static void test_equal_bits_better_metric(void **state)
{
    (void)state;
    int64_t len = 10000;
    mxp_array *x = NULL;
    assert_int_equal(mxp_array_random_normal(&x, MXP_F64, 1, &len, 0.0, 1.0, 7), MXP_OK);
    int n = 0;
    const mxp_dtype *all = mxp_advisor_candidates_all(&n);
    mxp_advice adv = { 0 };
    mxp_roundtrip_row rows[14] = { 0 };
    const mxp_requirement psnr42 = { MXP_REQUIRE_MIN_PSNR, 42 };
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr42, all, n, &adv, rows), MXP_OK);
    int best = -1;
    for (int i = 0; i < n; i++) {
        assert_true(i < 3 ? rows[i].report.psnr_db < 42 : true); /* float4 and float6 fall short */
        if (mxp_dtype_get_traits(all[i])->bits == 8 && rows[i].report.psnr_db >= 42 &&
            (best < 0 || rows[i].report.psnr_db > rows[best].report.psnr_db))
            best = i;
    }
    assert_true(best >= 0);
    assert_int_equal(adv.dtype, all[best]);
    assert_int_equal(adv.dtype, MXP_FLOAT8_E3M4); /* 4 significand bits: the best 8-bit PSNR on N(0, 1) */
    char want[64];
    snprintf(want, sizeof want, "float8_e3m4 holds the range with PSNR %.1f dB >= 42 dB", rows[best].report.psnr_db);
    assert_non_null(strstr(adv.reason, want));
    assert_non_null(strstr(adv.reason, "float4_e2m1fn's PSNR"));
    /* max rel error: the better metric is the lower max rel error. */
    const mxp_requirement rel = { MXP_REQUIRE_MAX_REL_ERROR, 0.07 };
    assert_int_equal(mxp_recommend_dtype_among(x, &rel, all, n, &adv, rows), MXP_OK);
    best = -1;
    for (int i = 0; i < n && best < 0; i++) {
        const int bits = mxp_dtype_get_traits(all[i])->bits;
        for (int j = i; j < n && mxp_dtype_get_traits(all[j])->bits == bits; j++) {
            if (rows[j].overflow == 0 && rows[j].nan == 0 && rows[j].report.max_rel_error <= 0.07 &&
                (best < 0 || rows[j].report.max_rel_error < rows[best].report.max_rel_error))
                best = j;
        }
        while (i + 1 < n && mxp_dtype_get_traits(all[i + 1])->bits == bits)
            i++;
    }
    assert_int_equal(adv.dtype, all[best]);
    mxp_array_free(x);
}

/* None of the candidates meets req: MXP_ERR_INVALID_ARGUMENT, advice filled
 * with MXP_DTYPE_INVALID and the closest's row, every row filled, and the
 * sentence (why each fell short, then the closest) in mxp_last_error(). */
static void test_none_meets(void **state)
{
    (void)state;
    int64_t len = 10000;
    mxp_array *x = NULL;
    assert_int_equal(mxp_array_random_normal(&x, MXP_F64, 1, &len, 0.0, 1.0, 7), MXP_OK);
    const mxp_dtype cand[] = { MXP_E5M2, MXP_FLOAT4_E2M1FN };
    mxp_advice adv = { 0 };
    mxp_roundtrip_row rows[2] = { 0 };
    const mxp_requirement psnr60 = { MXP_REQUIRE_MIN_PSNR, 60 };
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr60, cand, 2, &adv, rows), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(adv.dtype, MXP_DTYPE_INVALID);
    assert_int_equal(rows[0].dtype, MXP_E5M2);
    assert_int_equal(rows[1].dtype, MXP_FLOAT4_E2M1FN);
    assert_memory_equal(&adv.row, &rows[0], sizeof adv.row); /* the closest: e5m2's PSNR is higher */
    char want[256], err[300];
    snprintf(want, sizeof want,
             "float4_e2m1fn's PSNR %.1f dB < 60 dB; float8_e5m2's PSNR %.1f dB < 60 dB; "
             "no candidate meets PSNR >= 60 dB; the closest is float8_e5m2 (PSNR %.1f dB)",
             rows[1].report.psnr_db, rows[0].report.psnr_db, rows[0].report.psnr_db);
    assert_string_equal(adv.reason, want);
    snprintf(err, sizeof err, "recommend dtype: %s", want);
    assert_string_equal(mxp_last_error(), err);

    /* max rel error: the closest is the lowest. */
    const mxp_requirement rel = { MXP_REQUIRE_MAX_REL_ERROR, 1e-6 };
    assert_int_equal(mxp_recommend_dtype_among(x, &rel, cand, 2, &adv, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(adv.dtype, MXP_DTYPE_INVALID);
    assert_non_null(strstr(adv.reason, "no candidate meets max rel error <= 1e-06; the closest is float8_e5m2 ("));
    assert_non_null(strstr(adv.reason, "float4_e2m1fn's max rel error "));
    mxp_array_free(x);

    /* Saturating formats: overflow without inf or NaN; the closest loses
     * as many values and has the better PSNR. */
    x = ARRAY_F32(1000, 100, 1, 0.5);
    const mxp_dtype small[] = { MXP_FLOAT6_E2M3FN, MXP_FLOAT4_E2M1FN };
    assert_int_equal(mxp_recommend_dtype_among(x, &no_overflow, small, 2, &adv, rows), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(adv.dtype, MXP_DTYPE_INVALID);
    assert_string_equal(adv.reason, "max |x| = 1e+03 exceeds float4_e2m1fn's 6, float6_e2m3fn's 7.5; "
                                    "no candidate holds the range (max |x| = 1e+03); "
                                    "the closest is float6_e2m3fn (2 values overflow or turn into NaN)");
    assert_int_equal(adv.row.dtype, MXP_FLOAT6_E2M3FN);
    assert_int_equal(rows[0].overflow, 2);
    assert_int_equal(rows[1].overflow, 2);

    /* float8_e4m3fn's overflow is NaN: the fewer values lost is closer. */
    mxp_array_free(x);
    x = ARRAY_F32(1000, 500, 300, 1);
    const mxp_dtype f8[] = { MXP_E4M3, MXP_FLOAT8_E4M3B11FNUZ };
    assert_int_equal(mxp_recommend_dtype_among(x, &no_overflow, f8, 2, &adv, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_string_equal(adv.reason, "max |x| = 1e+03 exceeds float8_e4m3fn's 448, float8_e4m3b11fnuz's 30; "
                                    "no candidate holds the range (max |x| = 1e+03); "
                                    "the closest is float8_e4m3fn (2 values overflow or turn into NaN)");
    mxp_array_free(x);
}

/* mxp_recommend_dtype's six given to it: the same advice and rows, byte
 * for byte; float8_e8m0fnu may be given by name (powers of two). */
static void test_six_and_e8m0(void **state)
{
    (void)state;
    int64_t len = 3000;
    mxp_array *x = NULL;
    assert_int_equal(mxp_array_random_normal(&x, MXP_F32, 1, &len, 0.0, 1.0, 3), MXP_OK);
    float *v = mxp_array_data(x);
    v[7] = 1.2e5f;
    const mxp_requirement reqs[] = { { MXP_REQUIRE_MIN_PSNR, 40 }, { MXP_REQUIRE_MIN_PSNR, 20 },
                                     { MXP_REQUIRE_MAX_REL_ERROR, 1e-3 }, { MXP_REQUIRE_NO_OVERFLOW, 0 } };
    for (int k = 0; k < 4; k++) {
        mxp_advice a = { 0 }, b = { 0 };
        mxp_roundtrip_row ra[MXP_ADVISOR_CANDIDATES] = { 0 }, rb[MXP_ADVISOR_CANDIDATES] = { 0 };
        assert_int_equal(mxp_recommend_dtype_rows(x, &reqs[k], &a, ra), MXP_OK);
        assert_int_equal(mxp_recommend_dtype_among(x, &reqs[k], mxp_advisor_candidates(), MXP_ADVISOR_CANDIDATES,
                                                   &b, rb), MXP_OK);
        assert_memory_equal(&a, &b, sizeof a);
        assert_memory_equal(ra, rb, sizeof ra);
    }
    mxp_array_free(x);

    x = ARRAY_F32(0.25, 4, 1, 1024);
    const mxp_dtype cand[] = { MXP_F32, MXP_FLOAT8_E8M0FNU };
    mxp_advice adv = { 0 };
    assert_int_equal(mxp_recommend_dtype_among(x, &no_overflow, cand, 2, &adv, NULL), MXP_OK);
    assert_int_equal(adv.dtype, MXP_FLOAT8_E8M0FNU);
    mxp_array_free(x);
}

/* float6 and float4 have neither inf nor NaN: a finite value that IEEE
 * rounding would take beyond max saturates, and the row counts it as
 * overflow, exactly where the converter's overflow flag says so (max plus
 * half an ulp, the tie included); below that it is rounding. */
static void test_saturation_is_overflow(void **state)
{
    (void)state;
    static const struct {
        mxp_dtype dt;
        double below, at; /* the largest value tried that rounds to max; the threshold */
    } cases[] = {
        { MXP_FLOAT4_E2M1FN, 6.999, 7 },
        { MXP_FLOAT6_E2M3FN, 7.749, 7.75 },
        { MXP_FLOAT6_E3M2FN, 29.99, 30 },
    };
    for (int i = 0; i < 3; i++) {
        const double v[] = { 1, cases[i].below, -cases[i].below, cases[i].at, -cases[i].at, 1e30 };
        mxp_array *x = from_doubles(v, 6, MXP_F64);
        mxp_roundtrip_row row = { 0 };
        assert_int_equal(mxp_roundtrip_analysis(x, &cases[i].dt, 1, &row), MXP_OK);
        assert_int_equal(row.overflow, 3);
        assert_int_equal(row.nan, 0);
        mxp_convert_flags flags = { 0 };
        const mxp_convert_opts opts = { .flags = &flags };
        uint8_t out[6];
        assert_int_equal(mxp_convert(out, cases[i].dt, v, MXP_F64, 6, &opts), MXP_OK);
        assert_int_equal(flags.overflow, 3);
        mxp_array_free(x);
    }
}

static void test_bad_input(void **state)
{
    (void)state;
    mxp_array *x = ARRAY_F32(1, 2, 3), *e = NULL;
    int64_t zero = 0;
    assert_int_equal(mxp_array_empty(&e, MXP_F32, 1, &zero), MXP_OK);
    const mxp_dtype ok[] = { MXP_F16, MXP_F32 };
    mxp_advice adv = { 0 };
    mxp_roundtrip_row rows[2] = { 0 };
    assert_int_equal(mxp_recommend_dtype_among(NULL, &psnr40, ok, 2, &adv, rows), MXP_ERR_INVALID_ARGUMENT);
    assert_string_equal(mxp_last_error(), "recommend dtype: array is NULL");
    assert_int_equal(mxp_recommend_dtype_among(x, NULL, ok, 2, &adv, rows), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, ok, 2, NULL, rows), MXP_ERR_INVALID_ARGUMENT);
    assert_string_equal(mxp_last_error(), "recommend dtype: requirement or advice is NULL");
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, NULL, 2, &adv, rows), MXP_ERR_INVALID_ARGUMENT);
    assert_string_equal(mxp_last_error(), "recommend dtype: candidates is NULL");
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, ok, 0, &adv, rows), MXP_ERR_INVALID_ARGUMENT);
    assert_string_equal(mxp_last_error(), "recommend dtype: 0 candidates, not 1 to 64");
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, ok, -1, &adv, rows), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, ok, MXP_ADVISOR_MAX_CANDIDATES + 1, &adv, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_string_equal(mxp_last_error(), "recommend dtype: 65 candidates, not 1 to 64");

    const mxp_dtype with_int[] = { MXP_F16, MXP_INT8 };
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, with_int, 2, &adv, rows), MXP_ERR_INVALID_DTYPE);
    assert_string_equal(mxp_last_error(), "recommend dtype: candidate 1 (int8) is not a float dtype: the advisor "
                                          "measures float storage formats (integers are quantization's, mxp/quant.h)");
    const mxp_dtype int4[] = { MXP_INT4 };
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, int4, 1, &adv, rows), MXP_ERR_INVALID_DTYPE);
    const mxp_dtype boolean[] = { MXP_BOOL };
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, boolean, 1, &adv, rows), MXP_ERR_INVALID_DTYPE);
    const mxp_dtype invalid[] = { MXP_F16, (mxp_dtype)99 };
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, invalid, 2, &adv, rows), MXP_ERR_INVALID_DTYPE);
    assert_string_equal(mxp_last_error(), "recommend dtype: candidate 1 (dtype 99) is not a dtype");
    const mxp_dtype zero_dt[] = { MXP_DTYPE_INVALID };
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, zero_dt, 1, &adv, rows), MXP_ERR_INVALID_DTYPE);
    const mxp_dtype twice[] = { MXP_F16, MXP_F32, MXP_FLOAT16 };
    mxp_roundtrip_row rows3[3] = { 0 };
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, twice, 3, &adv, rows3), MXP_ERR_INVALID_ARGUMENT);
    assert_string_equal(mxp_last_error(), "recommend dtype: candidate 2 (float16) repeats candidate 0");

    const mxp_requirement nan_psnr = { MXP_REQUIRE_MIN_PSNR, NAN }, bad_kind = { (mxp_requirement_kind)42, 1 };
    assert_int_equal(mxp_recommend_dtype_among(x, &nan_psnr, ok, 2, &adv, rows), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_recommend_dtype_among(x, &bad_kind, ok, 2, &adv, rows), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_recommend_dtype_among(e, &psnr40, ok, 2, &adv, rows), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "empty"));

    /* Nothing written on a refused call. */
    mxp_advice untouched;
    memset(&untouched, 0, sizeof untouched);
    untouched.dtype = MXP_F64;
    memcpy(&adv, &untouched, sizeof adv);
    assert_int_equal(mxp_recommend_dtype_among(x, &psnr40, with_int, 2, &adv, NULL), MXP_ERR_INVALID_DTYPE);
    assert_memory_equal(&adv, &untouched, sizeof adv);
    mxp_array_free(x);
    mxp_array_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_candidates_all),
        cmocka_unit_test(test_float4_values),
        cmocka_unit_test(test_bits_not_bytes),
        cmocka_unit_test(test_float6_range),
        cmocka_unit_test(test_beyond_float8),
        cmocka_unit_test(test_equal_bits_better_metric),
        cmocka_unit_test(test_none_meets),
        cmocka_unit_test(test_six_and_e8m0),
        cmocka_unit_test(test_saturation_is_overflow),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

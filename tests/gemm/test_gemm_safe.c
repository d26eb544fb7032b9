/* mxp_gemm_safe: the overflow bound, and refusing, clipping, scaling or
 * promoting when a float16 C cannot hold the product. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

enum { M = 3, N = 5, K = 64 };

static uint16_t a16[M * K], b16[K * N];

/* A, B float16 of 200 (row 1 of A: -200): every sum is +-2.56e6 > 65504. */
static void fill_200(void)
{
    for (int i = 0; i < M * K; i++)
        a16[i] = mxp_f32_to_f16(i / K == 1 ? -200.0f : 200.0f);
    for (int i = 0; i < K * N; i++)
        b16[i] = mxp_f32_to_f16(200.0f);
}

static void fill_c(uint16_t *c, size_t count, float v)
{
    for (size_t i = 0; i < count; i++)
        c[i] = mxp_f32_to_f16(v);
}

static mxp_status safe16(uint16_t *c, double beta, mxp_overflow_strategy s, mxp_gemm_safe_report *r)
{
    mxp_gemm_safe_opts so = { .strategy = s };
    return mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a16, MXP_F16, K, b16, MXP_F16, N, beta, c, MXP_F16,
                         N, NULL, &so, r);
}

static void test_refuse_says_why_and_leaves_c(void **state)
{
    (void)state;
    fill_200();
    uint16_t c[M * N], keep[M * N];
    fill_c(c, M * N, 3.0f);
    memcpy(keep, c, sizeof c);
    mxp_gemm_safe_report r = { 0 };
    assert_int_equal(safe16(c, 0.0, MXP_OVERFLOW_STRATEGY_REFUSE, &r), MXP_ERR_SIZE_OVERFLOW);
    assert_memory_equal(c, keep, sizeof c);
    assert_true(r.at_risk);
    assert_int_equal(r.applied, MXP_OVERFLOW_STRATEGY_REFUSE);
    assert_true(r.bound == 2560000.0);
    assert_true(r.c_max == 65504.0);
    assert_true(r.max_abs_a == 200.0 && r.max_abs_b == 200.0);
    assert_non_null(strstr(mxp_last_error(), "choose a strategy"));
    assert_non_null(strstr(mxp_last_error(), "65504"));
    assert_non_null(strstr(r.what, "2.56e+06"));
}

static void test_clip_saturates_to_float16_max(void **state)
{
    (void)state;
    fill_200();
    uint16_t c[M * N];
    fill_c(c, M * N, 0.0f);
    mxp_gemm_safe_report r = { 0 };
    assert_int_equal(safe16(c, 0.0, MXP_OVERFLOW_STRATEGY_CLIP, &r), MXP_OK);
    assert_true(r.at_risk);
    assert_int_equal(r.applied, MXP_OVERFLOW_STRATEGY_CLIP);
    for (int i = 0; i < M * N; i++)
        assert_true(mxp_f16_to_f32(c[i]) == (i / N == 1 ? -65504.0f : 65504.0f));
    /* An infinite input: clipped too. */
    a16[0] = mxp_f32_to_f16(INFINITY);
    assert_int_equal(safe16(c, 0.0, MXP_OVERFLOW_STRATEGY_CLIP, &r), MXP_OK);
    assert_true(isinf(r.bound));
    for (int i = 0; i < M * N; i++)
        assert_true(mxp_f16_to_f32(c[i]) == (i / N == 1 ? -65504.0f : 65504.0f));
    a16[0] = mxp_f32_to_f16(200.0f);
    /* Plain mxp_gemm gives infinities here. */
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a16, MXP_F16, K, b16, MXP_F16, N, 0.0, c,
                              MXP_F16, N, NULL),
                     MXP_OK);
    assert_true(isinf(mxp_f16_to_f32(c[0])));
}

static void test_scale_by_a_power_of_two(void **state)
{
    (void)state;
    /* Varied values up to 200 so the rounding matters. */
    for (int i = 0; i < M * K; i++)
        a16[i] = mxp_f32_to_f16((float)((i * 37) % 201) - 1.0f + 0.25f * (float)(i % 3));
    for (int i = 0; i < K * N; i++)
        b16[i] = mxp_f32_to_f16((float)((i * 11) % 200) + 0.5f);
    uint16_t c[M * N], c0[M * N];
    float ref[M * N];
    fill_c(c, M * N, 1000.0f);
    memcpy(c0, c, sizeof c);
    const double beta = 2.0;
    for (int i = 0; i < M * N; i++)
        ref[i] = mxp_f16_to_f32(c0[i]);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a16, MXP_F16, K, b16, MXP_F16, N, beta, ref,
                              MXP_F32, N, NULL),
                     MXP_OK);
    mxp_gemm_safe_report r = { 0 };
    assert_int_equal(safe16(c, beta, MXP_OVERFLOW_STRATEGY_SCALE, &r), MXP_OK);
    assert_true(r.at_risk);
    assert_int_equal(r.applied, MXP_OVERFLOW_STRATEGY_SCALE);
    /* bound ~ 64 * 199.5 * 199.5 + 2 * 1000 = 2.55e6; 2^7 brings it under 65504 / 2. */
    assert_true(r.max_abs_a >= 199.0 && r.max_abs_a <= 199.5 && r.max_abs_b == 199.5);
    assert_true(r.bound == 64.0 * r.max_abs_a * r.max_abs_b * 1.0 + 2.0 * 1000.0);
    assert_int_equal(r.scale_exponent, 7);
    assert_non_null(strstr(r.what, "2^-7"));
    for (int i = 0; i < M * N; i++) {
        assert_int_equal(c[i], mxp_f32_to_f16(ldexpf(ref[i], -7)));
        double back = ldexp(mxp_f16_to_f32(c[i]), 7);
        assert_true(fabs(back - ref[i]) <= fabs(ref[i]) * 0x1p-11);
    }
}

static void test_promote_writes_the_wider_matrix(void **state)
{
    (void)state;
    fill_200();
    enum { LDP = N + 3 };
    uint16_t c[M * N], keep[M * N];
    float p[M * LDP], ref[M * N];
    fill_c(c, M * N, 5.0f);
    memcpy(keep, c, sizeof c);
    for (int i = 0; i < M * LDP; i++)
        p[i] = -1.0f;
    for (int i = 0; i < M * N; i++)
        ref[i] = 5.0f;
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a16, MXP_F16, K, b16, MXP_F16, N, 1.0, ref,
                              MXP_F32, N, NULL),
                     MXP_OK);
    mxp_gemm_safe_opts so = { .strategy = MXP_OVERFLOW_STRATEGY_PROMOTE, .promote_to = p, .promote_dtype = MXP_F32,
                              .ldp = LDP };
    mxp_gemm_safe_report r = { 0 };
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a16, MXP_F16, K, b16, MXP_F16, N, 1.0, c,
                                   MXP_F16, N, NULL, &so, &r),
                     MXP_OK);
    assert_int_equal(r.applied, MXP_OVERFLOW_STRATEGY_PROMOTE);
    assert_memory_equal(c, keep, sizeof c);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < LDP; j++)
            assert_true(p[i * LDP + j] == (j < N ? ref[i * N + j] : -1.0f));
    /* A product beyond float32 too is refused. */
    float big[4] = { 3e38f, 3e38f, 3e38f, 3e38f };
    uint16_t cf[1] = { 0 };
    float pf[1] = { 7 };
    so = (mxp_gemm_safe_opts){ .strategy = MXP_OVERFLOW_STRATEGY_PROMOTE, .promote_to = pf, .promote_dtype = MXP_F32,
                               .ldp = 1 };
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, 1, 1, 4, 1.0, big, MXP_F32, 4, big, MXP_F32, 1, 0.0, cf,
                                   MXP_F16, 1, NULL, &so, &r),
                     MXP_ERR_SIZE_OVERFLOW);
    assert_true(pf[0] == 7.0f && cf[0] == 0);
}

static void test_no_risk_is_mxp_gemm_bit_for_bit(void **state)
{
    (void)state;
    for (int i = 0; i < M * K; i++)
        a16[i] = mxp_f32_to_f16((float)(i % 9) * 0.37f - 1.5f);
    for (int i = 0; i < K * N; i++)
        b16[i] = mxp_f32_to_f16((float)(i % 7) * 0.29f - 0.8f);
    for (int s = MXP_OVERFLOW_STRATEGY_NONE; s <= MXP_OVERFLOW_STRATEGY_PROMOTE; s++) {
        uint16_t c1[M * N], c2[M * N];
        for (int i = 0; i < M * N; i++)
            c1[i] = c2[i] = mxp_f32_to_f16((float)i * 0.1f);
        float p[M * N] = { 0 };
        mxp_gemm_safe_opts so = { .strategy = (mxp_overflow_strategy)s, .promote_to = p, .promote_dtype = MXP_F32,
                                  .ldp = N };
        mxp_gemm_safe_report r = { 0 };
        assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 0.75, a16, MXP_F16, K, b16, MXP_F16, N,
                                       -0.5, c1, MXP_F16, N, NULL, &so, &r),
                         MXP_OK);
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 0.75, a16, MXP_F16, K, b16, MXP_F16, N, -0.5, c2,
                                  MXP_F16, N, NULL),
                         MXP_OK);
        assert_memory_equal(c1, c2, sizeof c1);
        assert_false(r.at_risk);
        assert_int_equal(r.applied, MXP_OVERFLOW_STRATEGY_NONE);
        assert_int_equal(r.scale_exponent, 0);
        for (int i = 0; i < M * N; i++)
            assert_true(p[i] == 0.0f);
    }
}

static void test_none_at_risk_computes_as_mxp_gemm(void **state)
{
    (void)state;
    fill_200();
    uint16_t c1[M * N], c2[M * N];
    mxp_gemm_safe_report r = { 0 };
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a16, MXP_F16, K, b16, MXP_F16, N, 0.0, c1,
                                   MXP_F16, N, NULL, NULL, &r),
                     MXP_OK);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a16, MXP_F16, K, b16, MXP_F16, N, 0.0, c2,
                              MXP_F16, N, NULL),
                     MXP_OK);
    assert_memory_equal(c1, c2, sizeof c1);
    assert_true(r.at_risk);
    assert_int_equal(r.applied, MXP_OVERFLOW_STRATEGY_NONE);
    assert_non_null(strstr(r.what, "computed anyway"));
}

static void test_bound_by_hand(void **state)
{
    (void)state;
    const float a[6] = { 1, -3, 2, 0.5f, 0, -1 };       /* 2 x 3 */
    const float b[6] = { 4, -5, 1, 2, 0, 3 };           /* 3 x 2 */
    float c[4] = { 1, -7, 2, 6.5f };
    mxp_gemm_safe_report r = { 0 };
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, -0.5, a, MXP_F32, 3, b, MXP_F32, 2, 2.0, c,
                                   MXP_F32, 2, NULL, NULL, &r),
                     MXP_OK);
    /* 3 * 3 * 5 * 0.5 + 2 * 7 */
    assert_true(r.bound == 36.5);
    assert_true(r.max_abs_a == 3.0 && r.max_abs_b == 5.0 && r.max_abs_c == 7.0);
    assert_true(r.c_max == (double)3.4028234663852886e38);
    assert_false(r.at_risk);
    /* beta == 0: C is not read (NaN there is ignored). */
    c[0] = NAN;
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, -0.5, a, MXP_F32, 3, b, MXP_F32, 2, 0.0, c,
                                   MXP_F32, 2, NULL, NULL, &r),
                     MXP_OK);
    assert_true(r.bound == 22.5 && r.max_abs_c == 0.0);
    /* A bias adds its largest magnitude; a clamp caps the bound. */
    const double bias[2] = { -100, 3 };
    mxp_gemm_opts o = { .bias = bias, .bias_dtype = MXP_F64, .bias_kind = MXP_BIAS_PER_COL };
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, -0.5, a, MXP_F32, 3, b, MXP_F32, 2, 0.0, c,
                                   MXP_F32, 2, &o, NULL, &r),
                     MXP_OK);
    assert_true(r.bound == 122.5);
    o.clamp = true;
    o.clamp_lo = -4;
    o.clamp_hi = 2;
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, -0.5, a, MXP_F32, 3, b, MXP_F32, 2, 0.0, c,
                                   MXP_F32, 2, &o, NULL, &r),
                     MXP_OK);
    assert_true(r.bound == 4.0);
}

static void test_bfloat16_is_never_at_risk_here(void **state)
{
    (void)state;
    uint16_t a[M * K], b[K * N], c1[M * N], c2[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = mxp_f32_to_bf16(200.0f);
    for (int i = 0; i < K * N; i++)
        b[i] = mxp_f32_to_bf16(200.0f);
    mxp_gemm_safe_opts so = { .strategy = MXP_OVERFLOW_STRATEGY_REFUSE };
    mxp_gemm_safe_report r = { 0 };
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_BF16, K, b, MXP_BF16, N, 0.0, c1,
                                   MXP_BF16, N, NULL, &so, &r),
                     MXP_OK);
    assert_false(r.at_risk);
    assert_true(r.bound == 2560000.0);
    assert_true(r.c_max > 3.38e38);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_BF16, K, b, MXP_BF16, N, 0.0, c2,
                              MXP_BF16, N, NULL),
                     MXP_OK);
    assert_memory_equal(c1, c2, sizeof c1);
    /* float8 e4m3 (max 448) is at risk for 64 * 4 * 4 = 1024. */
    uint8_t a8[2 * 64], b8[64 * 2], c8[4] = { 0 };
    for (int i = 0; i < 128; i++)
        a8[i] = b8[i] = mxp_f32_to_e4m3(i == 77 ? -4.0f : 1.0f);
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 64, 1.0, a8, MXP_E4M3, 64, b8, MXP_E4M3, 2, 0.0,
                                   c8, MXP_E4M3, 2, NULL, &so, &r),
                     MXP_ERR_SIZE_OVERFLOW);
    assert_true(r.bound == 1024.0 && r.c_max == 448.0);
}

/* The scan reads op(A), op(B), C as stored: transposed, with padding that
 * holds infinities it must not see. */
static void test_scan_respects_transposes_and_padding(void **state)
{
    (void)state;
    enum { m = 4, n = 3, k = 5, LDA = m + 2, LDB = k + 3, LDC = n + 1 };
    const float inf = INFINITY;
    float at[k * LDA], bt[n * LDB], c[m * LDC];
    for (int i = 0; i < k * LDA; i++)
        at[i] = i % LDA < m ? 1.0f : inf;
    at[(k - 1) * LDA + (m - 1)] = -6.0f; /* the last stored element of A^T */
    for (int i = 0; i < n * LDB; i++)
        bt[i] = i % LDB < k ? 0.5f : inf;
    bt[(n - 1) * LDB + (k - 1)] = 2.0f;
    for (int i = 0; i < m * LDC; i++)
        c[i] = i % LDC < n ? -3.0f : inf;
    mxp_gemm_safe_opts so = { .strategy = MXP_OVERFLOW_STRATEGY_REFUSE };
    mxp_gemm_safe_report r = { 0 };
    uint16_t c16[m * LDC];
    for (int i = 0; i < m * LDC; i++)
        c16[i] = mxp_f32_to_f16(c[i]);
    assert_int_equal(mxp_gemm_safe(MXP_TRANS, MXP_TRANS, m, n, k, 1.0, at, MXP_F32, LDA, bt, MXP_F32, LDB, 1.0, c16,
                                   MXP_F16, LDC, NULL, &so, &r),
                     MXP_OK);
    assert_true(r.max_abs_a == 6.0 && r.max_abs_b == 2.0 && r.max_abs_c == 3.0);
    assert_true(r.bound == 5.0 * 6.0 * 2.0 + 3.0);
    assert_false(r.at_risk);
    /* The padding of C is not written either. */
    for (int i = 0; i < m; i++)
        assert_true(isinf(mxp_f16_to_f32(c16[i * LDC + n])));
}

static void test_bad_input(void **state)
{
    (void)state;
    fill_200();
    uint16_t c[M * N], keep[M * N];
    fill_c(c, M * N, 1.0f);
    memcpy(keep, c, sizeof c);
    mxp_gemm_safe_report r = { 0 };
    assert_int_equal(safe16(c, 0.0, (mxp_overflow_strategy)9, &r), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "strategy"));
    /* PROMOTE needs a float32/float64 promote_to. */
    mxp_gemm_safe_opts so = { .strategy = MXP_OVERFLOW_STRATEGY_PROMOTE };
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a16, MXP_F16, K, b16, MXP_F16, N, 0.0, c,
                                   MXP_F16, N, NULL, &so, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "promote_dtype"));
    so.promote_dtype = MXP_F32;
    so.ldp = N;
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a16, MXP_F16, K, b16, MXP_F16, N, 0.0, c,
                                   MXP_F16, N, NULL, &so, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "promote_to"));
    /* mxp_gemm's own checks: options, ld, NULL matrices; integer GEMM. */
    mxp_gemm_opts bad = { .activation = (mxp_activation)42 };
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a16, MXP_F16, K, b16, MXP_F16, N, 0.0, c,
                                   MXP_F16, N, &bad, NULL, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "activation"));
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a16, MXP_F16, K - 1, b16, MXP_F16, N,
                                   0.0, c, MXP_F16, N, NULL, NULL, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, NULL, MXP_F16, K, b16, MXP_F16, N, 0.0,
                                   c, MXP_F16, N, NULL, NULL, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    int8_t i8[4] = { 0 };
    int32_t i32[4] = { 0 };
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 2, 1.0, i8, MXP_S8, 2, i8, MXP_S8, 2, 0.0, i32,
                                   MXP_S32, 2, NULL, NULL, NULL),
                     MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a16, (mxp_dtype)99, K, b16, MXP_F16, N,
                                   0.0, c, MXP_F16, N, NULL, NULL, NULL),
                     MXP_ERR_INVALID_DTYPE);
    assert_memory_equal(c, keep, sizeof c);
    /* SCALE cannot help an infinite input. */
    a16[0] = mxp_f32_to_f16(INFINITY);
    so = (mxp_gemm_safe_opts){ .strategy = MXP_OVERFLOW_STRATEGY_SCALE };
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a16, MXP_F16, K, b16, MXP_F16, N, 0.0, c,
                                   MXP_F16, N, NULL, &so, &r),
                     MXP_ERR_SIZE_OVERFLOW);
    assert_non_null(strstr(mxp_last_error(), "infinit"));
    assert_memory_equal(c, keep, sizeof c);
    /* Empty: nothing to risk; NULL report is fine. */
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, 0, N, K, 1.0, NULL, MXP_F16, K, b16, MXP_F16, N, 0.0,
                                   NULL, MXP_F16, N, NULL, NULL, NULL),
                     MXP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refuse_says_why_and_leaves_c),
        cmocka_unit_test(test_clip_saturates_to_float16_max),
        cmocka_unit_test(test_scale_by_a_power_of_two),
        cmocka_unit_test(test_promote_writes_the_wider_matrix),
        cmocka_unit_test(test_no_risk_is_mxp_gemm_bit_for_bit),
        cmocka_unit_test(test_none_at_risk_computes_as_mxp_gemm),
        cmocka_unit_test(test_bound_by_hand),
        cmocka_unit_test(test_bfloat16_is_never_at_risk_here),
        cmocka_unit_test(test_scan_respects_transposes_and_padding),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

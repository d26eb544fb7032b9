/* The GEMM epilogue: bias (per row, per column, any float dtype),
 * activation, clamp, then one rounding into C; and its bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

enum { M = 13, N = 37, K = 29 };

static float a[M * K], b[K * N];
static double plain[M * N]; /* A B in float64, exact for these inputs */

static void setup_inputs(void)
{
    for (int i = 0; i < M * K; i++)
        a[i] = (float)((i * 37) % 17 - 8) / 8.0f;
    for (int i = 0; i < K * N; i++)
        b[i] = (float)((i * 11) % 13 - 6) / 4.0f;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int p = 0; p < K; p++)
                s += (double)a[i * K + p] * b[p * N + j];
            plain[i * N + j] = s;
        }
}

static void test_bias_relu_clamp_match_a_float64_reference(void **state)
{
    (void)state;
    setup_inputs();
    uint16_t bias[N]; /* bfloat16 bias per column */
    for (int j = 0; j < N; j++)
        bias[j] = mxp_f32_to_bf16((float)(j % 7) - 3.0f);
    float c[M * N];
    mxp_gemm_opts o = { .bias = bias, .bias_dtype = MXP_BF16, .bias_kind = MXP_BIAS_PER_COL,
                        .activation = MXP_ACT_RELU, .clamp = true, .clamp_lo = 0.5, .clamp_hi = 6.0 };
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, c, MXP_F32,
                              N, &o),
                     MXP_OK);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double t = plain[i * N + j] + mxp_bf16_to_f32(bias[j]);
            t = t > 0 ? t : 0;
            t = t < 0.5 ? 0.5 : t > 6.0 ? 6.0 : t;
            if (c[i * N + j] != (float)t)
                fail_msg("C[%d][%d] = %g, want %g", i, j, c[i * N + j], t);
        }
    /* Per-row bias in float64, bf16 output, rounded up. */
    double rbias[M];
    for (int i = 0; i < M; i++)
        rbias[i] = 0.1 * i;
    uint16_t cb[M * N];
    mxp_gemm_opts o2 = { .bias = rbias, .bias_dtype = MXP_F64, .bias_kind = MXP_BIAS_PER_ROW,
                         .convert = { .rounding = MXP_ROUND_UP } };
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 2.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, cb, MXP_BF16,
                              N, &o2),
                     MXP_OK);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            /* the float32 accumulator holds 2*AB exactly; + bias in float64; one rounding up */
            double t = (double)(float)(2.0 * plain[i * N + j]) + rbias[i];
            uint16_t want;
            mxp_convert_opts up = { .rounding = MXP_ROUND_UP };
            mxp_convert(&want, MXP_BF16, &t, MXP_F64, 1, &up);
            assert_int_equal(cb[i * N + j], want);
        }
}

/* Nearest even into float32 and bfloat16 (the rows' own loops, bias widened
 * once): per-row float64 and per-column float32 biases, alpha and beta,
 * relu and clamp, NaN and infinite biases; against the float64 reference
 * rounded once by mxp_convert. */
static void test_nearest_even_rows_match_a_float64_reference(void **state)
{
    (void)state;
    setup_inputs();
    double rbias[M];
    float cbias[N];
    for (int i = 0; i < M; i++)
        rbias[i] = i == 3 ? NAN : i == 5 ? -INFINITY : 0.1 * i - 0.55;
    for (int j = 0; j < N; j++)
        cbias[j] = j == 7 ? INFINITY : (float)(0.3 * j - 5.5) + 1e-7f * (float)j;
    for (int out = 0; out < 2; out++)
        for (int v = 0; v < 4; v++) {
            const bool per_row = v & 1, beta1 = v & 2;
            const mxp_dtype ct = out ? MXP_BF16 : MXP_F32;
            float c32[M * N];
            uint16_t c16[M * N];
            for (int t = 0; t < M * N; t++) {
                c32[t] = (float)(t % 5) - 2.0f;
                c16[t] = mxp_f32_to_bf16(c32[t]);
            }
            mxp_gemm_opts o = { .bias = per_row ? (const void *)rbias : (const void *)cbias,
                                .bias_dtype = per_row ? MXP_F64 : MXP_F32,
                                .bias_kind = per_row ? MXP_BIAS_PER_ROW : MXP_BIAS_PER_COL,
                                .activation = v == 2 ? MXP_ACT_NONE : MXP_ACT_RELU, .clamp = v == 3,
                                .clamp_lo = -1.0, .clamp_hi = 3.75 };
            void *c = out ? (void *)c16 : (void *)c32;
            const double beta = beta1 ? 1.0 : 0.0;
            float cold[M * N];
            for (int t = 0; t < M * N; t++)
                cold[t] = out ? mxp_bf16_to_f32(c16[t]) : c32[t];
            assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.5, a, MXP_F32, K, b, MXP_F32, N, beta, c,
                                      ct, N, &o),
                             MXP_OK);
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    /* the float32 accumulator: 1.5 AB + beta C rounded to float32 */
                    double t = (double)(float)(1.5 * plain[i * N + j] + beta * cold[i * N + j]);
                    t += per_row ? rbias[i] : (double)cbias[j];
                    if (o.activation == MXP_ACT_RELU)
                        t = t > 0 ? t : t == t ? 0.0 : t; /* mxp_relu: NaN stays */
                    if (o.clamp)
                        t = t < -1.0 ? -1.0 : t > 3.75 ? 3.75 : t;
                    if (out) {
                        uint16_t want;
                        mxp_convert(&want, MXP_BF16, &t, MXP_F64, 1, NULL);
                        if (c16[i * N + j] != want)
                            fail_msg("v %d bf16 C[%d][%d] = 0x%04x, want 0x%04x", v, i, j, c16[i * N + j], want);
                    } else {
                        float want;
                        mxp_convert(&want, MXP_F32, &t, MXP_F64, 1, NULL);
                        if (memcmp(&c32[i * N + j], &want, 4) && !(isnan(want) && isnan(c32[i * N + j])))
                            fail_msg("v %d f32 C[%d][%d] = %a, want %a", v, i, j, c32[i * N + j], want);
                    }
                }
        }
}

/* Saturating overflow with an epilogue: +-max, not +-inf, into float32
 * and bfloat16 (the nearest-even rows' loops once ignored the policy). */
static void test_saturating_epilogue_clamps_to_max(void **state)
{
    (void)state;
    setup_inputs();
    double rbias[M];
    for (int i = 0; i < M; i++)
        rbias[i] = i % 3 == 0 ? 1e300 : i % 3 == 1 ? -1e300 : 0.25;
    for (int out = 0; out < 2; out++) {
        const mxp_dtype ct = out ? MXP_BF16 : MXP_F32;
        float c32[M * N];
        uint16_t c16[M * N];
        mxp_gemm_opts o = { .bias = rbias, .bias_dtype = MXP_F64, .bias_kind = MXP_BIAS_PER_ROW,
                            .convert = { .overflow = MXP_OVERFLOW_SATURATE } };
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0,
                                  out ? (void *)c16 : (void *)c32, ct, N, &o),
                         MXP_OK);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                const double t = (double)(float)plain[i * N + j] + rbias[i];
                uint64_t want = 0, got = 0;
                mxp_convert(&want, ct, &t, MXP_F64, 1, &o.convert);
                memcpy(&got, out ? (const void *)&c16[i * N + j] : (const void *)&c32[i * N + j], out ? 2 : 4);
                if (got != want)
                    fail_msg("%s C[%d][%d] = 0x%llx, want 0x%llx", out ? "bf16" : "f32", i, j,
                             (unsigned long long)got, (unsigned long long)want);
            }
        if (out)
            assert_int_equal(c16[0], 0x7f7f); /* bfloat16's max */
        else
            assert_true(c32[0] == 0x1.fffffep127f);
    }
}

/* A C of the accumulator's type (float32, float64) finishes in place: a
 * product of many blocks (rows, columns and k beyond one block each), C a
 * window of a wider matrix (ldc > n), beta 0 and 1/2, one and two threads:
 * each element the epilogue of the product without one (its sums), the
 * columns beyond n untouched. */
static void test_in_place_finish_of_a_wide_c(void **state)
{
    (void)state;
    enum { BM = 301, BN = 213, BK = 1100, LDC = BN + 7 };
    float *fa = malloc(sizeof(float) * BM * BK), *fb = malloc(sizeof(float) * BK * BN);
    double *da = malloc(sizeof(double) * BM * BK), *db = malloc(sizeof(double) * BK * BN);
    double *c0 = malloc(sizeof(double) * BM * LDC), *c1 = malloc(sizeof(double) * BM * LDC),
           *sums = malloc(sizeof(double) * BM * LDC);
    float bias[BN];
    assert_non_null(fa && fb && da && db && c0 && c1 && sums);
    for (int i = 0; i < BM * BK; i++)
        da[i] = fa[i] = (float)((i * 37) % 101 - 50) / 64.0f;
    for (int i = 0; i < BK * BN; i++)
        db[i] = fb[i] = (float)((i * 13) % 97 - 48) / 32.0f;
    for (int j = 0; j < BN; j++)
        bias[j] = (float)(0.25 * j - 20.125);
    const int threads0 = mxp_get_num_threads();
    for (int v = 0; v < 8; v++) {
        const bool f64 = v & 1, two = v & 4;
        const double beta = v & 2 ? 0.5 : 0.0;
        const mxp_dtype t = f64 ? MXP_F64 : MXP_F32;
        const size_t es = f64 ? 8 : 4;
        mxp_set_num_threads(two ? 2 : 1);
        for (int i = 0; i < BM * LDC; i++) {
            const double x = (double)(i % 11) - 5.0;
            if (f64)
                c0[i] = c1[i] = x;
            else
                ((float *)c0)[i] = ((float *)c1)[i] = (float)x;
        }
        memcpy(sums, c0, es * BM * LDC);
        const void *pa = f64 ? (const void *)da : fa, *pb = f64 ? (const void *)db : fb;
        const mxp_gemm_opts o = { .bias = bias, .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_COL,
                                  .activation = MXP_ACT_RELU };
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, BM, BN, BK, 1.0, pa, t, BK, pb, t, BN, beta, sums, t,
                                  LDC, NULL),
                         MXP_OK);
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, BM, BN, BK, 1.0, pa, t, BK, pb, t, BN, beta, c1, t,
                                  LDC, &o),
                         MXP_OK);
        for (int i = 0; i < BM; i++)
            for (int j = 0; j < LDC; j++) {
                const size_t q = (size_t)i * LDC + j;
                const double s = f64 ? sums[q] : ((float *)sums)[q], got = f64 ? c1[q] : ((float *)c1)[q];
                double want = f64 ? c0[q] : ((float *)c0)[q]; /* beyond n: as it was */
                if (j < BN) {
                    const double u = s + bias[j];
                    want = f64 ? (u > 0 ? u : 0.0) : (double)(float)(u > 0 ? u : 0.0);
                }
                if (got != want)
                    fail_msg("v %d C[%d][%d] = %a, want %a", v, i, j, got, want);
            }
    }
    mxp_set_num_threads(threads0);
    free(fa), free(fb), free(da), free(db), free(c0), free(c1), free(sums);
}

/* A float32 bias per column into float32 C is added in float32 when every
 * value is a float (src/gemm/gemm.c: bias32), then clamped when the bounds
 * are floats: the bits of the float64 sum rounded once, on sums and biases
 * whose exponents lie 0 to 40 apart, ties and half-ulp biases included, a
 * NaN sum kept (C = A B with K = 1 and B ones: the sums are A's values
 * exactly); a bound that is no float takes the float64 path. */
static void test_float_bias_adds_as_float64_would(void **state)
{
    (void)state;
    enum { RM = 96, RN = 80 };
    static float sa[RM], ones[RN], cb[RN], got[RM * RN];
    uint32_t x = 12345;
    for (int i = 0; i < RM; i++) {
        x = x * 1664525u + 1013904223u;
        const float m = 1.0f + (float)(x >> 9) * 0x1p-23f; /* [1, 2): every mantissa bit */
        sa[i] = ldexpf((x & 1) ? -m : m, (int)(x >> 26) % 24 - 12);
    }
    sa[0] = 1.0f, sa[1] = 0x1.000002p0f, sa[2] = -0x1p-149f, sa[3] = 0x1.fffffep127f;
    for (int j = 0; j < RN; j++) {
        x = x * 1664525u + 1013904223u;
        const float m = 1.0f + (float)(x >> 9) * 0x1p-23f;
        ones[j] = 1.0f;
        cb[j] = ldexpf((x & 1) ? -m : m, (int)(x >> 26) % 40 - 45);
    }
    cb[0] = 0x1p-24f, cb[1] = 0x1p-24f, cb[2] = -0x1p-25f, cb[3] = 0x1p104f; /* ties, a half ulp, overflow */
    cb[4] = 0x1.8p-24f, cb[5] = -0x1p-149f, cb[6] = 0.0f, cb[7] = -0.0f;
    sa[4] = NAN;
    /* no clamp; float bounds; a bound float32 does not hold (0.1: the float64 path) */
    const double los[3] = { 0, -0.75, 0.1 }, his[3] = { 0, 0x1p100, 1e300 };
    for (int v = 0; v < 3; v++) {
        const mxp_gemm_opts o = { .bias = cb, .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_COL, .clamp = v > 0,
                                  .clamp_lo = los[v], .clamp_hi = his[v] };
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, RM, RN, 1, 1.0, sa, MXP_F32, 1, ones, MXP_F32, RN, 0.0,
                                  got, MXP_F32, RN, &o),
                         MXP_OK);
        for (int i = 0; i < RM; i++)
            for (int j = 0; j < RN; j++) {
                float want;
                double t = (double)sa[i] + (double)cb[j];
                if (v > 0)
                    t = t < los[v] ? los[v] : t > his[v] ? his[v] : t; /* NaN stays */
                mxp_convert(&want, MXP_F32, &t, MXP_F64, 1, NULL);
                if (memcmp(&got[i * RN + j], &want, 4) && !(isnan(want) && isnan(got[i * RN + j])))
                    fail_msg("v %d C[%d][%d] = %a + %a: got %a, want %a", v, i, j, (double)sa[i], (double)cb[j],
                             (double)got[i * RN + j], (double)want);
            }
    }
}

static void test_gelu_epilogue_equals_gemm_then_gelu(void **state)
{
    (void)state;
    setup_inputs();
    float c1[M * N], c2[M * N];
    const mxp_activation acts[3] = { MXP_ACT_GELU, MXP_ACT_GELU_TANH, MXP_ACT_SILU };
    const mxp_unary_op ops[3] = { MXP_OP_GELU, MXP_OP_GELU_TANH, MXP_OP_SILU };
    for (int t = 0; t < 3; t++) {
        mxp_gemm_opts o = { .activation = acts[t] };
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, K, 0.0, c1,
                                  MXP_F32, N, &o),
                         MXP_OK);
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, K, 0.0, c2,
                                  MXP_F32, N, NULL),
                         MXP_OK);
        mxp_array *x = NULL, *y = NULL;
        const int64_t shape[2] = { M, N };
        assert_int_equal(mxp_array_wrap(&x, c2, MXP_F32, 2, shape, NULL, true, NULL, NULL), MXP_OK);
        assert_int_equal(mxp_unary(&y, ops[t], x, NULL), MXP_OK);
        assert_memory_equal(c1, mxp_array_data(y), sizeof c1);
        mxp_array_free(y);
        mxp_array_free(x);
    }
}

static void test_bad_epilogue_is_refused_and_c_untouched(void **state)
{
    (void)state;
    setup_inputs();
    float c[M * N], keep[M * N];
    for (int i = 0; i < M * N; i++)
        c[i] = keep[i] = -7.0f;
    int32_t ibias[N] = { 0 };
    struct { mxp_gemm_opts o; mxp_status want; const char *word; } cases[] = {
        { { .bias = ibias, .bias_dtype = MXP_F32 }, MXP_ERR_INVALID_ARGUMENT, "bias_kind" },
        { { .bias_kind = MXP_BIAS_PER_COL }, MXP_ERR_INVALID_ARGUMENT, "bias" },
        { { .bias = ibias, .bias_dtype = MXP_S32, .bias_kind = MXP_BIAS_PER_COL }, MXP_ERR_UNSUPPORTED, "bias" },
        { { .bias = ibias, .bias_dtype = MXP_F32, .bias_kind = (mxp_bias_kind)9 }, MXP_ERR_INVALID_ARGUMENT, "bias_kind" },
        { { .activation = (mxp_activation)42 }, MXP_ERR_INVALID_ARGUMENT, "activation" },
        { { .clamp = true, .clamp_lo = 2, .clamp_hi = 1 }, MXP_ERR_INVALID_ARGUMENT, "clamp" },
        { { .clamp = true, .clamp_lo = NAN, .clamp_hi = 1 }, MXP_ERR_INVALID_ARGUMENT, "clamp" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mxp_status st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, c,
                                 MXP_F32, N, &cases[i].o);
        assert_int_equal(st, cases[i].want);
        assert_non_null(strstr(mxp_last_error(), cases[i].word));
        assert_memory_equal(c, keep, sizeof c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bias_relu_clamp_match_a_float64_reference),
        cmocka_unit_test(test_nearest_even_rows_match_a_float64_reference),
        cmocka_unit_test(test_saturating_epilogue_clamps_to_max),
        cmocka_unit_test(test_in_place_finish_of_a_wide_c),
        cmocka_unit_test(test_float_bias_adds_as_float64_would),
        cmocka_unit_test(test_gelu_epilogue_equals_gemm_then_gelu),
        cmocka_unit_test(test_bad_epilogue_is_refused_and_c_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* GEMM with a float16 or bfloat16 accumulator (opts.acc_dtype): the
 * running sum is rounded to that format after every addition of a float32
 * product.  Hand-computed cases where it visibly loses, an independent
 * reference (each step rounded through mxp_convert, not core/lowp.h's
 * arithmetic), layouts, threads, mxp_matmul, and refused combinations. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/lowp.h"
#include "mxp.h"

/* x rounded to dt (nearest even) through the library's converter. */
static double to(mxp_dtype dt, double x)
{
    uint16_t h = 0;
    double r = 0;
    assert_int_equal(mxp_convert(&h, dt, &x, MXP_F64, 1, NULL), MXP_OK);
    assert_int_equal(mxp_convert(&r, MXP_F64, &h, dt, 1, NULL), MXP_OK);
    return r;
}

static double dot_f32c(mxp_dtype acc, size_t k, const float *a, const float *b, size_t bstride)
{
    mxp_gemm_opts o = { .acc_dtype = acc };
    float c = 0;
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 1, 1, k, 1.0, a, MXP_F32, k, b, MXP_F32, bstride, 0.0, &c,
                              MXP_F32, 1, &o),
                     MXP_OK);
    return c;
}

static void test_sums_that_stall(void **state)
{
    (void)state;
    enum { K = 4096 };
    float *ones = malloc(K * sizeof *ones);
    for (int i = 0; i < K; i++)
        ones[i] = 1.0f;
    assert_true(dot_f32c(MXP_F16, K, ones, ones, 1) == 2048.0); /* 2048 + 1 ties to even: 2048 */
    assert_true(dot_f32c(MXP_BF16, K, ones, ones, 1) == 256.0);
    assert_true(dot_f32c(MXP_F32, K, ones, ones, 1) == 4096.0);
    assert_true(dot_f32c(MXP_F64, K, ones, ones, 1) == 4096.0);
    /* 1 + 2^-11 + 2^-11: each addition in float16 ties back to 1; float32 keeps both */
    const float a[3] = { 1.0f, 0x1p-11f, 0x1p-11f }, b[3] = { 1, 1, 1 };
    assert_true(dot_f32c(MXP_F16, 3, a, b, 1) == 1.0);
    assert_true(dot_f32c(MXP_F32, 3, a, b, 1) == 1.0 + 0x1p-10);
    /* the same order matters: the small ones first add up before the 1 */
    const float a2[3] = { 0x1p-11f, 0x1p-11f, 1.0f };
    assert_true(dot_f32c(MXP_F16, 3, a2, b, 1) == 1.0 + 0x1p-10);
    /* float32 products: 3 x 0.1f rounded to float32 (0.30000001192...), then float16: 0.300048828125 (np.float16) */
    const float t[1] = { 3.0f }, u[1] = { 0.1f };
    assert_true(dot_f32c(MXP_F16, 1, t, u, 1) == to(MXP_F16, (double)(3.0f * 0.1f)));
    assert_true(dot_f32c(MXP_F16, 1, t, u, 1) == 0.300048828125);
    /* overflow: float16's running sum passes 65504 */
    const float big[3] = { 30000, 30000, 30000 };
    assert_true(isinf(dot_f32c(MXP_F16, 3, big, b, 1)));
    assert_true(dot_f32c(MXP_BF16, 3, big, b, 1) == 90112.0);
    free(ones);
}

/* The specification, step by step, with every rounding through mxp_convert. */
static void reference(mxp_dtype acc, size_t m, size_t n, size_t k, double alpha, const float *a, const float *b,
                      double beta, const double *c0, double *c)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t p = 0; p < k; p++)
                s = to(acc, s + (double)(a[i * k + p] * b[p * n + j]));
            c[i * n + j] = alpha * s + beta * c0[i * n + j];
        }
}

static void test_against_the_reference_every_layout_and_thread_count(void **state)
{
    (void)state;
    enum { M = 7, N = 70, K = 300 };
    mxp_dtype accs[2] = { MXP_F16, MXP_BF16 };
    float *a = malloc(M * K * 4), *b = malloc(K * N * 4), *at = malloc(M * K * 4), *bt = malloc(K * N * 4);
    double *c0 = malloc(M * N * 8), *want = malloc(M * N * 8), *got = malloc(M * N * 8), *got2 = malloc(M * N * 8);
    uint64_t s = 12345;
    for (size_t i = 0; i < M * K; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        a[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 2 - 1);
    }
    for (size_t i = 0; i < K * N; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        b[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 4 - 1);
    }
    for (size_t i = 0; i < M * N; i++)
        c0[i] = (double)i / 16;
    for (size_t i = 0; i < M; i++)
        for (size_t p = 0; p < K; p++)
            at[p * M + i] = a[i * K + p];
    for (size_t p = 0; p < K; p++)
        for (size_t j = 0; j < N; j++)
            bt[j * K + p] = b[p * N + j];
    for (int q = 0; q < 2; q++) {
        mxp_gemm_opts o = { .acc_dtype = accs[q] };
        reference(accs[q], M, N, K, 0.5, a, b, 2.0, c0, want);
        memcpy(got, c0, M * N * 8);
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 0.5, a, MXP_F32, K, b, MXP_F32, N, 2.0, got,
                                  MXP_F64, N, &o),
                         MXP_OK);
        assert_memory_equal(got, want, M * N * 8);
        /* transposed operands and one thread: the same bits */
        assert_int_equal(mxp_set_num_threads(1), MXP_OK);
        memcpy(got2, c0, M * N * 8);
        assert_int_equal(mxp_gemm(MXP_TRANS, MXP_TRANS, M, N, K, 0.5, at, MXP_F32, M, bt, MXP_F32, K, 2.0, got2,
                                  MXP_F64, N, &o),
                         MXP_OK);
        assert_int_equal(mxp_set_num_threads(0), MXP_OK);
        assert_memory_equal(got2, want, M * N * 8);
        /* the first row alone (m = 1 takes no other path) */
        memcpy(got2, c0, N * 8);
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 1, N, K, 0.5, a, MXP_F32, K, b, MXP_F32, N, 2.0, got2,
                                  MXP_F64, N, &o),
                         MXP_OK);
        assert_memory_equal(got2, want, N * 8);
        /* float16 inputs: products exact in float32, the same arithmetic */
        uint16_t *ah = malloc(M * K * 2), *bh = malloc(K * N * 2);
        assert_int_equal(mxp_convert(ah, MXP_F16, a, MXP_F32, M * K, NULL), MXP_OK);
        assert_int_equal(mxp_convert(bh, MXP_F16, b, MXP_F32, K * N, NULL), MXP_OK);
        float *ahf = malloc(M * K * 4), *bhf = malloc(K * N * 4);
        assert_int_equal(mxp_convert(ahf, MXP_F32, ah, MXP_F16, M * K, NULL), MXP_OK);
        assert_int_equal(mxp_convert(bhf, MXP_F32, bh, MXP_F16, K * N, NULL), MXP_OK);
        double *zero = calloc(M * N, 8);
        reference(accs[q], M, N, K, 1.0, ahf, bhf, 0.0, zero, want);
        uint16_t *ch = malloc(M * N * 2);
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, ah, MXP_F16, K, bh, MXP_F16, N, 0.0, ch,
                                  accs[q], N, &o),
                         MXP_OK);
        assert_int_equal(mxp_convert(got, MXP_F64, ch, accs[q], M * N, NULL), MXP_OK);
        assert_memory_equal(got, want, M * N * 8); /* alpha 1, beta 0: C holds the accumulator */
        /* mxp_matmul passes acc_dtype through */
        const int64_t sa[2] = { M, K }, sb[2] = { K, N };
        mxp_array *A = NULL, *B = NULL, *C = NULL;
        assert_int_equal(mxp_array_wrap(&A, ah, MXP_F16, 2, sa, NULL, false, NULL, NULL), MXP_OK);
        assert_int_equal(mxp_array_wrap(&B, bh, MXP_F16, 2, sb, NULL, false, NULL, NULL), MXP_OK);
        assert_int_equal(mxp_matmul(&C, A, B, &o), MXP_OK);
        assert_int_equal(mxp_array_dtype(C), MXP_F16);
        if (accs[q] == MXP_F16)
            assert_memory_equal(mxp_array_data(C), ch, M * N * 2);
        mxp_array_free(C);
        mxp_array_free(B);
        mxp_array_free(A);
        free(ch);
        free(zero);
        free(bhf);
        free(ahf);
        free(bh);
        free(ah);
    }
    free(got2);
    free(got);
    free(want);
    free(c0);
    free(bt);
    free(at);
    free(b);
    free(a);
}

static void test_refused_combinations(void **state)
{
    (void)state;
    float a[4] = { 1, 2, 3, 4 }, c[4];
    int8_t q[4] = { 1, 2, 3, 4 };
    int32_t ci[4];
    mxp_gemm_opts o = { .acc_dtype = MXP_E4M3 };
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 2, 1.0, a, MXP_F32, 2, a, MXP_F32, 2, 0.0, c, MXP_F32,
                              2, &o),
                     MXP_ERR_UNSUPPORTED);
    assert_non_null(strstr(mxp_last_error(), "accumulator float8_e4m3fn: use float32 or float64 (or float16/bfloat16"));
    o.acc_dtype = MXP_F16; /* integer inputs accumulate in int32 only */
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 2, 1.0, q, MXP_S8, 2, q, MXP_S8, 2, 0.0, ci, MXP_S32,
                              2, &o),
                     MXP_ERR_UNSUPPORTED);
    assert_non_null(strstr(mxp_last_error(), "accumulator float16: use int32 for integer inputs"));
    o.acc_dtype = MXP_S32;
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 2, 1.0, a, MXP_F32, 2, a, MXP_F32, 2, 0.0, c, MXP_F32,
                              2, &o),
                     MXP_ERR_UNSUPPORTED);
    o.acc_dtype = MXP_F16; /* the emulation's function */
    assert_string_equal(mxp_gemm_kernel_name(MXP_F32, MXP_F32, &o), "mxp_gemm_lowp_acc");
    o.acc_dtype = MXP_BF16;
    assert_string_equal(mxp_gemm_kernel_name(MXP_BF16, MXP_BF16, &o), "mxp_gemm_lowp_acc");
    /* k = 0 and alpha = 0 scale C as any GEMM does */
    c[0] = 3;
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 1, 1, 0, 1.0, a, MXP_F32, 1, a, MXP_F32, 1, 2.0, c, MXP_F32,
                              1, &o),
                     MXP_OK);
    assert_true(c[0] == 6.0f);
}

/* core/lowp.h's arithmetic rounding against the converter: every
 * float16 value, the midpoints between neighbours and just off them, and
 * random doubles over every exponent (subnormals, overflow, inf, NaN). */
static void test_rounding_matches_the_converter(void **state)
{
    (void)state;
    const mxp_dtype dts[2] = { MXP_F16, MXP_BF16 };
    for (int q = 0; q < 2; q++) {
        const mxp_lowp f = mxp_lowp_for(dts[q]);
        for (uint32_t bits = 0; bits < 0x10000; bits++) {
            double v, w;
            uint16_t h = (uint16_t)bits, h2 = (uint16_t)(bits + 1);
            assert_int_equal(mxp_convert(&v, MXP_F64, &h, dts[q], 1, NULL), MXP_OK);
            assert_int_equal(mxp_convert(&w, MXP_F64, &h2, dts[q], 1, NULL), MXP_OK);
            const double mid = v + (w - v) / 2;
            const double xs[5] = { v, mid, nextafter(mid, 0), nextafter(mid, INFINITY), -mid };
            for (int i = 0; i < 5; i++) {
                if (isnan(v) || isnan(w) || isinf(v))
                    continue;
                const double got = mxp_lowp_round(&f, xs[i]), want = to(dts[q], xs[i]);
                if (!(memcmp(&got, &want, 8) == 0)) {
                    print_message("%s: %a -> %a, converter %a\n", mxp_dtype_name(dts[q]), xs[i], got, want);
                    fail();
                }
            }
        }
        uint64_t s = 99;
        for (int i = 0; i < 200000; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t u = s;
            double x;
            memcpy(&x, &u, 8);
            const double got = mxp_lowp_round(&f, x), want = to(dts[q], x);
            if (isnan(x)) {
                assert_true(isnan(got));
                continue;
            }
            if (memcmp(&got, &want, 8) != 0) {
                print_message("%s: %a -> %a, converter %a\n", mxp_dtype_name(dts[q]), x, got, want);
                fail();
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rounding_matches_the_converter),
        cmocka_unit_test(test_sums_that_stall),
        cmocka_unit_test(test_against_the_reference_every_layout_and_thread_count),
        cmocka_unit_test(test_refused_combinations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* GEMM never returns MXP_OK with a wrong product because the output shares
 * memory with an input: C overlapping A, B, the bias or the scales is
 * MXP_ERR_OVERLAP (C untouched) for float GEMM, integer GEMM,
 * mxp_gemm_safe (and its promote_to) and mxp_gemm_strided_batched, while
 * matrices that only interleave (disjoint rows of one buffer) are
 * accepted; mxp_matmul_into copies inputs that overlap its output.  The
 * epilogue's bias is length-checked: bias_len shorter than the m or n
 * values it must hold is refused, and mxp_matmul needs it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))

/* C = A B for small-integer float32 matrices, rows ld apart. */
static void reference(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *b, size_t ldb,
                      float *c, size_t ldc)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float s = 0;
            for (size_t p = 0; p < k; p++)
                s += a[i * lda + p] * b[p * ldb + j];
            c[i * ldc + j] = s;
        }
}

static void fill(float *x, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((int)((i * 7 + (size_t)seed * 13) % 9) - 4);
}

static void expect_overlap(mxp_status st, const char *what)
{
    if (st != MXP_ERR_OVERLAP) {
        print_error("%s: %s (\"%s\"), want MXP_ERR_OVERLAP\n", what, mxp_status_str(st), mxp_last_error());
        fail();
    }
    assert_non_null(strstr(mxp_last_error(), "overlap"));
}

enum { S = 40 }; /* m = n = k */

static void test_gemm_c_overlapping_a_or_b_is_refused_and_c_untouched(void **state)
{
    (void)state;
    static double buf[4 * S * S], before[4 * S * S]; /* room for four float64 matrices */
    const mxp_dtype types[] = { MXP_F32, MXP_F64, MXP_BF16 };
    for (size_t t = 0; t < NELEMS(types); t++) {
        const mxp_dtype dt = types[t];
        for (size_t i = 0; i < NELEMS(buf); i++)
            buf[i] = (double)((int)(i % 9) - 4);
        const size_t sz = mxp_dtype_itemsize(dt);
        unsigned char *p = (unsigned char *)buf;
        /* offsets of A, B and C in elements of dt */
        const struct { const char *what; size_t a, b, c; mxp_trans ta; } cases[] = {
            { "C == A", 0, S * S, 0, MXP_NO_TRANS },
            { "C == B", 0, S * S, S * S, MXP_NO_TRANS },
            { "C's first row is A's last", 0, 2 * S * S, S * (S - 1), MXP_NO_TRANS },
            { "C's last row is B's first", 2 * S * S, S * (S - 1), 0, MXP_NO_TRANS },
            { "C == A transposed", 0, S * S, 0, MXP_TRANS },
        };
        for (size_t i = 0; i < NELEMS(cases); i++) {
            memcpy(before, buf, sizeof buf);
            char what[96];
            snprintf(what, sizeof what, "%s, %s", cases[i].what, mxp_dtype_name(dt));
            expect_overlap(mxp_gemm(cases[i].ta, MXP_NO_TRANS, S, S, S, 1.0, p + cases[i].a * sz, dt, S,
                                    p + cases[i].b * sz, dt, S, 0.0, p + cases[i].c * sz, dt, S, NULL), what);
            assert_memory_equal(before, buf, sizeof buf);
            expect_overlap(mxp_gemm_safe(cases[i].ta, MXP_NO_TRANS, S, S, S, 1.0, p + cases[i].a * sz, dt, S,
                                         p + cases[i].b * sz, dt, S, 0.0, p + cases[i].c * sz, dt, S, NULL, NULL,
                                         NULL), what);
            const mxp_gemm_safe_opts clip = { .strategy = MXP_OVERFLOW_STRATEGY_CLIP };
            expect_overlap(mxp_gemm_safe(cases[i].ta, MXP_NO_TRANS, S, S, S, 1e30, p + cases[i].a * sz, dt, S,
                                         p + cases[i].b * sz, dt, S, 0.0, p + cases[i].c * sz, dt, S, NULL, &clip,
                                         NULL), what);
            expect_overlap(mxp_gemm_strided_batched(2, cases[i].ta, MXP_NO_TRANS, S, S, S, 1.0,
                                                    p + cases[i].a * sz, dt, S, 0, p + cases[i].b * sz, dt, S, 0,
                                                    0.0, p + cases[i].c * sz, dt, S, S * S, NULL), what);
            assert_memory_equal(before, buf, sizeof buf);
        }
    }
}

static void test_gemm_int8_c_overlapping_a_or_b_is_refused(void **state)
{
    (void)state;
    static int32_t c[S * S];
    int8_t *bytes = (int8_t *)c;
    memset(c, 1, sizeof c);
    /* int32 C over the int8 A (its first quarter) and B (the second) */
    expect_overlap(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, S, S, S, 1.0, bytes, MXP_U8, S, bytes + S * S, MXP_S8, S,
                            0.0, c, MXP_S32, S, NULL), "int32 C over A");
    expect_overlap(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, S / 2, S, S, 1.0, bytes + 3 * S * S, MXP_S8, S,
                            bytes + S * S, MXP_S8, S, 0.0, c, MXP_S32, S, NULL), "int32 C over B");
    static float f[S * S];
    const float scale = 0.5f;
    const mxp_gemm_opts o = { .scales = &scale, .n_scales = 1 };
    expect_overlap(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, S, S, S / 4, 1.0, (uint8_t *)f, MXP_U8, S / 4,
                            (int8_t *)f + S * S * 2, MXP_S8, S, 0.0, f, MXP_F32, S, &o), "float C over A");
    const mxp_gemm_opts scales_in_c = { .scales = f + 5, .n_scales = 1 };
    static uint8_t a8[S * S];
    static int8_t b8[S * S];
    expect_overlap(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, S, S, S, 1.0, a8, MXP_U8, S, b8, MXP_S8, S, 0.0, f, MXP_F32,
                            S, &scales_in_c), "scales inside C");
}

static void test_gemm_safe_promote_to_overlapping_an_operand_is_refused(void **state)
{
    (void)state;
    static float a[S * S], b[S * S], c[S * S], p[S * S];
    fill(a, NELEMS(a), 7);
    fill(b, NELEMS(b), 8);
    mxp_gemm_safe_opts safe = { .strategy = MXP_OVERFLOW_STRATEGY_PROMOTE, .promote_dtype = MXP_F32, .ldp = S };
    void *const targets[3] = { a, b + S, c };
    for (int i = 0; i < 3; i++) {
        safe.promote_to = targets[i];
        expect_overlap(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, S, S, S, 1.0, a, MXP_F32, S, b, MXP_F32, S, 1.0, c,
                                     MXP_F16, S, NULL, &safe, NULL), "promote_to over A, B or C");
    }
    safe.promote_to = p;
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, S, S, S, 1.0, a, MXP_F32, S, b, MXP_F32, S, 0.0, c,
                                   MXP_F16, S, NULL, &safe, NULL), MXP_OK);
}

/* A, B and C in one buffer with one leading dimension, side by side: rows
 * interleave but no byte is shared.  Accepted, and right. */
static void test_gemm_interleaved_disjoint_matrices_are_accepted(void **state)
{
    (void)state;
    enum { M = 23, N = 17, K = 19, LD = K + N + 5 };
    static float buf[(M + K) * LD], want[M * N];
    fill(buf, NELEMS(buf), 2);
    float *a = buf, *c = buf + K + 2, *b = buf + M * LD; /* A: cols 0..K-1 of rows 0..M-1, C: cols K+2.. */
    reference(M, N, K, a, LD, b, LD, want, N);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, LD, b, MXP_F32, LD, 0.0, c,
                              MXP_F32, LD, NULL), MXP_OK);
    for (size_t i = 0; i < M; i++)
        assert_memory_equal(c + i * LD, want + i * N, N * sizeof(float));
    /* C's rows one element longer than the gap: they reach A's next row */
    expect_overlap(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, LD - K + 1, K, 1.0, a, MXP_F32, LD, b, MXP_F32, LD, 0.0,
                            buf + K, MXP_F32, LD, NULL), "C's rows reach into A's next row");
    /* C in the gap right after A's rows: accepted */
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, 2, K, 1.0, a, MXP_F32, LD, b, MXP_F32, LD, 0.0,
                              buf + K, MXP_F32, LD, NULL), MXP_OK);
}

static void test_gemm_bias_overlapping_c_is_refused(void **state)
{
    (void)state;
    static float a[S * S], b[S * S], c[S * S];
    fill(a, NELEMS(a), 3);
    fill(b, NELEMS(b), 4);
    mxp_gemm_opts o = { .bias = c + S, .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_COL };
    expect_overlap(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, S, S, S, 1.0, a, MXP_F32, S, b, MXP_F32, S, 0.0, c,
                            MXP_BF16, S, &o), "bias inside C");
    o.bias = a; /* an input: fine */
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, S, S, S, 1.0, a, MXP_F32, S, b, MXP_F32, S, 0.0, c,
                              MXP_F32, S, &o), MXP_OK);
}

/* ---- the bias's length ------------------------------------------------ */

static void test_gemm_bias_shorter_than_bias_len_needs_is_refused(void **state)
{
    (void)state;
    enum { M = 5, N = 7, K = 3 };
    static float a[M * K], b[K * N], c[M * N], bias[N];
    fill(a, NELEMS(a), 5);
    fill(b, NELEMS(b), 6);
    mxp_gemm_opts o = { .bias = bias, .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_COL, .bias_len = N - 1 };
    memset(c, 0x7f, sizeof c);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, c,
                              MXP_F32, N, &o), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "bias_len"));
    o.bias_len = N;
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, c,
                              MXP_F32, N, &o), MXP_OK);
    o.bias_len = 0; /* a raw pointer, as BLAS takes arrays: n values assumed */
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, c,
                              MXP_F32, N, &o), MXP_OK);
    o.bias_kind = MXP_BIAS_PER_ROW;
    o.bias_len = M - 1;
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, c,
                                   MXP_F32, N, &o, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
}

static mxp_array *matrix(int64_t rows, int64_t cols)
{
    mxp_array *x = NULL;
    const int64_t shape[2] = { rows, cols };
    assert_int_equal(mxp_array_arange(&x, MXP_F32, 0, (double)(rows * cols), 1), MXP_OK);
    mxp_array *y = NULL;
    assert_int_equal(mxp_array_reshape(&y, x, 2, shape), MXP_OK);
    mxp_array_free(x);
    return y;
}

static void test_matmul_bias_is_length_checked(void **state)
{
    (void)state;
    mxp_array *a = matrix(3, 4), *b = matrix(4, 5), *y = NULL;
    float *bias = malloc(4 * sizeof *bias); /* one short of n = 5: ASan sees any read of bias[4] */
    assert_non_null(bias);
    for (int i = 0; i < 4; i++)
        bias[i] = (float)i;
    mxp_gemm_opts o = { .bias = bias, .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_COL };
    assert_int_equal(mxp_matmul(&y, a, b, &o), MXP_ERR_INVALID_ARGUMENT); /* no bias_len */
    assert_null(y);
    assert_non_null(strstr(mxp_last_error(), "bias_len"));
    o.bias_len = 4;
    assert_int_equal(mxp_matmul(&y, a, b, &o), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "bias_len"));
    o.bias_kind = MXP_BIAS_PER_ROW; /* m = 3 values: 4 are enough */
    assert_int_equal(mxp_matmul(&y, a, b, &o), MXP_OK);
    const float *v = mxp_array_data(y);
    /* row 2 of A = 8 9 10 11, column 0 of B = 0 5 10 15: 0 + 45 + 100 + 165 = 310, + bias[2] */
    assert_true(v[2 * 5 + 0] == 312.0f);
    mxp_array_free(y);
    free(bias);
    mxp_array_free(a);
    mxp_array_free(b);
}

static void test_matmul_into_copies_inputs_that_overlap_the_output(void **state)
{
    (void)state;
    mxp_array *a = matrix(6, 6), *b = matrix(6, 6), *want = NULL;
    assert_int_equal(mxp_matmul(&want, a, b, NULL), MXP_OK);
    assert_int_equal(mxp_matmul_into(a, a, b, NULL), MXP_OK); /* a = a @ b */
    assert_memory_equal(mxp_array_data(a), mxp_array_data(want), 36 * sizeof(float));
    mxp_array_free(want);
    mxp_array_free(a);
    mxp_array_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_c_overlapping_a_or_b_is_refused_and_c_untouched),
        cmocka_unit_test(test_gemm_int8_c_overlapping_a_or_b_is_refused),
        cmocka_unit_test(test_gemm_safe_promote_to_overlapping_an_operand_is_refused),
        cmocka_unit_test(test_gemm_interleaved_disjoint_matrices_are_accepted),
        cmocka_unit_test(test_gemm_bias_overlapping_c_is_refused),
        cmocka_unit_test(test_gemm_bias_shorter_than_bias_len_needs_is_refused),
        cmocka_unit_test(test_matmul_bias_is_length_checked),
        cmocka_unit_test(test_matmul_into_copies_inputs_that_overlap_the_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

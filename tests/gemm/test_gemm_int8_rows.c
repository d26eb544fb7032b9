/* Integer mxp_gemm with A quantized per row (mxp_gemm_opts.a_zero_points,
 * a_scales): each row of C is, bit for bit, the one-row GEMM with that
 * row's zero point as a_zero_point and the scales float32(a_scales[i] *
 * scales[j]) that mxp_qmatmul_scales gives -- an independent path (M = 1:
 * the int16 GEMV, no packing; per-tensor zero point: the row and column
 * corrections of the kernels) -- for uint8 and int8 A, transposed A, B's
 * zero point 0 and not, C float32 (plain, bias, bias + relu, beta 1),
 * float64, bfloat16, int8 (requantized) and int32 (the exact sums, beta 0
 * and 1), one and two threads, M across several row blocks; the int32 sums
 * against int64 arithmetic; per-column scales after the float64
 * requantization kernel stops inside a row; bad input refused with a
 * sentence, C untouched; mxp_matmul and the batched GEMM refuse the
 * per-row options. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "support/prng.h"

enum { MM = 150, N = 300, K = 70 }; /* N: columns in two chunks of the finish (256) */

typedef struct rows_case {
    mxp_dtype at, ct;
    bool trans_a;
    int32_t zb;
    int kind; /* 0 plain, 1 bias, 2 bias + relu, 3 beta 1 (float C and int32 C) */
} rows_case;

static unsigned char a[MM * K];
static int8_t b[K * N];
static int32_t zps[MM];
static float ascales[MM], bscales[N], bias[N];

static void inputs(mxp_dtype at)
{
    uint64_t rng = prng_seed(41);
    for (int i = 0; i < MM * K; i++)
        a[i] = (unsigned char)(prng_next(&rng) & 0xff);
    for (int i = 0; i < K * N; i++)
        b[i] = (int8_t)(prng_next(&rng) & 0xff);
    for (int i = 0; i < MM; i++) {
        const int32_t z = (int32_t)(prng_next(&rng) % 256);
        zps[i] = at == MXP_U8 ? z : z - 128;
        ascales[i] = (float)(prng_uniform(&rng) * 0.02 + 1e-4);
    }
    zps[0] = at == MXP_U8 ? 255 : -128; /* the ends of the range */
    zps[1] = at == MXP_U8 ? 0 : 127;
    for (int j = 0; j < N; j++) {
        bscales[j] = (float)(prng_uniform(&rng) * 0.01 + 1e-3);
        bias[j] = (float)(prng_uniform(&rng) * 4 - 2);
    }
}

static size_t csize(mxp_dtype ct)
{
    return mxp_dtype_itemsize(ct);
}

/* C's starting values: small, exact in every C dtype */
static void fill_c(void *c, mxp_dtype ct, size_t count)
{
    for (size_t q = 0; q < count; q++) {
        const double v = (double)((int)(q % 9) - 4);
        mxp_convert((unsigned char *)c + q * csize(ct), ct, &v, MXP_F64, 1, NULL);
    }
}

static void run_case(const rows_case *rc, int m)
{
    const double beta = rc->kind == 3 ? 1.0 : 0.0;
    const size_t lda = rc->trans_a ? (size_t)m : K;
    static unsigned char at_buf[MM * K];
    if (rc->trans_a) /* op(A) = the stored K x m matrix transposed */
        for (int i = 0; i < m; i++)
            for (int p = 0; p < K; p++)
                at_buf[p * m + i] = a[i * K + p];
    const unsigned char *pa = rc->trans_a ? at_buf : a;
    mxp_gemm_opts o = { .b_zero_point = rc->zb, .a_zero_points = zps, .a_rows_len = (size_t)m };
    if (rc->ct != MXP_S32) {
        o.a_scales = ascales;
        o.scales = bscales;
        o.n_scales = N;
    }
    if (rc->ct == MXP_S8)
        o.c_zero_point = -3;
    if (rc->kind == 1 || rc->kind == 2) {
        o.bias = bias;
        o.bias_dtype = MXP_F32;
        o.bias_kind = MXP_BIAS_PER_COL;
        o.activation = rc->kind == 2 ? MXP_ACT_RELU : MXP_ACT_NONE;
    }
    const size_t cs = csize(rc->ct);
    unsigned char *got = malloc((size_t)m * N * cs), *want = malloc((size_t)m * N * cs);
    assert_non_null(got);
    assert_non_null(want);
    fill_c(got, rc->ct, (size_t)m * N);
    fill_c(want, rc->ct, (size_t)m * N);
    assert_int_equal(mxp_gemm(rc->trans_a ? MXP_TRANS : MXP_NO_TRANS, MXP_NO_TRANS, (size_t)m, N, K, 1.0, pa, rc->at,
                              lda, b, MXP_S8, N, beta, got, rc->ct, N, &o),
                     MXP_OK);
    for (int i = 0; i < m; i++) { /* row i alone: a per-tensor zero point and the combined scales */
        float comb[N];
        mxp_gemm_opts r = o;
        r.a_zero_points = NULL;
        r.a_scales = NULL;
        r.a_rows_len = 0;
        r.a_zero_point = zps[i];
        if (o.a_scales) {
            assert_int_equal(mxp_qmatmul_scales(comb, ascales[i], bscales, N, 1.0), MXP_OK);
            r.scales = comb;
        }
        const unsigned char *row = rc->trans_a ? at_buf + i : a + (size_t)i * K;
        assert_int_equal(mxp_gemm(rc->trans_a ? MXP_TRANS : MXP_NO_TRANS, MXP_NO_TRANS, 1, N, K, 1.0, row, rc->at,
                                  lda, b, MXP_S8, N, beta, want + (size_t)i * N * cs, rc->ct, N, &r),
                         MXP_OK);
    }
    if (memcmp(got, want, (size_t)m * N * cs)) {
        for (size_t q = 0; q < (size_t)m * N; q++)
            if (memcmp(got + q * cs, want + q * cs, cs))
                fail_msg("A %s C %s trans %d zb %d kind %d m %d: C[%zu][%zu] differs from its row's GEMM",
                         mxp_dtype_name(rc->at), mxp_dtype_name(rc->ct), rc->trans_a, (int)rc->zb, rc->kind, m,
                         q / N, q % N);
    }
    if (rc->ct == MXP_S32 && beta == 0) /* the exact sums, in int64 */
        for (int i = 0; i < m; i++)
            for (int j = 0; j < N; j++) {
                int64_t s = 0;
                for (int p = 0; p < K; p++) {
                    const int64_t x = rc->at == MXP_U8 ? (int64_t)a[i * K + p] : (int64_t)(int8_t)a[i * K + p];
                    s += (x - zps[i]) * ((int64_t)b[p * N + j] - rc->zb);
                }
                assert_int_equal(((const int32_t *)(const void *)got)[i * N + j], s);
            }
    free(got);
    free(want);
}

static void test_rows_match_one_row_gemms(void **state)
{
    (void)state;
    const mxp_dtype cts[5] = { MXP_F32, MXP_F64, MXP_BF16, MXP_S8, MXP_S32 };
    const int ms[3] = { 1, 17, MM };
    int cases = 0;
    for (int threads = 1; threads <= 2; threads++) {
        assert_int_equal(mxp_set_num_threads(threads), MXP_OK);
        for (int ai = 0; ai < 2; ai++) {
            const mxp_dtype at = ai ? MXP_S8 : MXP_U8;
            inputs(at);
            for (int ci = 0; ci < 5; ci++)
                for (int kind = 0; kind < 4; kind++) {
                    const mxp_dtype ct = cts[ci];
                    if ((ct == MXP_S8 && kind == 3) || (ct == MXP_S32 && (kind == 1 || kind == 2)))
                        continue; /* requantized C takes no beta; int32 C no epilogue */
                    for (int t = 0; t < 2; t++)
                        for (int zb = 0; zb < 2; zb++)
                            for (int mi = 0; mi < 3; mi++) {
                                const rows_case rc = { at, ct, t == 1, zb ? -7 : 0, kind };
                                run_case(&rc, ms[mi]);
                                cases++;
                            }
                }
        }
    }
    assert_true(cases > 300);
    assert_int_equal(mxp_set_num_threads(0), MXP_OK);
}

/* Zero points only into float32: the scales per column alone, a_scales
 * NULL (row i's scale 1). */
static void test_zero_points_without_row_scales(void **state)
{
    (void)state;
    inputs(MXP_U8);
    float got[3 * N], want[3 * N];
    const mxp_gemm_opts o = { .a_zero_points = zps + 5, .scales = bscales, .n_scales = N };
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 3, N, K, 1.0, a, MXP_U8, K, b, MXP_S8, N, 0.0, got, MXP_F32,
                              N, &o),
                     MXP_OK);
    for (int i = 0; i < 3; i++) {
        const mxp_gemm_opts r = { .a_zero_point = zps[5 + i], .scales = bscales, .n_scales = N };
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 1, N, K, 1.0, a + i * K, MXP_U8, K, b, MXP_S8, N, 0.0,
                                  want + i * N, MXP_F32, N, &r),
                         MXP_OK);
    }
    assert_memory_equal(got, want, sizeof got);
}

/* Per-column scales where the float64 requantization kernel stops inside a
 * row (a lane whose acc * m needs 55 bits: rounded to odd by the general
 * path from there): the columns after the stop keep their own scales.
 * Each column of the whole product against the one-column product with
 * that column's scale (a regression: the finish once took the scales of
 * the columns before the stop). */
static void test_columns_after_the_kernel_stops_keep_their_scales(void **state)
{
    (void)state;
    enum { RM = 2, RN = 40, RK = 20000 };
    uint8_t *ua = malloc(RM * RK);
    int8_t *sb = malloc((size_t)RK * RN);
    assert_non_null(ua);
    assert_non_null(sb);
    memset(ua, 255, RM * RK);
    for (int p = 0; p < RK; p++)
        for (int j = 0; j < RN; j++) /* columns 0-23 small sums (the kernel's), the rest near 255 * 127 * K = 2^29.2 */
            sb[p * RN + j] = (int8_t)(j < 24 ? (p % 3) - 1 : 127 - (j + p) % 3);
    float sc[RN];
    double rbias[RM] = { -2.75, 1.5 }; /* per row: each chunk of a row goes through the kernel from its start */
    for (int j = 0; j < RN; j++)
        sc[j] = ldexpf((float)(0xffffff - 2 * j), -24 - 25 - j % 3); /* 24-bit odd mantissas: acc m beyond 2^53 */
    const mxp_dtype cts[2] = { MXP_S8, MXP_F32 };
    for (int ci = 0; ci < 2; ci++) {
        const mxp_dtype ct = cts[ci];
        const size_t cs = mxp_dtype_itemsize(ct);
        unsigned char got[RM * RN * 4], want[RM * RN * 4];
        const mxp_gemm_opts o = { .scales = sc, .n_scales = RN, .bias = rbias, .bias_dtype = MXP_F64,
                                  .bias_kind = MXP_BIAS_PER_ROW, .activation = MXP_ACT_RELU };
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, RM, RN, RK, 1.0, ua, MXP_U8, RK, sb, MXP_S8, RN, 0.0, got,
                                  ct, RN, &o),
                         MXP_OK);
        for (int j = 0; j < RN; j++) {
            const mxp_gemm_opts r = { .scales = sc + j, .n_scales = 1, .bias = rbias, .bias_dtype = MXP_F64,
                                      .bias_kind = MXP_BIAS_PER_ROW, .activation = MXP_ACT_RELU };
            unsigned char col[RM * 4];
            assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, RM, 1, RK, 1.0, ua, MXP_U8, RK, sb + j, MXP_S8, RN,
                                      0.0, col, ct, 1, &r),
                             MXP_OK);
            for (int i = 0; i < RM; i++)
                memcpy(want + ((size_t)i * RN + j) * cs, col + (size_t)i * cs, cs);
        }
        if (memcmp(got, want, RM * RN * cs))
            fail_msg("%s C: a column differs from its one-column product", mxp_dtype_name(ct));
    }
    free(ua);
    free(sb);
}

static void expect_refused(const mxp_gemm_opts *o, mxp_dtype at, mxp_dtype ct, mxp_status want, const char *word)
{
    float c[4 * N];
    for (int q = 0; q < 4 * N; q++)
        c[q] = -9.5f;
    const void *pa = at == MXP_F32 ? (const void *)bscales : (const void *)a;
    const void *pb = at == MXP_F32 ? (const void *)bias : (const void *)b;
    const mxp_status st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 4, N, at == MXP_F32 ? 1 : K, 1.0, pa, at,
                                   at == MXP_F32 ? 1 : K, pb, at == MXP_F32 ? MXP_F32 : MXP_S8, N, 0.0, c, ct, N, o);
    assert_int_equal(st, want);
    if (!strstr(mxp_last_error(), word))
        fail_msg("error \"%s\" does not name \"%s\"", mxp_last_error(), word);
    for (int q = 0; q < 4 * N && ct == MXP_F32; q++)
        assert_true(c[q] == -9.5f);
}

static void test_bad_row_parameters_are_refused(void **state)
{
    (void)state;
    inputs(MXP_U8);
    int32_t bad_zp[4] = { 3, 256, 0, 0 };
    float bad_s[4] = { 1, NAN, 1, 1 }, huge[4] = { 3e38f, 1, 1, 1 }, big_cols[N];
    for (int j = 0; j < N; j++)
        big_cols[j] = 2.0f;
    const mxp_gemm_opts both = { .a_zero_point = 1, .a_zero_points = zps };
    expect_refused(&both, MXP_U8, MXP_F32, MXP_ERR_INVALID_ARGUMENT, "a_zero_point");
    expect_refused(&(mxp_gemm_opts){ .a_zero_points = bad_zp }, MXP_U8, MXP_F32, MXP_ERR_INVALID_ARGUMENT,
                   "a_zero_points[1]");
    int32_t s8_zp[4] = { 0, 0, 0, 128 };
    expect_refused(&(mxp_gemm_opts){ .a_zero_points = s8_zp }, MXP_S8, MXP_F32, MXP_ERR_INVALID_ARGUMENT,
                   "a_zero_points[3]");
    expect_refused(&(mxp_gemm_opts){ .a_scales = bad_s }, MXP_U8, MXP_F32, MXP_ERR_INVALID_ARGUMENT, "a_scales[1]");
    expect_refused(&(mxp_gemm_opts){ .a_scales = huge, .scales = big_cols, .n_scales = N }, MXP_U8, MXP_F32,
                   MXP_ERR_INVALID_ARGUMENT, "float32");
    expect_refused(&(mxp_gemm_opts){ .a_zero_points = zps, .a_rows_len = 3 }, MXP_U8, MXP_F32,
                   MXP_ERR_INVALID_ARGUMENT, "a_rows_len");
    expect_refused(&(mxp_gemm_opts){ .a_scales = ascales }, MXP_U8, MXP_S32, MXP_ERR_UNSUPPORTED, "a_scales");
    expect_refused(&(mxp_gemm_opts){ .a_zero_points = zps }, MXP_F32, MXP_F32, MXP_ERR_INVALID_ARGUMENT,
                   "integer GEMM");
    /* C over the scales it reads */
    float shared[4 * N];
    const mxp_gemm_opts over = { .a_scales = shared + 2 };
    for (int q = 0; q < 4 * N; q++)
        shared[q] = 1.0f;
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 4, N, K, 1.0, a, MXP_U8, K, b, MXP_S8, N, 0.0, shared,
                              MXP_F32, N, &over),
                     MXP_ERR_OVERLAP);
    assert_non_null(strstr(mxp_last_error(), "a_scales"));
    /* the batched GEMM and mxp_matmul: one matrix's rows only */
    float c[2 * 4 * N];
    const mxp_gemm_opts rows = { .a_zero_points = zps };
    assert_int_equal(mxp_gemm_strided_batched(2, MXP_NO_TRANS, MXP_NO_TRANS, 4, N, K, 1.0, a, MXP_U8, K, 0, b, MXP_S8,
                                              N, 0, 0.0, c, MXP_F32, N, 4 * N, &rows),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "mxp_gemm for each"));
    mxp_array *xa = NULL, *xb = NULL, *xc = NULL;
    assert_int_equal(mxp_array_wrap(&xa, a, MXP_U8, 2, (int64_t[]){ 4, K }, NULL, false, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_array_wrap(&xb, b, MXP_S8, 2, (int64_t[]){ K, N }, NULL, false, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_matmul(&xc, xa, xb, &rows), MXP_ERR_INVALID_ARGUMENT);
    assert_null(xc);
    assert_non_null(strstr(mxp_last_error(), "mxp_matmul"));
    mxp_array_free(xa);
    mxp_array_free(xb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_match_one_row_gemms),
        cmocka_unit_test(test_zero_points_without_row_scales),
        cmocka_unit_test(test_columns_after_the_kernel_stops_keep_their_scales),
        cmocka_unit_test(test_bad_row_parameters_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

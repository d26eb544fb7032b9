/* Small float32 and float64 products, bit for bit: at every SIMD level
 * the machine has, mxp_gemm (A and B not transposed, C of the operands'
 * dtype, no epilogue, k within one KC block) gives each element as the
 * kernels' contract computes it -- the chain of fused multiply-adds in k
 * order from 0, then alpha * sum, and beta * C added by one more fused
 * multiply-add (beta 0: C not read, its NaNs overwritten).  Tiny products
 * (src/gemm/direct.c: A and B read in place, nothing packed) and the packed
 * loops with one KC block both compute these bits; the shapes run from 2
 * x 1 x 1 (one row is the GEMV's, another order), A stored or transposed,
 * past the tiny limits (96^3
 * multiply-adds, 64 KiB of B) into the packed loops (the direct small-M
 * loops, which add into C every 16 rows of B, excepted), with edge rows
 * and columns of every tile, padded leading dimensions and unaligned
 * starts; and bad shapes keep their errors. */
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "support/prng.h"

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))

/* The contract's element (i, j), in float32 or float64; A's (i, p) at
 * a[i * ar + p * ak]. */
static void reference(mxp_dtype t, size_t m, size_t n, size_t k, double alpha, const void *a, size_t ar, size_t ak,
                      const void *b, size_t ldb, double beta, void *c, size_t ldc)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            if (t == MXP_F32) {
                const float *fa = a, *fb = b;
                float *fc = c, s = 0;
                for (size_t p = 0; p < k; p++)
                    s = fmaf(fa[i * ar + p * ak], fb[p * ldb + j], s);
                const float x = (float)alpha * s;
                fc[i * ldc + j] = beta != 0 ? fmaf((float)beta, fc[i * ldc + j], x) : x;
            } else {
                const double *da = a, *db = b;
                double *dc = c, s = 0;
                for (size_t p = 0; p < k; p++)
                    s = fma(da[i * ar + p * ak], db[p * ldb + j], s);
                const double x = alpha * s;
                dc[i * ldc + j] = beta != 0 ? fma(beta, dc[i * ldc + j], x) : x;
            }
        }
}

static void fill(mxp_dtype t, void *x, size_t count, uint64_t *rng)
{
    for (size_t i = 0; i < count; i++) {
        const double v = prng_range(rng, -2, 2);
        if (t == MXP_F32)
            ((float *)x)[i] = (float)v;
        else
            ((double *)x)[i] = v;
    }
}

/* One product through mxp_gemm against the reference; ta: A stored
 * transposed (k rows of m); offset: elements from an aligned start (1:
 * every operand misaligned by one element). */
static void check_shape(mxp_dtype t, bool ta, size_t m, size_t n, size_t k, size_t pad, size_t offset, double alpha,
                        double beta, uint64_t *rng)
{
    const size_t es = mxp_dtype_itemsize(t), lda = (ta ? m : k) + pad, ldb = n + pad, ldc = n + pad;
    const size_t a_lines = ta ? k : m;
    unsigned char *a = malloc((a_lines * lda + offset) * es), *b = malloc((k * ldb + offset) * es);
    unsigned char *c = malloc((m * ldc + offset) * es), *want = malloc((m * ldc + offset) * es);
    assert_true(a && b && c && want);
    fill(t, a, a_lines * lda + offset, rng);
    fill(t, b, k * ldb + offset, rng);
    fill(t, c, m * ldc + offset, rng);
    if (beta == 0) /* beta 0: C's NaNs never reach the result */
        for (size_t i = 0; i < m * ldc + offset; i += 3) {
            if (t == MXP_F32)
                ((float *)(void *)c)[i] = NAN;
            else
                ((double *)(void *)c)[i] = NAN;
        }
    memcpy(want, c, (m * ldc + offset) * es);
    const size_t o = offset * es;
    reference(t, m, n, k, alpha, a + o, ta ? 1 : lda, ta ? lda : 1, b + o, ldb, beta, want + o, ldc);
    assert_int_equal(mxp_gemm(ta ? MXP_TRANS : MXP_NO_TRANS, MXP_NO_TRANS, m, n, k, alpha, a + o, t, lda, b + o, t,
                              ldb, beta, c + o, t, ldc, NULL),
                     MXP_OK);
    if (memcmp(c, want, (m * ldc + offset) * es) != 0) {
        for (size_t i = 0; i < m * ldc + offset; i++)
            if (memcmp(c + i * es, want + i * es, es) != 0)
                fail_msg("%s at %s: %zu x %zu x %zu%s (pad %zu, offset %zu, alpha %g, beta %g): element %zu is "
                         "%a, the contract's %a",
                         mxp_dtype_name(t), mxp_isa_name(mxp_isa_current()), m, n, k, ta ? " (A^T)" : "", pad,
                         offset, alpha, beta, i,
                         t == MXP_F32 ? (double)((float *)(void *)c)[i] : ((double *)(void *)c)[i],
                         t == MXP_F32 ? (double)((float *)(void *)want)[i] : ((double *)(void *)want)[i]);
    }
    free(a);
    free(b);
    free(c);
    free(want);
}

/* The levels with fused multiply-adds that this machine has (the scalar
 * level multiplies, then adds: another contract). */
static void for_each_level(void (*run)(void))
{
    const mxp_isa levels[] = { MXP_ISA_AVX2, MXP_ISA_AVX512, MXP_ISA_AVX512BF16 };
    int ran = 0;
    for (size_t l = 0; l < NELEMS(levels); l++)
        if (levels[l] <= mxp_isa_supported()) {
            assert_int_equal(mxp_set_isa(levels[l]), MXP_OK);
            if (mxp_isa_current() != levels[l])
                continue; /* capped lower (MXP_ISA) */
            run();
            ran++;
        }
    assert_int_equal(mxp_set_isa(mxp_isa_supported()), MXP_OK);
    if (!ran)
        skip();
}

static void small_shapes(void)
{
    static const size_t dims[] = { 2, 5, 6, 7, 8, 9, 15, 16, 17, 24, 31, 33, 47, 49, 64, 65, 1 };
    static const double alphas[] = { 1, -0.75, 2 }, betas[] = { 0, 1, 0.25 };
    uint64_t rng = prng_seed(21);
    size_t w = 0;
    for (int dt = 0; dt < 2; dt++)
        for (size_t mi = 0; mi < NELEMS(dims); mi++)
            for (size_t ni = 0; ni < NELEMS(dims); ni++, w++) {
                const size_t k = dims[(mi * 7 + ni * 3) % NELEMS(dims)];
                if (dims[mi] == 1)
                    continue; /* one row: the GEMV */
                check_shape(dt ? MXP_F64 : MXP_F32, w % 5 == 1, dims[mi], dims[ni], k, w % 3, w % 2,
                            alphas[w % 3], betas[(w / 3) % 3], &rng);
            }
}

/* Around the tiny limits: 96^3 multiply-adds (in), 97 x 96 x 96 (out),
 * 64 KiB of float32 B (128 x 128 and 127 x 128: out) and float64's 96 x 96
 * (72 KiB: out), a deep k (256: the AVX2 level's KC) with few rows. */
static void limit_shapes(void)
{
    static const size_t shapes[][3] = { { 96, 96, 96 }, { 97, 96, 96 }, { 40, 128, 128 }, { 20, 128, 127 },
                                        { 12, 16, 256 }, { 96, 80, 96 }, { 33, 7, 200 } };
    uint64_t rng = prng_seed(22);
    for (int dt = 0; dt < 2; dt++)
        for (size_t s = 0; s < NELEMS(shapes); s++)
            check_shape(dt ? MXP_F64 : MXP_F32, s % 3 == 1, shapes[s][0], shapes[s][1], shapes[s][2], s % 2,
                        (s + 1) % 2, s % 2 ? -1.5 : 1, s % 3 ? 0.5 : 0, &rng);
}

static void test_small_products_have_the_kernels_bits_at_every_level(void **state)
{
    (void)state;
    for_each_level(small_shapes);
}

static void test_products_around_the_tiny_limits_have_the_same_bits(void **state)
{
    (void)state;
    for_each_level(limit_shapes);
}

/* Bad shapes and strides keep their errors on the tiny path's sizes. */
static void test_bad_small_products_are_refused(void **state)
{
    (void)state;
    float a[64], b[64], c[64];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    memset(c, 0, sizeof c);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 4, 4, 4, 1, a, MXP_F32, 3, b, MXP_F32, 4, 0, c, MXP_F32, 4,
                              NULL),
                     MXP_ERR_INVALID_ARGUMENT); /* lda < k */
    assert_non_null(strstr(mxp_last_error(), "lda"));
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 4, 4, 4, 1, NULL, MXP_F32, 4, b, MXP_F32, 4, 0, c, MXP_F32,
                              4, NULL),
                     MXP_ERR_INVALID_ARGUMENT); /* no A */
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 4, 4, 4, 1, a, MXP_F32, 4, b, MXP_F32, 3, 0, c, MXP_F32, 4,
                              NULL),
                     MXP_ERR_INVALID_ARGUMENT); /* ldb < n */
    for (size_t i = 0; i < 64; i++)
        assert_true(c[i] == 0); /* nothing written */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_products_have_the_kernels_bits_at_every_level),
        cmocka_unit_test(test_products_around_the_tiny_limits_have_the_same_bits),
        cmocka_unit_test(test_bad_small_products_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

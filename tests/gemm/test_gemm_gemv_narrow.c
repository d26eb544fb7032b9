/* mxp_gemm with a float8_e4m3fn, float8_e5m2, bfloat16 or float16 B: at
 * M = 1 (one token of weight-only inference; src/gemm/gemv.c streams B
 * through the GEMV kernels) the bits of the same call on a float32 copy of
 * B, at every ISA level, both transposes of A and B, tails of n and k,
 * float32 and bfloat16 A, alpha, beta, a bias and an activation; more rows
 * (packed) within rounding of float64; a NaN in B makes its column NaN
 * (e5m2's infinities infinite); an A whose values reach 2^120
 * (float8_e4m3fn's GEMV takes x times 2^8) still gets its products,
 * through the GEMM kernels. */
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

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))

static uint64_t rng = 0x3c6ef372fe94f82bull;

/* A finite float8 pattern of type t, any sign, subnormals and zeros included. */
static uint8_t finite_pattern(mxp_dtype t)
{
    for (;;) {
        const uint8_t b = (uint8_t)(prng_next(&rng) >> 24);
        if (t == MXP_E4M3 ? (b & 0x7f) != 0x7f : (b & 0x7c) != 0x7c)
            return b;
    }
}

typedef struct call {
    mxp_dtype a_type, b_type;
    int ta, tb;
    size_t m, n, k;
    double alpha, beta;
} call;

/* C (m x n float32 from c0) after the call with B of b_type (bytes b8):
 * where m = 1 the bits of the call on a float32 copy of B, else each row
 * within 2 k u sum |a b| of float64 (the bias a row's own). */
static void check_rows(const call *cl, const void *a, const float *a32, const uint8_t *b8, const float *c0,
                       const float *bias)
{
    const size_t nb = cl->n * cl->k, ldb = cl->tb ? cl->k : cl->n, lda = cl->ta ? cl->m : cl->k;
    const size_t as = mxp_dtype_itemsize(cl->a_type);
    float *b32 = malloc(nb * sizeof *b32), *c = malloc(cl->m * cl->n * sizeof *c), *r = malloc(cl->n * sizeof *r);
    assert_true(b32 && c && r);
    assert_int_equal(mxp_convert(b32, MXP_F32, b8, cl->b_type, nb, NULL), MXP_OK);
    const mxp_trans opa = cl->ta ? MXP_TRANS : MXP_NO_TRANS, opb = cl->tb ? MXP_TRANS : MXP_NO_TRANS;
    mxp_gemm_opts o = { .bias = bias, .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_ROW,
                        .activation = MXP_ACT_RELU };
    memcpy(c, c0, cl->m * cl->n * sizeof *c);
    assert_int_equal(mxp_gemm(opa, opb, cl->m, cl->n, cl->k, cl->alpha, a, cl->a_type, lda, b8, cl->b_type, ldb,
                              cl->beta, c, MXP_F32, cl->n, &o),
                     MXP_OK);
    for (size_t i = 0; i < cl->m; i++) {
        const unsigned char *ai = (const unsigned char *)a + (cl->ta ? i : i * lda) * as;
        mxp_gemm_opts oi = o;
        oi.bias = bias + i;
        memcpy(r, c0 + i * cl->n, cl->n * sizeof *r);
        assert_int_equal(mxp_gemm(opa, opb, 1, cl->n, cl->k, cl->alpha, ai, cl->a_type, lda, b32, MXP_F32, ldb,
                                  cl->beta, r, MXP_F32, cl->n, &oi),
                         MXP_OK);
        const float *ci = c + i * cl->n;
        if (cl->m == 1) {
            if (memcmp(ci, r, cl->n * sizeof *r))
                fail_msg("%s B, %s A, ta %d tb %d, m %zu n %zu k %zu at %s: row %zu not the bits of float32 B",
                         mxp_dtype_name(cl->b_type), mxp_dtype_name(cl->a_type), cl->ta, cl->tb, cl->m, cl->n, cl->k,
                         mxp_isa_name(mxp_isa_current()), i);
            continue;
        }
        for (size_t j = 0; j < cl->n; j++) {
            double ref = 0, abs_sum = 0;
            for (size_t p = 0; p < cl->k; p++) {
                const double ab = (double)a32[cl->ta ? p * cl->m + i : i * cl->k + p] *
                                  b32[cl->tb ? j * cl->k + p : p * cl->n + j];
                ref += ab;
                abs_sum += fabs(ab);
            }
            ref = cl->alpha * ref + cl->beta * c0[i * cl->n + j] + bias[i];
            ref = ref > 0 ? ref : 0;
            if (fabs(ci[j] - ref) > 2.0 * (double)(cl->k + 3) * 0x1p-24 * (cl->alpha * abs_sum + fabs(ref) + 1))
                fail_msg("m %zu at %s: C[%zu][%zu] = %a, float64 %a", cl->m, mxp_isa_name(mxp_isa_current()), i, j,
                         (double)ci[j], ref);
        }
    }
    free(b32);
    free(c);
    free(r);
}

static void test_gemv_float8_b_gives_the_bits_of_its_float32_values(void **state)
{
    (void)state;
    const mxp_dtype bts[] = { MXP_E4M3, MXP_E5M2, MXP_BF16, MXP_F16 }, ats[] = { MXP_F32, MXP_BF16 };
    const size_t ms[] = { 1, 3, 8 }, ns[] = { 1, 7, 45, 130 }, ks[] = { 1, 3, 53, 300 };
    size_t compared = 0;
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t d = 0; d < NELEMS(bts); d++)
            for (size_t at = 0; at < NELEMS(ats); at++)
                for (int tr = 0; tr < 4; tr++)
                    for (size_t im = 0; im < NELEMS(ms); im++)
                        for (size_t in = 0; in < NELEMS(ns); in++)
                            for (size_t ik = 0; ik < NELEMS(ks); ik++) {
                                const call cl = { ats[at], bts[d], tr & 1, tr >> 1, ms[im], ns[in], ks[ik], 1.25,
                                                  ik % 2 ? 0.5 : 0.0 };
                                const size_t na = cl.m * cl.k;
                                float *af = malloc(na * sizeof *af), *c0 = malloc(cl.m * cl.n * sizeof *c0);
                                float *bias = malloc(cl.m * sizeof *bias);
                                uint16_t *a16 = malloc(na * sizeof *a16);
                                const size_t bs = mxp_dtype_itemsize(cl.b_type), nb = cl.n * cl.k;
                                uint8_t *b8 = malloc(nb * bs);
                                float *bf = malloc(nb * sizeof *bf);
                                assert_true(af && c0 && bias && a16 && b8 && bf);
                                for (size_t p = 0; p < na; p++)
                                    af[p] = (float)(prng_uniform(&rng) * 4 - 2);
                                for (size_t j = 0; j < cl.m * cl.n; j++)
                                    c0[j] = (float)(prng_uniform(&rng) - 0.5);
                                for (size_t i = 0; i < cl.m; i++)
                                    bias[i] = (float)(prng_uniform(&rng) - 0.5);
                                for (size_t i = 0; i < nb; i++) /* float8: any finite pattern */
                                    if (bs == 1)
                                        b8[i] = finite_pattern(cl.b_type);
                                    else
                                        bf[i] = (float)(prng_uniform(&rng) * 4 - 2);
                                if (bs > 1)
                                    assert_int_equal(mxp_convert(b8, cl.b_type, bf, MXP_F32, nb, NULL), MXP_OK);
                                assert_int_equal(mxp_convert(a16, MXP_BF16, af, MXP_F32, na, NULL), MXP_OK);
                                if (cl.a_type == MXP_BF16) /* the reference's A: the bfloat16 values */
                                    assert_int_equal(mxp_convert(af, MXP_F32, a16, MXP_BF16, na, NULL), MXP_OK);
                                check_rows(&cl, cl.a_type == MXP_F32 ? (const void *)af : (const void *)a16, af, b8,
                                           c0, bias);
                                compared++;
                                free(af);
                                free(c0);
                                free(bias);
                                free(a16);
                                free(b8);
                                free(bf);
                            }
    }
    assert_true(compared > 0);
    assert_int_equal(mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1)), MXP_OK);
}

/* NaN and infinite patterns of B reach their columns, alone: k = 37 (a
 * vector and a tail), B's column 3 (B not transposed) or row 3 (transposed)
 * holds the special pattern at k = 20; every other column stays finite. */
static void test_gemv_float8_specials_reach_their_column(void **state)
{
    (void)state;
    enum { N = 40, KK = 37 };
    const struct {
        mxp_dtype t;
        uint8_t pattern;
        int nan; /* else +inf */
    } cases[] = { { MXP_E4M3, 0x7f, 1 }, { MXP_E4M3, 0xff, 1 }, { MXP_E5M2, 0x7e, 1 }, { MXP_E5M2, 0xfd, 1 },
                  { MXP_E5M2, 0x7c, 0 } };
    float a[KK], c[N];
    uint8_t b[N * KK];
    for (size_t p = 0; p < KK; p++)
        a[p] = 0.5f + (float)p / 64;
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t i = 0; i < NELEMS(cases); i++)
            for (int tb = 0; tb < 2; tb++) {
                for (size_t q = 0; q < N * KK; q++)
                    b[q] = finite_pattern(cases[i].t);
                b[tb ? 3 * KK + 20 : 20 * N + 3] = cases[i].pattern;
                assert_int_equal(mxp_gemm(MXP_NO_TRANS, tb ? MXP_TRANS : MXP_NO_TRANS, 1, N, KK, 1.0, a, MXP_F32, KK,
                                          b, cases[i].t, tb ? KK : N, 0.0, c, MXP_F32, N, NULL),
                                 MXP_OK);
                for (size_t j = 0; j < N; j++) {
                    const int want_special = j == 3;
                    const int ok = !want_special            ? isfinite(c[j])
                                   : cases[i].nan           ? isnan(c[j])
                                                            : isinf(c[j]) && c[j] > 0;
                    if (!ok)
                        fail_msg("%s pattern 0x%02x, tb %d at %s: C[%zu] = %a", mxp_dtype_name(cases[i].t),
                                 cases[i].pattern, tb, mxp_isa_name(mxp_isa_current()), j, (double)c[j]);
                }
            }
    }
    assert_int_equal(mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1)), MXP_OK);
}

/* A with values at 2^120 and beyond (x times 2^8 would overflow), in one
 * row (M = 1) or in the second of three: the products are still those of
 * x and B -- C within float32 rounding of a float64 reference, finite. */
static void test_gemv_e4m3_with_huge_a_still_multiplies(void **state)
{
    (void)state;
    enum { N = 50, KK = 33, MM = 3 };
    float a[MM * KK], c[MM * N], b32[KK * N];
    uint8_t b[KK * N];
    for (size_t p = 0; p < MM * KK; p++)
        a[p] = (float)(prng_uniform(&rng) * 2 - 1);
    for (size_t q = 0; q < KK * N; q++) /* magnitudes at most 1: the products stay finite */
        do
            b[q] = finite_pattern(MXP_E4M3);
        while ((b[q] & 0x7f) > 0x38);
    assert_int_equal(mxp_convert(b32, MXP_F32, b, MXP_E4M3, KK * N, NULL), MXP_OK);
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t m = 1; m <= MM; m += MM - 1) {
            const size_t huge_row = m == 1 ? 0 : 1;
            a[huge_row * KK + 5] = 0x1.8p121f;
            assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, m, N, KK, 1.0, a, MXP_F32, KK, b, MXP_E4M3, N, 0.0,
                                      c, MXP_F32, N, NULL),
                             MXP_OK);
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < N; j++) {
                    double ref = 0, abs_sum = 0;
                    for (size_t p = 0; p < KK; p++) {
                        ref += (double)a[i * KK + p] * b32[p * N + j];
                        abs_sum += fabs((double)a[i * KK + p] * b32[p * N + j]);
                    }
                    if (!isfinite(c[i * N + j]) || fabs(c[i * N + j] - ref) > 2.0 * KK * 0x1p-24 * abs_sum)
                        fail_msg("m %zu at %s: C[%zu][%zu] = %a, float64 %a", m, mxp_isa_name(mxp_isa_current()), i,
                                 j, (double)c[i * N + j], ref);
                }
            a[huge_row * KK + 5] = 0.5f;
        }
    }
    assert_int_equal(mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1)), MXP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemv_float8_b_gives_the_bits_of_its_float32_values),
        cmocka_unit_test(test_gemv_float8_specials_reach_their_column),
        cmocka_unit_test(test_gemv_e4m3_with_huge_a_still_multiplies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Stochastic rounding: reproducible for a seed at every ISA level, each
 * result one of the two neighbours, and unbiased: over 10^6 trials the mean
 * is within 3 sigma of the input -- into the 2022 types and into the 0.2
 * float8/float6/float4 formats and sub-byte integers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

enum { N = 1000000 };

/* Converts N copies of x (given as float64) from src_type to dst_type and
 * back to float64; checks the neighbours and the mean. */
static void check_unbiased(mxp_dtype src_type, double x, mxp_dtype dst_type, uint64_t seed)
{
    size_t ss = mxp_dtype_itemsize(src_type), ds = mxp_dtype_itemsize(dst_type);
    unsigned char *src = malloc(N * ss), *dst = malloc(N * ds);
    double *back = malloc(N * sizeof *back);
    assert_non_null(src);
    assert_non_null(dst);
    assert_non_null(back);
    unsigned char one[8];
    assert_int_equal(mxp_convert(one, src_type, &x, MXP_F64, 1, NULL), MXP_OK);
    double exact;
    assert_int_equal(mxp_convert(&exact, MXP_F64, one, src_type, 1, NULL), MXP_OK);
    for (size_t i = 0; i < N; i++)
        memcpy(src + i * ss, one, ss);
    mxp_convert_opts down = { .rounding = MXP_ROUND_DOWN, .overflow = MXP_OVERFLOW_INF, .seed = 0, .flags = NULL };
    mxp_convert_opts up = { .rounding = MXP_ROUND_UP, .overflow = MXP_OVERFLOW_INF, .seed = 0, .flags = NULL };
    mxp_convert_opts sr = { .rounding = MXP_ROUND_STOCHASTIC, .overflow = MXP_OVERFLOW_INF, .seed = seed, .flags = NULL };
    unsigned char lo_b[8], hi_b[8];
    double lo, hi;
    mxp_convert(lo_b, dst_type, one, src_type, 1, &down);
    mxp_convert(hi_b, dst_type, one, src_type, 1, &up);
    mxp_convert(&lo, MXP_F64, lo_b, dst_type, 1, NULL);
    mxp_convert(&hi, MXP_F64, hi_b, dst_type, 1, NULL);
    assert_int_equal(mxp_convert(dst, dst_type, src, src_type, N, &sr), MXP_OK);
    assert_int_equal(mxp_convert(back, MXP_F64, dst, dst_type, N, NULL), MXP_OK);
    double sum = 0;
    size_t n_hi = 0;
    for (size_t i = 0; i < N; i++) {
        if (back[i] != lo && back[i] != hi)
            fail_msg("%s -> %s: %.17g became %.17g, not a neighbour (%.17g, %.17g)", mxp_dtype_name(src_type),
                     mxp_dtype_name(dst_type), exact, back[i], lo, hi);
        n_hi += back[i] == hi && hi != lo;
        sum += back[i];
    }
    double mean = sum / N;
    if (hi != lo) {
        double p = (exact - lo) / (hi - lo);
        double sigma = (hi - lo) * sqrt(p * (1 - p) / N);
        if (fabs(mean - exact) > 3 * sigma)
            fail_msg("%s -> %s of %.17g: mean %.17g is %.2f sigma away (p = %g, up %zu times)",
                     mxp_dtype_name(src_type), mxp_dtype_name(dst_type), exact, mean,
                     fabs(mean - exact) / sigma, p, n_hi);
    } else {
        assert_true(mean == exact); /* exact values never move */
    }
    free(src);
    free(dst);
    free(back);
}

static void at_every_level(void (*check)(void))
{
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        check();
    }
    mxp_set_isa(MXP_ISA_COUNT - 1);
}

static void unbiased(void)
{
    check_unbiased(MXP_F32, 1.0 + 0x1p-10, MXP_BF16, 1);        /* p = 1/8 */
    check_unbiased(MXP_F32, -(1.0 + 0x1p-20), MXP_BF16, 2);     /* p = 2^-13 */
    check_unbiased(MXP_F32, 0.1, MXP_F16, 3);
    check_unbiased(MXP_F32, 3e-7, MXP_F16, 4);                  /* subnormal float16 */
    check_unbiased(MXP_F32, 0.3, MXP_E4M3, 5);
    check_unbiased(MXP_F32, 1000.7, MXP_E5M2, 6);
    check_unbiased(MXP_F32, 0.3, MXP_S8, 7);
    check_unbiased(MXP_F32, -2.75, MXP_S8, 8);
    check_unbiased(MXP_F64, 0.1, MXP_BF16, 9);
    check_unbiased(MXP_F64, 1.0 / 3.0, MXP_F16, 10);
    check_unbiased(MXP_F64, 1.0 / 3.0, MXP_F32, 11);
    check_unbiased(MXP_S32, 16777217.0, MXP_BF16, 12);
    check_unbiased(MXP_F32, 1.5, MXP_BF16, 13);                 /* exact */
    /* the 0.2 formats and the sub-byte integers, from float32 and the 16-bit sources */
    check_unbiased(MXP_F32, 0.3, MXP_E3M4, 14);
    check_unbiased(MXP_F32, -0.3, MXP_E4M3IEEE, 15);
    check_unbiased(MXP_F32, 0.3, MXP_E4M3FNUZ, 16);
    check_unbiased(MXP_F32, 1000.7, MXP_E5M2FNUZ, 17);
    check_unbiased(MXP_F32, 0.3, MXP_E4M3B11, 18);
    check_unbiased(MXP_F32, 3.0, MXP_E8M0, 19);                 /* between 2 and 4: p = 1/2 */
    check_unbiased(MXP_F32, 0.3, MXP_E2M3, 20);
    check_unbiased(MXP_F32, -5.5, MXP_E3M2, 21);
    check_unbiased(MXP_F32, 0.3, MXP_E2M1, 22);                 /* between 0 and 0.5 */
    check_unbiased(MXP_F32, -2.75, MXP_E2M1, 23);               /* between -3 and -2 */
    check_unbiased(MXP_F32, 0.3, MXP_S4, 24);
    check_unbiased(MXP_F32, -2.75, MXP_S4, 25);
    check_unbiased(MXP_F32, 2.5, MXP_U4, 26);
    check_unbiased(MXP_F32, -1.25, MXP_S2, 27);
    check_unbiased(MXP_F32, 1.7, MXP_U2, 28);
    check_unbiased(MXP_BF16, 0.3, MXP_E2M1, 29);
    check_unbiased(MXP_BF16, -2.75, MXP_S4, 30);
    check_unbiased(MXP_F16, 0.3, MXP_E3M4, 31);
    check_unbiased(MXP_F16, 1.7, MXP_U2, 32);
}

static void test_stochastic_rounding_is_unbiased_and_picks_neighbours(void **state)
{
    (void)state;
    at_every_level(unbiased);
}

static void test_same_seed_same_bits_other_seed_other_bits(void **state)
{
    (void)state;
    enum { M = 4096 };
    static float src[M];
    static uint16_t a[M], b[M], c[M];
    for (int i = 0; i < M; i++)
        src[i] = 1.0f + (float)i * 0x1p-17f;
    mxp_convert_opts o = { .rounding = MXP_ROUND_STOCHASTIC, .overflow = MXP_OVERFLOW_INF, .seed = 12345, .flags = NULL };
    assert_int_equal(mxp_convert(a, MXP_BF16, src, MXP_F32, M, &o), MXP_OK);
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        mxp_set_isa((mxp_isa)isa);
        assert_int_equal(mxp_convert(b, MXP_BF16, src, MXP_F32, M, &o), MXP_OK);
        assert_memory_equal(a, b, sizeof a);
    }
    mxp_set_isa(MXP_ISA_COUNT - 1);
    o.seed = 12346;
    assert_int_equal(mxp_convert(c, MXP_BF16, src, MXP_F32, M, &o), MXP_OK);
    int differ = 0;
    for (int i = 0; i < M; i++)
        differ += a[i] != c[i];
    assert_true(differ > M / 10);
}

/* An array converted in pieces with index_offset gives the bits of one
 * whole call, also across a 2^32-index block boundary of the stream. */
static void test_index_offset_splits_an_array_without_changing_bits(void **state)
{
    (void)state;
    enum { M = 3000 };
    static double src[M];
    static uint16_t whole[M], parts[M];
    for (int i = 0; i < M; i++)
        src[i] = 0.1 * (i + 1);
    const uint64_t offsets[] = { 0, (1ull << 32) - 1000, (7ull << 32) + 5 };
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        mxp_set_isa((mxp_isa)isa);
        for (size_t k = 0; k < sizeof offsets / sizeof offsets[0]; k++) {
            mxp_convert_opts o = { .rounding = MXP_ROUND_STOCHASTIC, .overflow = MXP_OVERFLOW_INF, .seed = 77, .flags = NULL, .index_offset = offsets[k] };
            assert_int_equal(mxp_convert(whole, MXP_BF16, src, MXP_F64, M, &o), MXP_OK);
            for (size_t at = 0; at < M; at += 700) {
                size_t len = M - at < 700 ? M - at : 700;
                mxp_convert_opts q = o;
                q.index_offset = offsets[k] + at;
                assert_int_equal(mxp_convert(parts + at, MXP_BF16, src + at, MXP_F64, len, &q), MXP_OK);
            }
            assert_memory_equal(whole, parts, sizeof whole);
            /* The reference path (counters requested) agrees. */
            mxp_convert_flags fl = { 0, 0, 0, 0 };
            mxp_convert_opts r = o;
            r.flags = &fl;
            assert_int_equal(mxp_convert(parts, MXP_BF16, src, MXP_F64, M, &r), MXP_OK);
            assert_memory_equal(whole, parts, sizeof whole);
        }
    }
    mxp_set_isa(MXP_ISA_COUNT - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stochastic_rounding_is_unbiased_and_picks_neighbours),
        cmocka_unit_test(test_same_seed_same_bits_other_seed_other_bits),
        cmocka_unit_test(test_index_offset_splits_an_array_without_changing_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

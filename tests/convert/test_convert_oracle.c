/* The reference converter against the MPFR oracle: every 8- and 16-bit
 * source pattern to every type, and for 32- and 64-bit sources the values
 * that decide rounding (see cases.c) plus random bits; the five
 * deterministic modes and both overflow policies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "convert/cases.h"
#include "convert/oracle.h"
#include "mxp.h"

enum { CAP = 1 << 17, N_RANDOM = 20000 };

static uint64_t *bits_buf;
static unsigned char *src_buf, *dst_buf;

static size_t check_pair(mxp_dtype dst, mxp_dtype src)
{
    size_t n = cases_build(src, dst, bits_buf, CAP, 0x5eed0000u + (uint64_t)src * 31 + dst, N_RANDOM);
    cases_store(src_buf, src, bits_buf, n);
    const mxp_dtype_traits *dt = mxp_dtype_get_traits(dst), *stt = mxp_dtype_get_traits(src);
    int n_overflow = dt->kind == MXP_KIND_FLOAT && (stt->max > dt->max || stt->has_inf) ? 2 : 1;
    size_t bad = 0, checked = 0;
    for (int mode = 0; mode < MXP_ROUND_STOCHASTIC; mode++) {
        for (int ov = 0; ov < n_overflow; ov++) {
            mxp_convert_opts o = { .rounding = (mxp_rounding)mode, .overflow = (mxp_overflow)ov, .seed = 0, .flags = NULL };
            assert_int_equal(mxp_convert(dst_buf, dst, src_buf, src, n, &o), MXP_OK);
            for (size_t i = 0; i < n; i++) {
                oracle_result want = oracle_convert(dst, src, bits_buf[i], (mxp_rounding)mode, (mxp_overflow)ov);
                uint64_t got = test_load_bits(dst_buf, i, dt->itemsize);
                checked++;
                if (!oracle_matches(&want, got, dst) && bad++ < 10)
                    print_error("%s -> %s %s/%s: src 0x%llx: got 0x%llx, oracle 0x%llx%s\n",
                                stt->name, dt->name, mxp_rounding_name((mxp_rounding)mode),
                                mxp_overflow_name((mxp_overflow)ov), (unsigned long long)bits_buf[i],
                                (unsigned long long)got, (unsigned long long)want.bits,
                                want.is_nan ? " (NaN)" : "");
            }
        }
    }
    if (bad)
        fail_msg("%s -> %s: %zu of %zu results differ from the oracle", stt->name, dt->name, bad, checked);
    return checked;
}

static void check_sources(const mxp_dtype *srcs, size_t ns)
{
    size_t total = 0;
    for (size_t s = 0; s < ns; s++)
        for (int d = 1; d < MXP_DTYPE_COUNT; d++)
            total += check_pair((mxp_dtype)d, srcs[s]);
    print_message("checked %zu conversions against MPFR\n", total);
}

static void test_every_8bit_pattern_to_every_type_matches_mpfr(void **state)
{
    (void)state;
    const mxp_dtype srcs[] = { MXP_BOOL, MXP_S8, MXP_U8, MXP_E4M3, MXP_E5M2, MXP_E3M4, MXP_E4M3IEEE,
                               MXP_E4M3B11, MXP_E4M3FNUZ, MXP_E5M2FNUZ, MXP_E8M0, MXP_E2M3, MXP_E3M2,
                               MXP_E2M1, MXP_S4, MXP_U4, MXP_S2, MXP_U2, MXP_S1, MXP_U1 };
    check_sources(srcs, sizeof srcs / sizeof srcs[0]);
}

static void test_every_16bit_pattern_to_every_type_matches_mpfr(void **state)
{
    (void)state;
    const mxp_dtype srcs[] = { MXP_F16, MXP_BF16, MXP_S16, MXP_U16 };
    check_sources(srcs, sizeof srcs / sizeof srcs[0]);
}

static void test_f32_edges_and_random_to_every_type_match_mpfr(void **state)
{
    (void)state;
    const mxp_dtype srcs[] = { MXP_F32 };
    check_sources(srcs, 1);
}

static void test_f64_edges_and_random_to_every_type_match_mpfr(void **state)
{
    (void)state;
    const mxp_dtype srcs[] = { MXP_F64 };
    check_sources(srcs, 1);
}

static void test_wide_int_edges_and_random_to_every_type_match_mpfr(void **state)
{
    (void)state;
    const mxp_dtype srcs[] = { MXP_S32, MXP_U32, MXP_S64, MXP_U64 };
    check_sources(srcs, sizeof srcs / sizeof srcs[0]);
}

static int setup(void **state)
{
    (void)state;
    bits_buf = malloc(CAP * sizeof *bits_buf);
    src_buf = malloc(CAP * 8);
    dst_buf = malloc(CAP * 8);
    /* The reference converter is what is checked here; SIMD levels are
     * compared with it in test_convert_isa. */
    return mxp_set_isa(MXP_ISA_SCALAR) != MXP_OK || !bits_buf || !src_buf || !dst_buf;
}

static int teardown(void **state)
{
    (void)state;
    free(bits_buf);
    free(src_buf);
    free(dst_buf);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_8bit_pattern_to_every_type_matches_mpfr),
        cmocka_unit_test(test_every_16bit_pattern_to_every_type_matches_mpfr),
        cmocka_unit_test(test_f32_edges_and_random_to_every_type_match_mpfr),
        cmocka_unit_test(test_f64_edges_and_random_to_every_type_match_mpfr),
        cmocka_unit_test(test_wide_int_edges_and_random_to_every_type_match_mpfr),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

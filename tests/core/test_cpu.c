/* CPU features and the ISA cap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static void test_supported_level_matches_the_feature_bits(void **state)
{
    (void)state;
    uint64_t f = mxp_cpu_features();
    mxp_isa s = mxp_isa_supported();
    if (s >= MXP_ISA_AVX2)
        assert_true((f & (MXP_CPU_AVX2 | MXP_CPU_FMA | MXP_CPU_F16C)) == (MXP_CPU_AVX2 | MXP_CPU_FMA | MXP_CPU_F16C));
    if (s >= MXP_ISA_AVX512)
        assert_true(f & MXP_CPU_AVX512F && f & MXP_CPU_AVX512BW && f & MXP_CPU_AVX512VL && f & MXP_CPU_AVX512DQ);
    if (s >= MXP_ISA_AVX512BF16)
        assert_true(f & MXP_CPU_AVX512BF16 && f & MXP_CPU_AVX512VNNI);
    if (s >= MXP_ISA_AMX)
        assert_true(f & MXP_CPU_AMX_TILE && f & MXP_CPU_AMX_BF16 && f & MXP_CPU_AMX_INT8);
    /* the tile features come only with the OS's leave, and then all three (on every AMX CPU) */
    if (f & MXP_CPU_AMX_TILE)
        assert_non_null(strstr(mxp_cpu_features_string(), "amx-tile"));
    if (f & MXP_CPU_AVX2)
        assert_non_null(strstr(mxp_cpu_features_string(), "avx2"));
    assert_non_null(mxp_cpu_brand());
}

/* The microarchitecture follows from vendor, family and features. */
static void test_uarch_follows_vendor_and_family(void **state)
{
    (void)state;
    const char *v = mxp_cpu_vendor(), *u = mxp_cpu_uarch();
    assert_non_null(v);
    int amd = !strcmp(v, "AuthenticAMD");
    const char *want = amd && mxp_cpu_family() == 0x19 && (mxp_cpu_features() & MXP_CPU_AVX512F) ? "zen4"
                       : amd && mxp_cpu_family() == 0x1a                                          ? "zen5"
                       : !strcmp(v, "GenuineIntel")                                              ? "intel"
                                                                                                 : "other";
    assert_string_equal(u, want);
    if (mxp_cpu_features() & MXP_CPU_SSE2) /* x86: CPUID gave a family */
        assert_true(mxp_cpu_family() >= 6);
}

static void test_set_isa_caps_and_clamps(void **state)
{
    (void)state;
    mxp_isa s = mxp_isa_supported();
    const char *env = getenv("MXP_ISA"); /* a cap that mxp_set_isa never lifts */
    if (env && mxp_isa_from_name(env) < s)
        s = (mxp_isa)mxp_isa_from_name(env);
    assert_int_equal(mxp_set_isa(MXP_ISA_SCALAR), MXP_OK);
    assert_int_equal(mxp_isa_current(), MXP_ISA_SCALAR);
    assert_int_equal(mxp_set_isa(MXP_ISA_AMX), MXP_OK);
    assert_int_equal(mxp_isa_current(), s); /* never above what the machine has */
    assert_int_equal(mxp_set_isa(MXP_ISA_AVX512BF16), MXP_OK);
    assert_int_equal(mxp_isa_current(), s < MXP_ISA_AVX512BF16 ? s : MXP_ISA_AVX512BF16);
    assert_int_equal(mxp_set_isa(MXP_ISA_COUNT - 1), MXP_OK);
    assert_int_equal(mxp_set_isa((mxp_isa)17), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "ISA"));
    assert_int_equal(mxp_isa_current(), s);
    for (int i = 0; i < MXP_ISA_COUNT; i++)
        assert_int_equal(mxp_isa_from_name(mxp_isa_name((mxp_isa)i)), i);
    assert_int_equal(mxp_isa_from_name("sse9"), MXP_ISA_COUNT);
    assert_string_equal(mxp_isa_name((mxp_isa)9), "invalid");
    assert_string_equal(mxp_isa_name(MXP_ISA_AMX), "amx");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_supported_level_matches_the_feature_bits),
        cmocka_unit_test(test_uarch_follows_vendor_and_family),
        cmocka_unit_test(test_set_isa_caps_and_clamps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

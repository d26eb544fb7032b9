/* The getter naming convention (docs/architecture.md, "Names"): the new
 * mxp_get_* / mxp_reset_* names and the old names they replace, which stay
 * as aliases, answer the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static void test_alignment_both_names(void **state)
{
    (void)state;
    assert_int_equal(mxp_get_alignment(), 64); /* the default */
    assert_int_equal(mxp_alignment(), 64);
    assert_int_equal(mxp_set_alignment(256), MXP_OK);
    assert_int_equal(mxp_get_alignment(), 256);
    assert_int_equal(mxp_alignment(), 256);
    void *p = mxp_malloc(10);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 256, 0);
    mxp_free(p);
    assert_int_equal(mxp_set_alignment(100), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_get_alignment(), 256); /* unchanged by the bad value */
    assert_int_equal(mxp_set_alignment(64), MXP_OK);
    assert_int_equal(mxp_alignment(), 64);
}

static void test_isa_both_names(void **state)
{
    (void)state;
    const mxp_isa top = mxp_isa_supported();
    assert_int_equal(mxp_get_isa(), mxp_isa_current());
    assert_int_equal(mxp_set_isa(MXP_ISA_SCALAR), MXP_OK);
    assert_int_equal(mxp_get_isa(), MXP_ISA_SCALAR);
    assert_int_equal(mxp_isa_current(), MXP_ISA_SCALAR);
    assert_int_equal(mxp_set_isa(top), MXP_OK);
    assert_true(mxp_get_isa() <= top);
    assert_int_equal(mxp_get_isa(), mxp_isa_current());
}

static void test_pool_getter(void **state)
{
    (void)state;
    assert_false(mxp_get_pool()); /* off by default */
    mxp_set_pool(true);
    assert_true(mxp_get_pool());
    mxp_set_pool(false);
    assert_false(mxp_get_pool());
}

static void test_memory_stats_both_names(void **state)
{
    (void)state;
    mxp_reset_memory_stats();
    mxp_memory_stats a = { 0 }, b = { 0 };
    mxp_get_memory_stats(&a);
    mxp_memory_stats_get(&b);
    assert_memory_equal(&a, &b, sizeof a);
    assert_int_equal(a.allocations, 0);
    void *p = mxp_malloc(1000);
    assert_non_null(p);
    mxp_get_memory_stats(&a);
    mxp_memory_stats_get(&b);
    assert_int_equal(a.allocations, 1);
    assert_memory_equal(&a, &b, sizeof a);
    assert_true(a.current_bytes >= 1000);
    mxp_free(p);
    mxp_memory_stats_reset(); /* the old name resets too */
    mxp_get_memory_stats(&a);
    assert_int_equal(a.allocations, 0);
    assert_int_equal(a.frees, 0);
    assert_int_equal(a.peak_bytes, a.current_bytes);
    mxp_get_memory_stats(NULL); /* nothing, no crash */
}

static void test_threads_getter(void **state)
{
    (void)state;
    assert_int_equal(mxp_set_num_threads(3), MXP_OK);
    assert_int_equal(mxp_get_num_threads(), 3);
    assert_int_equal(mxp_set_num_threads(0), MXP_OK);
    assert_true(mxp_get_num_threads() >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alignment_both_names),
        cmocka_unit_test(test_isa_both_names),
        cmocka_unit_test(test_pool_getter),
        cmocka_unit_test(test_memory_stats_both_names),
        cmocka_unit_test(test_threads_getter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

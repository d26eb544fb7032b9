/* mxp_activation_name and mxp_overflow_strategy_name: every value of the
 * enums named in order, "invalid" past them, and mxp_gemm_safe's report
 * sentence naming the strategy it applied. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static void test_activation_names(void **state)
{
    (void)state;
    assert_string_equal(mxp_activation_name(MXP_ACT_NONE), "none");
    assert_string_equal(mxp_activation_name(MXP_ACT_RELU), "relu");
    assert_string_equal(mxp_activation_name(MXP_ACT_GELU), "gelu");
    assert_string_equal(mxp_activation_name(MXP_ACT_GELU_TANH), "gelu_tanh");
    assert_string_equal(mxp_activation_name(MXP_ACT_SILU), "silu");
    assert_string_equal(mxp_activation_name((mxp_activation)(MXP_ACT_SILU + 1)), "invalid");
    assert_string_equal(mxp_activation_name((mxp_activation)-1), "invalid");
    /* each non-trivial activation is the unary op of the same name */
    assert_string_equal(mxp_activation_name(MXP_ACT_GELU_TANH), mxp_unary_op_name(MXP_OP_GELU_TANH));
}

static void test_strategy_names(void **state)
{
    (void)state;
    static const char *const want[] = { "none", "refuse", "clip", "scale", "promote" };
    for (int s = MXP_OVERFLOW_STRATEGY_NONE; s <= MXP_OVERFLOW_STRATEGY_PROMOTE; s++)
        assert_string_equal(mxp_overflow_strategy_name((mxp_overflow_strategy)s), want[s]);
    assert_string_equal(mxp_overflow_strategy_name((mxp_overflow_strategy)(MXP_OVERFLOW_STRATEGY_PROMOTE + 1)),
                        "invalid");
    /* the report's sentence names the strategy applied */
    const float a[4] = { 3e4f, 3e4f, 3e4f, 3e4f };
    uint16_t c[4] = { 0 };
    mxp_gemm_safe_opts so = { .strategy = MXP_OVERFLOW_STRATEGY_CLIP };
    mxp_gemm_safe_report r;
    assert_int_equal(mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 2, 1.0, a, MXP_F32, 2, a, MXP_F32, 2, 0.0, c,
                                   MXP_F16, 2, NULL, &so, &r), MXP_OK);
    assert_int_equal(r.applied, MXP_OVERFLOW_STRATEGY_CLIP);
    assert_non_null(strstr(r.what, "clip"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_activation_names),
        cmocka_unit_test(test_strategy_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

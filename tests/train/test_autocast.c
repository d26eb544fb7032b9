/* The autocast policy table: the three policies' entries (torch.autocast's
 * lists: matmul-like ops low, softmax/loss/reductions/norms float32),
 * names, changing an entry ("custom"), casting an array for an op, and bad
 * input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static void expect_policy(const char *name, mxp_dtype low, const char *canonical)
{
    mxp_autocast *ac = NULL;
    assert_int_equal(mxp_autocast_create(&ac, name), MXP_OK);
    assert_string_equal(mxp_autocast_policy_name(ac), canonical);
    assert_int_equal(mxp_autocast_dtype(ac, MXP_AUTOCAST_MATMUL), low);
    assert_int_equal(mxp_autocast_dtype(ac, MXP_AUTOCAST_ELEMENTWISE), low);
    assert_int_equal(mxp_autocast_dtype(ac, MXP_AUTOCAST_REDUCTION), MXP_F32);
    assert_int_equal(mxp_autocast_dtype(ac, MXP_AUTOCAST_SOFTMAX), MXP_F32);
    assert_int_equal(mxp_autocast_dtype(ac, MXP_AUTOCAST_LOSS), MXP_F32);
    assert_int_equal(mxp_autocast_dtype(ac, MXP_AUTOCAST_NORMALIZATION), MXP_F32);
    mxp_autocast_free(ac);
}

static void test_autocast_policies_follow_torch_lists(void **state)
{
    (void)state;
    expect_policy("fp32", MXP_F32, "fp32");
    expect_policy(NULL, MXP_F32, "fp32");
    expect_policy("bf16", MXP_BF16, "bf16");
    expect_policy("BF16", MXP_BF16, "bf16");
    expect_policy("bfloat16", MXP_BF16, "bf16");
    expect_policy("fp16", MXP_F16, "fp16");
    expect_policy("half", MXP_F16, "fp16");
    expect_policy("float32", MXP_F32, "fp32");
}

static void test_autocast_entries_change_and_name_custom(void **state)
{
    (void)state;
    mxp_autocast *ac = NULL;
    assert_int_equal(mxp_autocast_create(&ac, "fp16"), MXP_OK);
    assert_int_equal(mxp_autocast_set(ac, MXP_AUTOCAST_SOFTMAX, MXP_F64), MXP_OK);
    assert_int_equal(mxp_autocast_dtype(ac, MXP_AUTOCAST_SOFTMAX), MXP_F64);
    assert_string_equal(mxp_autocast_policy_name(ac), "custom");
    assert_int_equal(mxp_autocast_set(ac, MXP_AUTOCAST_SOFTMAX, MXP_F32), MXP_OK);
    assert_string_equal(mxp_autocast_policy_name(ac), "fp16");
    assert_int_equal(mxp_autocast_set(ac, MXP_AUTOCAST_MATMUL, MXP_E4M3), MXP_OK);
    assert_int_equal(mxp_autocast_dtype(ac, MXP_AUTOCAST_MATMUL), MXP_E4M3);
    for (int op = 0; op < MXP_AUTOCAST_OP_COUNT; op++)
        assert_int_equal(mxp_autocast_op_from_name(mxp_autocast_op_name((mxp_autocast_op)op)), op);
    assert_string_equal(mxp_autocast_op_name(MXP_AUTOCAST_NORMALIZATION), "normalization");
    mxp_autocast_free(ac);
}

/* cast: a view when the dtype is right already, else a rounded copy. */
static void test_autocast_cast_rounds_or_views(void **state)
{
    (void)state;
    mxp_autocast *ac = NULL;
    assert_int_equal(mxp_autocast_create(&ac, "bf16"), MXP_OK);
    const int64_t n = 3;
    mxp_array *x = NULL, *m = NULL, *l = NULL;
    assert_int_equal(mxp_array_full(&x, MXP_F32, 1, &n, 1.0 + 0x1p-9, NULL), MXP_OK);
    assert_int_equal(mxp_autocast_cast(&m, ac, MXP_AUTOCAST_MATMUL, x), MXP_OK);
    assert_int_equal(mxp_array_dtype(m), MXP_BF16);
    assert_int_equal(((const uint16_t *)mxp_array_data(m))[0], 0x3f80); /* 1 + 2^-9 -> 1 */
    assert_int_equal(mxp_autocast_cast(&l, ac, MXP_AUTOCAST_LOSS, x), MXP_OK);
    assert_ptr_equal(mxp_array_data(l), mxp_array_data(x));
    assert_int_equal(mxp_array_dtype(l), MXP_F32);
    mxp_array_free(x);
    mxp_array_free(m);
    mxp_array_free(l);
    mxp_autocast_free(ac);
}

static void test_autocast_rejects_bad_input(void **state)
{
    (void)state;
    mxp_autocast *ac = NULL;
    assert_int_equal(mxp_autocast_create(&ac, "fp8"), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "unknown policy 'fp8'"));
    assert_null(ac);
    assert_int_equal(mxp_autocast_create(&ac, "int8"), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_autocast_create(NULL, "fp32"), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_autocast_create(&ac, "fp32"), MXP_OK);
    assert_int_equal(mxp_autocast_set(ac, MXP_AUTOCAST_MATMUL, MXP_S8), MXP_ERR_INVALID_DTYPE);
    assert_non_null(strstr(mxp_last_error(), "int8"));
    assert_int_equal(mxp_autocast_set(ac, MXP_AUTOCAST_OP_COUNT, MXP_F32), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_autocast_set(ac, MXP_AUTOCAST_LOSS, (mxp_dtype)99), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_autocast_dtype(ac, (mxp_autocast_op)-1), MXP_DTYPE_INVALID);
    assert_int_equal(mxp_autocast_dtype(NULL, MXP_AUTOCAST_LOSS), MXP_DTYPE_INVALID);
    assert_int_equal(mxp_autocast_op_from_name("conv"), MXP_AUTOCAST_OP_COUNT);
    assert_string_equal(mxp_autocast_op_name(MXP_AUTOCAST_OP_COUNT), "invalid");
    mxp_array *out = NULL;
    assert_int_equal(mxp_autocast_cast(&out, ac, MXP_AUTOCAST_LOSS, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_null(out);
    assert_string_equal(mxp_autocast_policy_name(ac), "fp32");
    mxp_autocast_free(ac);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_autocast_policies_follow_torch_lists),
        cmocka_unit_test(test_autocast_entries_change_and_name_custom),
        cmocka_unit_test(test_autocast_cast_rounds_or_views),
        cmocka_unit_test(test_autocast_rejects_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

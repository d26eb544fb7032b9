/* mxp_convert's contract: bad input gives a status and a sentence and
 * writes nothing; overlap rules; strided views; names of modes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static void expect_error(mxp_status got, mxp_status want, const char *word)
{
    assert_int_equal(got, want);
    assert_non_null(strstr(mxp_last_error(), word));
}

static void test_bad_arguments_give_a_status_and_a_sentence_and_write_nothing(void **state)
{
    (void)state;
    float src[4] = { 1, 2, 3, 4 };
    uint16_t dst[4] = { 7, 7, 7, 7 };
    const uint16_t untouched[4] = { 7, 7, 7, 7 };
    expect_error(mxp_convert(dst, MXP_BF16, NULL, MXP_F32, 4, NULL), MXP_ERR_INVALID_ARGUMENT, "src");
    expect_error(mxp_convert(NULL, MXP_BF16, src, MXP_F32, 4, NULL), MXP_ERR_INVALID_ARGUMENT, "dst");
    expect_error(mxp_convert(dst, (mxp_dtype)0, src, MXP_F32, 4, NULL), MXP_ERR_INVALID_DTYPE, "destination");
    expect_error(mxp_convert(dst, MXP_BF16, src, (mxp_dtype)77, 4, NULL), MXP_ERR_INVALID_DTYPE, "source");
    mxp_convert_opts bad = { .rounding = (mxp_rounding)9, .overflow = MXP_OVERFLOW_INF, .seed = 0, .flags = NULL };
    expect_error(mxp_convert(dst, MXP_BF16, src, MXP_F32, 4, &bad), MXP_ERR_INVALID_ARGUMENT, "rounding");
    mxp_convert_opts bad2 = { .rounding = MXP_ROUND_UP, .overflow = (mxp_overflow)5, .seed = 0, .flags = NULL };
    expect_error(mxp_convert(dst, MXP_BF16, src, MXP_F32, 4, &bad2), MXP_ERR_INVALID_ARGUMENT, "overflow");
    expect_error(mxp_convert(dst, MXP_BF16, src, MXP_F32, SIZE_MAX / 2, NULL), MXP_ERR_SIZE_OVERFLOW, "overflow");
    expect_error(mxp_convert_strided(dst, MXP_BF16, 0, src, MXP_F32, 4, 4, NULL), MXP_ERR_INVALID_ARGUMENT, "dst_stride");
    expect_error(mxp_convert_strided(dst, MXP_BF16, PTRDIFF_MAX / 2, src, MXP_F32, 4, 4, NULL),
                 MXP_ERR_SIZE_OVERFLOW, "overflow");
    assert_memory_equal(dst, untouched, sizeof dst);
    /* n == 0 is a no-op, NULL allowed. */
    assert_int_equal(mxp_convert(NULL, MXP_BF16, NULL, MXP_F32, 0, NULL), MXP_OK);
    assert_int_equal(mxp_convert_strided(NULL, MXP_BF16, 0, NULL, MXP_F32, 0, 0, NULL), MXP_OK);
}

static void test_status_names(void **state)
{
    (void)state;
    assert_string_equal(mxp_status_str(MXP_OK), "MXP_OK");
    assert_string_equal(mxp_status_str(MXP_ERR_OVERLAP), "MXP_ERR_OVERLAP");
    for (int s = 0; s < MXP_STATUS_COUNT; s++)
        assert_non_null(strstr(mxp_status_str((mxp_status)s), "MXP_"));
    assert_string_equal(mxp_status_str((mxp_status)1234), "MXP_ERR_UNKNOWN_STATUS");
    mxp_clear_error();
    assert_string_equal(mxp_last_error(), "");
    assert_string_equal(mxp_version(), MXP_VERSION_STRING);
}

static void test_overlap_rules(void **state)
{
    (void)state;
    float buf[64];
    for (int i = 0; i < 64; i++)
        buf[i] = (float)i + 0.25f;
    unsigned char *b = (unsigned char *)buf;
    /* Partial overlap is refused. */
    expect_error(mxp_convert(b + 2, MXP_BF16, buf, MXP_F32, 32, NULL), MXP_ERR_OVERLAP, "overlap");
    expect_error(mxp_convert(buf, MXP_F32, b + 4, MXP_BF16, 16, NULL), MXP_ERR_OVERLAP, "overlap");
    /* Widening in place is refused: it would overwrite unread input. */
    expect_error(mxp_convert(buf, MXP_F32, buf, MXP_BF16, 16, NULL), MXP_ERR_OVERLAP, "overlap");
    /* Narrowing in place (dst == src) is allowed and exact, at every level. */
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        float in[1000];
        uint16_t want[1000];
        for (int i = 0; i < 1000; i++)
            in[i] = (float)i * 1.001f - 300.0f;
        assert_int_equal(mxp_convert(want, MXP_BF16, in, MXP_F32, 1000, NULL), MXP_OK);
        mxp_set_isa((mxp_isa)isa);
        assert_int_equal(mxp_convert(in, MXP_BF16, in, MXP_F32, 1000, NULL), MXP_OK);
        assert_memory_equal(in, want, sizeof want);
    }
    mxp_set_isa(MXP_ISA_COUNT - 1);
    /* Same type in place is a no-op copy. */
    assert_int_equal(mxp_convert(buf, MXP_F32, buf, MXP_F32, 64, NULL), MXP_OK);
    assert_true(buf[10] == 10.25f);
}

static void test_strided_reverses_gathers_and_broadcasts(void **state)
{
    (void)state;
    float src[6] = { 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f };
    float back[6] = { 0 };
    uint16_t dst[12];
    memset(dst, 0xee, sizeof dst);
    /* Every other output slot, the input read backwards. */
    assert_int_equal(mxp_convert_strided(dst, MXP_BF16, 4, src + 5, MXP_F32, -4, 6, NULL), MXP_OK);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(dst[2 * i], mxp_f32_to_bf16(src[5 - i]));
        assert_int_equal(dst[2 * i + 1], 0xeeee);
    }
    assert_int_equal(mxp_convert_strided(back, MXP_F32, 4, dst, MXP_BF16, 4, 6, NULL), MXP_OK);
    for (int i = 0; i < 6; i++)
        assert_true(back[i] == src[5 - i]);
    /* Source stride 0 broadcasts one value. */
    assert_int_equal(mxp_convert_strided(back, MXP_F32, 4, src + 2, MXP_F32, 0, 6, NULL), MXP_OK);
    for (int i = 0; i < 6; i++)
        assert_true(back[i] == 3.0f);
}

static void test_strided_equals_contiguous_for_long_arrays_and_stochastic(void **state)
{
    (void)state;
    enum { N = 5000 };
    static float src[N];
    static uint16_t a[N], b[2 * N];
    for (int i = 0; i < N; i++)
        src[i] = 1.0f + (float)i * 1e-5f;
    mxp_convert_opts o = { .rounding = MXP_ROUND_STOCHASTIC, .overflow = MXP_OVERFLOW_INF, .seed = 99, .flags = NULL };
    assert_int_equal(mxp_convert(a, MXP_BF16, src, MXP_F32, N, &o), MXP_OK);
    assert_int_equal(mxp_convert_strided(b, MXP_BF16, 4, src, MXP_F32, 4, N, &o), MXP_OK);
    for (int i = 0; i < N; i++)
        assert_int_equal(a[i], b[2 * i]);
}

static void test_mode_names_round_trip(void **state)
{
    (void)state;
    for (int r = 0; r < MXP_ROUNDING_COUNT; r++)
        assert_int_equal(mxp_rounding_from_name(mxp_rounding_name((mxp_rounding)r)), r);
    for (int o = 0; o < MXP_OVERFLOW_COUNT; o++)
        assert_int_equal(mxp_overflow_from_name(mxp_overflow_name((mxp_overflow)o)), o);
    assert_int_equal(mxp_rounding_from_name("rtz"), MXP_ROUND_TOWARD_ZERO);
    assert_int_equal(mxp_rounding_from_name("sr"), MXP_ROUND_STOCHASTIC);
    assert_int_equal(mxp_rounding_from_name("bogus"), MXP_ROUNDING_COUNT);
    assert_int_equal(mxp_rounding_from_name(NULL), MXP_ROUNDING_COUNT);
    assert_int_equal(mxp_overflow_from_name("sat"), MXP_OVERFLOW_SATURATE);
    assert_int_equal(mxp_overflow_from_name("clip?"), MXP_OVERFLOW_COUNT);
    assert_string_equal(mxp_rounding_name((mxp_rounding)99), "invalid");
    assert_string_equal(mxp_convert_kernel_name(MXP_F32, MXP_F32, NULL), "reference");
    assert_string_equal(mxp_convert_kernel_name((mxp_dtype)0, MXP_F32, NULL), "invalid");
}

static void test_every_pair_converts_zero_one_and_minus_one(void **state)
{
    (void)state;
    for (int s = 1; s < MXP_DTYPE_COUNT; s++) {
        for (int d = 1; d < MXP_DTYPE_COUNT; d++) {
            const double vals[3] = { 0.0, 1.0, -1.0 };
            unsigned char mid[3 * 8];
            double back[3];
            assert_int_equal(mxp_convert(mid, (mxp_dtype)s, vals, MXP_F64, 3, NULL), MXP_OK);
            unsigned char out[3 * 8];
            assert_int_equal(mxp_convert(out, (mxp_dtype)d, mid, (mxp_dtype)s, 3, NULL), MXP_OK);
            assert_int_equal(mxp_convert(back, MXP_F64, out, (mxp_dtype)d, 3, NULL), MXP_OK);
            const mxp_dtype_traits *ts = mxp_dtype_get_traits((mxp_dtype)s), *td = mxp_dtype_get_traits((mxp_dtype)d);
            if (s == MXP_S1 && d == MXP_E8M0)
                continue; /* 1 -> int1 0 -> e8m0 NaN */
            /* int1 holds -1 and 0 only: 1 saturates to 0 */
            assert_true(back[1] == (s == MXP_S1 || d == MXP_S1 ? 0.0 : 1.0));
            if (s == MXP_E8M0 || d == MXP_E8M0)
                continue; /* no zero, no negatives: test_convert_formats */
            assert_true(back[0] == 0.0);
            /* -1 saturates to 0 in unsigned types and is true as a bool. */
            double want;
            if (ts->kind == MXP_KIND_BOOL)
                want = 1.0;
            else if (!ts->is_signed)
                want = 0.0;
            else
                want = td->kind == MXP_KIND_BOOL ? 1.0 : td->is_signed ? -1.0 : 0.0;
            if (d == MXP_S1 && want > 0)
                want = 0.0; /* int1's largest value */
            if (back[2] != want)
                fail_msg("-1 through %s then %s gave %g", ts->name, td->name, back[2]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_arguments_give_a_status_and_a_sentence_and_write_nothing),
        cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_overlap_rules),
        cmocka_unit_test(test_strided_reverses_gathers_and_broadcasts),
        cmocka_unit_test(test_strided_equals_contiguous_for_long_arrays_and_stochastic),
        cmocka_unit_test(test_mode_names_round_trip),
        cmocka_unit_test(test_every_pair_converts_zero_one_and_minus_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Layout arithmetic never overflows: a slice step as large as INT64_MAX
 * keeps a well-defined stride (its one element needs no step); mxp_array_wrap
 * refuses strides whose byte offsets overflow int64 or run past either end
 * of the address space; a reshape of an empty array into a shape whose
 * nonzero dimensions overflow is refused.  Under UBSan (make
 * check-sanitize) the old arithmetic was signed overflow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static mxp_array *ramp(int64_t n)
{
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_arange(&a, MXP_F32, 0, (double)n, 1), MXP_OK);
    return a;
}

static float first(const mxp_array *v)
{
    float x;
    memcpy(&x, mxp_array_data(v), sizeof x);
    return x;
}

static void test_slice_step_int64_max_gives_one_element_and_a_sane_stride(void **state)
{
    (void)state;
    mxp_array *a = ramp(10), *v = NULL;
    const struct { mxp_slice s; float want; } cases[] = {
        { { MXP_SLICE_NONE, MXP_SLICE_NONE, INT64_MAX }, 0.0f },
        { { 3, MXP_SLICE_NONE, INT64_MAX }, 3.0f },
        { { MXP_SLICE_NONE, MXP_SLICE_NONE, -INT64_MAX }, 9.0f },
        { { -2, MXP_SLICE_NONE, INT64_MAX / 2 }, 8.0f },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(mxp_array_slice(&v, a, 1, &cases[i].s), MXP_OK);
        assert_int_equal(mxp_array_shape(v)[0], 1);
        assert_int_equal(mxp_array_strides(v)[0], 4); /* the step does not reach a second element */
        assert_true(first(v) == cases[i].want);
        assert_true(mxp_array_flags(v) & MXP_ARRAY_C_CONTIGUOUS);
        mxp_array *c = NULL; /* and copies of it read the one element */
        assert_int_equal(mxp_array_ascontiguous(&c, v, 'F'), MXP_OK);
        assert_true(first(c) == cases[i].want);
        mxp_array_free(c);
        mxp_array_free(v);
    }
    /* an ordinary step keeps NumPy's stride: 4 * 3 */
    const mxp_slice s3 = { 1, MXP_SLICE_NONE, 3 };
    assert_int_equal(mxp_array_slice(&v, a, 1, &s3), MXP_OK);
    assert_int_equal(mxp_array_shape(v)[0], 3);
    assert_int_equal(mxp_array_strides(v)[0], 12);
    mxp_array_free(v);
    mxp_array_free(a);
}

static void test_slice_huge_steps_on_every_axis_of_a_2d_array(void **state)
{
    (void)state;
    mxp_array *r = ramp(12), *a = NULL, *v = NULL;
    const int64_t shape[2] = { 3, 4 };
    assert_int_equal(mxp_array_reshape(&a, r, 2, shape), MXP_OK);
    const mxp_slice s[2] = { { 1, MXP_SLICE_NONE, INT64_MAX }, { MXP_SLICE_NONE, MXP_SLICE_NONE, -INT64_MAX } };
    assert_int_equal(mxp_array_slice(&v, a, 2, s), MXP_OK);
    assert_int_equal(mxp_array_shape(v)[0], 1);
    assert_int_equal(mxp_array_shape(v)[1], 1);
    assert_int_equal(mxp_array_strides(v)[0], 16);
    assert_int_equal(mxp_array_strides(v)[1], 4);
    assert_true(first(v) == 7.0f); /* a[1][3] */
    /* a broadcast axis (stride 0) times any step stays 0 */
    mxp_array *b = NULL, *w = NULL;
    const int64_t big[2] = { 5, 4 };
    assert_int_equal(mxp_array_broadcast_to(&b, v, 2, big), MXP_OK);
    const mxp_slice t = { MXP_SLICE_NONE, MXP_SLICE_NONE, 2 };
    assert_int_equal(mxp_array_slice(&w, b, 1, &t), MXP_OK);
    assert_int_equal(mxp_array_strides(w)[0], 0);
    mxp_array_free(w);
    mxp_array_free(b);
    mxp_array_free(v);
    mxp_array_free(a);
    mxp_array_free(r);
}

static void test_wrap_refuses_strides_whose_offsets_overflow(void **state)
{
    (void)state;
    static float buf[64];
    mxp_array *a = NULL;
    const struct { const char *what; int ndim; int64_t shape[2], strides[2]; void *data; } bad[] = {
        { "one stride times its axis", 1, { 4, 0 }, { INT64_MAX / 2, 0 }, buf },
        { "INT64_MIN", 1, { 2, 0 }, { INT64_MIN, 0 }, buf },
        { "the sum of two axes", 2, { 3, 3 }, { INT64_MAX / 3, INT64_MAX / 3 }, buf },
        { "the sum of negative axes", 2, { 3, 3 }, { -(INT64_MAX / 3), -(INT64_MAX / 3) }, buf + 63 },
        { "past the top of the address space", 1, { 100, 0 }, { 8, 0 }, (void *)(UINTPTR_MAX - 64) },
        { "below address 0", 1, { 2, 0 }, { -8192, 0 }, (void *)(uintptr_t)4096 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const mxp_status st = mxp_array_wrap(&a, bad[i].data, MXP_F32, bad[i].ndim, bad[i].shape, bad[i].strides,
                                             true, NULL, NULL);
        if (st != MXP_ERR_SIZE_OVERFLOW) {
            print_error("%s: %s, want MXP_ERR_SIZE_OVERFLOW\n", bad[i].what, mxp_status_str(st));
            fail();
        }
        assert_null(a);
        assert_non_null(strstr(mxp_last_error(), "mxp_array_wrap"));
    }
    /* what fits is accepted: negative strides from the last element, a
     * huge stride on an axis of one element or of none, broadcast zeros */
    const struct { int ndim; int64_t shape[2], strides[2]; void *data; } good[] = {
        { 1, { 64, 0 }, { -4, 0 }, buf + 63 },
        { 2, { 1, 64 }, { INT64_MAX, 4 }, buf },
        { 2, { 0, 5 }, { INT64_MAX, INT64_MIN }, buf },
        { 2, { 1000, 64 }, { 0, 4 }, buf },
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        assert_int_equal(mxp_array_wrap(&a, good[i].data, MXP_F32, good[i].ndim, good[i].shape, good[i].strides,
                                        false, NULL, NULL), MXP_OK);
        mxp_array_free(a);
    }
}

static void test_reshape_of_an_empty_array_refuses_a_shape_too_large(void **state)
{
    (void)state;
    mxp_array *a = ramp(0), *v = NULL;
    const int64_t huge[3] = { 0, (int64_t)1 << 62, (int64_t)1 << 62 };
    assert_int_equal(mxp_array_reshape(&v, a, 3, huge), MXP_ERR_SIZE_OVERFLOW);
    assert_null(v);
    const int64_t fine[3] = { 0, 1 << 20, 1 << 20 };
    assert_int_equal(mxp_array_reshape(&v, a, 3, fine), MXP_OK);
    mxp_array_free(v);
    mxp_array_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice_step_int64_max_gives_one_element_and_a_sane_stride),
        cmocka_unit_test(test_slice_huge_steps_on_every_axis_of_a_2d_array),
        cmocka_unit_test(test_wrap_refuses_strides_whose_offsets_overflow),
        cmocka_unit_test(test_reshape_of_an_empty_array_refuses_a_shape_too_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

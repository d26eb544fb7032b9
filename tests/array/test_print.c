/* mxp_array_format / mxp_array_fprint (exact strings NumPy 1.24 prints for
 * the same arrays: str and repr) and mxp_array_get_f64; bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static void expect(const mxp_array *a, const mxp_print_opts *o, const char *want)
{
    char *s = NULL;
    size_t n = 0;
    assert_int_equal(mxp_array_format(&s, &n, a, o), MXP_OK);
    assert_string_equal(s, want);
    assert_int_equal(n, strlen(want));
    mxp_free(s);
}

static void test_exact_strings(void **state)
{
    (void)state;
    mxp_array *a = NULL, *b = NULL, *t = NULL;
    const int64_t s23[2] = { 2, 3 };
    assert_int_equal(mxp_array_arange(&a, MXP_F32, 0, 6, 1), MXP_OK);
    assert_int_equal(mxp_array_reshape(&b, a, 2, s23), MXP_OK);
    expect(b, NULL, "[[0. 1. 2.]\n [3. 4. 5.]]");                 /* str(np.arange(6.).reshape(2,3).astype('f4')) */
    mxp_print_opts r = { .repr = true };
    expect(b, &r, "array([[0., 1., 2.],\n       [3., 4., 5.]], dtype=float32)");
    assert_int_equal(mxp_array_transpose(&t, b, NULL), MXP_OK);   /* a strided view */
    expect(t, NULL, "[[0. 3.]\n [1. 4.]\n [2. 5.]]");
    mxp_array_free(t);
    mxp_array_free(b);
    mxp_array_free(a);
    /* float16 0.1 prints its shortest float16 digits; bfloat16 its own */
    const int64_t three = 3;
    assert_int_equal(mxp_array_full(&a, MXP_F16, 1, &three, 0.1, NULL), MXP_OK);
    expect(a, &r, "array([0.1, 0.1, 0.1], dtype=float16)");
    mxp_array_free(a);
    assert_int_equal(mxp_array_full(&a, MXP_BF16, 1, &three, 0.1, NULL), MXP_OK);
    expect(a, &r, "array([0.1, 0.1, 0.1], dtype=bfloat16)");
    mxp_array_free(a);
    /* nan, inf, -0 and scientific notation (np.array([np.nan, -np.inf, -0.0, 1e-5])) */
    const double v[4] = { NAN, -INFINITY, -0.0, 1e-5 };
    const int64_t four = 4;
    assert_int_equal(mxp_array_empty(&a, MXP_F64, 1, &four), MXP_OK);
    memcpy(mxp_array_data(a), v, sizeof v);
    expect(a, NULL, "[    nan    -inf -0.e+00  1.e-05]");
    expect(a, &r, "array([    nan,    -inf, -0.e+00,  1.e-05])"); /* float64: no dtype */
    mxp_array_free(a);
    /* integers, bool, 0-d, empty */
    assert_int_equal(mxp_array_arange(&a, MXP_S8, -2, 2, 1), MXP_OK);
    expect(a, NULL, "[-2 -1  0  1]");
    expect(a, &r, "array([-2, -1,  0,  1], dtype=int8)");
    mxp_array_free(a);
    assert_int_equal(mxp_array_eye(&a, MXP_BOOL, 2, 2, 0), MXP_OK);
    expect(a, &r, "array([[ True, False],\n       [False,  True]])");
    mxp_array_free(a);
    assert_int_equal(mxp_array_full(&a, MXP_F64, 0, NULL, 2.5, NULL), MXP_OK);
    expect(a, NULL, "2.5");
    expect(a, &r, "array(2.5)");
    mxp_array_free(a);
    const int64_t s30[2] = { 3, 0 };
    assert_int_equal(mxp_array_zeros(&a, MXP_F32, 2, s30), MXP_OK);
    expect(a, NULL, "[]");
    expect(a, &r, "array([], shape=(3, 0), dtype=float32)");
    mxp_array_free(a);
    /* a summary past the threshold, and options */
    assert_int_equal(mxp_array_arange(&a, MXP_S64, 0, 2000, 1), MXP_OK);
    expect(a, NULL, "[   0    1    2 ... 1997 1998 1999]");
    mxp_print_opts o = { .edgeitems = 1, .repr = true };
    expect(a, &o, "array([   0, ..., 1999])");
    mxp_array_free(a);
    assert_int_equal(mxp_array_linspace(&a, MXP_F64, 0, 1, 3, true), MXP_OK);
    mxp_print_opts p = { .precision = 1 };
    expect(a, &p, "[0.  0.5 1. ]");
    p.precision = MXP_PRINT_PRECISION_NONE;
    expect(a, &p, "[0. 0. 1.]");
    /* fprint: the same text and a newline */
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(mxp_array_fprint(f, a, NULL), MXP_OK);
    rewind(f);
    char buf[64] = { 0 };
    assert_true(fread(buf, 1, sizeof buf - 1, f) > 0);
    assert_string_equal(buf, "[0.  0.5 1. ]\n");
    fclose(f);
    mxp_array_free(a);
}

static void test_bad_input(void **state)
{
    (void)state;
    mxp_array *a = NULL;
    char *s = (char *)1;
    assert_int_equal(mxp_array_arange(&a, MXP_F32, 0, 3, 1), MXP_OK);
    assert_int_equal(mxp_array_format(NULL, NULL, a, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_array_format(&s, NULL, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_null(s);
    mxp_print_opts o = { .precision = 41 };
    assert_int_equal(mxp_array_format(&s, NULL, a, &o), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "precision 41 is not 1..40"));
    o = (mxp_print_opts){ .linewidth = -3 };
    assert_int_equal(mxp_array_format(&s, NULL, a, &o), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_array_fprint(NULL, a, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "FILE is NULL"));
    /* a failed allocation: an error, nothing leaked */
    mxp_set_alloc_fail_after(1);
    assert_int_equal(mxp_array_format(&s, NULL, a, NULL), MXP_ERR_NO_MEMORY);
    mxp_set_alloc_fail_after(0);
    assert_null(s);
    /* a write that fails (a stream opened for reading only) */
    FILE *r = fopen("/dev/null", "r");
    assert_non_null(r);
    assert_int_equal(mxp_array_fprint(r, a, NULL), MXP_ERR_IO);
    fclose(r);
    mxp_array_free(a);
}

static void test_get_f64(void **state)
{
    (void)state;
    mxp_array *a = NULL, *b = NULL;
    const int64_t s34[2] = { 3, 4 };
    assert_int_equal(mxp_array_arange(&a, MXP_BF16, 0, 12, 1), MXP_OK);
    assert_int_equal(mxp_array_reshape(&b, a, 2, s34), MXP_OK);
    double v = -1;
    const int64_t i12[2] = { 1, 2 }, neg[2] = { -1, -1 }, bad[2] = { 3, 0 }, bad2[2] = { 0, -5 };
    assert_int_equal(mxp_array_get_f64(b, i12, &v), MXP_OK);
    assert_true(v == 6.0);
    assert_int_equal(mxp_array_get_f64(b, neg, &v), MXP_OK);
    assert_true(v == 11.0);
    v = -1;
    assert_int_equal(mxp_array_get_f64(b, bad, &v), MXP_ERR_INDEX);
    assert_string_equal(mxp_last_error(), "mxp_array_get_f64: index 3 is out of range for axis 0 of size 3");
    assert_int_equal(mxp_array_get_f64(b, bad2, &v), MXP_ERR_INDEX);
    assert_string_equal(mxp_last_error(), "mxp_array_get_f64: index -5 is out of range for axis 1 of size 4");
    assert_true(v == -1); /* untouched */
    assert_int_equal(mxp_array_get_f64(b, NULL, &v), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_array_get_f64(b, i12, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_array_get_f64(NULL, i12, &v), MXP_ERR_INVALID_ARGUMENT);
    mxp_array_free(b);
    mxp_array_free(a);
    assert_int_equal(mxp_array_full(&a, MXP_E4M3, 0, NULL, 0.3, NULL), MXP_OK); /* 0-d: idx may be NULL */
    assert_int_equal(mxp_array_get_f64(a, NULL, &v), MXP_OK);
    assert_true(v == 0.3125); /* float8_e4m3fn's nearest to 0.3 */
    mxp_array_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_strings),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_get_f64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

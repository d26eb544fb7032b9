/* mxp_softmax, mxp_log_softmax and mxp_l2_normalize: every float dtype
 * against long double references rounded once, any axis, masks, -inf
 * rows, NaN, values whose naive exp overflows, empty arrays, in place,
 * the same bits at one and two threads, and bad arguments. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "nn/nn_util.h"
#include "support/prng.h"

static const mxp_dtype floats[] = { MXP_F64, MXP_F32, MXP_F16, MXP_BF16, MXP_E4M3, MXP_E5M2 };
#define NFLOATS (int)(sizeof floats / sizeof floats[0])

/* softmax (or log_softmax) of n values (already of the input dtype) at
 * stride s, into want, in long double. */
static void ref_softmax(const double *x, int64_t n, int64_t s, bool log, double *want)
{
    long double mx = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; i++)
        mx = x[i * s] > mx ? x[i * s] : mx;
    for (int64_t i = 0; i < n; i++)
        sum += expl(x[i * s] - mx);
    for (int64_t i = 0; i < n; i++)
        want[i * s] = log ? (double)((x[i * s] - mx) - logl(sum)) : (double)(expl(x[i * s] - mx) / sum);
}

static void test_softmax_every_dtype_axis_rounded_once(void **state)
{
    (void)state;
    uint64_t rng = 7;
    const int64_t shape[3] = { 3, 5, 7 };
    double x[105], got[105], want[105];
    for (int k = 0; k < NFLOATS; k++)
        for (int log = 0; log < 2; log++)
            for (int axis = -3; axis < 3; axis++) {
                const mxp_dtype dt = floats[k];
                for (int i = 0; i < 105; i++)
                    x[i] = rounded((prng_uniform(&rng) - 0.5) * 8, dt);
                mxp_array *a = mk(dt, 3, shape, x), *y = NULL;
                const mxp_status st = log ? mxp_log_softmax(&y, a, axis, NULL, 0) : mxp_softmax(&y, a, axis, NULL, 0);
                assert_int_equal(st, MXP_OK);
                assert_int_equal(mxp_array_dtype(y), dt);
                vals(y, got);
                const int ax = axis < 0 ? axis + 3 : axis;
                const int64_t stride = ax == 0 ? 35 : ax == 1 ? 7 : 1;
                for (int i = 0; i < 105; i++)
                    if ((i / stride) % shape[ax] == 0)
                        ref_softmax(x + i, shape[ax], stride, log, want + i);
                for (int i = 0; i < 105; i++)
                    expect_near(log ? "log_softmax" : "softmax", i, got[i], want[i], dt, 4, log ? 8 : 0);
                mxp_array_free(a);
                mxp_array_free(y);
            }
}

static void test_softmax_exact_values(void **state)
{
    (void)state;
    const int64_t shape[2] = { 4, 2 };
    /* a naive exp(1000) overflows; -inf entries give 0; all -inf give NaN
     * (torch's answer); a NaN poisons its row */
    const double x[8] = { 0, 0, 1000, 1000, -INFINITY, 3, -INFINITY, -INFINITY };
    mxp_array *a = mk(MXP_F32, 2, shape, x), *y = NULL, *l = NULL;
    assert_int_equal(mxp_softmax(&y, a, -1, NULL, 0), MXP_OK);
    assert_int_equal(mxp_log_softmax(&l, a, 1, NULL, MXP_F64), MXP_OK);
    double got[8], lg[8];
    vals(y, got);
    vals(l, lg);
    const double want[6] = { 0.5, 0.5, 0.5, 0.5, 0, 1 };
    for (int i = 0; i < 6; i++)
        assert_true(got[i] == want[i]);
    assert_true(isnan(got[6]) && isnan(got[7]));
    assert_true(lg[0] == -log(2.0) && lg[2] == -log(2.0));
    assert_true(lg[4] == -INFINITY && lg[5] == 0);
    assert_true(isnan(lg[6]));
    mxp_array_free(y);
    const double xn[2] = { NAN, 1 };
    mxp_array *an = mk(MXP_F64, 1, (int64_t[]){ 2 }, xn);
    assert_int_equal(mxp_softmax(&y, an, 0, NULL, 0), MXP_OK);
    vals(y, got);
    assert_true(isnan(got[0]) && isnan(got[1]));
    mxp_array_free(an);
    mxp_array_free(y);
    mxp_array_free(l);
    mxp_array_free(a);
}

static void test_softmax_masks(void **state)
{
    (void)state;
    const int64_t shape[2] = { 2, 3 };
    const double x[6] = { 1, 2, 3, 4, 5, 6 };
    mxp_array *a = mk(MXP_F64, 2, shape, x), *y = NULL;
    /* a padding mask per column, broadcast over rows: bool keeps true */
    const double keep[3] = { 1, 1, 0 };
    mxp_array *mb = mk(MXP_BOOL, 1, (int64_t[]){ 3 }, keep);
    assert_int_equal(mxp_softmax(&y, a, 1, mb, 0), MXP_OK);
    double got[6], want[6];
    vals(y, got);
    ref_softmax(x, 2, 1, false, want);
    ref_softmax(x + 3, 2, 1, false, want + 3);
    want[2] = want[5] = 0;
    for (int i = 0; i < 6; i++)
        expect_rounded("bool mask", i, got[i], want[i], MXP_F64, 2);
    mxp_array_free(y);
    /* additive: -inf masks, other values shift */
    const double add[6] = { 0, 0, -INFINITY, 0, 1, 2 };
    mxp_array *ma = mk(MXP_F32, 2, shape, add);
    assert_int_equal(mxp_softmax(&y, a, -1, ma, 0), MXP_OK);
    vals(y, got);
    const double shifted[3] = { 4, 6, 8 };
    ref_softmax(shifted, 3, 1, false, want + 3);
    for (int i = 3; i < 6; i++)
        expect_rounded("additive mask", i, got[i], want[i], MXP_F64, 2);
    assert_true(got[2] == 0);
    mxp_array_free(y);
    /* every element masked: NaN */
    const double none[3] = { 0, 0, 0 };
    mxp_array *m0 = mk(MXP_BOOL, 1, (int64_t[]){ 3 }, none);
    assert_int_equal(mxp_softmax(&y, a, 1, m0, 0), MXP_OK);
    vals(y, got);
    for (int i = 0; i < 6; i++)
        assert_true(isnan(got[i]));
    mxp_array_free(y);
    /* a mask that does not broadcast */
    mxp_array *bad = mk(MXP_BOOL, 1, (int64_t[]){ 2 }, none);
    assert_int_equal(mxp_softmax(&y, a, 1, bad, 0), MXP_ERR_SHAPE);
    assert_null(y);
    mxp_array_free(bad);
    mxp_array_free(m0);
    mxp_array_free(ma);
    mxp_array_free(mb);
    mxp_array_free(a);
}

static void test_softmax_into_in_place_and_overlap(void **state)
{
    (void)state;
    const double x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    double want[8], got[8];
    ref_softmax(x, 4, 1, false, want);
    ref_softmax(x + 4, 4, 1, false, want + 4);
    mxp_array *a = mk(MXP_F64, 2, (int64_t[]){ 2, 4 }, x);
    assert_int_equal(mxp_softmax_into(a, a, 1, NULL), MXP_OK); /* in place */
    vals(a, got);
    for (int i = 0; i < 8; i++)
        expect_rounded("in place", i, got[i], want[i], MXP_F64, 2);
    /* out a transposed view of the input: written through a temporary */
    mxp_array *b = mk(MXP_F64, 2, (int64_t[]){ 4, 4 }, NULL), *bt = NULL;
    double sq[16];
    for (int i = 0; i < 16; i++)
        sq[i] = i % 5;
    memcpy(mxp_array_data(b), sq, sizeof sq);
    assert_int_equal(mxp_array_transpose(&bt, b, NULL), MXP_OK);
    assert_int_equal(mxp_softmax_into(bt, b, 1, NULL), MXP_OK);
    double w16[16], g16[16];
    for (int r = 0; r < 4; r++)
        ref_softmax(sq + 4 * r, 4, 1, false, w16 + 4 * r);
    vals(bt, g16);
    for (int i = 0; i < 16; i++)
        expect_rounded("overlap", i, g16[i], w16[i], MXP_F64, 2);
    /* read-only out, a shape that differs, an integer out */
    mxp_array *ro = NULL, *small = mk(MXP_F32, 1, (int64_t[]){ 4 }, NULL), *ints = mk(MXP_S32, 2, (int64_t[]){ 2, 4 }, NULL);
    assert_int_equal(mxp_array_broadcast_to(&ro, small, 2, (int64_t[]){ 2, 4 }), MXP_OK);
    assert_int_equal(mxp_softmax_into(ro, a, 1, NULL), MXP_ERR_READONLY);
    assert_int_equal(mxp_softmax_into(small, a, 1, NULL), MXP_ERR_SHAPE);
    assert_int_equal(mxp_softmax_into(ints, a, 1, NULL), MXP_ERR_UNSUPPORTED);
    assert_non_null(strstr(mxp_last_error(), "float"));
    mxp_array_free(ints);
    mxp_array_free(ro);
    mxp_array_free(small);
    mxp_array_free(bt);
    mxp_array_free(b);
    mxp_array_free(a);
}

static void test_softmax_bad_arguments_and_empty(void **state)
{
    (void)state;
    mxp_array *a = mk(MXP_F32, 2, (int64_t[]){ 2, 3 }, NULL), *y = (mxp_array *)&y;
    assert_int_equal(mxp_softmax(&y, a, 2, NULL, 0), MXP_ERR_INDEX);
    assert_null(y);
    assert_non_null(strstr(mxp_last_error(), "axis 2"));
    assert_int_equal(mxp_softmax(&y, a, -3, NULL, 0), MXP_ERR_INDEX);
    assert_int_equal(mxp_softmax(NULL, a, 0, NULL, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_softmax(&y, NULL, 0, NULL, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_softmax(&y, a, 0, NULL, MXP_S8), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_softmax(&y, a, 0, NULL, (mxp_dtype)999), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_l2_normalize(&y, a, 0, -1, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_l2_normalize(&y, a, 0, NAN, 0), MXP_ERR_INVALID_ARGUMENT);
    /* integers in, float64 out */
    const double iv[3] = { 1, 2, 3 };
    mxp_array *ia = mk(MXP_S16, 1, (int64_t[]){ 3 }, iv);
    assert_int_equal(mxp_softmax(&y, ia, 0, NULL, 0), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), MXP_F64);
    mxp_array_free(y);
    mxp_array_free(ia);
    /* empty: rows of length 0 and no rows */
    mxp_array *e = mk(MXP_BF16, 2, (int64_t[]){ 0, 3 }, NULL);
    assert_int_equal(mxp_softmax(&y, e, 1, NULL, 0), MXP_OK);
    assert_int_equal(mxp_array_size(y), 0);
    mxp_array_free(y);
    assert_int_equal(mxp_log_softmax(&y, e, 0, NULL, 0), MXP_OK);
    mxp_array_free(y);
    mxp_array_free(e);
    mxp_array_free(a);
}

static void test_l2_normalize(void **state)
{
    (void)state;
    const double x[6] = { 3, 4, 0, 0, 0, 0 };
    mxp_array *a = mk(MXP_F32, 2, (int64_t[]){ 2, 3 }, x), *y = NULL;
    assert_int_equal(mxp_l2_normalize(&y, a, 1, 1e-12, 0), MXP_OK);
    double got[6];
    vals(y, got);
    const double want[6] = { 0.6, 0.8, 0, 0, 0, 0 }; /* the zero row stays 0 (eps) */
    for (int i = 0; i < 6; i++)
        expect_rounded("l2", i, got[i], want[i], MXP_F32, 0);
    mxp_array_free(y);
    assert_int_equal(mxp_l2_normalize(&y, a, 0, 1e-12, MXP_BF16), MXP_OK);
    vals(y, got);
    assert_true(got[0] == 1 && got[1] == 1 && got[2] == 0);
    mxp_array_free(y);
    mxp_array_free(a);
}

/* A large softmax split over threads gives the one-thread bits. */
static void test_softmax_threads_same_bits(void **state)
{
    (void)state;
    enum { R = 512, C = 300 };
    uint64_t rng = 3;
    double *x = malloc(R * C * sizeof *x);
    for (int i = 0; i < R * C; i++)
        x[i] = (prng_uniform(&rng) - 0.5) * 20;
    mxp_array *a = mk(MXP_BF16, 2, (int64_t[]){ R, C }, x), *y1 = NULL, *y2 = NULL;
    assert_int_equal(mxp_set_num_threads(1), MXP_OK);
    assert_int_equal(mxp_softmax(&y1, a, 1, NULL, MXP_F32), MXP_OK);
    assert_int_equal(mxp_set_num_threads(4), MXP_OK);
    assert_int_equal(mxp_softmax(&y2, a, 1, NULL, MXP_F32), MXP_OK);
    assert_memory_equal(mxp_array_data(y1), mxp_array_data(y2), R * C * 4);
    mxp_array_free(y1);
    mxp_array_free(y2);
    mxp_array_free(a);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_every_dtype_axis_rounded_once),
        cmocka_unit_test(test_softmax_exact_values),
        cmocka_unit_test(test_softmax_masks),
        cmocka_unit_test(test_softmax_into_in_place_and_overlap),
        cmocka_unit_test(test_softmax_bad_arguments_and_empty),
        cmocka_unit_test(test_l2_normalize),
        cmocka_unit_test(test_softmax_threads_same_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

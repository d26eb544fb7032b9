/* mxp_rowdot and mxp_cosine_similarity: paired rows (broadcast) and every
 * pair, long double references rounded once, integer and low-precision
 * inputs, zero rows (eps), empty shapes, and bad shapes. */
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

static double ref_dot(const double *a, const double *b, int64_t d, bool cosine, double eps)
{
    long double s = 0, na = 0, nb = 0;
    for (int64_t i = 0; i < d; i++) {
        s += (long double)a[i] * b[i];
        na += (long double)a[i] * a[i];
        nb += (long double)b[i] * b[i];
    }
    if (!cosine)
        return (double)s;
    na = sqrtl(na) > eps ? sqrtl(na) : eps;
    nb = sqrtl(nb) > eps ? sqrtl(nb) : eps;
    return (double)(s / (na * nb));
}

static void test_rowdot_paired_and_outer(void **state)
{
    (void)state;
    enum { N = 5, M = 7, D = 33 };
    uint64_t rng = 5;
    const mxp_dtype types[] = { MXP_F64, MXP_F32, MXP_BF16, MXP_E4M3, MXP_S8 };
    double a[N * D], b[M * D], got[N * M];
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        for (int cosine = 0; cosine < 2; cosine++) {
            const mxp_dtype dt = types[k];
            for (int i = 0; i < N * D; i++)
                a[i] = rounded((prng_uniform(&rng) - 0.5) * (dt == MXP_S8 ? 200 : 4), dt);
            for (int i = 0; i < M * D; i++)
                b[i] = rounded((prng_uniform(&rng) - 0.5) * (dt == MXP_S8 ? 200 : 4), dt);
            mxp_array *aa = mk(dt, 2, (int64_t[]){ N, D }, a), *bb = mk(dt, 2, (int64_t[]){ M, D }, b);
            mxp_array *bp = mk(dt, 2, (int64_t[]){ N, D }, b), *y = NULL;
            const mxp_dtype ot = dt == MXP_S8 ? MXP_F64 : dt;
            /* every pair */
            assert_int_equal(cosine ? mxp_cosine_similarity(&y, aa, bb, true, 1e-8, 0) : mxp_rowdot(&y, aa, bb, true, 0),
                             MXP_OK);
            assert_int_equal(mxp_array_dtype(y), ot);
            vals(y, got);
            for (int i = 0; i < N; i++)
                for (int j = 0; j < M; j++)
                    expect_near("outer", i * M + j, got[i * M + j], ref_dot(a + i * D, b + j * D, D, cosine, 1e-8), ot,
                                8, cosine ? 1 : 200);
            mxp_array_free(y);
            /* paired */
            assert_int_equal(cosine ? mxp_cosine_similarity(&y, aa, bp, false, 1e-8, 0) : mxp_rowdot(&y, aa, bp, false, 0),
                             MXP_OK);
            assert_int_equal(mxp_array_ndim(y), 1);
            vals(y, got);
            for (int i = 0; i < N; i++)
                expect_near("paired", i, got[i], ref_dot(a + i * D, b + i * D, D, cosine, 1e-8), ot, 8,
                            cosine ? 1 : 200);
            mxp_array_free(y);
            mxp_array_free(aa);
            mxp_array_free(bb);
            mxp_array_free(bp);
        }
}

static void test_rowdot_broadcast_and_edges(void **state)
{
    (void)state;
    /* a (2, 1, 3) by b (4, 3): (2, 4) */
    double a[6] = { 1, 2, 3, -1, 0, 1 }, b[12], got[8];
    for (int i = 0; i < 12; i++)
        b[i] = i;
    mxp_array *aa = mk(MXP_F32, 3, (int64_t[]){ 2, 1, 3 }, a), *bb = mk(MXP_F32, 2, (int64_t[]){ 4, 3 }, b), *y = NULL;
    assert_int_equal(mxp_rowdot(&y, aa, bb, false, MXP_F64), MXP_OK);
    assert_int_equal(mxp_array_ndim(y), 2);
    vals(y, got);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            assert_true(got[i * 4 + j] == ref_dot(a + 3 * i, b + 3 * j, 3, false, 0));
    mxp_array_free(y);
    /* a zero row: cosine 0 (eps), not NaN */
    const double z[3] = { 0, 0, 0 };
    mxp_array *zz = mk(MXP_F32, 1, (int64_t[]){ 3 }, z);
    assert_int_equal(mxp_cosine_similarity(&y, zz, bb, false, 1e-8, 0), MXP_OK);
    vals(y, got);
    for (int j = 0; j < 4; j++)
        assert_true(got[j] == 0);
    mxp_array_free(y);
    /* bad shapes, bad eps, empty */
    mxp_array *b4 = mk(MXP_F32, 2, (int64_t[]){ 4, 4 }, NULL), *e = mk(MXP_F32, 2, (int64_t[]){ 0, 3 }, NULL);
    y = (mxp_array *)&y;
    assert_int_equal(mxp_rowdot(&y, aa, b4, false, 0), MXP_ERR_SHAPE);
    assert_null(y);
    assert_non_null(strstr(mxp_last_error(), "differ in length"));
    assert_int_equal(mxp_rowdot(&y, aa, bb, true, 0), MXP_ERR_SHAPE); /* outer needs 2-d */
    assert_int_equal(mxp_cosine_similarity(&y, bb, bb, true, -1, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_rowdot(&y, bb, bb, true, MXP_S32), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_rowdot(&y, e, bb, true, 0), MXP_OK);
    assert_int_equal(mxp_array_size(y), 0);
    mxp_array_free(y);
    assert_int_equal(mxp_rowdot_into(b4, bb, bb, true), MXP_OK);
    double g16[16];
    vals(b4, g16);
    assert_true(g16[5] == ref_dot(b + 3, b + 3, 3, false, 0));
    mxp_array_free(b4);
    mxp_array_free(e);
    mxp_array_free(zz);
    mxp_array_free(aa);
    mxp_array_free(bb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rowdot_paired_and_outer),
        cmocka_unit_test(test_rowdot_broadcast_and_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Every row of src/kernels/f32-bnorm-list.inc that the machine runs gives
 * its twin's bits: the three passes over blocks of 1 to 19 channels and 1
 * to 40 values each (1: NHWC), with and without weight and bias, special
 * values; batch norm of float32 gives the bits of the float64 path (input
 * widened exactly) in training and inference, both layouts, at this ISA
 * level; and the dispatch table is the list. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/fpenv.h"
#include "mxp.h"
#include "nn/conv-internal.h"
#include "support/kernel_list.h"
#include "support/prng.h"

static const kl_listed bn_listed[] = {
#define MXP_F32_BNORM(isa, tile, fn, twin) { #fn, isa },
#include "kernels/f32-bnorm-list.inc"
#undef MXP_F32_BNORM
};

static void test_table_is_the_list(void **state)
{
    (void)state;
    size_t n;
    const mxp_kernel *k = nn_f32_bnorm_kernels(&n);
    kl_expect_table(k, n, bn_listed, sizeof bn_listed / sizeof bn_listed[0]);
    for (int isa = 0; isa < MXP_ISA_COUNT; isa++)
        assert_non_null(nn_f32_bnorm_kernel((mxp_isa)isa));
}

static float value(size_t i, uint64_t *rng)
{
    const double u = prng_uniform(rng) - 0.4;
    return i % 97 == 5 ? INFINITY : i % 89 == 7 ? NAN : i % 83 == 3 ? 1e-40f : (float)(u * 9);
}

enum { MAXC = 19, MAXI = 40, NB = 3, N = NB * (MAXC * MAXI + 5) + 4 };

static void test_every_kernel_gives_its_twins_bits(void **state)
{
    (void)state;
    size_t nk;
    const mxp_kernel *ks = nn_f32_bnorm_kernels(&nk);
    static float x[N], y0[N], y1[N];
    double mean[MAXC], rstd[MAXC], w[MAXC], b[MAXC], s0[MAXC], s1[MAXC];
    uint64_t rng = 17;
    size_t cases = 0;
    const mxp_fpenv env = mxp_fpenv_enter();
    for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], mxp_isa_supported()))
            continue;
        mxp_f32_bnorm_ukernel *k = (mxp_f32_bnorm_ukernel *)ks[r].fn, *twin = (mxp_f32_bnorm_ukernel *)ks[r].twin;
        for (size_t c = 1; c <= MAXC; c++)
            for (size_t inner = 1; inner <= MAXI; inner += inner < 10 ? 1 : 7)
                for (int pass = 0; pass < 3; pass++)
                    for (int wb = 0; wb < 4 * 2; wb++) { /* wb >> 2: NB blocks a call, x and y ld apart */
                        const size_t off = (c + inner + (size_t)wb) % 3, nb = wb >> 2 ? NB : 1;
                        for (size_t t = 0; t < N; t++)
                            x[t] = value(t + cases, &rng);
                        for (size_t q = 0; q < c; q++) {
                            mean[q] = prng_uniform(&rng) - 0.5;
                            rstd[q] = prng_uniform(&rng) + 0.5;
                            w[q] = prng_uniform(&rng) * 2;
                            b[q] = prng_uniform(&rng) - 0.5;
                            s0[q] = s1[q] = prng_uniform(&rng);
                        }
                        memset(y0, 0x5a, sizeof y0);
                        memset(y1, 0x5a, sizeof y1);
                        const mxp_f32_bnorm_params p0 = { pass, y0 + off, x + off, c, inner, mean, rstd,
                                                          wb & 1 ? w : NULL, wb & 2 ? b : NULL, s0, nb,
                                                          (ptrdiff_t)(c * inner + 5), (ptrdiff_t)(c * inner + 2) };
                        mxp_f32_bnorm_params p1 = p0;
                        p1.y = y1 + off;
                        p1.s = s1;
                        k(&p0);
                        twin(&p1);
                        if (memcmp(y0, y1, sizeof y0) || memcmp(s0, s1, c * sizeof(double)))
                            fail_msg("%s: pass %d, c %zu, inner %zu, weight/bias %d, blocks %zu differs from %s",
                                     ks[r].name, pass, c, inner, wb & 3, nb, ks[r].twin_name);
                        cases++;
                    }
    }
    mxp_fpenv_leave(env);
    assert_true(cases > 1000);
}

/* The twin against values worked out here. */
static void test_twin_values(void **state)
{
    (void)state;
    const float x[6] = { 1, 2, 3, 10, 20, 30 }; /* two channels of three */
    const double mean[2] = { 2, 20 }, rstd[2] = { 0.5, 0.25 }, w[2] = { 2, 4 }, b[2] = { 1, -1 };
    double s[2] = { 0, 100 };
    float y[6];
    mxp_f32_bnorm_params p = { MXP_BNORM_SUM, NULL, x, 2, 3, mean, rstd, w, b, s, 1, 0, 0 };
    mxp_f32_bnorm__scalar(&p);
    assert_true(s[0] == 6 && s[1] == 160);
    p.pass = MXP_BNORM_SUMSQ;
    mxp_f32_bnorm__scalar(&p);
    assert_true(s[0] == 8 && s[1] == 360);
    p.pass = MXP_BNORM_NORM;
    p.y = y;
    mxp_f32_bnorm__scalar(&p);
    const float want[6] = { 0, 1, 2, -11, -1, 9 };
    assert_memory_equal(y, want, sizeof want);
    /* two blocks, 7 floats apart in x and 8 in y */
    const float x2[13] = { 1, 2, 3, 10, 20, 30, 99, 4, 5, 6, 40, 50, 60 };
    float y2[14] = { 0 };
    s[0] = 0, s[1] = 100;
    mxp_f32_bnorm_params q = { MXP_BNORM_SUM, NULL, x2, 2, 3, mean, rstd, w, b, s, 2, 7, 8 };
    mxp_f32_bnorm__scalar(&q);
    assert_true(s[0] == 21 && s[1] == 310);
    q.pass = MXP_BNORM_NORM;
    q.y = y2;
    mxp_f32_bnorm__scalar(&q);
    const float want2[14] = { 0, 1, 2, -11, -1, 9, 0, 0, 3, 4, 5, 19, 29, 39 };
    assert_memory_equal(y2, want2, sizeof want2);
}

/* The normalization is one fused multiply-add, fma(x - mean, rstd w, b),
 * in every kernel: with b the negated, rounded product, y is that
 * product's rounding error (not 0, as a multiply then an add would give). */
static void test_norm_is_one_fused_multiply_add(void **state)
{
    (void)state;
    size_t nk;
    const mxp_kernel *ks = nn_f32_bnorm_kernels(&nk);
    enum { C = 9, I = 37 };
    static float x[C * I], y[C * I];
    double mean[C], rstd[C], w[C], b[C];
    float want[C];
    for (size_t q = 0; q < C; q++) {
        const float xq = 1.0f + 0.3f * (float)q;
        mean[q] = 0.1 + 0.01 * (double)q;
        rstd[q] = 1.7 + 0.13 * (double)q;
        w[q] = 0.7 + 0.05 * (double)q;
        const double d = (double)xq - mean[q], a = rstd[q] * w[q];
        b[q] = -(d * a);
        want[q] = (float)fma(d, a, b[q]);
        assert_true(want[q] != 0);
        for (size_t i = 0; i < I; i++)
            x[q * I + i] = xq;
    }
    const mxp_fpenv env = mxp_fpenv_enter();
    for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], mxp_isa_supported()))
            continue;
        for (size_t inner = 1; inner <= I; inner += I - 1) { /* NHWC: one value a channel; NCHW: rows of 37 */
            memset(y, 0, sizeof y);
            const mxp_f32_bnorm_params p = { MXP_BNORM_NORM, y, x, C, inner, mean, rstd, w, b, NULL, 1, 0, 0 };
            float xs[C]; /* NHWC: the channels' values side by side */
            mxp_f32_bnorm_params q = p;
            if (inner == 1) {
                for (size_t k = 0; k < C; k++)
                    xs[k] = x[k * I];
                q.x = xs;
            }
            ((mxp_f32_bnorm_ukernel *)ks[r].fn)(&q);
            for (size_t t = 0; t < C * inner; t++)
                if (y[t] != want[t / inner])
                    fail_msg("%s, inner %zu: y[%zu] = %a, want %a", ks[r].name, inner, t, (double)y[t],
                             (double)want[t / inner]);
        }
    }
    mxp_fpenv_leave(env);
}

/* Batch norm of float32 x against x widened exactly to float64 (the
 * generic path) into float32: the same bits, running statistics too. */
static void test_f32_batch_norm_is_the_float64_paths(void **state)
{
    (void)state;
    /* NCHW training runs channel groups (1, 2, 3 and a partial last group;
     * the last shape's channels are 80 KB each: 3 to a group) */
    const int64_t shapes[][4] = { { 3, 5, 7, 9 },   { 2, 16, 4, 4 }, { 4, 3, 1, 1 },
                                  { 1, 21, 6, 5 },  { 2, 19, 8, 8 }, { 2, 40, 100, 100 } };
    uint64_t rng = 8;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int axis = 1; axis <= 3; axis += 2) /* NCHW, NHWC */
            for (int training = 0; training < 2; training++) {
                const int64_t c = shapes[si][axis];
                mxp_array *x = NULL, *x64 = NULL, *y = NULL, *y64 = NULL, *rm[2], *rv[2], *w = NULL, *b = NULL;
                assert_int_equal(mxp_array_empty(&x, MXP_F32, 4, shapes[si]), MXP_OK);
                assert_int_equal(mxp_array_empty(&x64, MXP_F64, 4, shapes[si]), MXP_OK);
                for (int64_t t = 0; t < mxp_array_size(x); t++) {
                    ((float *)x->data)[t] = (float)((prng_uniform(&rng) - 0.3) * 7);
                    ((double *)x64->data)[t] = ((float *)x->data)[t];
                }
                for (int k = 0; k < 2; k++) {
                    assert_int_equal(mxp_array_random_normal(&rm[k], MXP_F32, 1, &c, 0, 1, 3), MXP_OK);
                    assert_int_equal(mxp_array_random_uniform(&rv[k], MXP_F32, 1, &c, 0.5, 2, 4), MXP_OK);
                }
                assert_int_equal(mxp_array_random_normal(&w, MXP_F32, 1, &c, 1, 0.3, 5), MXP_OK);
                assert_int_equal(mxp_array_random_normal(&b, MXP_F32, 1, &c, 0, 0.3, 6), MXP_OK);
                assert_int_equal(mxp_batch_norm(&y, x, axis, rm[0], rv[0], w, b, training, 0.1, 1e-5, MXP_F32), MXP_OK);
                assert_int_equal(mxp_batch_norm(&y64, x64, axis, rm[1], rv[1], w, b, training, 0.1, 1e-5, MXP_F32),
                                 MXP_OK);
                if (memcmp(y->data, y64->data, (size_t)mxp_array_size(y) * 4))
                    fail_msg("shape %zu, axis %d, training %d: float32 and float64 paths differ", si, axis, training);
                assert_memory_equal(rm[0]->data, rm[1]->data, (size_t)c * 4);
                assert_memory_equal(rv[0]->data, rv[1]->data, (size_t)c * 4);
                mxp_array_free(x), mxp_array_free(x64), mxp_array_free(y), mxp_array_free(y64);
                mxp_array_free(w), mxp_array_free(b);
                for (int k = 0; k < 2; k++)
                    mxp_array_free(rm[k]), mxp_array_free(rv[k]);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_is_the_list),
        cmocka_unit_test(test_every_kernel_gives_its_twins_bits),
        cmocka_unit_test(test_twin_values),
        cmocka_unit_test(test_norm_is_one_fused_multiply_add),
        cmocka_unit_test(test_f32_batch_norm_is_the_float64_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

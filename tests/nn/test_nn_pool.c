/* mxp_max_pool2d and mxp_avg_pool2d with their backward passes:
 * hand-computed windows (padding, count_include_pad both ways, ceil_mode,
 * ties), a float64 direct loop in both layouts and every dtype (rounded
 * once), global pooling, and bad arguments. */
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

typedef struct pcfg {
    int64_t n, c, h, w, kh, kw, sh, sw, ph, pw;
    bool ceil, exclude;
} pcfg;

static int64_t osize(int64_t size, int64_t k, int64_t s, int64_t p, bool ceil)
{
    int64_t n = (size + 2 * p - k) / s + 1;
    if (ceil && (size + 2 * p - k) % s && n * s < size + p)
        n++;
    return n;
}

static int64_t at4(bool nhwc, int64_t n, int64_t c, int64_t i, int64_t j, int64_t C, int64_t H, int64_t W)
{
    return nhwc ? ((n * H + i) * W + j) * C + c : ((n * C + c) * H + i) * W + j;
}

/* torch's windows: y, and dx from dy (max: first maximum, last NaN). */
static void ref_pool(const pcfg *k, bool nhwc, bool max, const double *x, double *y, const double *dy, double *dx)
{
    const int64_t oh = osize(k->h, k->kh, k->sh, k->ph, k->ceil), ow = osize(k->w, k->kw, k->sw, k->pw, k->ceil);
    memset(dx, 0, (size_t)(k->n * k->c * k->h * k->w) * sizeof(double));
    for (int64_t n = 0; n < k->n; n++)
        for (int64_t c = 0; c < k->c; c++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    int64_t hs = i * k->sh - k->ph, ws = j * k->sw - k->pw;
                    int64_t he = hs + k->kh < k->h + k->ph ? hs + k->kh : k->h + k->ph;
                    int64_t we = ws + k->kw < k->w + k->pw ? ws + k->kw : k->w + k->pw;
                    const double pool = (double)((he - hs) * (we - ws));
                    hs = hs < 0 ? 0 : hs, ws = ws < 0 ? 0 : ws;
                    he = he > k->h ? k->h : he, we = we > k->w ? k->w : we;
                    const double div = k->exclude ? (double)((he - hs) * (we - ws)) : pool;
                    long double s = 0;
                    double m = -INFINITY;
                    int64_t arg = at4(nhwc, n, c, hs, ws, k->c, k->h, k->w);
                    for (int64_t a = hs; a < he; a++)
                        for (int64_t b = ws; b < we; b++) {
                            const int64_t t = at4(nhwc, n, c, a, b, k->c, k->h, k->w);
                            s += x[t];
                            if (x[t] > m || isnan(x[t]))
                                m = x[t], arg = t;
                        }
                    const int64_t o = at4(nhwc, n, c, i, j, k->c, oh, ow);
                    y[o] = max ? m : (double)(s / div);
                    if (max)
                        dx[arg] += dy[o];
                    else
                        for (int64_t a = hs; a < he; a++)
                            for (int64_t b = ws; b < we; b++)
                                dx[at4(nhwc, n, c, a, b, k->c, k->h, k->w)] += dy[o] / div;
                }
}

static const pcfg pcfgs[] = {
    /* n c  h  w kh kw sh sw ph pw ceil excl */
    { 2, 3, 6, 6, 2, 2, 2, 2, 0, 0, false, false },
    { 1, 2, 7, 9, 3, 3, 2, 2, 1, 1, false, false },  /* ResNet's 3x3 s2 p1 max pool */
    { 1, 2, 7, 9, 3, 3, 2, 2, 1, 1, false, true },   /* average over x only */
    { 2, 3, 8, 7, 3, 2, 2, 3, 1, 1, true, false },   /* ceil_mode: the last windows partly outside */
    { 1, 5, 5, 4, 5, 4, 1, 1, 0, 0, false, false },  /* global */
    { 1, 4, 9, 5, 4, 2, 1, 2, 2, 1, true, true },
};

static void check_pool(const pcfg *k, bool nhwc, bool max, mxp_dtype dt, uint64_t *rng)
{
    const int64_t oh = osize(k->h, k->kh, k->sh, k->ph, k->ceil), ow = osize(k->w, k->kw, k->sw, k->pw, k->ceil);
    const int64_t nx = k->n * k->c * k->h * k->w, ny = k->n * k->c * oh * ow;
    double *x = malloc((size_t)nx * 8), *dx = malloc((size_t)nx * 8), *got = malloc((size_t)nx * 8);
    double *y = malloc((size_t)ny * 8), *dy = malloc((size_t)ny * 8);
    for (int64_t i = 0; i < nx; i++) /* few distinct values: ties */
        x[i] = rounded(floor(prng_uniform(rng) * 8) - 4 + (dt == MXP_S8 ? 0 : prng_uniform(rng) / 4), dt);
    for (int64_t i = 0; i < ny; i++)
        dy[i] = rounded(prng_uniform(rng) - 0.5, dt == MXP_S8 ? MXP_F64 : dt);
    const int64_t xs[4] = { k->n, nhwc ? k->h : k->c, nhwc ? k->w : k->h, nhwc ? k->c : k->w };
    const int64_t ys[4] = { k->n, nhwc ? oh : k->c, nhwc ? ow : oh, nhwc ? k->c : ow };
    const mxp_pool_opts o = { .layout = nhwc ? MXP_NHWC : MXP_NCHW, .kernel = { k->kh, k->kw },
                              .stride = { k->sh, k->sw }, .padding = { k->ph, k->pw }, .ceil_mode = k->ceil,
                              .exclude_pad = k->exclude };
    mxp_array *xa = mk(dt, 4, xs, x), *r = NULL;
    assert_int_equal(max ? mxp_max_pool2d(&r, xa, &o, 0) : mxp_avg_pool2d(&r, xa, &o, 0), MXP_OK);
    for (int d = 0; d < 4; d++)
        assert_int_equal(mxp_array_shape(r)[d], ys[d]);
    ref_pool(k, nhwc, max, x, y, dy, dx);
    const mxp_dtype yt = dt == MXP_S8 ? MXP_F64 : dt;
    vals(r, got);
    for (int64_t i = 0; i < ny; i++)
        expect_near(max ? "max_pool" : "avg_pool", (int)i, got[i], y[i], yt, 4, 4);
    mxp_array_free(r);
    if (dt != MXP_S8) {
        mxp_array *dya = mk(dt, 4, ys, dy);
        assert_int_equal(max ? mxp_max_pool2d_backward(&r, dya, xa, &o) : mxp_avg_pool2d_backward(&r, dya, xa, &o),
                         MXP_OK);
        assert_int_equal(mxp_array_dtype(r), dt);
        vals(r, got);
        for (int64_t i = 0; i < nx; i++)
            expect_near(max ? "max_pool dx" : "avg_pool dx", (int)i, got[i], dx[i], dt, 8, 1);
        mxp_array_free(r);
        mxp_array_free(dya);
    }
    mxp_array_free(xa);
    free(x), free(dx), free(got), free(y), free(dy);
}

static void test_pool_matches_direct_loop_every_dtype(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_F64, MXP_F32, MXP_BF16, MXP_F16, MXP_E4M3, MXP_S8 };
    uint64_t rng = 5;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t i = 0; i < sizeof pcfgs / sizeof pcfgs[0]; i++)
            for (int nhwc = 0; nhwc < 2; nhwc++)
                for (int max = 0; max < 2; max++)
                    check_pool(&pcfgs[i], nhwc, max, types[t], &rng);
}

static void test_pool_hand_computed(void **state)
{
    (void)state;
    /* ties of 9: max 2x2 stride 1 */
    const double x[9] = { 1, 9, 3, 4, 9, 6, 7, 8, 2 };
    mxp_array *xa = mk(MXP_F32, 4, (int64_t[]){ 1, 1, 3, 3 }, x), *y = NULL, *dx = NULL;
    const mxp_pool_opts o = { .kernel = { 2, 2 }, .stride = { 1, 1 } };
    double got[9];
    assert_int_equal(mxp_max_pool2d(&y, xa, &o, 0), MXP_OK);
    vals(y, got);
    assert_true(got[0] == 9 && got[1] == 9 && got[2] == 9 && got[3] == 9);
    /* the gradient goes to the first 9 of each window: index 1 for the
     * top two, index 4 for the bottom two */
    mxp_array *dy = mk(MXP_F32, 4, (int64_t[]){ 1, 1, 2, 2 }, (double[]){ 1, 2, 4, 8 });
    assert_int_equal(mxp_max_pool2d_backward(&dx, dy, xa, &o), MXP_OK);
    vals(dx, got);
    assert_true(got[1] == 3 && got[4] == 12 && got[0] == 0 && got[5] == 0);
    mxp_array_free(dx);
    mxp_array_free(y);
    /* average 2x2 stride 2 padding 1: corners count the padding (1/4),
     * unless exclude_pad */
    const mxp_pool_opts a = { .kernel = { 2, 2 }, .stride = { 2, 2 }, .padding = { 1, 1 } };
    assert_int_equal(mxp_avg_pool2d(&y, xa, &a, MXP_F64), MXP_OK);
    vals(y, got);
    assert_true(got[0] == 0.25 && got[1] == 3 && got[2] == 2.75 && got[3] == 6.25);
    mxp_array_free(y);
    const mxp_pool_opts e = { .kernel = { 2, 2 }, .stride = { 2, 2 }, .padding = { 1, 1 }, .exclude_pad = true };
    assert_int_equal(mxp_avg_pool2d(&y, xa, &e, MXP_F64), MXP_OK);
    vals(y, got);
    assert_true(got[0] == 1 && got[1] == 6 && got[2] == 5.5 && got[3] == 6.25);
    mxp_array_free(y);
    /* global: zero opts */
    assert_int_equal(mxp_avg_pool2d(&y, xa, NULL, MXP_F64), MXP_OK);
    vals(y, got);
    assert_true(got[0] == 49.0 / 9);
    mxp_array_free(y);
    assert_int_equal(mxp_max_pool2d(&y, xa, NULL, 0), MXP_OK);
    vals(y, got);
    assert_true(got[0] == 9 && mxp_array_size(y) == 1);
    mxp_array_free(y);
    /* NaN wins a max */
    mxp_array *xn = mk(MXP_F64, 4, (int64_t[]){ 1, 1, 1, 3 }, (double[]){ 1, NAN, 5 });
    assert_int_equal(mxp_max_pool2d(&y, xn, NULL, 0), MXP_OK);
    vals(y, got);
    assert_true(isnan(got[0]));
    mxp_array_free(y);
    mxp_array_free(xn);
    mxp_array_free(dy);
    mxp_array_free(xa);
}

static void test_pool_bad_arguments(void **state)
{
    (void)state;
    mxp_array *x = mk(MXP_F32, 4, (int64_t[]){ 1, 2, 4, 4 }, NULL), *x3 = mk(MXP_F32, 3, (int64_t[]){ 2, 4, 4 }, NULL);
    mxp_array *y = (mxp_array *)&y;
    assert_int_equal(mxp_max_pool2d(&y, x3, NULL, 0), MXP_ERR_SHAPE);
    assert_null(y);
    assert_int_equal(mxp_max_pool2d(&y, x, &(mxp_pool_opts){ .kernel = { 5, 2 } }, 0), MXP_ERR_SHAPE);
    assert_non_null(strstr(mxp_last_error(), "padded input"));
    assert_int_equal(mxp_max_pool2d(&y, x, &(mxp_pool_opts){ .kernel = { 2, 2 }, .padding = { 2, 0 } }, 0),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_avg_pool2d(&y, x, &(mxp_pool_opts){ .kernel = { 2, -2 } }, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_avg_pool2d(&y, x, &(mxp_pool_opts){ .stride = { -1, 1 } }, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_avg_pool2d(&y, x, &(mxp_pool_opts){ .layout = 3 }, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_avg_pool2d(&y, x, NULL, MXP_S16), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_avg_pool2d_into(x, x, NULL), MXP_ERR_SHAPE);
    mxp_array *dy = mk(MXP_F32, 4, (int64_t[]){ 1, 2, 2, 2 }, NULL);
    assert_int_equal(mxp_max_pool2d_backward(&y, dy, x, NULL), MXP_ERR_SHAPE); /* global: dy (1, 2, 1, 1) */
    assert_non_null(strstr(mxp_last_error(), "dy has shape"));
    assert_int_equal(mxp_max_pool2d_backward(NULL, dy, x, NULL), MXP_ERR_INVALID_ARGUMENT);
    mxp_array *e = mk(MXP_F32, 4, (int64_t[]){ 1, 2, 0, 4 }, NULL);
    assert_int_equal(mxp_max_pool2d(&y, e, NULL, 0), MXP_ERR_SHAPE);
    mxp_array_free(e);
    mxp_array_free(dy);
    mxp_array_free(x);
    mxp_array_free(x3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_hand_computed),
        cmocka_unit_test(test_pool_matches_direct_loop_every_dtype),
        cmocka_unit_test(test_pool_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

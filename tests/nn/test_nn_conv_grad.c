/* mxp_conv2d_backward: the adjoint of a float64 direct loop (every
 * gradient element), finite differences of the forward in float64, both
 * layouts, groups, depthwise, strides, padding, dilation, several im2col
 * chunks, lower-precision dtypes rounded once, and bad arguments. */
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

typedef struct cfg {
    int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups;
} cfg;

static int64_t osz(int64_t size, int64_t k, int64_t s, int64_t p, int64_t d)
{
    return (size + 2 * p - d * (k - 1) - 1) / s + 1;
}

/* dx, dw, db of sum(dy * conv(x, w)), with |terms| sums for the tolerances. */
static void ref_grads(const cfg *k, bool nhwc, const double *x, const double *w, const double *dy, double *dx,
                      double *dw, double *db, double *ax, double *aw)
{
    const int64_t oh = osz(k->h, k->kh, k->sh, k->ph, k->dh), ow = osz(k->w, k->kw, k->sw, k->pw, k->dw);
    const int64_t cg = k->c / k->groups, og = k->o / k->groups;
    const size_t nx = (size_t)(k->n * k->c * k->h * k->w), nw = (size_t)(k->o * cg * k->kh * k->kw);
    memset(dx, 0, nx * 8), memset(ax, 0, nx * 8), memset(dw, 0, nw * 8), memset(aw, 0, nw * 8);
    memset(db, 0, (size_t)k->o * 8);
    for (int64_t n = 0; n < k->n; n++)
        for (int64_t o = 0; o < k->o; o++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    const double d = dy[nhwc ? ((n * oh + i) * ow + j) * k->o + o : ((n * k->o + o) * oh + i) * ow + j];
                    db[o] += d;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t p = 0; p < k->kh; p++)
                            for (int64_t q = 0; q < k->kw; q++) {
                                const int64_t ih = i * k->sh - k->ph + p * k->dh, iw = j * k->sw - k->pw + q * k->dw;
                                if (ih < 0 || ih >= k->h || iw < 0 || iw >= k->w)
                                    continue;
                                const int64_t ch = o / og * cg + c;
                                const int64_t xi = nhwc ? ((n * k->h + ih) * k->w + iw) * k->c + ch
                                                        : ((n * k->c + ch) * k->h + ih) * k->w + iw;
                                const int64_t wi = nhwc ? ((o * k->kh + p) * k->kw + q) * cg + c
                                                        : ((o * cg + c) * k->kh + p) * k->kw + q;
                                dx[xi] += d * w[wi];
                                ax[xi] += fabs(d * w[wi]);
                                dw[wi] += d * x[xi];
                                aw[wi] += fabs(d * x[xi]);
                            }
                }
}

static void fill(double *v, int64_t n, mxp_dtype dt, uint64_t *rng)
{
    for (int64_t i = 0; i < n; i++)
        v[i] = rounded((prng_uniform(rng) - 0.5) * 4, dt);
}

static void expect_close(const char *what, int64_t i, double got, double want, double sumabs, double acc, int p)
{
    const double tol = 2 * acc * sumabs + ldexp(fabs(want), -p) + 1e-30;
    if (!(fabs(got - want) <= tol))
        fail_msg("%s[%lld] = %.10g, want %.10g (tolerance %.3g)", what, (long long)i, got, want, tol);
}

static void check_grads(const cfg *k, bool nhwc, mxp_dtype dt, uint64_t *rng)
{
    const int64_t cg = k->c / k->groups;
    const int64_t oh = osz(k->h, k->kh, k->sh, k->ph, k->dh), ow = osz(k->w, k->kw, k->sw, k->pw, k->dw);
    const int64_t nx = k->n * k->c * k->h * k->w, nw = k->o * cg * k->kh * k->kw, ny = k->n * k->o * oh * ow;
    double *x = malloc((size_t)nx * 8), *w = malloc((size_t)nw * 8), *dy = malloc((size_t)ny * 8);
    double *dx = malloc((size_t)nx * 8), *ax = malloc((size_t)nx * 8), *dw = malloc((size_t)nw * 8);
    double *aw = malloc((size_t)nw * 8), *db = malloc((size_t)k->o * 8), *got = malloc((size_t)(nx + nw) * 8);
    fill(x, nx, dt, rng), fill(w, nw, dt, rng), fill(dy, ny, dt, rng);
    const int64_t xs[4] = { k->n, nhwc ? k->h : k->c, nhwc ? k->w : k->h, nhwc ? k->c : k->w };
    const int64_t ws[4] = { k->o, nhwc ? k->kh : cg, nhwc ? k->kw : k->kh, nhwc ? cg : k->kw };
    const int64_t ys[4] = { k->n, nhwc ? oh : k->o, nhwc ? ow : oh, nhwc ? k->o : ow };
    mxp_array *xa = mk(dt, 4, xs, x), *wa = mk(dt, 4, ws, w), *dya = mk(dt, 4, ys, dy);
    mxp_array *gx = NULL, *gw = NULL, *gb = NULL;
    const mxp_conv_opts o = { .layout = nhwc ? MXP_NHWC : MXP_NCHW, .stride = { k->sh, k->sw },
                              .padding = { k->ph, k->pw }, .dilation = { k->dh, k->dw }, .groups = k->groups };
    assert_int_equal(mxp_conv2d_backward(&gx, &gw, &gb, dya, xa, wa, &o), MXP_OK);
    assert_int_equal(mxp_array_dtype(gx), dt);
    assert_int_equal(mxp_array_dtype(gw), dt);
    ref_grads(k, nhwc, x, w, dy, dx, dw, db, ax, aw);
    const double acc = dt == MXP_F64 ? 0x1p-52 * 64 : 0x1p-23 * (double)(k->o * k->kh * k->kw + ny / k->o);
    const int p = dt == MXP_F64 ? 52 : dt == MXP_F32 ? 24 : dt == MXP_F16 ? 11 : 8;
    vals(gx, got);
    for (int64_t i = 0; i < nx; i++)
        expect_close("dx", i, got[i], dx[i], ax[i], acc, p);
    vals(gw, got);
    for (int64_t i = 0; i < nw; i++)
        expect_close("dw", i, got[i], dw[i], aw[i], acc, p);
    vals(gb, got);
    for (int64_t i = 0; i < k->o; i++)
        expect_close("db", i, got[i], db[i], fabs(db[i]) * (double)ny, 0x1p-52, p);
    mxp_array_free(gx), mxp_array_free(gw), mxp_array_free(gb);
    mxp_array_free(xa), mxp_array_free(wa), mxp_array_free(dya);
    free(x), free(w), free(dy), free(dx), free(ax), free(dw), free(aw), free(db), free(got);
}

static const cfg cfgs[] = {
    /* n  c  h   w   o  kh kw sh sw ph pw dh dw g */
    { 2, 4, 5, 6, 3, 1, 1, 1, 1, 0, 0, 1, 1, 1 },
    { 1, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1 },
    { 2, 3, 9, 7, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1 },
    { 1, 2, 9, 9, 3, 3, 3, 1, 1, 2, 2, 2, 2, 1 },
    { 1, 6, 6, 5, 4, 3, 2, 1, 1, 1, 0, 1, 1, 2 },
    { 2, 5, 7, 8, 5, 3, 3, 1, 1, 1, 1, 1, 1, 5 },
    { 1, 3, 19, 17, 8, 7, 7, 2, 2, 3, 3, 1, 1, 1 },
    { 1, 3, 8, 6, 2, 5, 3, 2, 1, 2, 0, 1, 1, 1 },
    { 2, 64, 20, 20, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1 }, /* several panels */
};

static void test_conv2d_backward_matches_adjoint_loop(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_F64, MXP_F32, MXP_BF16, MXP_F16 };
    uint64_t rng = 3;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++)
            for (int nhwc = 0; nhwc < 2; nhwc++)
                check_grads(&cfgs[i], nhwc, types[t], &rng);
}

/* sum(r * conv(x, w) + b r) as a float64 function of one element. */
static double loss(const mxp_array *x, const mxp_array *w, const mxp_array *b, const mxp_array *r,
                   const mxp_conv_opts *o)
{
    mxp_array *y = NULL;
    assert_int_equal(mxp_conv2d(&y, x, w, b, o, 0), MXP_OK);
    const int64_t n = mxp_array_size(y);
    double *yv = malloc((size_t)n * 8), *rv = malloc((size_t)n * 8), s = 0;
    vals(y, yv), vals(r, rv);
    for (int64_t i = 0; i < n; i++)
        s += yv[i] * rv[i];
    mxp_array_free(y);
    free(yv), free(rv);
    return s;
}

static void nudge(mxp_array *a, int64_t i, double h)
{
    double *p = (double *)mxp_array_data(a) + i;
    *p += h;
}

static void test_conv2d_backward_finite_differences(void **state)
{
    (void)state;
    uint64_t rng = 9;
    double xv[2 * 4 * 6 * 5], wv[6 * 2 * 3 * 3], bv[6], rv[2 * 6 * 3 * 3];
    for (int nhwc = 0; nhwc < 2; nhwc++) {
        fill(xv, 240, MXP_F64, &rng), fill(wv, 108, MXP_F64, &rng), fill(bv, 6, MXP_F64, &rng);
        fill(rv, 108, MXP_F64, &rng);
        const int64_t xs[4] = { 2, nhwc ? 6 : 4, nhwc ? 5 : 6, nhwc ? 4 : 5 };
        const int64_t ws[4] = { 6, nhwc ? 3 : 2, 3, nhwc ? 2 : 3 };
        const int64_t ys[4] = { 2, nhwc ? 3 : 6, 3, nhwc ? 6 : 3 };
        mxp_array *x = mk(MXP_F64, 4, xs, xv), *w = mk(MXP_F64, 4, ws, wv), *b = mk(MXP_F64, 1, (int64_t[]){ 6 }, bv);
        mxp_array *r = mk(MXP_F64, 4, ys, rv), *gx = NULL, *gw = NULL, *gb = NULL;
        const mxp_conv_opts o = { .layout = nhwc ? MXP_NHWC : MXP_NCHW, .stride = { 2, 1 }, .padding = { 1, 0 },
                                  .dilation = { 1, 1 }, .groups = 2 };
        assert_int_equal(mxp_conv2d_backward(&gx, &gw, &gb, r, x, w, &o), MXP_OK);
        double g[240];
        const double h = 0x1p-10;
        struct { mxp_array *a, *grad; int64_t n; } parts[3] = { { x, gx, 240 }, { w, gw, 108 }, { b, gb, 6 } };
        for (int k = 0; k < 3; k++) {
            vals(parts[k].grad, g);
            for (int64_t i = 0; i < parts[k].n; i += 7) {
                nudge(parts[k].a, i, h);
                const double up = loss(x, w, b, r, &o);
                nudge(parts[k].a, i, -2 * h);
                const double down = loss(x, w, b, r, &o);
                nudge(parts[k].a, i, h);
                expect_near("finite difference", (int)i, g[i], (up - down) / (2 * h), MXP_F64, 1 << 16, 8);
            }
        }
        mxp_array_free(gx), mxp_array_free(gw), mxp_array_free(gb);
        mxp_array_free(x), mxp_array_free(w), mxp_array_free(b), mxp_array_free(r);
    }
}

static void test_conv2d_backward_bad_arguments(void **state)
{
    (void)state;
    mxp_array *x = mk(MXP_F32, 4, (int64_t[]){ 1, 4, 5, 5 }, NULL), *w = mk(MXP_F32, 4, (int64_t[]){ 2, 4, 3, 3 }, NULL);
    mxp_array *dy = mk(MXP_F32, 4, (int64_t[]){ 1, 2, 3, 3 }, NULL), *dyb = mk(MXP_F32, 4, (int64_t[]){ 1, 2, 4, 3 }, NULL);
    mxp_array *dyi = mk(MXP_S8, 4, (int64_t[]){ 1, 2, 3, 3 }, NULL);
    mxp_array *gx = (mxp_array *)&gx, *gw = (mxp_array *)&gw, *gb = NULL;
    assert_int_equal(mxp_conv2d_backward(&gx, &gw, &gb, dyb, x, w, NULL), MXP_ERR_SHAPE);
    assert_null(gx);
    assert_null(gw);
    assert_non_null(strstr(mxp_last_error(), "dy has shape"));
    assert_int_equal(mxp_conv2d_backward(&gx, &gw, &gb, dyi, x, w, NULL), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_conv2d_backward(&gx, &gw, &gb, NULL, x, w, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_conv2d_backward(&gx, &gw, &gb, dy, x, w, &(mxp_conv_opts){ .groups = 3 }), MXP_ERR_SHAPE);
    /* only the weight gradient */
    assert_int_equal(mxp_conv2d_backward(NULL, &gw, NULL, dy, x, w, NULL), MXP_OK);
    assert_int_equal(mxp_array_ndim(gw), 4);
    mxp_array_free(gw);
    mxp_array_free(x), mxp_array_free(w), mxp_array_free(dy), mxp_array_free(dyb), mxp_array_free(dyi);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv2d_backward_matches_adjoint_loop),
        cmocka_unit_test(test_conv2d_backward_finite_differences),
        cmocka_unit_test(test_conv2d_backward_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

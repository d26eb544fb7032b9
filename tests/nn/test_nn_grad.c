/* The backward passes (softmax, log_softmax, layer norm, rms norm) against
 * central finite differences of the forward operations in float64:
 * L = sum(dy * f(x)), dL/dx_i ~ (L(x + h e_i) - L(x - h e_i)) / 2h. */
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

enum { MAXN = 64 };

typedef struct fwd {
    int kind; /* 0 softmax, 1 log_softmax, 2 layer norm, 3 rms norm */
    int axis_or_nnorm;
    int ndim;
    const int64_t *shape;
    int64_t n, inner;
    double x[MAXN], w[MAXN], b[MAXN], dy[MAXN];
} fwd;

/* sum(dy * f(x; w, b)) */
static double loss(const fwd *f)
{
    mxp_array *x = mk(MXP_F64, f->ndim, f->shape, f->x), *y = NULL;
    const int nn = f->axis_or_nnorm;
    const bool norm = f->kind >= 2;
    mxp_array *w = norm ? mk(MXP_F64, nn, f->shape + f->ndim - nn, f->w) : NULL;
    mxp_array *b = norm ? mk(MXP_F64, nn, f->shape + f->ndim - nn, f->b) : NULL;
    mxp_status st = f->kind == 0   ? mxp_softmax(&y, x, nn, NULL, 0)
                    : f->kind == 1 ? mxp_log_softmax(&y, x, nn, NULL, 0)
                    : f->kind == 2 ? mxp_layer_norm(&y, x, nn, w, b, 1e-5, 0)
                                   : mxp_rms_norm(&y, x, nn, w, 1e-5, 0);
    assert_int_equal(st, MXP_OK);
    double v[MAXN];
    vals(y, v);
    double s = 0;
    for (int64_t i = 0; i < f->n; i++)
        s += f->dy[i] * v[i];
    mxp_array_free(x);
    mxp_array_free(w);
    mxp_array_free(b);
    mxp_array_free(y);
    return s;
}

/* The finite difference of loss in p[i]. */
static double numeric(fwd *f, double *p, int64_t i)
{
    const double h = 1e-5, keep = p[i];
    p[i] = keep + h;
    const double up = loss(f);
    p[i] = keep - h;
    const double down = loss(f);
    p[i] = keep;
    return (up - down) / (2 * h);
}

static void expect_grad(const char *what, fwd *f, double *p, int64_t n, const mxp_array *g)
{
    double got[MAXN];
    vals(g, got);
    for (int64_t i = 0; i < n; i++) {
        const double want = numeric(f, p, i);
        if (!(fabs(got[i] - want) <= 1e-6 * (1 + fabs(want))))
            fail_msg("%s[%lld]: backward %.12g, finite difference %.12g", what, (long long)i, got[i], want);
    }
}

static void fill(fwd *f, uint64_t seed)
{
    uint64_t rng = prng_seed(seed);
    for (int i = 0; i < MAXN; i++) {
        f->x[i] = (prng_uniform(&rng) - 0.5) * 4;
        f->w[i] = prng_uniform(&rng) + 0.5;
        f->b[i] = prng_uniform(&rng) - 0.5;
        f->dy[i] = prng_uniform(&rng) - 0.5;
    }
}

static void test_softmax_gradients(void **state)
{
    (void)state;
    const int64_t shape[2] = { 3, 5 };
    for (int kind = 0; kind < 2; kind++)
        for (int axis = 0; axis < 2; axis++) {
            fwd f = { .kind = kind, .axis_or_nnorm = axis, .ndim = 2, .shape = shape, .n = 15 };
            fill(&f, (uint64_t)(kind * 2 + axis));
            mxp_array *x = mk(MXP_F64, 2, shape, f.x), *dy = mk(MXP_F64, 2, shape, f.dy), *y = NULL, *dx = NULL;
            assert_int_equal(kind ? mxp_log_softmax(&y, x, axis, NULL, 0) : mxp_softmax(&y, x, axis, NULL, 0), MXP_OK);
            assert_int_equal(kind ? mxp_log_softmax_backward(&dx, dy, y, axis, 0) : mxp_softmax_backward(&dx, dy, y, axis, 0),
                             MXP_OK);
            expect_grad(kind ? "log_softmax dx" : "softmax dx", &f, f.x, 15, dx);
            mxp_array_free(dx);
            /* float32 gradients: the float64 ones rounded once */
            assert_int_equal(mxp_softmax_backward(&dx, dy, y, axis, MXP_F32), MXP_OK);
            assert_int_equal(mxp_array_dtype(dx), MXP_F32);
            mxp_array_free(dx);
            mxp_array_free(x);
            mxp_array_free(dy);
            mxp_array_free(y);
        }
}

static void test_norm_gradients(void **state)
{
    (void)state;
    const int64_t shape[3] = { 2, 3, 4 };
    for (int kind = 2; kind < 4; kind++)
        for (int nnorm = 1; nnorm <= 2; nnorm++)
            for (int with_w = 0; with_w < 2; with_w++) {
                fwd f = { .kind = kind, .axis_or_nnorm = nnorm, .ndim = 3, .shape = shape, .n = 24 };
                fill(&f, (uint64_t)(kind * 8 + nnorm * 2 + with_w));
                const int64_t inner = nnorm == 1 ? 4 : 12;
                if (!with_w)
                    for (int i = 0; i < inner; i++) {
                        f.w[i] = 1;
                        f.b[i] = 0;
                    }
                mxp_array *x = mk(MXP_F64, 3, shape, f.x), *dy = mk(MXP_F64, 3, shape, f.dy);
                mxp_array *w = mk(MXP_F64, nnorm, shape + 3 - nnorm, f.w), *dx = NULL, *dw = NULL, *db = NULL;
                const mxp_status st = kind == 2 ? mxp_layer_norm_backward(&dx, &dw, &db, dy, x, nnorm, with_w ? w : NULL, 1e-5)
                                                : mxp_rms_norm_backward(&dx, &dw, dy, x, nnorm, with_w ? w : NULL, 1e-5);
                assert_int_equal(st, MXP_OK);
                expect_grad(kind == 2 ? "layer_norm dx" : "rms_norm dx", &f, f.x, 24, dx);
                expect_grad(kind == 2 ? "layer_norm dweight" : "rms_norm dweight", &f, f.w, inner, dw);
                if (kind == 2)
                    expect_grad("layer_norm dbias", &f, f.b, inner, db);
                mxp_array_free(dx);
                mxp_array_free(dw);
                mxp_array_free(db);
                /* only dx: the threads may split the rows, the same bits */
                mxp_array *dx2 = NULL;
                dx = NULL;
                assert_int_equal(kind == 2 ? mxp_layer_norm_backward(&dx, NULL, NULL, dy, x, nnorm, w, 1e-5)
                                           : mxp_rms_norm_backward(&dx, NULL, dy, x, nnorm, w, 1e-5),
                                 MXP_OK);
                assert_int_equal(kind == 2 ? mxp_layer_norm_backward(&dx2, &dw, NULL, dy, x, nnorm, w, 1e-5)
                                           : mxp_rms_norm_backward(&dx2, &dw, dy, x, nnorm, w, 1e-5),
                                 MXP_OK);
                assert_memory_equal(mxp_array_data(dx), mxp_array_data(dx2), 24 * sizeof(double));
                mxp_array_free(dx);
                mxp_array_free(dx2);
                mxp_array_free(dw);
                mxp_array_free(x);
                mxp_array_free(dy);
                mxp_array_free(w);
            }
}

static void test_backward_bad_arguments(void **state)
{
    (void)state;
    mxp_array *x = mk(MXP_F32, 2, (int64_t[]){ 2, 3 }, NULL), *dy = mk(MXP_F32, 2, (int64_t[]){ 3, 2 }, NULL);
    mxp_array *ix = mk(MXP_S32, 2, (int64_t[]){ 2, 3 }, NULL), *dx = (mxp_array *)&dx, *dw = (mxp_array *)&dw;
    assert_int_equal(mxp_softmax_backward(&dx, dy, x, 1, 0), MXP_ERR_SHAPE);
    assert_null(dx);
    assert_int_equal(mxp_softmax_backward(NULL, x, x, 1, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_softmax_backward(&dx, x, x, 2, 0), MXP_ERR_INDEX);
    assert_int_equal(mxp_log_softmax_backward(&dx, ix, x, 1, 0), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_layer_norm_backward(&dx, &dw, NULL, dy, x, 1, NULL, 1e-5), MXP_ERR_SHAPE);
    assert_null(dx);
    assert_null(dw);
    assert_int_equal(mxp_layer_norm_backward(&dx, NULL, NULL, ix, ix, 1, NULL, 1e-5), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_rms_norm_backward(&dx, NULL, x, x, 3, NULL, 1e-5), MXP_ERR_INDEX);
    assert_int_equal(mxp_rms_norm_backward(&dx, NULL, x, x, 1, NULL, -1), MXP_ERR_INVALID_ARGUMENT);
    /* float32 in: dx float32, dweight the weight's dtype */
    mxp_array *w = mk(MXP_BF16, 1, (int64_t[]){ 3 }, (const double[]){ 1, 2, 3 });
    mxp_array_free(x);
    assert_int_equal(mxp_array_empty(&x, MXP_F32, 2, (int64_t[]){ 2, 3 }), MXP_OK);
    memset(mxp_array_data(x), 0, 24);
    assert_int_equal(mxp_rms_norm_backward(&dx, &dw, x, x, 1, w, 1e-5), MXP_OK);
    assert_int_equal(mxp_array_dtype(dx), MXP_F32);
    assert_int_equal(mxp_array_dtype(dw), MXP_BF16);
    mxp_array_free(dx);
    mxp_array_free(dw);
    mxp_array_free(w);
    mxp_array_free(x);
    mxp_array_free(ix);
    mxp_array_free(dy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_gradients),
        cmocka_unit_test(test_norm_gradients),
        cmocka_unit_test(test_backward_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

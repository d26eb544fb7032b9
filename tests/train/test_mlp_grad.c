/* The demo MLP of `mxp train` (tools/mxp/train_mlp.c): its backward pass in
 * float64 against central finite differences of its loss, for every weight
 * and bias of a 5-7-6-3 network; the same network under the bf16 policy
 * against the float64 gradient (bfloat16 accuracy); the loss and its
 * gradient on a hand-computed case. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "train.h"

enum { L = 3, BATCH = 4 };
static const int64_t sizes[L + 1] = { 5, 7, 6, 3 };
static const int32_t labels[BATCH] = { 0, 2, 1, 2 };

static mxp_autocast *policy_all(mxp_dtype dt)
{
    mxp_autocast *ac = NULL;
    assert_int_equal(mxp_autocast_create(&ac, "fp32"), MXP_OK);
    for (int op = 0; op < MXP_AUTOCAST_OP_COUNT; op++)
        assert_int_equal(mxp_autocast_set(ac, (mxp_autocast_op)op, dt), MXP_OK);
    return ac;
}

/* Random float64 parameters and inputs (biases too, so relu sees both signs). */
static void fill(mlp *m, float *x)
{
    for (int l = 0; l < L; l++) {
        mxp_array *w = NULL, *b = NULL;
        const int64_t shape[2] = { m->layer[l].in, m->layer[l].out };
        assert_int_equal(mxp_array_random_normal(&w, MXP_F64, 2, shape, 0, 0.7, 10 + (uint64_t)l), MXP_OK);
        assert_int_equal(mxp_array_random_normal(&b, MXP_F64, 1, &shape[1], 0, 0.3, 20 + (uint64_t)l), MXP_OK);
        assert_int_equal(mxp_array_copyto(m->layer[l].w, w, MXP_CASTING_UNSAFE, NULL), MXP_OK);
        assert_int_equal(mxp_array_copyto(m->layer[l].b, b, MXP_CASTING_UNSAFE, NULL), MXP_OK);
        mxp_array_free(w);
        mxp_array_free(b);
    }
    for (int i = 0; i < BATCH * 5; i++)
        x[i] = (float)((i * 37 % 11) - 5) / 4.0f;
}

static double loss_of(mlp *m)
{
    double loss = 0;
    assert_int_equal(mlp_forward(m, BATCH), MXP_OK);
    assert_int_equal(mlp_loss(m, BATCH, labels, 0.0, &loss, NULL), MXP_OK);
    return loss;
}

/* Every parameter p: (loss(p + h) - loss(p - h)) / 2h against the gradient. */
static void check_param(mlp *m, mxp_array *p, const mxp_array *g)
{
    double *v = mxp_array_data(p);
    const double *gv = mxp_array_data(g);
    const double h = 1e-6;
    for (int64_t i = 0; i < mxp_array_size(p); i++) {
        const double keep = v[i];
        v[i] = keep + h;
        const double up = loss_of(m);
        v[i] = keep - h;
        const double down = loss_of(m);
        v[i] = keep;
        const double fd = (up - down) / (2 * h);
        if (fabs(fd - gv[i]) > 1e-8 + 1e-6 * fabs(gv[i]))
            fail_msg("parameter %lld: finite difference %.12g, backward %.12g", (long long)i, fd, gv[i]);
    }
}

static mlp *make(mxp_dtype dt, mxp_autocast **ac, float *x)
{
    *ac = dt == MXP_F64 ? policy_all(MXP_F64) : NULL;
    if (!*ac)
        assert_int_equal(mxp_autocast_create(ac, dt == MXP_BF16 ? "bf16" : "fp32"), MXP_OK);
    mlp *m = NULL;
    assert_int_equal(mlp_create(&m, L, sizes, *ac, BATCH), MXP_OK);
    fill(m, x);
    const int64_t rows[BATCH] = { 0, 1, 2, 3 };
    assert_int_equal(mlp_set_input(m, x, rows, BATCH), MXP_OK);
    return m;
}

static void test_mlp_backward_f64_matches_finite_differences(void **state)
{
    (void)state;
    float x[BATCH * 5];
    mxp_autocast *ac = NULL;
    mlp *m = make(MXP_F64, &ac, x);
    double loss = 0;
    assert_int_equal(mlp_forward(m, BATCH), MXP_OK);
    assert_int_equal(mlp_loss(m, BATCH, labels, 1.0, &loss, NULL), MXP_OK);
    assert_true(loss > 0.1);
    assert_int_equal(mlp_backward(m, BATCH), MXP_OK);
    /* some hidden units are off for some rows: relu's mask is exercised */
    int64_t zeros = 0;
    for (int64_t i = 0; i < BATCH * sizes[1]; i++)
        zeros += ((const double *)mxp_array_data(m->act[1]))[i] == 0.0;
    assert_true(zeros > 0 && zeros < BATCH * sizes[1]);
    for (int l = 0; l < L; l++) {
        check_param(m, m->layer[l].w, m->layer[l].gw);
        check_param(m, m->layer[l].b, m->layer[l].gb);
    }
    mlp_free(m);
    mxp_autocast_free(ac);
}

/* The bf16 policy's gradients (bfloat16 weights, activations and gradients,
 * float32 accumulation and softmax) stay within bfloat16 error of float64's. */
static void test_mlp_backward_bf16_near_f64(void **state)
{
    (void)state;
    float x[BATCH * 5];
    mxp_autocast *a64 = NULL, *a16 = NULL;
    mlp *m64 = make(MXP_F64, &a64, x), *m16 = make(MXP_BF16, &a16, x);
    for (int l = 0; l < L; l++) { /* the same (bfloat16) parameters in both */
        assert_int_equal(mxp_array_copyto(m64->layer[l].w, m16->layer[l].w, MXP_CASTING_UNSAFE, NULL), MXP_OK);
        assert_int_equal(mxp_array_copyto(m64->layer[l].b, m16->layer[l].b, MXP_CASTING_UNSAFE, NULL), MXP_OK);
    }
    const int64_t rows[BATCH] = { 0, 1, 2, 3 };
    assert_int_equal(mlp_set_input(m64, x, rows, BATCH), MXP_OK);
    double l64 = 0, l16 = 0;
    for (int k = 0; k < 2; k++) {
        mlp *m = k ? m16 : m64;
        assert_int_equal(mlp_forward(m, BATCH), MXP_OK);
        assert_int_equal(mlp_loss(m, BATCH, labels, 1.0, k ? &l16 : &l64, NULL), MXP_OK);
        assert_int_equal(mlp_backward(m, BATCH), MXP_OK);
    }
    assert_true(fabs(l16 - l64) < 0.05 * l64);
    for (int l = 0; l < L; l++) {
        mxp_array *g = NULL;
        assert_int_equal(mxp_array_astype(&g, m16->layer[l].gw, MXP_F64, NULL), MXP_OK);
        mxp_compare_report rep = { 0 };
        assert_int_equal(mxp_compare(m64->layer[l].gw, g, &rep), MXP_OK);
        assert_true(rep.cosine_similarity > 0.99);
        mxp_array_free(g);
    }
    mlp_free(m64);
    mlp_free(m16);
    mxp_autocast_free(a64);
    mxp_autocast_free(a16);
}

/* One layer, zero weights: logits = bias = 0, softmax 1/3 each, loss ln 3,
 * gradient seed * (1/3 - onehot) / n; correct counts argmax = class 0. */
static void test_mlp_loss_hand_computed(void **state)
{
    (void)state;
    mxp_autocast *ac = policy_all(MXP_F64);
    const int64_t s[2] = { 2, 3 };
    mlp *m = NULL;
    assert_int_equal(mlp_create(&m, 1, s, ac, 2), MXP_OK);
    const float x[4] = { 1, 2, 3, 4 };
    const int64_t rows[2] = { 1, 0 };
    const int32_t y[2] = { 0, 2 };
    assert_int_equal(mlp_set_input(m, x, rows, 2), MXP_OK);
    assert_true(((const double *)mxp_array_data(m->act[0]))[0] == 3.0);
    double loss = 0;
    int64_t hits = 0;
    assert_int_equal(mlp_forward(m, 2), MXP_OK);
    assert_int_equal(mlp_loss(m, 2, y, 4.0, &loss, &hits), MXP_OK);
    assert_true(fabs(loss - log(3.0)) < 1e-15);
    assert_int_equal(hits, 1);
    const double *g = mxp_array_data(m->dact[1]);
    assert_true(fabs(g[0] - 4.0 * (1.0 / 3 - 1) / 2) < 1e-15 && fabs(g[1] - 4.0 / 3 / 2) < 1e-15);
    assert_true(fabs(g[5] - 4.0 * (1.0 / 3 - 1) / 2) < 1e-15);
    mlp_free(m);
    mxp_autocast_free(ac);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mlp_backward_f64_matches_finite_differences),
        cmocka_unit_test(test_mlp_backward_bf16_near_f64),
        cmocka_unit_test(test_mlp_loss_hand_computed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

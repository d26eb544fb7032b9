/* The CNN of `mxp train --model cnn` (tools/mxp/train_cnn.c): its backward
 * pass — the composition of the head, global pooling, relu masks, residual
 * sums, batch norm and convolution backward passes — in float64 against
 * central finite differences of its loss for entries of every parameter
 * tensor; under the bf16 and fp16 policies against the float64 gradient;
 * the forward pass in inference mode against batch norm folded by hand;
 * numpy_permutation against NumPy's default_rng(seed).permutation(n). */
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

enum { BATCH = 5, PROBES = 6 };
static const int32_t labels[BATCH] = { 3, 0, 7, 7, 1 };

static mxp_autocast *policy(const char *name)
{
    mxp_autocast *ac = NULL;
    if (strcmp(name, "f64") != 0) {
        assert_int_equal(mxp_autocast_create(&ac, name), MXP_OK);
        return ac;
    }
    assert_int_equal(mxp_autocast_create(&ac, "fp32"), MXP_OK);
    for (int op = 0; op < MXP_AUTOCAST_OP_COUNT; op++)
        assert_int_equal(mxp_autocast_set(ac, (mxp_autocast_op)op, MXP_F64), MXP_OK);
    return ac;
}

/* Random parameters of every tensor (batch norm's too, so that no
 * symmetry hides a wrong sign) and images in [0, 1]. */
static void fill(cnn *c, float *images)
{
    mxp_array *params[CNN_PARAMS], *grads[CNN_PARAMS];
    cnn_params(c, params, grads);
    for (int i = 0; i < CNN_PARAMS; i++) {
        mxp_array *r = NULL;
        const bool gamma = i < 3 * CNN_CONVS && i % 3 == 1;
        assert_int_equal(mxp_array_random_normal(&r, MXP_F64, mxp_array_ndim(params[i]), mxp_array_shape(params[i]),
                                                 gamma ? 1.0 : 0.0, i < 3 * CNN_CONVS && i % 3 == 0 ? 0.4 : 0.3,
                                                 77 + (uint64_t)i),
                         MXP_OK);
        assert_int_equal(mxp_array_copyto(params[i], r, MXP_CASTING_UNSAFE, NULL), MXP_OK);
        mxp_array_free(r);
    }
    for (int i = 0; i < BATCH * CNN_PIXELS; i++)
        images[i] = (float)((i * 37 + i / 7) % 17) / 16.0f;
}

static cnn *make(const char *name, mxp_autocast **ac, float *images)
{
    *ac = policy(name);
    cnn *c = NULL;
    assert_int_equal(cnn_create(&c, *ac, BATCH), MXP_OK);
    fill(c, images);
    const int64_t rows[BATCH] = { 0, 1, 2, 3, 4 };
    assert_int_equal(cnn_set_input(c, images, rows, BATCH), MXP_OK);
    return c;
}

static double loss_of(cnn *c)
{
    double loss = 0;
    assert_int_equal(cnn_forward(c, BATCH, true), MXP_OK);
    assert_int_equal(cnn_loss(c, BATCH, labels, 0.0, &loss, NULL), MXP_OK);
    return loss;
}

/* PROBES entries spread over p: (loss(p + h) - loss(p - h)) / 2h against g. */
static void check_param(cnn *c, mxp_array *p, const mxp_array *g, int which)
{
    double *v = mxp_array_data(p);
    const double *gv = mxp_array_data(g);
    const double h = 1e-6;
    const int64_t size = mxp_array_size(p);
    for (int k = 0; k < PROBES; k++) {
        const int64_t i = (k * 7919 + which * 31) % size;
        const double keep = v[i];
        v[i] = keep + h;
        const double up = loss_of(c);
        v[i] = keep - h;
        const double down = loss_of(c);
        v[i] = keep;
        const double fd = (up - down) / (2 * h);
        if (fabs(fd - gv[i]) > 1e-8 + 1e-5 * fabs(gv[i]))
            fail_msg("parameter %d entry %lld: finite difference %.12g, backward %.12g", which, (long long)i, fd,
                     gv[i]);
    }
}

static void test_cnn_backward_f64_matches_finite_differences(void **state)
{
    (void)state;
    float images[BATCH * CNN_PIXELS];
    mxp_autocast *ac = NULL;
    cnn *c = make("f64", &ac, images);
    double loss = 0;
    assert_int_equal(cnn_forward(c, BATCH, true), MXP_OK);
    assert_int_equal(cnn_loss(c, BATCH, labels, 1.0, &loss, NULL), MXP_OK);
    assert_true(loss > 0.1);
    assert_int_equal(cnn_backward(c, BATCH), MXP_OK);
    /* the relus cut: some outputs of each are zero, some not */
    for (int i = 0; i < CNN_CONVS; i++) {
        if (i == 3 + 2) /* block2.down: no relu of its own */
            continue;
        const double *y = mxp_array_data(c->conv[i].y);
        int64_t zeros = 0, n = mxp_array_size(c->conv[i].y);
        for (int64_t k = 0; k < n; k++)
            zeros += y[k] == 0.0;
        assert_true(zeros > 0 && zeros < n);
    }
    mxp_array *params[CNN_PARAMS], *grads[CNN_PARAMS];
    cnn_params(c, params, grads);
    for (int i = 0; i < CNN_PARAMS; i++)
        check_param(c, params[i], grads[i], i);
    cnn_free(c);
    mxp_autocast_free(ac);
}

/* One step of a policy with float16 / bfloat16 weights, activations and
 * gradients (float32 accumulation, batch norm in float64 with float32
 * parameters) against float64 from the same (rounded) parameters. */
static void near_f64(const char *name, double seed, double min_cosine)
{
    float images[BATCH * CNN_PIXELS];
    mxp_autocast *a64 = NULL, *alo = NULL;
    cnn *c64 = make("f64", &a64, images), *clo = make(name, &alo, images);
    mxp_array *p64[CNN_PARAMS], *g64[CNN_PARAMS], *plo[CNN_PARAMS], *glo[CNN_PARAMS];
    cnn_params(c64, p64, g64);
    cnn_params(clo, plo, glo);
    for (int i = 0; i < CNN_PARAMS; i++)
        assert_int_equal(mxp_array_copyto(p64[i], plo[i], MXP_CASTING_UNSAFE, NULL), MXP_OK);
    double l64 = 0, llo = 0;
    for (int k = 0; k < 2; k++) {
        cnn *c = k ? clo : c64;
        assert_int_equal(cnn_forward(c, BATCH, true), MXP_OK);
        assert_int_equal(cnn_loss(c, BATCH, labels, k ? seed : 1.0, k ? &llo : &l64, NULL), MXP_OK);
        assert_int_equal(cnn_backward(c, BATCH), MXP_OK);
    }
    assert_true(fabs(llo - l64) < 0.05 * l64);
    for (int i = 0; i < CNN_PARAMS; i++) {
        mxp_array *g = NULL;
        assert_int_equal(mxp_array_astype(&g, glo[i], MXP_F64, NULL), MXP_OK);
        double *v = mxp_array_data(g);
        for (int64_t k = 0; k < mxp_array_size(g); k++)
            v[k] /= seed;
        mxp_compare_report rep = { 0 };
        assert_int_equal(mxp_compare(g64[i], g, &rep), MXP_OK);
        if (!(rep.cosine_similarity > min_cosine))
            fail_msg("%s parameter %d: cosine similarity %.6f", name, i, rep.cosine_similarity);
        mxp_array_free(g);
    }
    cnn_free(c64);
    cnn_free(clo);
    mxp_autocast_free(a64);
    mxp_autocast_free(alo);
}

/* Measured: cosine similarity 0.983 for the stem's gamma (a sum over every
 * pixel of the batch), 0.99-1 for the rest. */
static void test_cnn_backward_bf16_near_f64(void **state)
{
    (void)state;
    near_f64("bf16", 1.0, 0.97);
}

/* float16 with a loss scale of 2^10 (its gradients of a unit loss would be
 * near float16's subnormals); measured: 0.998 and above. */
static void test_cnn_backward_fp16_scaled_near_f64(void **state)
{
    (void)state;
    near_f64("fp16", 1024.0, 0.995);
}

/* Inference: batch norm on the running statistics.  After one training
 * pass from mean 0, var 1 they are 0.1 batch mean and 0.9 + 0.1 unbiased
 * batch variance; the stem's output checked against that by hand. */
static void test_cnn_inference_uses_running_statistics(void **state)
{
    (void)state;
    float images[BATCH * CNN_PIXELS];
    mxp_autocast *ac = NULL;
    cnn *c = make("f64", &ac, images);
    assert_int_equal(cnn_forward(c, BATCH, true), MXP_OK);
    const cnn_conv *v = &c->conv[0];
    const double *z = mxp_array_data(v->z), *mean = mxp_array_data(v->mean), *var = mxp_array_data(v->var);
    const int64_t n = BATCH * 8 * 8;
    for (int64_t ch = 0; ch < v->cout; ch++) {
        double s = 0, ss = 0;
        for (int64_t k = 0; k < n; k++)
            s += z[k * v->cout + ch];
        for (int64_t k = 0; k < n; k++)
            ss += (z[k * v->cout + ch] - s / n) * (z[k * v->cout + ch] - s / n);
        assert_true(fabs(mean[ch] - 0.1 * s / n) < 1e-12);
        assert_true(fabs(var[ch] - (0.9 + 0.1 * ss / (n - 1))) < 1e-12);
    }
    assert_int_equal(cnn_forward(c, BATCH, false), MXP_OK);
    const double *y = mxp_array_data(v->y), *g = mxp_array_data(v->gamma), *b = mxp_array_data(v->beta);
    for (int64_t k = 0; k < n * v->cout; k++) {
        const int64_t ch = k % v->cout;
        const double want = fmax(0.0, (z[k] - mean[ch]) / sqrt(var[ch] + 1e-5) * g[ch] + b[ch]);
        assert_true(fabs(y[k] - want) < 1e-12);
    }
    cnn_free(c);
    mxp_autocast_free(ac);
}

/* numpy.random.default_rng(seed).permutation(n), printed by NumPy 2.4 and
 * 1.24 (the same): the split's, whole (its ends and a weighted sum of
 * all), and small ones of other seeds (the largest 32-bit seed too). */
static void test_numpy_permutation_matches_numpy(void **state)
{
    (void)state;
    int64_t order[1797];
    numpy_permutation(order, 1797, 2026);
    static const int64_t head[12] = { 1296, 1497, 1019, 299, 1650, 1572, 1180, 365, 881, 183, 1287, 1731 };
    static const int64_t tail[6] = { 1765, 490, 359, 1215, 1028, 426 };
    int64_t weighted = 0;
    for (int i = 0; i < 1797; i++)
        weighted += order[i] * i;
    for (int i = 0; i < 12; i++)
        assert_int_equal(order[i], head[i]);
    for (int i = 0; i < 6; i++)
        assert_int_equal(order[1791 + i], tail[i]);
    assert_int_equal(weighted, 1433259355);
    static const int64_t ten[10] = { 4, 6, 2, 7, 3, 5, 9, 0, 8, 1 }, seven[7] = { 0, 6, 4, 5, 3, 2, 1 };
    numpy_permutation(order, 10, 0);
    assert_memory_equal(order, ten, sizeof ten);
    numpy_permutation(order, 7, 4294967295u);
    assert_memory_equal(order, seven, sizeof seven);
    numpy_permutation(order, 1, 1);
    assert_int_equal(order[0], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cnn_backward_f64_matches_finite_differences),
        cmocka_unit_test(test_cnn_backward_bf16_near_f64),
        cmocka_unit_test(test_cnn_backward_fp16_scaled_near_f64),
        cmocka_unit_test(test_cnn_inference_uses_running_statistics),
        cmocka_unit_test(test_numpy_permutation_matches_numpy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

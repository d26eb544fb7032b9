/* The optimizers against float64 reference implementations of torch.optim's
 * SGD (momentum, dampening, Nesterov, weight decay), Adam and AdamW over a
 * few steps; master weights (the parameter is the master rounded once,
 * tiny updates accumulate), no master with nearest (stalls) and stochastic
 * rounding (unbiased), low-precision gradients, master_init, clipping by
 * global norm, reproducible stochastic rounding, allocation failures and
 * bad input. */
#include <fenv.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "support/alloc_failures.h"

#if defined(__SSE2__)
#include <xmmintrin.h> /* the test sets MXCSR's FTZ and DAZ as a caller might */
#endif

enum { N = 37, STEPS = 6 };

static mxp_array *vec(mxp_dtype dt, int64_t n)
{
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_zeros(&a, dt, 1, &n), MXP_OK);
    return a;
}

static double uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

/* ---- float64 references (torch.optim's formulas) -------------------------- */

static void ref_sgd(double *w, double *buf, const double *g, int n, int t, const mxp_optimizer_opts *o)
{
    for (int i = 0; i < n; i++) {
        double d = g[i] + o->weight_decay * w[i];
        if (o->momentum > 0) {
            buf[i] = t == 0 ? d : o->momentum * buf[i] + (1 - o->dampening) * d;
            d = o->nesterov ? d + o->momentum * buf[i] : buf[i];
        }
        w[i] -= o->lr * d;
    }
}

static void ref_adam(double *w, double *m, double *v, const double *g, int n, int t, bool decoupled,
                     const mxp_optimizer_opts *o)
{
    const double b1 = o->beta1 ? o->beta1 : 0.9, b2 = o->beta2 ? o->beta2 : 0.999, eps = o->eps ? o->eps : 1e-8;
    for (int i = 0; i < n; i++) {
        double gi = g[i];
        if (decoupled)
            w[i] *= 1 - o->lr * o->weight_decay;
        else
            gi += o->weight_decay * w[i];
        m[i] = b1 * m[i] + (1 - b1) * gi;
        v[i] = b2 * v[i] + (1 - b2) * gi * gi;
        const double mh = m[i] / (1 - pow(b1, t + 1)), vh = v[i] / (1 - pow(b2, t + 1));
        w[i] -= o->lr * mh / (sqrt(vh) + eps);
    }
}

/* STEPS steps of `kind` on a float32 parameter against the float64
 * reference: within float32 rounding of the trajectory. */
static void run_against_reference(mxp_optimizer_kind kind, const mxp_optimizer_opts *o)
{
    mxp_optimizer *opt = NULL;
    assert_int_equal(mxp_optimizer_create(&opt, kind, o), MXP_OK);
    mxp_array *w = vec(MXP_F32, N), *g = vec(MXP_F32, N);
    assert_int_equal(mxp_optimizer_add_param(opt, w, g, NULL), MXP_OK);
    float *wv = mxp_array_data(w), *gv = mxp_array_data(g);
    double rw[N], s1[N] = { 0 }, s2[N] = { 0 }, rg[N];
    uint64_t seed = 3;
    for (int i = 0; i < N; i++)
        rw[i] = wv[i] = (float)(uniform(&seed) * 2 - 1);
    for (int t = 0; t < STEPS; t++) {
        for (int i = 0; i < N; i++)
            rg[i] = gv[i] = (float)((uniform(&seed) - 0.5) * (i % 5 + 1));
        assert_int_equal(mxp_optimizer_step(opt), MXP_OK);
        if (kind == MXP_OPTIM_SGD)
            ref_sgd(rw, s1, rg, N, t, o);
        else
            ref_adam(rw, s1, s2, rg, N, t, kind == MXP_OPTIM_ADAMW, o);
        for (int i = 0; i < N; i++) {
            if (fabs(wv[i] - rw[i]) > 4e-7 * (fabs(rw[i]) + 1.0))
                fail_msg("step %d, element %d: %.9g, float64 reference %.9g", t, i, (double)wv[i], rw[i]);
        }
    }
    assert_int_equal(mxp_optimizer_steps(opt), STEPS);
    mxp_array_free(w);
    mxp_array_free(g);
    mxp_optimizer_free(opt);
}

static void test_sgd_matches_float64_reference(void **state)
{
    (void)state;
    const mxp_optimizer_opts plain = { .lr = 0.1 };
    const mxp_optimizer_opts momentum = { .lr = 0.05, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01 };
    const mxp_optimizer_opts nesterov = { .lr = 0.05, .momentum = 0.8, .nesterov = true, .weight_decay = 0.001 };
    run_against_reference(MXP_OPTIM_SGD, &plain);
    run_against_reference(MXP_OPTIM_SGD, &momentum);
    run_against_reference(MXP_OPTIM_SGD, &nesterov);
}

static void test_adam_and_adamw_match_float64_reference(void **state)
{
    (void)state;
    const mxp_optimizer_opts adam = { .lr = 0.01, .weight_decay = 0.05 };
    const mxp_optimizer_opts tuned = { .lr = 0.003, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-6 };
    run_against_reference(MXP_OPTIM_ADAM, &adam);
    run_against_reference(MXP_OPTIM_ADAM, &tuned);
    run_against_reference(MXP_OPTIM_ADAMW, &adam);
}

/* A bfloat16 parameter with a float32 master: updates of 1e-4 (an eighth of
 * a bfloat16 half-ulp at 1) accumulate in the master, and the parameter is
 * always the master rounded to nearest even. */
static void test_master_weights_accumulate_tiny_updates(void **state)
{
    (void)state;
    mxp_optimizer_opts o = { .lr = 1e-4 };
    mxp_optimizer *opt = NULL;
    assert_int_equal(mxp_optimizer_create(&opt, MXP_OPTIM_SGD, &o), MXP_OK);
    mxp_array *w = vec(MXP_BF16, N), *g = vec(MXP_F16, N);
    uint16_t *wv = mxp_array_data(w), *gv = mxp_array_data(g);
    for (int i = 0; i < N; i++) {
        wv[i] = 0x3f80;  /* 1.0 */
        gv[i] = 0xbc00;  /* float16 -1.0 */
    }
    assert_int_equal(mxp_optimizer_add_param(opt, w, g, NULL), MXP_OK);
    const mxp_array *master = mxp_optimizer_master(opt, 0);
    assert_int_equal(mxp_array_dtype(master), MXP_F32);
    for (int t = 0; t < 100; t++) {
        assert_int_equal(mxp_optimizer_step(opt), MXP_OK);
        uint16_t want[N];
        assert_int_equal(mxp_convert(want, MXP_BF16, mxp_array_data(master), MXP_F32, N, NULL), MXP_OK);
        assert_memory_equal(want, wv, sizeof want);
    }
    const float *mv = mxp_array_data(master);
    assert_true(fabs(mv[0] - 1.01) < 1e-5);
    assert_int_equal(wv[0], 0x3f81); /* 1 + 2^-7: the nearest bfloat16 to 1.01 */
    mxp_array_free(w);
    mxp_array_free(g);
    mxp_optimizer_free(opt);
}

/* Without a master copy, nearest rounding loses every tiny update (the
 * weights never move); stochastic rounding keeps them on average. */
static void test_no_master_nearest_stalls_stochastic_is_unbiased(void **state)
{
    (void)state;
    enum { M = 4096, T = 100 };
    double mean[2];
    for (int k = 0; k < 2; k++) {
        mxp_optimizer_opts o = { .lr = 1e-4, .master = MXP_MASTER_NONE, .seed = 11,
                                 .rounding = k ? MXP_ROUND_STOCHASTIC : MXP_ROUND_NEAREST_EVEN };
        mxp_optimizer *opt = NULL;
        assert_int_equal(mxp_optimizer_create(&opt, MXP_OPTIM_SGD, &o), MXP_OK);
        mxp_array *w = vec(MXP_BF16, M), *g = vec(MXP_F32, M);
        uint16_t *wv = mxp_array_data(w);
        float *gv = mxp_array_data(g);
        for (int i = 0; i < M; i++) {
            wv[i] = 0x3f80;
            gv[i] = -1.0f;
        }
        assert_int_equal(mxp_optimizer_add_param(opt, w, g, NULL), MXP_OK);
        assert_ptr_equal(mxp_optimizer_master(opt, 0), mxp_optimizer_master(opt, 0));
        assert_int_equal(mxp_array_dtype(mxp_optimizer_master(opt, 0)), MXP_BF16); /* no copy */
        for (int t = 0; t < T; t++)
            assert_int_equal(mxp_optimizer_step(opt), MXP_OK);
        double back[M], sum = 0;
        assert_int_equal(mxp_convert(back, MXP_F64, wv, MXP_BF16, M, NULL), MXP_OK);
        for (int i = 0; i < M; i++)
            sum += back[i];
        mean[k] = sum / M;
        mxp_array_free(w);
        mxp_array_free(g);
        mxp_optimizer_free(opt);
    }
    assert_true(mean[0] == 1.0);
    assert_true(fabs(mean[1] - 1.01) < 1e-3);
}

/* Stochastic rounding is reproducible: the same seed gives the same bits,
 * another seed other bits. */
static void test_stochastic_rounding_is_reproducible(void **state)
{
    (void)state;
    uint16_t out[3][N];
    const uint64_t seeds[3] = { 5, 5, 6 };
    for (int k = 0; k < 3; k++) {
        mxp_optimizer_opts o = { .lr = 0.003, .rounding = MXP_ROUND_STOCHASTIC, .seed = seeds[k] };
        mxp_optimizer *opt = NULL;
        assert_int_equal(mxp_optimizer_create(&opt, MXP_OPTIM_ADAM, &o), MXP_OK);
        mxp_array *w = vec(MXP_BF16, N), *g = vec(MXP_F32, N);
        for (int i = 0; i < N; i++)
            ((float *)mxp_array_data(g))[i] = (float)(i - 18);
        assert_int_equal(mxp_optimizer_add_param(opt, w, g, NULL), MXP_OK);
        for (int t = 0; t < 3; t++)
            assert_int_equal(mxp_optimizer_step(opt), MXP_OK);
        memcpy(out[k], mxp_array_data(w), sizeof out[k]);
        mxp_array_free(w);
        mxp_array_free(g);
        mxp_optimizer_free(opt);
    }
    assert_memory_equal(out[0], out[1], sizeof out[0]);
    assert_memory_not_equal(out[0], out[2], sizeof out[0]);
}

/* master_init: the master holds the float32 values, the parameter their
 * nearest float16; grad_scale multiplies the gradient as it is read. */
static void test_master_init_and_grad_scale(void **state)
{
    (void)state;
    mxp_optimizer_opts o = { .lr = 1.0 };
    mxp_optimizer *opt = NULL;
    assert_int_equal(mxp_optimizer_create(&opt, MXP_OPTIM_SGD, &o), MXP_OK);
    mxp_array *w = vec(MXP_F16, 4), *g = vec(MXP_BF16, 4), *init = vec(MXP_F32, 4);
    const float iv[4] = { 0.1f, 1.0f / 3.0f, 1000.1f, -7.0f };
    memcpy(mxp_array_data(init), iv, sizeof iv);
    assert_int_equal(mxp_optimizer_add_param(opt, w, g, init), MXP_OK);
    assert_memory_equal(mxp_array_data(mxp_optimizer_master(opt, 0)), iv, sizeof iv);
    uint16_t want[4];
    assert_int_equal(mxp_convert(want, MXP_F16, iv, MXP_F32, 4, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(w), want, sizeof want);
    const float gv[4] = { 1024, 2048, -4096, 0 };
    assert_int_equal(mxp_convert(mxp_array_data(g), MXP_BF16, gv, MXP_F32, 4, NULL), MXP_OK);
    assert_int_equal(mxp_optimizer_step_scaled(opt, 1.0 / 1024), MXP_OK);
    const float *mv = mxp_array_data(mxp_optimizer_master(opt, 0));
    assert_true(mv[0] == 0.1f - 1.0f && mv[1] == 1.0f / 3.0f - 2.0f && mv[2] == 1000.1f + 4.0f && mv[3] == -7.0f);
    mxp_array_free(w);
    mxp_array_free(g);
    mxp_array_free(init);
    mxp_optimizer_free(opt);
}

/* The global norm in float64 over gradients of two dtypes; clipped by
 * max_norm / (norm + 1e-6), rounded once; untouched below the limit or
 * for a non-finite norm.  max_grad_norm in the optimizer does the same. */
static void test_clip_grad_norm(void **state)
{
    (void)state;
    mxp_array *a = vec(MXP_F32, 3), *b = vec(MXP_BF16, 2);
    const float av[3] = { 3, 4, 12 }, bv[2] = { 0, 84 };
    memcpy(mxp_array_data(a), av, sizeof av);
    assert_int_equal(mxp_convert(mxp_array_data(b), MXP_BF16, bv, MXP_F32, 2, NULL), MXP_OK);
    mxp_array *const grads[2] = { a, b };
    double norm = 0;
    assert_int_equal(mxp_clip_grad_norm(grads, 2, 1000.0, &norm), MXP_OK);
    assert_true(norm == 85.0); /* sqrt(9 + 16 + 144 + 7056) */
    assert_memory_equal(mxp_array_data(a), av, sizeof av);
    assert_int_equal(mxp_clip_grad_norm(grads, 2, 8.5, &norm), MXP_OK);
    const double c = 8.5 / (85.0 + 1e-6);
    const float *x = mxp_array_data(a);
    assert_true(x[0] == (float)(3 * c) && x[2] == (float)(12 * c));
    float y[2];
    assert_int_equal(mxp_convert(y, MXP_F32, mxp_array_data(b), MXP_BF16, 2, NULL), MXP_OK);
    assert_true(y[1] == mxp_bf16_to_f32(mxp_f32_to_bf16((float)(84 * c))));
    ((float *)mxp_array_data(a))[1] = NAN;
    float before[3];
    memcpy(before, mxp_array_data(a), sizeof before);
    assert_int_equal(mxp_clip_grad_norm(grads, 2, 1.0, &norm), MXP_OK);
    assert_true(isnan(norm));
    assert_memory_equal(mxp_array_data(a), before, sizeof before);
    /* inside the step: w -= lr * g * clip */
    mxp_optimizer_opts o = { .lr = 1.0, .max_grad_norm = 2.6 };
    mxp_optimizer *opt = NULL;
    mxp_array *w = vec(MXP_F32, 3), *g = vec(MXP_F32, 3);
    memcpy(mxp_array_data(g), av, sizeof av);
    assert_int_equal(mxp_optimizer_create(&opt, MXP_OPTIM_SGD, &o), MXP_OK);
    assert_int_equal(mxp_optimizer_add_param(opt, w, g, NULL), MXP_OK);
    assert_int_equal(mxp_optimizer_step_scaled(opt, 0.5), MXP_OK);
    assert_true(mxp_optimizer_last_grad_norm(opt) == 6.5);
    const float *wv = mxp_array_data(w);
    assert_true(fabs(wv[2] + 12 * 0.5 * 2.6 / 6.5) < 1e-6);
    assert_memory_equal(mxp_array_data(g), av, sizeof av);
    mxp_array_free(w);
    mxp_array_free(g);
    mxp_optimizer_free(opt);
    mxp_array_free(a);
    mxp_array_free(b);
}

/* Three Adam steps on a bfloat16 parameter with tiny (float32-subnormal)
 * gradients; returns the parameter's bits and the master's. */
static void adam_steps(uint16_t *w_out, float *master_out)
{
    mxp_optimizer_opts o = { .lr = 1e-3, .weight_decay = 0.1, .eps = 1e-30 };
    mxp_optimizer *opt = NULL;
    assert_int_equal(mxp_optimizer_create(&opt, MXP_OPTIM_ADAMW, &o), MXP_OK);
    mxp_array *w = vec(MXP_BF16, N), *g = vec(MXP_F32, N);
    for (int i = 0; i < N; i++) {
        ((uint16_t *)mxp_array_data(w))[i] = (uint16_t)(0x3f00 + 7 * i);
        ((float *)mxp_array_data(g))[i] = (float)(i - 18) * 1e-39f; /* subnormal */
    }
    assert_int_equal(mxp_optimizer_add_param(opt, w, g, NULL), MXP_OK);
    for (int t = 0; t < 3; t++)
        assert_int_equal(mxp_optimizer_step(opt), MXP_OK);
    memcpy(w_out, mxp_array_data(w), N * sizeof *w_out);
    memcpy(master_out, mxp_array_data(mxp_optimizer_master(opt, 0)), N * sizeof *master_out);
    mxp_array_free(w);
    mxp_array_free(g);
    mxp_optimizer_free(opt);
}

/* The caller's rounding direction and flush-to-zero modes change nothing,
 * and are restored. */
static void test_optimizer_ignores_the_callers_fp_environment(void **state)
{
    (void)state;
    uint16_t w0[N], w1[N];
    float m0[N], m1[N];
    adam_steps(w0, m0);
    fenv_t env;
    assert_int_equal(fegetenv(&env), 0);
    assert_int_equal(fesetround(FE_UPWARD), 0);
#if defined(__SSE2__)
    _mm_setcsr(_mm_getcsr() | 0x8040); /* FTZ | DAZ */
#endif
    adam_steps(w1, m1);
    const int round = fegetround();
#if defined(__SSE2__)
    const unsigned csr = _mm_getcsr();
#endif
    assert_int_equal(fesetenv(&env), 0);
    assert_int_equal(round, FE_UPWARD);
#if defined(__SSE2__)
    assert_true((csr & 0x8040) == 0x8040);
#endif
    assert_memory_equal(w0, w1, sizeof w0);
    assert_memory_equal(m0, m1, sizeof m0);
}

static mxp_status alloc_workload(void)
{
    mxp_optimizer_opts o = { .lr = 0.01, .momentum = 0.9 };
    mxp_optimizer *opt = NULL;
    mxp_array *w = NULL, *g = NULL;
    const int64_t n = 3000;
    mxp_status st = mxp_optimizer_create(&opt, MXP_OPTIM_ADAMW, &o);
    if (st == MXP_OK)
        st = mxp_array_ones(&w, MXP_BF16, 1, &n);
    if (st == MXP_OK)
        st = mxp_array_ones(&g, MXP_F16, 1, &n);
    for (int i = 0; i < 3 && st == MXP_OK; i++)
        st = mxp_optimizer_add_param(opt, w, g, NULL);
    if (st == MXP_OK)
        st = mxp_optimizer_step(opt);
    mxp_array_free(w);
    mxp_array_free(g);
    mxp_optimizer_free(opt);
    return st;
}

static void test_optimizer_allocation_failures_leak_nothing(void **state)
{
    (void)state;
    assert_true(check_every_allocation_failure(alloc_workload) >= 5);
}

static void expect_error(mxp_status got, mxp_status want)
{
    assert_int_equal(got, want);
    assert_true(strlen(mxp_last_error()) > 10);
    mxp_clear_error();
}

static void test_optimizer_rejects_bad_input(void **state)
{
    (void)state;
    mxp_optimizer *opt = NULL;
    const mxp_optimizer_opts bad[] = {
        { .lr = NAN }, { .lr = -0.1 }, { .lr = INFINITY }, { .momentum = 1.0 }, { .momentum = -0.5 },
        { .dampening = 2 }, { .nesterov = true }, { .nesterov = true, .momentum = 0.9, .dampening = 0.5 },
        { .weight_decay = -1 }, { .beta1 = 1.0 }, { .beta2 = -0.1 }, { .eps = -1 }, { .max_grad_norm = NAN },
        { .master = (mxp_master_mode)7 }, { .rounding = MXP_ROUNDING_COUNT },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_error(mxp_optimizer_create(&opt, MXP_OPTIM_ADAM, &bad[i]), MXP_ERR_INVALID_ARGUMENT);
        assert_null(opt);
    }
    expect_error(mxp_optimizer_create(&opt, (mxp_optimizer_kind)0, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_optimizer_create(&opt, MXP_OPTIM_SGD, NULL), MXP_OK);
    assert_true(mxp_optimizer_lr(opt) == 0.01);
    expect_error(mxp_optimizer_set_lr(opt, NAN), MXP_ERR_INVALID_ARGUMENT);
    expect_error(mxp_optimizer_set_lr(opt, -1), MXP_ERR_INVALID_ARGUMENT);
    assert_true(mxp_optimizer_lr(opt) == 0.01);
    const int64_t s34[2] = { 3, 4 }, s43[2] = { 4, 3 };
    mxp_array *p = NULL, *g = NULL, *p64 = NULL, *gi = NULL, *ro = NULL;
    assert_int_equal(mxp_array_zeros(&p, MXP_F32, 2, s34), MXP_OK);
    assert_int_equal(mxp_array_zeros(&g, MXP_F32, 2, s43), MXP_OK);
    assert_int_equal(mxp_array_zeros(&p64, MXP_F64, 2, s34), MXP_OK);
    assert_int_equal(mxp_array_zeros(&gi, MXP_S8, 2, s34), MXP_OK);
    assert_int_equal(mxp_optimizer_add_param(opt, p, g, NULL), MXP_ERR_SHAPE);
    assert_non_null(strstr(mxp_last_error(), "param (3, 4) and grad (4, 3) differ in shape"));
    mxp_clear_error();
    expect_error(mxp_optimizer_add_param(opt, p64, p, NULL), MXP_ERR_UNSUPPORTED);
    expect_error(mxp_optimizer_add_param(opt, p, gi, NULL), MXP_ERR_INVALID_DTYPE);
    expect_error(mxp_optimizer_add_param(opt, p, p, NULL), MXP_ERR_OVERLAP);
    expect_error(mxp_optimizer_add_param(opt, p, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_array_broadcast_to(&ro, p, 2, s34), MXP_OK);
    expect_error(mxp_optimizer_add_param(opt, ro, p64, NULL), MXP_ERR_READONLY);
    expect_error(mxp_optimizer_add_param(opt, p, p64, g), MXP_ERR_SHAPE);
    assert_int_equal(mxp_optimizer_param_count(opt), 0);
    expect_error(mxp_optimizer_step_scaled(opt, 0.0), MXP_ERR_INVALID_ARGUMENT);
    expect_error(mxp_optimizer_step_scaled(opt, NAN), MXP_ERR_INVALID_ARGUMENT);
    expect_error(mxp_optimizer_step(NULL), MXP_ERR_INVALID_ARGUMENT);
    expect_error(mxp_clip_grad_norm(&g, 1, 0.0, NULL), MXP_ERR_INVALID_ARGUMENT);
    expect_error(mxp_clip_grad_norm(&gi, 1, 1.0, NULL), MXP_ERR_INVALID_DTYPE);
    assert_null(mxp_optimizer_master(opt, 0));
    mxp_array *arrays[] = { p, g, p64, gi, ro };
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        mxp_array_free(arrays[i]);
    mxp_optimizer_free(opt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sgd_matches_float64_reference),
        cmocka_unit_test(test_adam_and_adamw_match_float64_reference),
        cmocka_unit_test(test_master_weights_accumulate_tiny_updates),
        cmocka_unit_test(test_no_master_nearest_stalls_stochastic_is_unbiased),
        cmocka_unit_test(test_stochastic_rounding_is_reproducible),
        cmocka_unit_test(test_master_init_and_grad_scale),
        cmocka_unit_test(test_clip_grad_norm),
        cmocka_unit_test(test_optimizer_ignores_the_callers_fp_environment),
        cmocka_unit_test(test_optimizer_allocation_failures_leak_nothing),
        cmocka_unit_test(test_optimizer_rejects_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

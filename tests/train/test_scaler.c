/* The dynamic loss scaler step by step against PyTorch GradScaler's rules,
 * re-implemented here from its update kernel (_amp_update_scale_: a
 * float32 scale; inf/NaN: scale * backoff, tracker 0; else tracker + 1 and
 * at growth_interval scale * growth if finite, tracker 0) over sequences
 * with injected inf/NaN; unscaling (float32 1/scale, one rounding) in
 * every float dtype; the bounds (never inf, 0 or subnormal; min/max);
 * static mode; save/restore; the fused step; bad input. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

/* ---- the reference: GradScaler's update rule -------------------------- */

typedef struct ref_scaler {
    float scale;
    int64_t tracker;
    double growth, backoff;
    int64_t interval;
} ref_scaler;

static void ref_update(ref_scaler *r, bool found_inf)
{
    if (found_inf) {
        r->scale = (float)((double)r->scale * r->backoff);
        r->tracker = 0;
        return;
    }
    const int64_t successful = r->tracker + 1;
    if (successful == r->interval) {
        const float next = (float)((double)r->scale * r->growth);
        if (isfinite(next))
            r->scale = next;
        r->tracker = 0;
    } else {
        r->tracker = successful;
    }
}

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static mxp_array *f32_array(int64_t n)
{
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_zeros(&a, MXP_F32, 1, &n), MXP_OK);
    return a;
}

static void expect_state(const mxp_loss_scaler *s, const ref_scaler *r, int64_t steps, int64_t skipped)
{
    mxp_loss_scaler_state st;
    assert_int_equal(mxp_loss_scaler_get_state(s, &st), MXP_OK);
    assert_true(st.scale == (double)r->scale);
    assert_int_equal(st.growth_tracker, r->tracker);
    assert_int_equal(st.steps, steps);
    assert_int_equal(st.skipped, skipped);
}

/* 600 steps, interval 3, about one step in 5 with an inf or NaN in one of
 * two gradients; every unscaled value equals g * float(1 / scale). */
static void test_scaler_follows_gradscaler_rules_with_injected_inf_nan(void **state)
{
    (void)state;
    mxp_loss_scaler_opts o = { .growth_interval = 3 };
    mxp_loss_scaler *s = NULL;
    assert_int_equal(mxp_loss_scaler_create(&s, &o), MXP_OK);
    ref_scaler r = { 65536.0f, 0, 2.0, 0.5, 3 };
    mxp_array *g[2] = { f32_array(37), f32_array(5) };
    uint64_t seed = 7;
    int64_t skipped = 0, inf_steps = 0;
    for (int64_t step = 0; step < 600; step++) {
        bool bad = rnd(&seed) % 5 == 0;
        float want[2][37];
        for (int k = 0; k < 2; k++) {
            float *v = mxp_array_data(g[k]);
            const float inv = (float)(1.0 / (double)r.scale);
            for (int64_t i = 0; i < mxp_array_size(g[k]); i++) {
                v[i] = (float)((double)(rnd(&seed) >> 11) * 0x1p-53 - 0.5) * r.scale;
                want[k][i] = v[i] * inv;
            }
        }
        if (bad) {
            float *v = mxp_array_data(g[step % 2]);
            v[step % 5] = step % 3 ? INFINITY : NAN;
            inf_steps++;
        }
        for (int k = 0; k < 2; k++)
            assert_int_equal(mxp_loss_scaler_unscale(s, g[k]), MXP_OK);
        assert_int_equal(mxp_loss_scaler_found_inf(s), bad);
        for (int k = 0; k < 2; k++) {
            const float *v = mxp_array_data(g[k]);
            for (int64_t i = 0; i < mxp_array_size(g[k]); i++) {
                if (!(bad && k == step % 2 && i == step % 5))
                    assert_true(v[i] == want[k][i]);
            }
        }
        assert_int_equal(mxp_loss_scaler_update(s), MXP_OK);
        assert_false(mxp_loss_scaler_found_inf(s));
        skipped += bad;
        ref_update(&r, bad);
        expect_state(s, &r, step + 1, skipped);
    }
    assert_true(inf_steps > 80 && inf_steps < 160);
    mxp_array_free(g[0]);
    mxp_array_free(g[1]);
    mxp_loss_scaler_free(s);
}

/* Growth every step from 2^120 reaches 2^127 and stays: the growth to inf
 * passes the default max_scale (FLT_MAX) and is refused, as torch does. */
static void test_scaler_growth_stops_below_infinity(void **state)
{
    (void)state;
    mxp_loss_scaler_opts o = { .init_scale = 0x1p120, .growth_interval = 1 };
    mxp_loss_scaler *s = NULL;
    assert_int_equal(mxp_loss_scaler_create(&s, &o), MXP_OK);
    ref_scaler r = { 0x1p120f, 0, 2.0, 0.5, 1 };
    for (int i = 0; i < 20; i++) {
        assert_int_equal(mxp_loss_scaler_update(s), MXP_OK);
        ref_update(&r, false);
        expect_state(s, &r, i + 1, 0);
    }
    assert_true(mxp_loss_scaler_scale(s) == 0x1p127);
    mxp_loss_scaler_free(s);
}

/* Back-offs stop at min_scale: never subnormal, never 0. */
static void test_scaler_backoff_stops_at_min_scale(void **state)
{
    (void)state;
    mxp_loss_scaler_opts o = { .init_scale = 0x1p-120 };
    mxp_loss_scaler *s = NULL;
    assert_int_equal(mxp_loss_scaler_create(&s, &o), MXP_OK);
    mxp_array *x = f32_array(1);
    ((float *)mxp_array_data(x))[0] = NAN;
    for (int i = 0; i < 20; i++) {
        assert_int_equal(mxp_loss_scaler_check(s, x), MXP_OK);
        assert_int_equal(mxp_loss_scaler_update(s), MXP_OK);
        assert_true(mxp_loss_scaler_scale(s) >= FLT_MIN);
    }
    assert_true(mxp_loss_scaler_scale(s) == FLT_MIN);
    mxp_loss_scaler_state st;
    assert_int_equal(mxp_loss_scaler_get_state(s, &st), MXP_OK);
    assert_int_equal(st.skipped, 20);
    mxp_array_free(x);
    mxp_loss_scaler_free(s);
}

/* A user's [min_scale, max_scale]: a growth past max is refused (the
 * scale stays), a back-off below min lands on min. */
static void test_scaler_respects_min_and_max_scale(void **state)
{
    (void)state;
    mxp_loss_scaler_opts o = { .init_scale = 250, .min_scale = 100, .max_scale = 1000, .growth_interval = 1,
                               .backoff_factor = 0.25 };
    mxp_loss_scaler *s = NULL;
    assert_int_equal(mxp_loss_scaler_create(&s, &o), MXP_OK);
    assert_int_equal(mxp_loss_scaler_update(s), MXP_OK);
    assert_true(mxp_loss_scaler_scale(s) == 500);
    assert_int_equal(mxp_loss_scaler_update(s), MXP_OK);
    assert_true(mxp_loss_scaler_scale(s) == 1000);
    assert_int_equal(mxp_loss_scaler_update(s), MXP_OK);
    assert_true(mxp_loss_scaler_scale(s) == 1000);
    mxp_array *x = f32_array(2);
    ((float *)mxp_array_data(x))[1] = -INFINITY;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(mxp_loss_scaler_check(s, x), MXP_OK);
        assert_int_equal(mxp_loss_scaler_update(s), MXP_OK);
    }
    assert_true(mxp_loss_scaler_scale(s) == 100);
    mxp_array_free(x);
    mxp_loss_scaler_free(s);
}

/* Static loss scaling: the scale never moves; steps with inf still skip. */
static void test_scaler_fixed_mode_keeps_the_scale(void **state)
{
    (void)state;
    mxp_loss_scaler_opts o = { .init_scale = 1024, .growth_interval = 1, .fixed = true };
    mxp_loss_scaler *s = NULL;
    assert_int_equal(mxp_loss_scaler_create(&s, &o), MXP_OK);
    mxp_array *x = f32_array(1);
    for (int i = 0; i < 10; i++) {
        ((float *)mxp_array_data(x))[0] = i % 3 ? 1.0f : INFINITY;
        assert_int_equal(mxp_loss_scaler_check(s, x), MXP_OK);
        assert_int_equal(mxp_loss_scaler_update(s), MXP_OK);
        assert_true(mxp_loss_scaler_scale(s) == 1024);
    }
    mxp_loss_scaler_state st;
    assert_int_equal(mxp_loss_scaler_get_state(s, &st), MXP_OK);
    assert_int_equal(st.skipped, 4);
    assert_int_equal(st.steps, 10);
    mxp_array_free(x);
    mxp_loss_scaler_free(s);
}

/* float16, bfloat16, float8 and float64 gradients: multiplied in float32
 * (float64 for float64) by float(1/scale) and rounded once; inf/NaN found
 * by their bits, e4m3's NaN included. */
static void test_scaler_unscales_every_float_dtype(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_F16, MXP_BF16, MXP_E4M3, MXP_E5M2, MXP_F64 };
    const double values[] = { 3.0, -1000.0, 0.125, 448.0, 1e-3, 7.0 };
    const int64_t n = 6;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        mxp_loss_scaler_opts o = { .init_scale = 3.0 }; /* 1/3 is inexact: the rounding shows */
        mxp_loss_scaler *s = NULL;
        assert_int_equal(mxp_loss_scaler_create(&s, &o), MXP_OK);
        mxp_array *g = NULL;
        assert_int_equal(mxp_array_empty(&g, types[t], 1, &n), MXP_OK);
        mxp_convert_opts sat = { .overflow = MXP_OVERFLOW_SATURATE };
        assert_int_equal(mxp_convert(mxp_array_data(g), types[t], values, MXP_F64, 6, &sat), MXP_OK);
        double before[6], after[6];
        assert_int_equal(mxp_convert(before, MXP_F64, mxp_array_data(g), types[t], 6, NULL), MXP_OK);
        assert_int_equal(mxp_loss_scaler_unscale(s, g), MXP_OK);
        assert_false(mxp_loss_scaler_found_inf(s));
        assert_int_equal(mxp_convert(after, MXP_F64, mxp_array_data(g), types[t], 6, NULL), MXP_OK);
        const float inv = (float)(1.0 / 3.0);
        for (int i = 0; i < 6; i++) {
            double prod = types[t] == MXP_F64 ? before[i] * (double)inv : (double)((float)before[i] * inv);
            uint64_t bits = 0;
            double want = 0;
            assert_int_equal(mxp_convert(&bits, types[t], &prod, MXP_F64, 1, NULL), MXP_OK);
            assert_int_equal(mxp_convert(&want, MXP_F64, &bits, types[t], 1, NULL), MXP_OK);
            assert_true(after[i] == want);
        }
        /* a NaN (e4m3: 0x7f) is found */
        const uint64_t nan_bits = types[t] == MXP_F64 ? 0x7ff8000000000000ull
                                  : types[t] == MXP_F16 ? 0x7e00u : types[t] == MXP_BF16 ? 0x7fc0u
                                  : types[t] == MXP_E4M3 ? 0x7fu : 0x7fu;
        memcpy((char *)mxp_array_data(g) + mxp_dtype_itemsize(types[t]) * 2, &nan_bits, mxp_dtype_itemsize(types[t]));
        assert_int_equal(mxp_loss_scaler_unscale(s, g), MXP_OK);
        assert_true(mxp_loss_scaler_found_inf(s));
        mxp_array_free(g);
        mxp_loss_scaler_free(s);
    }
}

/* check() takes any layout and dtype and changes nothing. */
static void test_scaler_check_reads_any_layout(void **state)
{
    (void)state;
    mxp_loss_scaler *s = NULL;
    assert_int_equal(mxp_loss_scaler_create(&s, NULL), MXP_OK);
    const int64_t shape[2] = { 4, 3 };
    mxp_array *a = NULL, *t = NULL;
    assert_int_equal(mxp_array_ones(&a, MXP_BF16, 2, shape), MXP_OK);
    assert_int_equal(mxp_array_transpose(&t, a, NULL), MXP_OK);
    assert_int_equal(mxp_loss_scaler_check(s, t), MXP_OK);
    assert_false(mxp_loss_scaler_found_inf(s));
    ((uint16_t *)mxp_array_data(a))[5] = 0xff80; /* -inf */
    assert_int_equal(mxp_loss_scaler_check(s, t), MXP_OK);
    assert_true(mxp_loss_scaler_found_inf(s));
    assert_true(((uint16_t *)mxp_array_data(a))[5] == 0xff80);
    assert_true(mxp_loss_scaler_scale_loss(s, 0.5) == 32768.0);
    /* float8 by their bits: e4m3 0x7e is 448 (finite), 0x7f NaN; e5m2 0x7c is inf */
    const int64_t n8 = 1;
    mxp_array *e4 = NULL, *e5 = NULL;
    assert_int_equal(mxp_array_zeros(&e4, MXP_E4M3, 1, &n8), MXP_OK);
    assert_int_equal(mxp_array_zeros(&e5, MXP_E5M2, 1, &n8), MXP_OK);
    const uint8_t codes[][2] = { { 0x7e, 0x7b }, { 0xfe, 0xfb }, { 0x7f, 0x00 }, { 0x00, 0x7c }, { 0x00, 0xfd } };
    for (int k = 0; k < 5; k++) {
        assert_int_equal(mxp_loss_scaler_update(s), MXP_OK);
        *(uint8_t *)mxp_array_data(e4) = codes[k][0];
        *(uint8_t *)mxp_array_data(e5) = codes[k][1];
        assert_int_equal(mxp_loss_scaler_check(s, e4), MXP_OK);
        assert_int_equal(mxp_loss_scaler_check(s, e5), MXP_OK);
        assert_int_equal(mxp_loss_scaler_found_inf(s), k >= 2);
    }
    mxp_array_free(e4);
    mxp_array_free(e5);
    mxp_array_free(t);
    mxp_array_free(a);
    mxp_loss_scaler_free(s);
}

/* A saved state restored into a new scaler continues identically. */
static void test_scaler_state_round_trips(void **state)
{
    (void)state;
    mxp_loss_scaler_opts o = { .growth_interval = 4 };
    mxp_loss_scaler *a = NULL, *b = NULL;
    assert_int_equal(mxp_loss_scaler_create(&a, &o), MXP_OK);
    assert_int_equal(mxp_loss_scaler_create(&b, &o), MXP_OK);
    mxp_array *x = f32_array(1);
    for (int i = 0; i < 11; i++) {
        ((float *)mxp_array_data(x))[0] = i == 6 ? NAN : 1.0f;
        assert_int_equal(mxp_loss_scaler_check(a, x), MXP_OK);
        assert_int_equal(mxp_loss_scaler_update(a), MXP_OK);
    }
    mxp_loss_scaler_state saved, sa, sb;
    assert_int_equal(mxp_loss_scaler_get_state(a, &saved), MXP_OK);
    assert_int_equal(saved.skipped, 1);
    assert_int_equal(mxp_loss_scaler_set_state(b, &saved), MXP_OK);
    for (int i = 0; i < 9; i++) {
        ((float *)mxp_array_data(x))[0] = i == 5 ? INFINITY : 1.0f;
        assert_int_equal(mxp_loss_scaler_check(a, x), MXP_OK);
        assert_int_equal(mxp_loss_scaler_check(b, x), MXP_OK);
        assert_int_equal(mxp_loss_scaler_update(a), MXP_OK);
        assert_int_equal(mxp_loss_scaler_update(b), MXP_OK);
        assert_int_equal(mxp_loss_scaler_get_state(a, &sa), MXP_OK);
        assert_int_equal(mxp_loss_scaler_get_state(b, &sb), MXP_OK);
        assert_memory_equal(&sa, &sb, sizeof sa);
    }
    mxp_array_free(x);
    mxp_loss_scaler_free(a);
    mxp_loss_scaler_free(b);
}

/* GradScaler.step: the optimizer reads the scaled gradients times 1/scale
 * and leaves them as they are; an inf skips the step; after unscale() the
 * gradients are taken as unscaled. */
static void test_scaler_step_fuses_unscaling_and_skips_on_inf(void **state)
{
    (void)state;
    mxp_loss_scaler *s = NULL;
    mxp_optimizer *opt = NULL;
    mxp_optimizer_opts oo = { .lr = 0.5 };
    assert_int_equal(mxp_loss_scaler_create(&s, NULL), MXP_OK);
    assert_int_equal(mxp_optimizer_create(&opt, MXP_OPTIM_SGD, &oo), MXP_OK);
    mxp_array *w = f32_array(3), *g = f32_array(3);
    float *wv = mxp_array_data(w), *gv = mxp_array_data(g);
    assert_int_equal(mxp_optimizer_add_param(opt, w, g, NULL), MXP_OK);
    for (int i = 0; i < 3; i++) {
        wv[i] = 1.0f;
        gv[i] = (float)(i + 1) * 65536.0f;
    }
    bool stepped = false;
    assert_int_equal(mxp_loss_scaler_step(s, opt, &stepped), MXP_OK);
    assert_true(stepped);
    assert_true(wv[0] == 0.5f && wv[1] == 0.0f && wv[2] == -0.5f);
    assert_true(gv[2] == 3.0f * 65536.0f);
    assert_int_equal(mxp_loss_scaler_update(s), MXP_OK);
    gv[1] = NAN;
    assert_int_equal(mxp_loss_scaler_step(s, opt, &stepped), MXP_OK);
    assert_false(stepped);
    assert_true(wv[0] == 0.5f);
    assert_int_equal(mxp_loss_scaler_update(s), MXP_OK);
    assert_true(mxp_loss_scaler_scale(s) == 32768.0);
    /* unscale() first: the step uses the gradients as they are then */
    gv[1] = 2.0f * 32768.0f;
    assert_int_equal(mxp_loss_scaler_unscale(s, g), MXP_OK);
    assert_true(gv[1] == 2.0f);
    assert_int_equal(mxp_loss_scaler_step(s, opt, &stepped), MXP_OK);
    assert_true(stepped && wv[1] == -1.0f);
    assert_int_equal(mxp_optimizer_steps(opt), 2);
    mxp_array_free(w);
    mxp_array_free(g);
    mxp_optimizer_free(opt);
    mxp_loss_scaler_free(s);
}

static void expect_error(mxp_status got, mxp_status want)
{
    assert_int_equal(got, want);
    assert_true(strlen(mxp_last_error()) > 10);
    mxp_clear_error();
}

static void test_scaler_rejects_bad_input(void **state)
{
    (void)state;
    mxp_loss_scaler *s = NULL;
    const mxp_loss_scaler_opts bad[] = {
        { .init_scale = -1 }, { .init_scale = NAN }, { .init_scale = INFINITY }, { .init_scale = 1e-45 },
        { .growth_factor = 1.0 }, { .growth_factor = NAN }, { .backoff_factor = 1.0 }, { .backoff_factor = -0.5 },
        { .growth_interval = -3 }, { .min_scale = 10, .max_scale = 5 }, { .init_scale = 1e6, .max_scale = 1e5 },
        { .min_scale = 1e-40 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_error(mxp_loss_scaler_create(&s, &bad[i]), MXP_ERR_INVALID_ARGUMENT);
        assert_null(s);
    }
    expect_error(mxp_loss_scaler_create(NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_loss_scaler_create(&s, NULL), MXP_OK);
    const mxp_loss_scaler_state bad_states[] = {
        { 0.0, 0, 0, 0 }, { -4.0, 0, 0, 0 }, { INFINITY, 0, 0, 0 }, { 1e-40, 0, 0, 0 }, { 0.1, 0, 0, 0 },
        { 1024, 2000, 0, 0 }, { 1024, -1, 0, 0 }, { 1024, 0, 3, 4 },
    };
    for (size_t i = 0; i < sizeof bad_states / sizeof bad_states[0]; i++)
        expect_error(mxp_loss_scaler_set_state(s, &bad_states[i]), MXP_ERR_INVALID_ARGUMENT);
    assert_true(mxp_loss_scaler_scale(s) == 65536.0);
    mxp_array *ints = NULL, *ro = NULL, *t = NULL, *f = f32_array(4);
    const int64_t n = 4, shape[2] = { 2, 2 };
    assert_int_equal(mxp_array_zeros(&ints, MXP_S32, 1, &n), MXP_OK);
    expect_error(mxp_loss_scaler_unscale(s, ints), MXP_ERR_INVALID_DTYPE);
    expect_error(mxp_loss_scaler_unscale(s, NULL), MXP_ERR_INVALID_ARGUMENT);
    expect_error(mxp_loss_scaler_unscale(NULL, f), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_array_broadcast_to(&ro, f, 2, (const int64_t[]){ 3, 4 }), MXP_OK);
    expect_error(mxp_loss_scaler_unscale(s, ro), MXP_ERR_INVALID_ARGUMENT); /* not contiguous */
    mxp_array *sq = NULL;
    assert_int_equal(mxp_array_reshape(&sq, f, 2, shape), MXP_OK);
    assert_int_equal(mxp_array_transpose(&t, sq, NULL), MXP_OK);
    expect_error(mxp_loss_scaler_unscale(s, t), MXP_ERR_INVALID_ARGUMENT);
    expect_error(mxp_loss_scaler_step(s, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    expect_error(mxp_loss_scaler_update(NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_true(isnan(mxp_loss_scaler_scale(NULL)));
    mxp_array_free(ints);
    mxp_array_free(ro);
    mxp_array_free(sq);
    mxp_array_free(t);
    mxp_array_free(f);
    mxp_loss_scaler_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scaler_follows_gradscaler_rules_with_injected_inf_nan),
        cmocka_unit_test(test_scaler_growth_stops_below_infinity),
        cmocka_unit_test(test_scaler_backoff_stops_at_min_scale),
        cmocka_unit_test(test_scaler_respects_min_and_max_scale),
        cmocka_unit_test(test_scaler_fixed_mode_keeps_the_scale),
        cmocka_unit_test(test_scaler_unscales_every_float_dtype),
        cmocka_unit_test(test_scaler_check_reads_any_layout),
        cmocka_unit_test(test_scaler_state_round_trips),
        cmocka_unit_test(test_scaler_step_fuses_unscaling_and_skips_on_inf),
        cmocka_unit_test(test_scaler_rejects_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* mxp tour, part 10: training in mixed precision — the autocast table, the
 * loss scaler stepping through an overflow, and (timed part) a short run
 * of `mxp train`: float32, float16 with and without loss scaling. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "train.h"

static mxp_status autocast_table(void)
{
    static const char *const policies[3] = { "fp32", "bf16", "fp16" };
    mxp_autocast *ac[3] = { NULL, NULL, NULL };
    mxp_status st = MXP_OK;
    for (int p = 0; p < 3 && st == MXP_OK; p++)
        st = mxp_autocast_create(&ac[p], policies[p]);
    if (st == MXP_OK) {
        printf("  %-14s %-9s %-9s %s\n", "op \\ policy", "fp32", "bf16", "fp16");
        for (int op = 0; op < MXP_AUTOCAST_OP_COUNT; op++) {
            const mxp_autocast_op o = (mxp_autocast_op)op;
            printf("  %-14s %-9s %-9s %s\n", mxp_autocast_op_name(o), mxp_dtype_name(mxp_autocast_dtype(ac[0], o)),
                   mxp_dtype_name(mxp_autocast_dtype(ac[1], o)), mxp_dtype_name(mxp_autocast_dtype(ac[2], o)));
        }
    }
    for (int p = 0; p < 3; p++)
        mxp_autocast_free(ac[p]);
    return st;
}

/* Six steps, growth every 2 clean steps, an inf in step 4's gradient. */
static mxp_status scaler_walk(void)
{
    mxp_loss_scaler_opts o = { .growth_interval = 2 };
    mxp_loss_scaler *s = NULL;
    mxp_array *g = NULL;
    const int64_t n = 4;
    mxp_status st = mxp_loss_scaler_create(&s, &o);
    if (st == MXP_OK)
        st = mxp_array_zeros(&g, MXP_F16, 1, &n);
    printf("\n  %-5s %-10s %-9s %s\n", "step", "scale", "inf/NaN", "then");
    for (int step = 1; step <= 6 && st == MXP_OK; step++) {
        const double scale = mxp_loss_scaler_scale(s);
        const float v[4] = { 1e-6f * (float)scale, -3e-7f * (float)scale, 2e-8f * (float)scale,
                             step == 4 ? INFINITY : 0.5f };
        st = mxp_convert(mxp_array_data(g), MXP_F16, v, MXP_F32, 4, NULL);
        if (st == MXP_OK)
            st = mxp_loss_scaler_check(s, g);
        const bool inf = mxp_loss_scaler_found_inf(s);
        if (st == MXP_OK)
            st = mxp_loss_scaler_update(s);
        mxp_loss_scaler_state ls;
        if (st == MXP_OK)
            st = mxp_loss_scaler_get_state(s, &ls);
        if (st == MXP_OK)
            printf("  %-5d 2^%-8.0f %-9s %s, scale 2^%.0f\n", step, log2(scale), inf ? "yes" : "no",
                   inf ? "step skipped, backed off" : ls.growth_tracker == 0 ? "stepped, grown" : "stepped",
                   log2(ls.scale));
    }
    mxp_array_free(g);
    mxp_loss_scaler_free(s);
    return st;
}

static mxp_status short_run(void)
{
    const char *dir = digits_find_dir();
    if (!dir) {
        printf("\n(The digits data is not here: `mxp train --data DIR` after scripts/export-digits.py.)\n");
        return MXP_OK;
    }
    train_setup s;
    train_default_setup(&s);
    s.epochs = 4;
    s.sizes[1] = s.sizes[2] = 128;
    digits d;
    char err[256];
    mxp_status st = digits_load(&d, dir, 0.2, s.seed, err, sizeof err);
    if (st != MXP_OK) {
        printf("\n(%s)\n", err);
        return MXP_OK;
    }
    train_fit_setup(&s, &d); /* the input layer as wide as the data's columns */
    printf("\nA short `mxp train` (hidden 128, %d epochs; the loss weighted by 2^-20 as there):\n\n", s.epochs);
    printf("  %-28s %9s %10s %8s %10s\n", "configuration", "test acc", "final loss", "skipped", "grad lost");
    static const int which[] = { 0, 2, 3 };
    for (size_t k = 0; k < sizeof which / sizeof which[0] && st == MXP_OK; k++) {
        train_result r;
        st = train_run(&s, &d, &train_configs[which[k]], &r);
        char skipped[24] = "-";
        if (st == MXP_OK && r.config->scaler)
            snprintf(skipped, sizeof skipped, "%lld", (long long)r.skipped);
        if (st == MXP_OK)
            printf("  %-28s %8.2f%% %10.4f %8s %9.1f%%\n", r.config->name, 100.0 * r.test_accuracy, r.final_loss,
                   skipped, 100.0 * r.grad_flushed);
        train_result_free(&r);
    }
    digits_free(&d);
    printf("\n`mxp train` runs all five configurations for 20 epochs at hidden 512, then int8\n"
           "(four observers) and float8 e4m3 inference; the README quotes its table.\n");
    return st;
}

int tour_train(int bench)
{
    tour_heading(10, "Training in mixed precision");
    printf("An autocast policy says which dtype each kind of operation computes in, as\n"
           "torch.autocast's lists do: matmuls in the low dtype (accumulating in float32),\n"
           "softmax, losses, reductions and normalisation in float32.\n\n");
    mxp_status st = autocast_table();
    if (st == MXP_OK) {
        printf("\nThe loss scaler (PyTorch GradScaler's rules: init 2^16, x2 after N clean\n"
               "steps, x0.5 and the step skipped on inf/NaN; here N = 2).  Gradients of\n"
               "1e-6 .. 2e-8 are below float16's normal range; scaled, they are not:\n");
        st = scaler_walk();
    }
    if (st == MXP_OK && bench)
        st = short_run();
    return st == MXP_OK ? CLI_OK : cli_mxp_error("tour", "train", st);
}

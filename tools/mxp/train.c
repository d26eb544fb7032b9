/* mxp train — trains the demo MLP (or, --model cnn, the CNN of
 * mxp.models.cnn) on the digits in each precision configuration, quantizes
 * the float32 MLP for deployment, and prints the table (or JSON with every
 * curve: losses per epoch, the loss scale per step).  The networks are in
 * train_mlp.c and train_cnn.c, a run in train_run.c and train_cnn_run.c,
 * the quantized inference in train_ptq.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "train.h"

enum { N_CONFIGS = sizeof train_configs / sizeof train_configs[0] };

static void print_help(void)
{
    printf("usage: mxp train [--model mlp|cnn] [--epochs N] [--json] [--data DIR] [--seed S] [--hidden H]\n"
           "                 [--loss-weight W] [--configs K,K..] [--monitor]\n\n"
           "Trains an MLP 64-512-512-10 (relu; forward and backward on mxp_gemm) on the\n"
           "digits data set (1797 8x8 images, 20%% held out for testing) with SGD\n"
           "(momentum 0.9, batch 64) in five configurations, then deploys the float32\n"
           "model in int8 (four activation observers) and float8 e4m3, and prints a table:\n"
           "test accuracy, final loss, steps skipped by the loss scaler, seconds per\n"
           "epoch, bytes of weights + one batch's activations.\n\n"
           "--model cnn trains mxp.models.cnn's ResNet-style CNN instead (docs/cnn.md: a\n"
           "conv-bn-relu stem, two residual blocks, global average pooling, a linear head;\n"
           "NHWC, on mxp_conv2d, mxp_batch_norm and their backward passes) from a He\n"
           "initialization, with SGD (momentum 0.9, cosine learning rate from 0.05, weight\n"
           "decay 5e-4, batch 64) for 10 epochs, on mxp.models.cnn.split()'s split (450 images held out), in\n"
           "float32, bfloat16 with float32 masters and float16 with loss scaling.\n\n"
           "The loss is multiplied by 2^-20 (the learning rate divided by as much): float32\n"
           "trains as without it (SGD is linear in the gradient), while the gradients become\n"
           "as small as those of large models (1e-8 and below), under what float16 can\n"
           "hold unless the loss is scaled.\n\n"
           "  --model M       mlp (default) or cnn\n"
           "  --epochs N      epochs per configuration (default 20; cnn: 10)\n"
           "  --json          one JSON object on stdout (progress goes to stderr)\n"
           "  --data DIR      where digits_x.npy and digits_y.npy are (default: data/digits\n"
           "                  here, in the source tree, or the installed copy): uint8, N x F\n"
           "                  gray levels 0..16 (N >= 10 rows, 1 <= F <= 65536 columns: the\n"
           "                  network's input width; cnn: F = 64, 8x8 images) and N labels 0..9\n"
           "  --seed S        initialization, shuffling and split (default 1; cnn: the split\n"
           "                  is mxp.models.cnn.split()'s whatever the seed)\n"
           "  --hidden H      width of both hidden layers (default 512; mlp only)\n"
           "  --loss-weight W the loss weight (default 2^-20 = 9.5367e-07; 1: none)\n"
           "  --configs K,..  training configurations to run (default all; cnn: fp32,\n"
           "                  bf16_master, fp16_scaled):\n");
    for (int i = 0; i < N_CONFIGS; i++)
        printf("                  %-14s %s\n", train_configs[i].key, train_configs[i].name);
    printf("                  int8 and float8 rows (mlp) need fp32\n"
           "  --monitor       add each run's stability monitor report (mlp only)\n");
}

void train_default_setup(train_setup *s)
{
    memset(s, 0, sizeof *s);
    s->epochs = 20;
    s->batch = 64;
    s->nlayers = 3;
    s->sizes[0] = 64;
    s->sizes[1] = 512;
    s->sizes[2] = 512;
    s->sizes[3] = 10;
    s->lr = 0.05;
    s->momentum = 0.9;
    s->loss_weight = 0x1p-20;
    s->growth_interval = 20;
    s->seed = 1;
}

void train_fit_setup(train_setup *s, const digits *d)
{
    s->sizes[0] = d->features;
    s->sizes[s->nlayers] = d->classes;
}

typedef struct options {
    train_setup s;
    const char *data;
    bool json, monitor, cnn;
    bool run[N_CONFIGS];
    bool given_epochs, given_seed, given_weight, given_configs;
    const char *given_hidden;
} options;

static int parse_configs(const char *v, bool *run)
{
    for (int i = 0; i < N_CONFIGS; i++)
        run[i] = false;
    while (*v) {
        size_t len = strcspn(v, ",");
        int found = 0;
        for (int i = 0; i < N_CONFIGS; i++) {
            if (strlen(train_configs[i].key) == len && !strncmp(train_configs[i].key, v, len)) {
                run[i] = true;
                found = 1;
            }
        }
        if (!found)
            return cli_usage_error("train", "unknown configuration '%.*s'", (int)len, v);
        v += len + (v[len] == ',');
    }
    return -1;
}

/* --model cnn: its setup under the options given (whatever their order). */
static int apply_model(options *o)
{
    if (!o->cnn)
        return -1;
    if (o->given_hidden)
        return cli_usage_error("train", "--hidden %s: --hidden sets the MLP's width (--model mlp); the CNN's "
                               "widths are fixed (16 and 32 channels)", o->given_hidden);
    if (o->monitor)
        return cli_usage_error("train", "--monitor reports on the MLP's layers (--model mlp); it does not apply to "
                               "--model cnn");
    const train_setup given = o->s;
    cnn_default_setup(&o->s);
    if (o->given_epochs)
        o->s.epochs = given.epochs;
    if (o->given_seed)
        o->s.seed = given.seed;
    if (o->given_weight)
        o->s.loss_weight = given.loss_weight;
    for (int i = 0; !o->given_configs && i < N_CONFIGS; i++) /* fp32, bf16_master, fp16_scaled */
        o->run[i] = i < 3;
    return -1;
}

static int parse(int argc, char **argv, options *o)
{
    train_default_setup(&o->s);
    for (int i = 0; i < N_CONFIGS; i++)
        o->run[i] = true;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (cli_is_help(argv[i])) {
            print_help();
            return CLI_OK;
        } else if (!strcmp(argv[i], "--json")) {
            o->json = true;
        } else if (!strcmp(argv[i], "--monitor")) {
            o->monitor = true;
        } else if ((m = cli_option(argc, argv, &i, "--model", &v)) != 0) {
            if (m < 0)
                return cli_usage_error("train", "--model wants mlp or cnn");
            if (strcmp(v, "mlp") && strcmp(v, "cnn"))
                return cli_usage_error("train", "--model wants mlp or cnn, not '%s'", v);
            o->cnn = !strcmp(v, "cnn");
        } else if ((m = cli_option(argc, argv, &i, "--epochs", &v)) != 0) {
            char *end = NULL;
            long e = m > 0 ? strtol(v, &end, 10) : 0;
            if (m < 0 || *end || e < 1 || e > 10000)
                return cli_usage_error("train", "--epochs wants 1..10000");
            o->s.epochs = (int)e;
            o->given_epochs = true;
        } else if ((m = cli_option(argc, argv, &i, "--seed", &v)) != 0) {
            char *end = NULL;
            if (m < 0 || (o->s.seed = strtoull(v, &end, 0), *end) || !*v)
                return cli_usage_error("train", "--seed wants an integer");
            o->given_seed = true;
        } else if ((m = cli_option(argc, argv, &i, "--hidden", &v)) != 0) {
            char *end = NULL;
            long h = m > 0 ? strtol(v, &end, 10) : 0;
            if (m < 0 || *end || h < 1 || h > 65536)
                return cli_usage_error("train", "--hidden wants 1..65536");
            o->s.sizes[1] = o->s.sizes[2] = h;
            o->given_hidden = v;
        } else if ((m = cli_option(argc, argv, &i, "--loss-weight", &v)) != 0) {
            char *end = NULL;
            double w = m > 0 ? strtod(v, &end) : 0;
            if (m < 0 || *end || !(w > 0 && w <= 1e30))
                return cli_usage_error("train", "--loss-weight wants a positive number");
            o->s.loss_weight = w;
            o->given_weight = true;
        } else if ((m = cli_option(argc, argv, &i, "--data", &v)) != 0) {
            if (m < 0)
                return cli_usage_error("train", "--data wants a directory");
            o->data = v;
        } else if ((m = cli_option(argc, argv, &i, "--configs", &v)) != 0) {
            int rc = m < 0 ? cli_usage_error("train", "--configs wants a list") : parse_configs(v, o->run);
            if (rc >= 0)
                return rc;
            o->given_configs = true;
        } else {
            return cli_bad_argument("train", argv[i]);
        }
    }
    return apply_model(o);
}

/* ---- the table ------------------------------------------------------------ */

/* MB for the MLP's tables, kB for the CNN's (its weights are 79 kB). */
static const char *bytes_str(char *buf, size_t size, int64_t b, bool kb)
{
    snprintf(buf, size, kb ? "%.1f kB" : "%.2f MB", (double)b / (kb ? 1e3 : 1e6));
    return buf;
}

static void print_table(const options *o, const train_result *tr, const ptq_result *pq, bool have_ptq)
{
    char w[24], a[24];
    const bool kb = o->cnn;
    printf("\n  %-32s %9s %10s %8s %9s %10s %10s", "configuration", "test acc", "final loss", "skipped", "s/epoch",
           "weights", "act/batch");
    printf(o->cnn ? "\n" : " %9s  %s\n", "grad lost", "monitor flags (gradients)");
    for (int i = 0; i < N_CONFIGS; i++) {
        if (!o->run[i])
            continue;
        const train_result *r = &tr[i];
        char skipped[24] = "-", flags[64] = "";
        if (r->config->scaler)
            snprintf(skipped, sizeof skipped, "%lld", (long long)r->skipped);
        size_t n = 0;
        for (unsigned f = 1; f <= MXP_MONITOR_VANISHING; f <<= 1) {
            if (r->grad_flags & f)
                n += (size_t)snprintf(flags + n, sizeof flags - n, "%s%s", n ? "," : "", mxp_monitor_flag_name(f));
        }
        printf("  %-32s %8.2f%% %10.4f %8s %9.4f %10s %10s", r->config->name, 100.0 * r->test_accuracy, r->final_loss,
               skipped, r->epoch_s, bytes_str(w, sizeof w, r->weight_bytes, kb),
               bytes_str(a, sizeof a, r->act_bytes, kb));
        if (o->cnn)
            printf("\n");
        else
            printf(" %8.1f%%  %s\n", 100.0 * r->grad_flushed, n ? flags : "-");
    }
    for (int k = 0; have_ptq && k < PTQ_ROWS; k++) {
        printf("  %-32s %8.2f%% %10s %8s %9s %10s %10s\n", pq[k].name, 100.0 * pq[k].test_accuracy, "-", "-", "-",
               bytes_str(w, sizeof w, pq[k].weight_bytes, kb), bytes_str(a, sizeof a, pq[k].act_bytes, kb));
    }
}

/* The goals, measured: accuracy gaps to float32 and time ratios. */
typedef struct goals {
    bool have[5];
    double bf16_gap, fp16_gap, int8_gap, unscaled_gap, bf16_time;
    int best_obs;
} goals;

static goals measure_goals(const options *o, const train_result *tr, const ptq_result *pq, bool have_ptq)
{
    goals g;
    memset(&g, 0, sizeof g);
    if (!o->run[0])
        return g;
    const double ref = tr[0].test_accuracy;
    if ((g.have[0] = o->run[1])) {
        g.bf16_gap = 100.0 * (tr[1].test_accuracy - ref);
        g.bf16_time = tr[1].epoch_s / tr[0].epoch_s;
    }
    if ((g.have[1] = o->run[2]))
        g.fp16_gap = 100.0 * (tr[2].test_accuracy - ref);
    if ((g.have[2] = o->run[3]))
        g.unscaled_gap = 100.0 * (tr[3].test_accuracy - ref);
    if ((g.have[3] = have_ptq)) {
        for (int k = 1; k < PTQ_ROWS - 1; k++)
            g.best_obs = pq[k].test_accuracy > pq[g.best_obs].test_accuracy ? k : g.best_obs;
        g.int8_gap = 100.0 * (pq[g.best_obs].test_accuracy - ref);
    }
    return g;
}

/* conv (the CNN): the epoch time ratio is shown, not judged (the 0.8x goal is the MLP's). */
static void print_goals(const goals *g, const ptq_result *pq, bool conv)
{
    printf("\nGoals (against float32's test accuracy):\n");
    if (g->have[0] && conv)
        printf("  bfloat16 + master within 0.5 pp      %+6.2f pp  %s\n"
               "  bfloat16 epoch time / float32's      %6.2fx\n", g->bf16_gap,
               fabs(g->bf16_gap) <= 0.5 || g->bf16_gap > 0 ? "met" : "NOT met", g->bf16_time);
    else if (g->have[0])
        printf("  bfloat16 + master within 0.5 pp      %+6.2f pp  %s\n"
               "  bfloat16 epoch time <= 0.8x float32  %6.2fx    %s\n", g->bf16_gap,
               fabs(g->bf16_gap) <= 0.5 || g->bf16_gap > 0 ? "met" : "NOT met", g->bf16_time,
               g->bf16_time <= 0.8 ? "met" : "NOT met");
    if (g->have[1])
        printf("  float16 + loss scaling within 0.5 pp %+6.2f pp  %s\n", g->fp16_gap,
               fabs(g->fp16_gap) <= 0.5 || g->fp16_gap > 0 ? "met" : "NOT met");
    if (g->have[3])
        printf("  int8 PTQ, best observer within 1 pp  %+6.2f pp  %s (%s)\n", g->int8_gap,
               fabs(g->int8_gap) <= 1.0 || g->int8_gap > 0 ? "met" : "NOT met", pq[g->best_obs].name);
    if (g->have[2])
        printf("  float16 without scaling worse        %+6.2f pp  %s\n", g->unscaled_gap,
               g->unscaled_gap < -0.5 ? "visibly worse" : "NOT visibly worse");
}

/* ---- JSON ------------------------------------------------------------------- */

static void json_array(const double *v, int64_t n, double mult)
{
    printf("[");
    for (int64_t i = 0; i < n; i++) {
        if (isfinite(v[i]))
            printf("%s%.6g", i ? ", " : "", v[i] * mult);
        else
            printf("%snull", i ? ", " : "");
    }
    printf("]");
}

/* A JSON number: null when not finite (a diverged run's loss). */
static void json_num(const char *key, double v, const char *after)
{
    if (isfinite(v))
        printf("\"%s\": %.6g%s", key, v, after);
    else
        printf("\"%s\": null%s", key, after);
}

static void json_training(const options *o, const train_result *r)
{
    const train_config *c = r->config;
    printf("    {\"key\": \"%s\", \"name\": \"%s\", \"policy\": \"%s\", \"loss_scaling\": %s, \"master_weights\": %s, "
           "\"rounding\": \"%s\",\n", c->key, c->name, c->policy, c->scaler ? "true" : "false",
           c->master ? "true" : "false", mxp_rounding_name(c->rounding));
    printf("     \"test_accuracy\": %.6g, ", r->test_accuracy);
    json_num("final_loss", r->final_loss, ", ");
    printf("\"steps\": %lld, \"skipped_steps\": %lld, \"epoch_seconds\": %.6g, \"weight_bytes\": %lld, "
           "\"activation_bytes\": %lld", (long long)r->steps, (long long)r->skipped, r->epoch_s,
           (long long)r->weight_bytes, (long long)r->act_bytes);
    if (!o->cnn)
        printf(", \"loss_grad_norm_flushed\": %.6g", r->grad_flushed);
    printf(",\n");
    printf("     \"epoch_loss\": ");
    json_array(r->epoch_loss, o->s.epochs, 1.0);
    printf(",\n     \"epoch_test_accuracy\": ");
    json_array(r->epoch_acc, o->s.epochs, 1.0);
    printf(",\n     \"epoch_time\": ");
    json_array(r->epoch_time, o->s.epochs, 1.0);
    printf(",\n     \"loss_scale\": ");
    json_array(r->scale, r->nscale, 1.0);
    if (o->cnn) { /* no monitor */
        printf(",\n     \"weights_hash\": \"%016llx\"}", (unsigned long long)r->weights_hash);
        return;
    }
    printf(",\n     \"grad_flags\": [");
    int n = 0;
    for (unsigned f = 1; f <= MXP_MONITOR_VANISHING; f <<= 1) {
        if (r->grad_flags & f)
            printf("%s\"%s\"", n++ ? ", " : "", mxp_monitor_flag_name(f));
    }
    printf("], \"grad_dtype_suggestions\": [");
    for (int l = 0; l < o->s.nlayers; l++)
        printf("%s\"%s\"", l ? ", " : "", r->suggest[l]);
    printf("]");
    if (o->monitor)
        printf(",\n     \"monitor\": %s", r->monitor_json);
    printf("}");
}

static void json_mlp_head(const options *o, const char *dir, const digits *d)
{
    const train_setup *s = &o->s;
    printf("{\"setup\": {\"model\": \"mlp\", \"sizes\": [");
    for (int l = 0; l <= s->nlayers; l++)
        printf("%s%lld", l ? ", " : "", (long long)s->sizes[l]);
    printf("], \"activation\": \"relu\", \"optimizer\": \"sgd\", \"lr\": %g, \"momentum\": %g, \"batch\": %lld, "
           "\"epochs\": %d, \"loss_weight\": %g, \"scaler_growth_interval\": %lld, \"seed\": %llu, "
           "\"threads\": %d},\n", s->lr, s->momentum, (long long)s->batch, s->epochs, s->loss_weight,
           (long long)s->growth_interval, (unsigned long long)s->seed, mxp_get_num_threads());
    printf(" \"data\": {\"name\": \"digits\", \"dir\": ");
    cli_json_put_string(dir); /* any path: quotes and controls escaped */
    printf(", \"train\": %lld, \"test\": %lld},\n", (long long)d->n_train, (long long)d->n_test);
}

static void json_cnn_head(const options *o, const char *dir, const digits *d)
{
    const train_setup *s = &o->s;
    printf("{\"setup\": {\"model\": \"cnn\", \"layout\": \"NHWC\", \"layers\": [");
    for (int i = 0; i < CNN_CONVS; i++)
        printf("%s\"%s\"", i ? ", " : "", cnn_conv_name(i));
    printf(", \"fc\"], \"parameters\": %d, \"init\": \"he_normal\", \"optimizer\": \"sgd\", \"lr\": %g, "
           "\"schedule\": \"%s\", \"momentum\": %g, \"weight_decay\": %g, \"batch\": %lld, \"epochs\": %d, "
           "\"loss_weight\": %g, \"scaler_growth_interval\": %lld, \"seed\": %llu, \"threads\": %d},\n",
           CNN_PARAMETERS, s->lr, s->cosine ? "cosine" : "constant", s->momentum, s->weight_decay,
           (long long)s->batch, s->epochs, s->loss_weight, (long long)s->growth_interval,
           (unsigned long long)s->seed, mxp_get_num_threads());
    printf(" \"data\": {\"name\": \"digits\", \"dir\": ");
    cli_json_put_string(dir);
    printf(", \"train\": %lld, \"test\": %lld, "
           "\"split\": \"mxp.models.cnn.split(): numpy.random.default_rng(%d).permutation, the first %lld held "
           "out\",\n  \"test_rows\": [", (long long)d->n_train, (long long)d->n_test, CNN_SPLIT_SEED,
           (long long)d->n_test);
    for (int64_t i = 0; i < d->n_test; i++)
        printf("%s%lld", i ? ", " : "", (long long)d->test_rows[i]);
    printf("]},\n");
}

static void print_json(const options *o, const char *dir, const digits *d, const train_result *tr,
                       const ptq_result *pq, bool have_ptq)
{
    if (o->cnn)
        json_cnn_head(o, dir, d);
    else
        json_mlp_head(o, dir, d);
    printf(" \"training\": [");
    int n = 0;
    for (int i = 0; i < N_CONFIGS; i++) {
        if (o->run[i]) {
            printf("%s\n", n++ ? "," : "");
            json_training(o, &tr[i]);
        }
    }
    printf("],\n \"inference\": [");
    for (int k = 0; have_ptq && k < PTQ_ROWS; k++)
        printf("%s\n    {\"key\": \"%s\", \"name\": \"%s\", \"test_accuracy\": %.6g, \"infer_seconds\": %.6g, "
               "\"weight_bytes\": %lld, \"activation_bytes\": %lld}", k ? "," : "", pq[k].key, pq[k].name,
               pq[k].test_accuracy, pq[k].infer_s, (long long)pq[k].weight_bytes, (long long)pq[k].act_bytes);
    const goals g = measure_goals(o, tr, pq, have_ptq);
    printf("],\n \"goals\": {");
    n = 0;
    if (g.have[0])
        printf("%s\"bf16_accuracy_gap_pp\": %.4g, \"bf16_epoch_time_ratio\": %.4g", n++ ? ", " : "", g.bf16_gap,
               g.bf16_time);
    if (g.have[1])
        printf("%s\"fp16_scaled_accuracy_gap_pp\": %.4g", n++ ? ", " : "", g.fp16_gap);
    if (g.have[2])
        printf("%s\"fp16_unscaled_accuracy_gap_pp\": %.4g", n++ ? ", " : "", g.unscaled_gap);
    if (g.have[3])
        printf("%s\"int8_best_accuracy_gap_pp\": %.4g, \"int8_best_observer\": \"%s\"", n++ ? ", " : "", g.int8_gap,
               pq[g.best_obs].key);
    printf("}}\n");
}

/* ---- the command ------------------------------------------------------------ */

static int run_all(const options *o, const char *dir, const digits *d)
{
    train_result tr[N_CONFIGS];
    ptq_result pq[PTQ_ROWS];
    memset(tr, 0, sizeof tr);
    memset(pq, 0, sizeof pq);
    mxp_status st = MXP_OK;
    for (int i = 0; i < N_CONFIGS && st == MXP_OK; i++) {
        if (o->run[i])
            st = (o->cnn ? cnn_run : train_run)(&o->s, d, &train_configs[i], &tr[i]);
    }
    const bool have_ptq = st == MXP_OK && o->run[0] && !o->cnn;
    if (have_ptq)
        st = train_ptq(&o->s, d, &tr[0], pq);
    int rc = CLI_OK;
    if (st != MXP_OK) {
        rc = cli_mxp_error("train", NULL, st);
    } else if (o->json) {
        print_json(o, dir, d, tr, pq, have_ptq);
    } else {
        print_table(o, tr, pq, have_ptq);
        const goals g = measure_goals(o, tr, pq, have_ptq);
        if (o->run[0])
            print_goals(&g, pq, o->cnn);
        for (int i = 0; o->monitor && i < N_CONFIGS; i++)
            if (o->run[i])
                printf("\n%s: %s", train_configs[i].name, tr[i].monitor_text);
    }
    for (int i = 0; i < N_CONFIGS; i++)
        train_result_free(&tr[i]);
    return rc;
}

/* The lines above the progress: the network, the recipe, the data. */
static void print_header(const options *o, const char *dir, const digits *d)
{
    const train_setup *s = &o->s;
    if (o->cnn)
        fprintf(s->progress, "mxp train: CNN, a conv-bn-relu stem, residual blocks of 16 and 32 channels, global "
                "average pooling and a linear head (NHWC); SGD lr %g (%s) momentum %g weight decay %g, batch %lld, "
                "%d epochs, seed %llu\ndata: %s: %lld training and %lld test images (mxp.models.cnn.split()); loss "
                "weighted by %g\n\n", s->lr, s->cosine ? "cosine schedule" : "constant", s->momentum,
                s->weight_decay, (long long)s->batch, s->epochs, (unsigned long long)s->seed, dir,
                (long long)d->n_train, (long long)d->n_test, s->loss_weight);
    else
        fprintf(s->progress, "mxp train: MLP %lld-%lld-%lld-%lld (relu), SGD lr %g momentum %g, batch %lld, %d epochs, "
                "seed %llu\ndata: %s: %lld training and %lld test images; loss weighted by %g\n\n",
                (long long)s->sizes[0], (long long)s->sizes[1], (long long)s->sizes[2], (long long)s->sizes[3], s->lr,
                s->momentum, (long long)s->batch, s->epochs, (unsigned long long)s->seed, dir, (long long)d->n_train,
                (long long)d->n_test, s->loss_weight);
}

int cli_train(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    const char *dir = o.data ? o.data : digits_find_dir();
    if (!dir) {
        fprintf(stderr, "mxp train: the digits data is not in data/digits, the source tree or the installed "
                        "copy; give --data DIR (scripts/export-digits.py writes it)\n");
        return CLI_FAILED;
    }
    digits d;
    char err[512];
    mxp_status st = o.cnn ? digits_load_cnn(&d, dir, err, sizeof err)
                          : digits_load(&d, dir, 0.2, o.s.seed, err, sizeof err);
    if (st != MXP_OK) {
        fprintf(stderr, "mxp train: %s\n", err);
        return CLI_FAILED;
    }
    if (!o.cnn)
        train_fit_setup(&o.s, &d);
    o.s.progress = o.json ? stderr : stdout;
    print_header(&o, dir, &d);
    rc = run_all(&o, dir, &d);
    digits_free(&d);
    return rc;
}

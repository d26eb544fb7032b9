/* mxp train: the training loop both networks share — epochs over shuffled
 * batches (forward, loss seeded with the loss weight and the scaler's
 * scale, backward, an optional cosine learning rate, one update through
 * the scaler), test accuracy after each epoch, the progress line and the
 * result's bookkeeping. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "train.h"

/* ---- the network, whichever it is -------------------------------------------- */

static mxp_status set_input(const train_net *t, const float *x, const int64_t *rows, int64_t n)
{
    return t->c ? cnn_set_input(t->c, x, rows, n) : mlp_set_input(t->m, x, rows, n);
}

static mxp_status forward(const train_net *t, int64_t n, bool training)
{
    return t->c ? cnn_forward(t->c, n, training) : mlp_forward(t->m, n);
}

static mxp_status loss_of(const train_net *t, int64_t n, const int32_t *labels, double seed, double *loss,
                          int64_t *correct)
{
    return t->c ? cnn_loss(t->c, n, labels, seed, loss, correct) : mlp_loss(t->m, n, labels, seed, loss, correct);
}

static mxp_status backward(const train_net *t, int64_t n)
{
    return t->c ? cnn_backward(t->c, n) : mlp_backward(t->m, n);
}

/* ---- pieces ------------------------------------------------------------------ */

void train_shuffle(int64_t *order, int64_t n, uint64_t seed)
{
    for (int64_t i = 0; i < n; i++)
        order[i] = i;
    uint64_t state = seed;
    for (int64_t i = n - 1; i > 0; i--) {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        const int64_t j = (int64_t)(z % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* One optimizer step, through the scaler when there is one (its scale and
 * skipped steps recorded in r). */
static mxp_status update(const train_net *t, train_result *r)
{
    if (!t->scaler)
        return mxp_optimizer_step(t->opt);
    bool stepped = false;
    mxp_status st = mxp_loss_scaler_step(t->scaler, t->opt, &stepped);
    if (st == MXP_OK)
        st = mxp_loss_scaler_update(t->scaler);
    r->skipped += !stepped;
    r->scale[r->nscale++] = mxp_loss_scaler_scale(t->scaler);
    return st;
}

/* The learning rate of step `step` of `steps`: lr (1 + cos(pi step / steps)) / 2. */
static mxp_status cosine_lr(const train_setup *s, const train_net *t, int64_t step, int64_t steps)
{
    const double pi = 3.14159265358979323846, x = (double)step / (double)steps;
    return mxp_optimizer_set_lr(t->opt, s->lr / s->loss_weight * 0.5 * (1.0 + cos(pi * x)));
}

/* What the loop holds besides the network. */
typedef struct loop {
    const train_setup *s;
    const digits *d;
    const train_net *t;
    int64_t *order, *test_rows;
    int32_t *labels;
    int64_t steps; /* of the whole run */
} loop;

static mxp_status test_accuracy(loop *u, double *acc)
{
    const digits *d = u->d;
    int64_t hits = 0;
    for (int64_t i = 0; i < d->n_test; i++)
        u->test_rows[i] = i;
    for (int64_t off = 0; off < d->n_test; off += u->s->batch) {
        const int64_t n = d->n_test - off < u->s->batch ? d->n_test - off : u->s->batch;
        int64_t h = 0;
        double loss;
        mxp_status st = set_input(u->t, d->x_test, u->test_rows + off, n);
        if (st == MXP_OK)
            st = forward(u->t, n, false);
        if (st == MXP_OK)
            st = loss_of(u->t, n, d->y_test + off, 0.0, &loss, &h);
        if (st != MXP_OK)
            return st;
        hits += h;
    }
    *acc = (double)hits / (double)d->n_test;
    return MXP_OK;
}

static mxp_status epoch(loop *u, train_result *r, int e, double *loss_sum, double *seconds)
{
    const train_setup *s = u->s;
    const digits *d = u->d;
    const train_net *t = u->t;
    train_shuffle(u->order, d->n_train, s->seed * 7919u + (uint64_t)e);
    double t0 = cli_now(), excluded = 0.0;
    *loss_sum = 0.0;
    for (int64_t off = 0; off < d->n_train; off += s->batch) {
        const int64_t n = d->n_train - off < s->batch ? d->n_train - off : s->batch;
        for (int64_t i = 0; i < n; i++)
            u->labels[i] = d->y_train[u->order[off + i]];
        const double seed = s->loss_weight * (t->scaler ? mxp_loss_scaler_scale(t->scaler) : 1.0);
        double loss = 0.0;
        mxp_status st = set_input(t, d->x_train, u->order + off, n);
        if (st == MXP_OK)
            st = forward(t, n, true);
        if (st == MXP_OK)
            st = loss_of(t, n, u->labels, seed, &loss, NULL);
        if (st == MXP_OK)
            st = backward(t, n);
        if (st == MXP_OK && off == 0 && t->observe) { /* the observer's time is not the training's */
            const double m0 = cli_now();
            st = t->observe(t->ctx, r->steps, n);
            excluded += cli_now() - m0;
        }
        if (st == MXP_OK && s->cosine)
            st = cosine_lr(s, t, r->steps, u->steps);
        if (st == MXP_OK)
            st = update(t, r);
        if (st != MXP_OK)
            return st;
        *loss_sum += loss * (double)n;
        r->steps++;
    }
    *seconds = cli_now() - t0 - excluded;
    return MXP_OK;
}

static void progress(const loop *u, const train_config *c, const train_result *r, int e)
{
    const train_setup *s = u->s;
    if (!s->progress)
        return;
    char scale[40] = "";
    if (u->t->scaler)
        snprintf(scale, sizeof scale, "  scale 2^%.0f, %lld skipped", log2(mxp_loss_scaler_scale(u->t->scaler)),
                 (long long)r->skipped);
    fprintf(s->progress, "  %-26s epoch %3d/%d  loss %8.4f  test %6.2f%%  %6.3f s%s\n", c->name, e + 1, s->epochs,
            r->epoch_loss[e], 100.0 * r->epoch_acc[e], r->epoch_time[e], scale);
    fflush(s->progress);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median epoch time, the last epoch's loss and accuracy. */
static mxp_status summarize(const train_setup *s, train_result *r)
{
    double *t = malloc((size_t)s->epochs * sizeof *t);
    if (!t)
        return MXP_ERR_NO_MEMORY;
    memcpy(t, r->epoch_time, (size_t)s->epochs * sizeof *t);
    qsort(t, (size_t)s->epochs, sizeof *t, cmp_double);
    r->epoch_s = s->epochs % 2 ? t[s->epochs / 2] : 0.5 * (t[s->epochs / 2 - 1] + t[s->epochs / 2]);
    free(t);
    r->final_loss = r->epoch_loss[s->epochs - 1];
    r->test_accuracy = r->epoch_acc[s->epochs - 1];
    return MXP_OK;
}

mxp_status train_loop(const train_setup *s, const digits *d, const train_config *c, const train_net *t,
                      train_result *r)
{
    loop u = { .s = s, .d = d, .t = t };
    u.steps = s->epochs * ((d->n_train + s->batch - 1) / s->batch);
    r->epoch_loss = calloc((size_t)s->epochs, sizeof(double));
    r->epoch_acc = calloc((size_t)s->epochs, sizeof(double));
    r->epoch_time = calloc((size_t)s->epochs, sizeof(double));
    r->scale = calloc((size_t)u.steps + 1, sizeof(double));
    u.order = malloc((size_t)d->n_train * sizeof *u.order);
    u.test_rows = malloc((size_t)d->n_test * sizeof *u.test_rows);
    u.labels = malloc((size_t)s->batch * sizeof *u.labels);
    mxp_status st = r->epoch_loss && r->epoch_acc && r->epoch_time && r->scale && u.order && u.test_rows && u.labels
                        ? MXP_OK
                        : MXP_ERR_NO_MEMORY;
    for (int e = 0; e < s->epochs && st == MXP_OK; e++) {
        double sum = 0.0;
        st = epoch(&u, r, e, &sum, &r->epoch_time[e]);
        r->epoch_loss[e] = sum / (double)d->n_train;
        if (st == MXP_OK)
            st = test_accuracy(&u, &r->epoch_acc[e]);
        if (st == MXP_OK)
            progress(&u, c, r, e);
    }
    if (st == MXP_OK)
        st = summarize(s, r);
    free(u.order);
    free(u.test_rows);
    free(u.labels);
    return st;
}

void train_result_free(train_result *r)
{
    free(r->epoch_loss);
    free(r->epoch_acc);
    free(r->epoch_time);
    free(r->scale);
    for (int i = 0; i < 2 * MLP_MAX_LAYERS; i++)
        mxp_array_free(r->weights[i]);
    mxp_free(r->monitor_json);
    mxp_free(r->monitor_text);
    memset(r, 0, sizeof *r);
}

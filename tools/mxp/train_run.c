/* mxp train: one training configuration end to end — the MLP, SGD with
 * momentum on master weights (mxp_optimizer), the loss scaler when asked,
 * the stability monitor, epochs over shuffled batches, test accuracy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "train.h"

const train_config train_configs[5] = {
    { "float32", "fp32", "fp32", false, true, MXP_ROUND_NEAREST_EVEN },
    { "bfloat16 + fp32 master", "bf16_master", "bf16", false, true, MXP_ROUND_NEAREST_EVEN },
    { "float16 + loss scaling", "fp16_scaled", "fp16", true, true, MXP_ROUND_NEAREST_EVEN },
    { "float16, no loss scaling", "fp16_unscaled", "fp16", false, true, MXP_ROUND_NEAREST_EVEN },
    { "bfloat16 weights, SR", "bf16_pure_sr", "bf16", false, false, MXP_ROUND_STOCHASTIC },
};

/* What one run holds while it trains. */
typedef struct run {
    const train_setup *s;
    const digits *d;
    mxp_autocast *ac;
    mlp *m;
    mxp_optimizer *opt;
    mxp_loss_scaler *scaler;
    mxp_monitor *mon;
    mxp_array *init[2 * MLP_MAX_LAYERS];
    int64_t *order, *test_rows;
    int32_t *labels;
} run;

static void run_free(run *u)
{
    mlp_free(u->m);
    mxp_autocast_free(u->ac);
    mxp_optimizer_free(u->opt);
    mxp_loss_scaler_free(u->scaler);
    mxp_monitor_free(u->mon);
    for (int i = 0; i < 2 * MLP_MAX_LAYERS; i++)
        mxp_array_free(u->init[i]);
    free(u->order);
    free(u->test_rows);
    free(u->labels);
}

static mxp_status setup(run *u, const train_config *c)
{
    const train_setup *s = u->s;
    mxp_status st = mxp_autocast_create(&u->ac, c->policy);
    if (st == MXP_OK)
        st = mlp_create(&u->m, s->nlayers, s->sizes, u->ac, s->batch);
    if (st == MXP_OK)
        st = mlp_init_params(u->m, s->seed, u->init);
    /* SGD's update is linear in the gradient: dividing lr by the loss
     * weight makes the weighted loss train exactly as the plain one would */
    mxp_optimizer_opts oo = { .lr = s->lr / s->loss_weight, .momentum = s->momentum,
                              .master = c->master ? MXP_MASTER_AUTO : MXP_MASTER_NONE, .rounding = c->rounding,
                              .seed = s->seed };
    if (st == MXP_OK)
        st = mxp_optimizer_create(&u->opt, MXP_OPTIM_SGD, &oo);
    for (int l = 0; l < s->nlayers && st == MXP_OK; l++) {
        mlp_layer *y = &u->m->layer[l];
        st = mxp_optimizer_add_param(u->opt, y->w, y->gw, u->init[2 * l]);
        if (st == MXP_OK)
            st = mxp_optimizer_add_param(u->opt, y->b, y->gb, u->init[2 * l + 1]);
    }
    mxp_loss_scaler_opts so = { .growth_interval = s->growth_interval };
    if (st == MXP_OK && c->scaler)
        st = mxp_loss_scaler_create(&u->scaler, &so);
    /* the loss weight shrinks every gradient: so is the vanishing threshold */
    mxp_monitor_opts mo = { .target = u->m->dt_matmul, .vanishing_norm = 1e-7 * s->loss_weight };
    if (st == MXP_OK)
        st = mxp_monitor_create(&u->mon, &mo);
    u->order = malloc((size_t)u->d->n_train * sizeof *u->order);
    u->test_rows = malloc((size_t)u->d->n_test * sizeof *u->test_rows);
    u->labels = malloc((size_t)s->batch * sizeof *u->labels);
    if (st == MXP_OK && (!u->order || !u->test_rows || !u->labels))
        st = MXP_ERR_NO_MEMORY;
    return st;
}

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

static mxp_status test_accuracy(run *u, double *acc)
{
    const digits *d = u->d;
    int64_t hits = 0;
    for (int64_t i = 0; i < d->n_test; i++)
        u->test_rows[i] = i;
    for (int64_t off = 0; off < d->n_test; off += u->s->batch) {
        const int64_t n = d->n_test - off < u->s->batch ? d->n_test - off : u->s->batch;
        int64_t h = 0;
        double loss;
        mxp_status st = mlp_set_input(u->m, d->x_test, u->test_rows + off, n);
        if (st == MXP_OK)
            st = mlp_forward(u->m, n);
        if (st == MXP_OK)
            st = mlp_loss(u->m, n, d->y_test + off, 0.0, &loss, &h);
        if (st != MXP_OK)
            return st;
        hits += h;
    }
    *acc = (double)hits / (double)d->n_test;
    return MXP_OK;
}

/* The first n rows of a (a view). */
static mxp_status rows_of(mxp_array **out, const mxp_array *a, int64_t n)
{
    const mxp_slice sl = { 0, n, 1 };
    return mxp_array_slice(out, a, 1, &sl);
}

/* The monitor's view of one step: the loss gradient before its cast, each
 * layer's weights, output and weight gradient. */
static mxp_status monitor_step(run *u, int64_t step, int64_t n)
{
    mxp_array *v = NULL;
    mxp_status st = rows_of(&v, u->m->dlogits_loss, n);
    if (st == MXP_OK)
        st = mxp_monitor_record(u->mon, step, "loss.grad", MXP_ROLE_GRADIENT, v, NULL);
    mxp_array_free(v);
    for (int l = 0; l < u->m->nlayers && st == MXP_OK; l++) {
        char name[32];
        snprintf(name, sizeof name, "l%d.w", l);
        st = mxp_monitor_record(u->mon, step, name, MXP_ROLE_WEIGHT, u->m->layer[l].w, NULL);
        snprintf(name, sizeof name, "l%d.out", l);
        v = NULL;
        if (st == MXP_OK)
            st = rows_of(&v, u->m->act[l + 1], n);
        if (st == MXP_OK)
            st = mxp_monitor_record(u->mon, step, name, MXP_ROLE_ACTIVATION, v, NULL);
        mxp_array_free(v);
        snprintf(name, sizeof name, "l%d.grad_w", l);
        if (st == MXP_OK)
            st = mxp_monitor_record(u->mon, step, name, MXP_ROLE_GRADIENT, u->m->layer[l].gw, NULL);
    }
    return st;
}

mxp_status train_update(mxp_optimizer *opt, mxp_loss_scaler *scaler, train_result *r)
{
    if (!scaler)
        return mxp_optimizer_step(opt);
    bool stepped = false;
    mxp_status st = mxp_loss_scaler_step(scaler, opt, &stepped);
    if (st == MXP_OK)
        st = mxp_loss_scaler_update(scaler);
    r->skipped += !stepped;
    r->scale[r->nscale++] = mxp_loss_scaler_scale(scaler);
    return st;
}

static mxp_status epoch(run *u, train_result *r, int e, double *loss_sum, double *seconds)
{
    const train_setup *s = u->s;
    const digits *d = u->d;
    train_shuffle(u->order, d->n_train, s->seed * 7919u + (uint64_t)e);
    double t0 = cli_now(), excluded = 0.0;
    *loss_sum = 0.0;
    for (int64_t off = 0; off < d->n_train; off += s->batch) {
        const int64_t n = d->n_train - off < s->batch ? d->n_train - off : s->batch;
        for (int64_t i = 0; i < n; i++)
            u->labels[i] = d->y_train[u->order[off + i]];
        const double seed = s->loss_weight * (u->scaler ? mxp_loss_scaler_scale(u->scaler) : 1.0);
        double loss = 0.0;
        mxp_status st = mlp_set_input(u->m, d->x_train, u->order + off, n);
        if (st == MXP_OK)
            st = mlp_forward(u->m, n);
        if (st == MXP_OK)
            st = mlp_loss(u->m, n, u->labels, seed, &loss, NULL);
        if (st == MXP_OK)
            st = mlp_backward(u->m, n);
        if (st == MXP_OK && off == 0) { /* the monitor's time is not the training's */
            const double m0 = cli_now();
            st = monitor_step(u, r->steps, n);
            excluded += cli_now() - m0;
        }
        if (st == MXP_OK)
            st = train_update(u->opt, u->scaler, r);
        if (st != MXP_OK)
            return st;
        *loss_sum += loss * (double)n;
        r->steps++;
    }
    *seconds = cli_now() - t0 - excluded;
    return MXP_OK;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Bytes of the weights (compute copy + float32 master where kept) and of
 * one batch's activations (every layer's input and the logits). */
static void count_bytes(const run *u, const train_config *c, train_result *r)
{
    const mlp *m = u->m;
    const int64_t mm = (int64_t)mxp_dtype_itemsize(m->dt_matmul);
    const int64_t master = c->master && m->dt_matmul != MXP_F32 ? 4 : 0;
    for (int l = 0; l < m->nlayers; l++)
        r->weight_bytes += (m->layer[l].in + 1) * m->layer[l].out * (mm + master);
    for (int l = 0; l <= m->nlayers; l++)
        r->act_bytes += u->s->batch * mxp_array_shape(m->act[l])[1] * (int64_t)mxp_array_itemsize(m->act[l]);
}

mxp_status train_result_finish(const train_setup *s, train_result *r)
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

static mxp_status finish(run *u, train_result *r)
{
    const train_setup *s = u->s;
    mxp_status st = train_result_finish(s, r);
    for (size_t i = 0; i < mxp_optimizer_param_count(u->opt) && st == MXP_OK; i++)
        st = mxp_array_astype(&r->weights[i], mxp_optimizer_master(u->opt, i), MXP_F32, NULL);
    const mxp_tensor_stats *rec = NULL;
    size_t nrec = 0;
    if (st == MXP_OK)
        st = mxp_monitor_history(u->mon, "loss.grad", &rec, &nrec);
    for (size_t k = 0; k < nrec; k++) {
        r->grad_flags |= rec[k].flags;
        r->grad_flushed += rec[k].underflow_norm_share / (double)nrec;
    }
    for (int l = 0; l < s->nlayers && st == MXP_OK; l++) {
        char name[32];
        mxp_dtype dt = MXP_F32;
        snprintf(name, sizeof name, "l%d.grad_w", l);
        st = mxp_monitor_suggest(u->mon, name, &dt, NULL, 0);
        snprintf(r->suggest[l], sizeof r->suggest[l], "%s", mxp_dtype_get_traits(dt)->short_name);
        if (st == MXP_OK)
            st = mxp_monitor_history(u->mon, name, &rec, &nrec);
        for (size_t k = 0; k < nrec; k++)
            r->grad_flags |= rec[k].flags;
    }
    if (st == MXP_OK)
        st = mxp_monitor_report(u->mon, true, &r->monitor_json);
    if (st == MXP_OK)
        st = mxp_monitor_report(u->mon, false, &r->monitor_text);
    return st;
}

mxp_status train_result_alloc(const train_setup *s, const digits *d, train_result *r)
{
    const int64_t steps = s->epochs * ((d->n_train + s->batch - 1) / s->batch);
    r->epoch_loss = calloc((size_t)s->epochs, sizeof(double));
    r->epoch_acc = calloc((size_t)s->epochs, sizeof(double));
    r->epoch_time = calloc((size_t)s->epochs, sizeof(double));
    r->scale = calloc((size_t)steps + 1, sizeof(double));
    return r->epoch_loss && r->epoch_acc && r->epoch_time && r->scale ? MXP_OK : MXP_ERR_NO_MEMORY;
}

void train_progress(const train_setup *s, const train_config *c, const train_result *r, int e,
                    const mxp_loss_scaler *scaler)
{
    if (!s->progress)
        return;
    char scale[40] = "";
    if (scaler)
        snprintf(scale, sizeof scale, "  scale 2^%.0f, %lld skipped", log2(mxp_loss_scaler_scale(scaler)),
                 (long long)r->skipped);
    fprintf(s->progress, "  %-26s epoch %3d/%d  loss %8.4f  test %6.2f%%  %6.3f s%s\n", c->name, e + 1, s->epochs,
            r->epoch_loss[e], 100.0 * r->epoch_acc[e], r->epoch_time[e], scale);
    fflush(s->progress);
}

mxp_status train_run(const train_setup *s, const digits *d, const train_config *c, train_result *r)
{
    memset(r, 0, sizeof *r);
    r->config = c;
    if (s->nlayers < 1 || s->nlayers > MLP_MAX_LAYERS || s->sizes[0] != d->features ||
        s->sizes[s->nlayers] != d->classes || d->n_train < 1 || d->n_test < 1)
        return MXP_ERR_INVALID_ARGUMENT; /* train_fit_setup gives the data's widths */
    run u;
    memset(&u, 0, sizeof u);
    u.s = s;
    u.d = d;
    mxp_status st = train_result_alloc(s, d, r);
    if (st == MXP_OK)
        st = setup(&u, c);
    for (int e = 0; e < s->epochs && st == MXP_OK; e++) {
        double sum = 0.0;
        st = epoch(&u, r, e, &sum, &r->epoch_time[e]);
        r->epoch_loss[e] = sum / (double)d->n_train;
        if (st == MXP_OK)
            st = test_accuracy(&u, &r->epoch_acc[e]);
        if (st == MXP_OK)
            train_progress(s, c, r, e, u.scaler);
    }
    if (st == MXP_OK) {
        count_bytes(&u, c, r);
        st = finish(&u, r);
    }
    run_free(&u);
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

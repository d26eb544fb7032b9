/* mxp train: one training configuration of the MLP end to end — SGD with
 * momentum on master weights (mxp_optimizer), the loss scaler when asked,
 * the stability monitor; the epochs in train_loop.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    return st;
}

/* The first n rows of a (a view). */
static mxp_status rows_of(mxp_array **out, const mxp_array *a, int64_t n)
{
    const mxp_slice sl = { 0, n, 1 };
    return mxp_array_slice(out, a, 1, &sl);
}

/* The monitor's view of one step: the loss gradient before its cast, each
 * layer's weights, output and weight gradient. */
static mxp_status monitor_step(void *ctx, int64_t step, int64_t n)
{
    run *u = ctx;
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

static mxp_status finish(run *u, train_result *r)
{
    const train_setup *s = u->s;
    mxp_status st = MXP_OK;
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
    mxp_status st = setup(&u, c);
    const train_net t = { .m = u.m, .opt = u.opt, .scaler = u.scaler, .observe = monitor_step, .ctx = &u };
    if (st == MXP_OK)
        st = train_loop(s, d, c, &t, r);
    if (st == MXP_OK) {
        count_bytes(&u, c, r);
        st = finish(&u, r);
    }
    run_free(&u);
    return st;
}

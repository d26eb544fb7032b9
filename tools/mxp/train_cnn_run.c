/* mxp train --model cnn: one training configuration of the CNN end to end
 * — SGD with momentum and weight decay on float32 masters (mxp_optimizer),
 * the loss scaler when asked; the epochs in train_loop.c (batch norm on
 * the batch's statistics while training, on the running ones for the test
 * accuracy). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

void cnn_default_setup(train_setup *s)
{
    memset(s, 0, sizeof *s);
    s->epochs = 10;
    s->batch = 64;
    s->lr = 0.05;
    s->momentum = 0.9;
    s->weight_decay = 5e-4;
    s->cosine = true;
    s->loss_weight = 0x1p-20;
    s->growth_interval = 20;
    s->seed = 1;
}

/* What one run holds while it trains. */
typedef struct run {
    const train_setup *s;
    const digits *d;
    mxp_autocast *ac;
    cnn *c;
    mxp_optimizer *opt;
    mxp_loss_scaler *scaler;
    mxp_array *init[CNN_CONVS + 2];
} run;

static void run_free(run *u)
{
    cnn_free(u->c);
    mxp_autocast_free(u->ac);
    mxp_optimizer_free(u->opt);
    mxp_loss_scaler_free(u->scaler);
    for (int i = 0; i < CNN_CONVS + 2; i++)
        mxp_array_free(u->init[i]);
}

/* The He-initialized masters: each conv's w, the head's w and b (the batch
 * norm parameters start as their arrays, gamma 1 and beta 0). */
static const mxp_array *master_init(const run *u, int param)
{
    if (param >= 3 * CNN_CONVS)
        return u->init[CNN_CONVS + param - 3 * CNN_CONVS];
    return param % 3 == 0 ? u->init[param / 3] : NULL;
}

static mxp_status setup(run *u, const train_config *c)
{
    const train_setup *s = u->s;
    mxp_status st = mxp_autocast_create(&u->ac, c->policy);
    if (st == MXP_OK)
        st = cnn_create(&u->c, u->ac, s->batch);
    if (st == MXP_OK)
        st = cnn_init_params(u->c, s->seed, u->init);
    /* SGD is linear in the gradient: dividing lr by the loss weight (and
     * multiplying the L2 decay, which is added to the gradient, by it) trains
     * the weighted loss exactly as the plain one */
    mxp_optimizer_opts oo = { .lr = s->lr / s->loss_weight, .momentum = s->momentum,
                              .weight_decay = s->weight_decay * s->loss_weight,
                              .master = c->master ? MXP_MASTER_AUTO : MXP_MASTER_NONE, .rounding = c->rounding,
                              .seed = s->seed };
    if (st == MXP_OK)
        st = mxp_optimizer_create(&u->opt, MXP_OPTIM_SGD, &oo);
    mxp_array *params[CNN_PARAMS], *grads[CNN_PARAMS];
    if (st == MXP_OK)
        cnn_params(u->c, params, grads);
    for (int i = 0; i < CNN_PARAMS && st == MXP_OK; i++)
        st = mxp_optimizer_add_param(u->opt, params[i], grads[i], master_init(u, i));
    mxp_loss_scaler_opts so = { .growth_interval = s->growth_interval };
    if (st == MXP_OK && c->scaler)
        st = mxp_loss_scaler_create(&u->scaler, &so);
    return st;
}

/* Bytes of the parameters (compute copy + float32 master where kept) and
 * of one batch's activations (the images, each conv's output and batch
 * norm's, the pooled features and the logits). */
static void count_bytes(run *u, const train_config *c, train_result *r)
{
    mxp_array *params[CNN_PARAMS], *grads[CNN_PARAMS];
    cnn_params(u->c, params, grads);
    for (int i = 0; i < CNN_PARAMS; i++) {
        const int64_t size = (int64_t)mxp_array_itemsize(params[i]);
        r->weight_bytes += mxp_array_size(params[i]) * (size + (c->master && size < 4 ? 4 : 0));
    }
    const cnn *m = u->c;
    r->act_bytes = mxp_array_size(m->x) * (int64_t)mxp_array_itemsize(m->x);
    for (int i = 0; i < CNN_CONVS; i++)
        r->act_bytes += mxp_array_size(m->conv[i].z) * (int64_t)mxp_array_itemsize(m->conv[i].z) +
                        mxp_array_size(m->conv[i].y) * (int64_t)mxp_array_itemsize(m->conv[i].y);
    for (int l = 0; l <= 1; l++)
        r->act_bytes += mxp_array_size(m->head->act[l]) * (int64_t)mxp_array_itemsize(m->head->act[l]);
}

static uint64_t fnv1a(uint64_t h, const mxp_array *a)
{
    const unsigned char *p = mxp_array_data(a);
    const size_t n = (size_t)mxp_array_size(a) * mxp_array_itemsize(a);
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* The trained state's fingerprint: every float32 master, then each batch
 * norm's running mean and variance. */
static uint64_t weights_hash(const run *u)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < mxp_optimizer_param_count(u->opt); i++)
        h = fnv1a(h, mxp_optimizer_master(u->opt, i));
    for (int i = 0; i < CNN_CONVS; i++)
        h = fnv1a(fnv1a(h, u->c->conv[i].mean), u->c->conv[i].var);
    return h;
}

mxp_status cnn_run(const train_setup *s, const digits *d, const train_config *c, train_result *r)
{
    memset(r, 0, sizeof *r);
    r->config = c;
    if (d->features != CNN_PIXELS || d->classes != 10 || d->n_train < 1 || d->n_test < 1 || s->batch < 1 ||
        s->epochs < 1)
        return MXP_ERR_INVALID_ARGUMENT;
    run u;
    memset(&u, 0, sizeof u);
    u.s = s;
    u.d = d;
    mxp_status st = setup(&u, c);
    const train_net t = { .c = u.c, .opt = u.opt, .scaler = u.scaler };
    if (st == MXP_OK)
        st = train_loop(s, d, c, &t, r);
    if (st == MXP_OK) {
        count_bytes(&u, c, r);
        r->weights_hash = weights_hash(&u);
    }
    run_free(&u);
    return st;
}

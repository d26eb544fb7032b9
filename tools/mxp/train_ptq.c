/* mxp train: deployment of the float32-trained MLP — int8 post-training
 * quantization (weights per output channel, symmetric; each layer's input
 * per tensor, uint8, calibrated on the training split by one of four
 * observers; the int8 GEMM dequantizes with bias and relu in its
 * epilogue), and float8 e4m3 with per-tensor scales. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "train.h"

enum { N_OBS = 4 };
static const mxp_calib_kind obs_kinds[N_OBS] = { MXP_CALIB_MINMAX, MXP_CALIB_PERCENTILE, MXP_CALIB_MSE,
                                                MXP_CALIB_KL };
static const char *const obs_names[N_OBS] = { "min-max", "percentile", "MSE", "KL" };
static const char *const obs_keys[N_OBS] = { "minmax", "percentile", "mse", "kl" };

/* One quantized network: per layer the weight codes and qparams, the
 * input's qparams and a buffer for its codes. */
typedef struct qnet {
    mxp_dtype qtype;                   /* MXP_S8 weights (uint8 inputs) or MXP_E4M3 */
    mxp_array *wq[MLP_MAX_LAYERS], *xq[MLP_MAX_LAYERS];
    mxp_qparams wp[MLP_MAX_LAYERS], ap[MLP_MAX_LAYERS];
} qnet;

static void qnet_free(qnet *q, int nlayers)
{
    for (int l = 0; l < nlayers; l++) {
        mxp_array_free(q->wq[l]);
        mxp_array_free(q->xq[l]);
        mxp_qparams_free(&q->wp[l]);
        mxp_qparams_free(&q->ap[l]);
    }
}

static mxp_status rows_of(mxp_array **out, const mxp_array *a, int64_t n)
{
    const mxp_slice sl = { 0, n, 1 };
    return mxp_array_slice(out, a, 1, &sl);
}

/* The float32 network with the trained weights. */
static mxp_status float_net(const train_setup *s, const train_result *fp32, mxp_autocast **ac, mlp **m)
{
    mxp_status st = mxp_autocast_create(ac, "fp32");
    if (st == MXP_OK)
        st = mlp_create(m, s->nlayers, s->sizes, *ac, s->batch);
    for (int l = 0; l < s->nlayers && st == MXP_OK; l++) {
        st = mxp_array_copyto((*m)->layer[l].w, fp32->weights[2 * l], MXP_CASTING_NO, NULL);
        if (st == MXP_OK)
            st = mxp_array_copyto((*m)->layer[l].b, fp32->weights[2 * l + 1], MXP_CASTING_NO, NULL);
    }
    return st;
}

/* Feeds every layer's input over the training split to the observers
 * (obs[k][l]: k of nk kinds, layer l). */
static mxp_status calibrate(mlp *m, const digits *d, int64_t batch, mxp_observer *(*obs)[MLP_MAX_LAYERS], int nk)
{
    int64_t *rows = malloc((size_t)d->n_train * sizeof *rows);
    if (!rows)
        return MXP_ERR_NO_MEMORY;
    for (int64_t i = 0; i < d->n_train; i++)
        rows[i] = i;
    mxp_status st = MXP_OK;
    for (int64_t off = 0; off < d->n_train && st == MXP_OK; off += batch) {
        const int64_t n = d->n_train - off < batch ? d->n_train - off : batch;
        st = mlp_set_input(m, d->x_train, rows + off, n);
        if (st == MXP_OK)
            st = mlp_forward(m, n);
        for (int l = 0; l < m->nlayers && st == MXP_OK; l++) {
            mxp_array *v = NULL;
            st = rows_of(&v, m->act[l], n);
            for (int k = 0; k < nk && st == MXP_OK; k++)
                st = mxp_observer_update(obs[k][l], v);
            mxp_array_free(v);
        }
    }
    free(rows);
    return st;
}

/* Weight codes: int8 per output channel (axis 1 of the (in, out) matrix)
 * or e4m3 per tensor; input buffers for the codes. */
static mxp_status quantize_weights(const mlp *m, qnet *q)
{
    mxp_status st = MXP_OK;
    for (int l = 0; l < m->nlayers && st == MXP_OK; l++) {
        const mlp_layer *y = &m->layer[l];
        st = mxp_calibrate_minmax(y->w, q->qtype, true, q->qtype == MXP_S8 ? 1 : -1, 0, &q->wp[l]);
        if (st == MXP_OK)
            st = mxp_quantize(&q->wq[l], y->w, &q->wp[l], NULL);
        const int64_t shape[2] = { m->max_batch, y->in };
        if (st == MXP_OK)
            st = mxp_array_empty(&q->xq[l], q->qtype == MXP_S8 ? MXP_U8 : MXP_E4M3, 2, shape);
    }
    return st;
}

/* One layer: quantize its input into codes, then the low-precision GEMM,
 * dequantized by alpha (and int8's per-column scales), bias, relu. */
static mxp_status layer(mlp *m, const qnet *q, int l, int64_t n)
{
    const mlp_layer *y = &m->layer[l];
    mxp_array *x = NULL, *c = NULL;
    mxp_status st = rows_of(&x, m->act[l], n);
    if (st == MXP_OK)
        st = rows_of(&c, q->xq[l], n);
    if (st == MXP_OK)
        st = mxp_quantize_into(c, x, &q->ap[l], NULL);
    mxp_gemm_opts o = { .bias = mxp_array_data(y->b), .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_COL,
                        .activation = l + 1 < m->nlayers ? MXP_ACT_RELU : MXP_ACT_NONE };
    double alpha = q->ap[l].scales[0];
    if (q->qtype == MXP_S8) {
        o.a_zero_point = q->ap[l].zero_points[0];
        o.scales = q->wp[l].scales;
        o.n_scales = (size_t)y->out;
    } else {
        alpha *= q->wp[l].scales[0];
    }
    if (st == MXP_OK)
        st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, (size_t)n, (size_t)y->out, (size_t)y->in, alpha,
                      mxp_array_data(c), mxp_array_dtype(c), (size_t)y->in, mxp_array_data(q->wq[l]),
                      mxp_array_dtype(q->wq[l]), (size_t)y->out, 0.0, mxp_array_data(m->act[l + 1]), MXP_F32,
                      (size_t)y->out, &o);
    mxp_array_free(x);
    mxp_array_free(c);
    return st;
}

static mxp_status evaluate(mlp *m, const qnet *q, const digits *d, int64_t batch, ptq_result *r)
{
    int64_t *rows = malloc((size_t)d->n_test * sizeof *rows), hits = 0;
    if (!rows)
        return MXP_ERR_NO_MEMORY;
    for (int64_t i = 0; i < d->n_test; i++)
        rows[i] = i;
    mxp_status st = MXP_OK;
    const double t0 = cli_now();
    for (int64_t off = 0; off < d->n_test && st == MXP_OK; off += batch) {
        const int64_t n = d->n_test - off < batch ? d->n_test - off : batch;
        int64_t h = 0;
        double loss;
        st = mlp_set_input(m, d->x_test, rows + off, n);
        for (int l = 0; l < m->nlayers && st == MXP_OK; l++)
            st = layer(m, q, l, n);
        if (st == MXP_OK)
            st = mlp_loss(m, n, d->y_test + off, 0.0, &loss, &h);
        hits += h;
    }
    r->infer_s = cli_now() - t0;
    r->test_accuracy = (double)hits / (double)d->n_test;
    /* weights: codes + float32 scales + float32 biases; activations: each
     * layer's input codes and the float32 logits of one batch */
    r->weight_bytes = r->act_bytes = 0;
    for (int l = 0; l < m->nlayers; l++) {
        r->weight_bytes += m->layer[l].in * m->layer[l].out + 4 * q->wp[l].count + 4 * m->layer[l].out;
        r->act_bytes += batch * m->layer[l].in;
    }
    r->act_bytes += batch * m->layer[m->nlayers - 1].out * 4;
    free(rows);
    return st;
}

/* Observers: N_OBS int8 kinds, then e4m3 min-max, for every layer. */
static mxp_status make_observers(int nlayers, mxp_observer *(*obs)[MLP_MAX_LAYERS])
{
    mxp_status st = MXP_OK;
    for (int k = 0; k <= N_OBS && st == MXP_OK; k++) {
        for (int l = 0; l < nlayers && st == MXP_OK; l++) {
            st = k < N_OBS ? mxp_observer_create(&obs[k][l], obs_kinds[k], MXP_U8, false, -1, NULL)
                           : mxp_observer_create(&obs[k][l], MXP_CALIB_MINMAX, MXP_E4M3, true, -1, NULL);
        }
    }
    return st;
}

mxp_status train_ptq(const train_setup *s, const digits *d, const train_result *fp32, ptq_result *rows)
{
    mxp_autocast *ac = NULL;
    mlp *m = NULL;
    mxp_observer *obs[N_OBS + 1][MLP_MAX_LAYERS];
    memset(obs, 0, sizeof obs);
    if (s->nlayers < 1 || s->nlayers > MLP_MAX_LAYERS || s->sizes[0] != d->features ||
        s->sizes[s->nlayers] != d->classes || d->n_train < 1 || d->n_test < 1)
        return MXP_ERR_INVALID_ARGUMENT; /* train_fit_setup gives the data's widths */
    mxp_status st = float_net(s, fp32, &ac, &m);
    if (st == MXP_OK)
        st = make_observers(s->nlayers, obs);
    if (st == MXP_OK)
        st = calibrate(m, d, s->batch, obs, N_OBS + 1);
    for (int k = 0; k <= N_OBS && st == MXP_OK; k++) {
        qnet q;
        memset(&q, 0, sizeof q);
        q.qtype = k < N_OBS ? MXP_S8 : MXP_E4M3;
        ptq_result *r = &rows[k];
        if (k < N_OBS) {
            snprintf(r->name, sizeof r->name, "int8 PTQ, %s", obs_names[k]);
            snprintf(r->key, sizeof r->key, "int8_%s", obs_keys[k]);
        } else {
            snprintf(r->name, sizeof r->name, "float8 e4m3, per-tensor scales");
            snprintf(r->key, sizeof r->key, "e4m3");
        }
        for (int l = 0; l < s->nlayers && st == MXP_OK; l++)
            st = mxp_observer_compute(obs[k][l], &q.ap[l]);
        if (st == MXP_OK)
            st = quantize_weights(m, &q);
        if (st == MXP_OK)
            st = evaluate(m, &q, d, s->batch, r);
        qnet_free(&q, s->nlayers);
    }
    for (int k = 0; k <= N_OBS; k++) {
        for (int l = 0; l < MLP_MAX_LAYERS; l++)
            mxp_observer_free(obs[k][l]);
    }
    mlp_free(m);
    mxp_autocast_free(ac);
    return st;
}

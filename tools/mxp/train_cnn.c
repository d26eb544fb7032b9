/* mxp train: the CNN (train.h) — forward and backward passes on
 * mxp_conv2d, mxp_batch_norm, relu and the residual sums in place, global
 * average pooling, and the MLP's code for the linear head and the loss.
 * Any float dtype works, float64 included (the gradient test checks the
 * backward pass by finite differences). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

static const double BN_EPS = 1e-5, BN_MOMENTUM = 0.1; /* torch's BatchNorm2d */

#define CONV(n, i, o, kk, s, p, sd, in)                                                                   \
    { .name = n, .cin = i, .cout = o, .k = kk, .stride = s, .pad = p, .side = sd, .input = in }
static const cnn_conv layout[CNN_CONVS] = {
    /* name, cin, cout, k, stride, padding, output side, input (the conv whose y; -1 the images) */
    CONV("stem", 1, 16, 3, 1, 1, 8, -1),    CONV("block1.a", 16, 16, 3, 1, 1, 8, 0),
    CONV("block1.b", 16, 16, 3, 1, 1, 8, 1), CONV("block2.a", 16, 32, 3, 2, 1, 4, 2),
    CONV("block2.b", 32, 32, 3, 1, 1, 4, 3), CONV("block2.down", 16, 32, 1, 2, 0, 4, 2),
};
#undef CONV

const char *cnn_conv_name(int i)
{
    return i >= 0 && i < CNN_CONVS ? layout[i].name : NULL;
}
enum { STEM, B1A, B1B, B2A, B2B, B2D, FEATURES = 32, CLASSES = 10 };

static mxp_status conv_arrays(cnn_conv *v, mxp_dtype mm, mxp_dtype ew, mxp_dtype norm, int64_t batch)
{
    const int64_t wshape[4] = { v->cout, v->k, v->k, v->cin }, act[4] = { batch, v->side, v->side, v->cout };
    mxp_status st = mxp_array_zeros(&v->w, mm, 4, wshape);
    if (st == MXP_OK)
        st = mxp_array_zeros(&v->gw, mm, 4, wshape);
    mxp_array **vec[6] = { &v->gamma, &v->beta, &v->ggamma, &v->gbeta, &v->mean, &v->var };
    for (int i = 0; i < 6 && st == MXP_OK; i++) /* gamma and the running variance start at 1 */
        st = (i == 0 || i == 5 ? mxp_array_ones : mxp_array_zeros)(vec[i], norm, 1, &v->cout);
    if (st == MXP_OK)
        st = mxp_array_zeros(&v->z, mm, 4, act);
    if (st == MXP_OK)
        st = mxp_array_zeros(&v->y, ew, 4, act);
    return st;
}

mxp_status cnn_create(cnn **out, const mxp_autocast *policy, int64_t max_batch)
{
    *out = NULL;
    if (!policy || max_batch < 1)
        return MXP_ERR_INVALID_ARGUMENT;
    cnn *c = calloc(1, sizeof *c);
    if (!c)
        return MXP_ERR_NO_MEMORY;
    c->max_batch = max_batch;
    c->dt_matmul = mxp_autocast_dtype(policy, MXP_AUTOCAST_MATMUL);
    c->dt_elementwise = mxp_autocast_dtype(policy, MXP_AUTOCAST_ELEMENTWISE);
    c->dt_norm = mxp_autocast_dtype(policy, MXP_AUTOCAST_NORMALIZATION);
    const int64_t xshape[4] = { max_batch, CNN_SIDE, CNN_SIDE, 1 }, sizes[2] = { FEATURES, CLASSES };
    mxp_status st = mxp_array_zeros(&c->x, c->dt_matmul, 4, xshape);
    for (int i = 0; i < CNN_CONVS && st == MXP_OK; i++) {
        c->conv[i] = layout[i];
        st = conv_arrays(&c->conv[i], c->dt_matmul, c->dt_elementwise, c->dt_norm, max_batch);
    }
    if (st == MXP_OK)
        st = mlp_create(&c->head, 1, sizes, policy, max_batch);
    if (st == MXP_OK)
        st = mlp_enable_input_grad(c->head);
    if (st != MXP_OK) {
        cnn_free(c);
        return st;
    }
    *out = c;
    return MXP_OK;
}

void cnn_free(cnn *c)
{
    if (!c)
        return;
    for (int i = 0; i < CNN_CONVS; i++) {
        cnn_conv *v = &c->conv[i];
        mxp_array *a[10] = { v->w, v->gw, v->gamma, v->beta, v->ggamma, v->gbeta, v->mean, v->var, v->z, v->y };
        for (int k = 0; k < 10; k++)
            mxp_array_free(a[k]);
    }
    mlp_free(c->head);
    mxp_array_free(c->x);
    free(c);
}

mxp_status cnn_init_params(const cnn *c, uint64_t seed, mxp_array **params)
{
    for (int i = 0; i < CNN_CONVS + 2; i++)
        params[i] = NULL;
    mxp_status st = MXP_OK;
    for (int i = 0; i < CNN_CONVS && st == MXP_OK; i++) {
        const cnn_conv *v = &c->conv[i];
        const int64_t shape[4] = { v->cout, v->k, v->k, v->cin };
        st = mxp_array_random_normal(&params[i], MXP_F32, 4, shape, 0.0, sqrt(2.0 / (double)(v->k * v->k * v->cin)),
                                     seed * 1000003u + 100u + (uint64_t)i);
    }
    if (st == MXP_OK) /* the head as the MLP's first layer: N(0, 2 / 32), bias 0 */
        st = mlp_init_params(c->head, seed, params + CNN_CONVS);
    if (st != MXP_OK) {
        for (int i = 0; i < CNN_CONVS + 2; i++) {
            mxp_array_free(params[i]);
            params[i] = NULL;
        }
    }
    return st;
}

void cnn_params(cnn *c, mxp_array **params, mxp_array **grads)
{
    for (int i = 0; i < CNN_CONVS; i++) {
        cnn_conv *v = &c->conv[i];
        mxp_array *p[3] = { v->w, v->gamma, v->beta }, *g[3] = { v->gw, v->ggamma, v->gbeta };
        for (int k = 0; k < 3; k++) {
            params[3 * i + k] = p[k];
            grads[3 * i + k] = g[k];
        }
    }
    params[3 * CNN_CONVS] = c->head->layer[0].w;
    grads[3 * CNN_CONVS] = c->head->layer[0].gw;
    params[3 * CNN_CONVS + 1] = c->head->layer[0].b;
    grads[3 * CNN_CONVS + 1] = c->head->layer[0].gb;
}

mxp_status cnn_set_input(cnn *c, const float *images, const int64_t *rows, int64_t n)
{
    const mxp_dtype dt = mxp_array_dtype(c->x);
    char *dst = mxp_array_data(c->x);
    const size_t bytes = CNN_PIXELS * mxp_array_itemsize(c->x);
    for (int64_t i = 0; i < n; i++) {
        mxp_status st = mxp_convert(dst + (size_t)i * bytes, dt, images + rows[i] * CNN_PIXELS, MXP_F32, CNN_PIXELS,
                                    NULL);
        if (st != MXP_OK)
            return st;
    }
    return MXP_OK;
}

/* ---- views of the first n images ------------------------------------------- */

enum { MAX_VIEWS = 16 };

/* The views a pass makes, freed together. */
typedef struct views {
    mxp_array *v[MAX_VIEWS];
    int n;
} views;

static void views_free(views *w)
{
    for (int i = 0; i < w->n; i++)
        mxp_array_free(w->v[i]);
    w->n = 0;
}

/* Records v, a new view (NULL once *st is not MXP_OK), to be freed with w's others. */
static mxp_array *keep(views *w, mxp_array *v, mxp_status *st)
{
    if (*st == MXP_OK)
        w->v[w->n++] = v;
    return v;
}

/* The first n images of a (NULL once *st is not MXP_OK). */
static mxp_array *first(views *w, const mxp_array *a, int64_t n, mxp_status *st)
{
    const mxp_slice sl = { 0, n, 1 };
    mxp_array *v = NULL;
    if (*st == MXP_OK)
        *st = w->n < MAX_VIEWS ? mxp_array_slice(&v, a, 1, &sl) : MXP_ERR_INVALID_ARGUMENT;
    return keep(w, v, st);
}

/* The head's act[0] or dact[0] rows as [n, 1, 1, 32]: what global pooling writes or reads. */
static mxp_array *pooled(views *w, const mxp_array *a, int64_t n, mxp_status *st)
{
    const mxp_array *rows = first(w, a, n, st);
    const int64_t shape[4] = { n, 1, 1, FEATURES };
    mxp_array *v = NULL;
    if (*st == MXP_OK)
        *st = w->n < MAX_VIEWS ? mxp_array_reshape(&v, rows, 4, shape) : MXP_ERR_INVALID_ARGUMENT;
    return keep(w, v, st);
}

static mxp_conv_opts conv_opts(const cnn_conv *v)
{
    const mxp_conv_opts o = { .layout = MXP_NHWC, .stride = { v->stride, v->stride }, .padding = { v->pad, v->pad } };
    return o;
}

/* ---- forward ---------------------------------------------------------------- */

/* y = bn(conv(x)) for the first n images. */
static mxp_status unit_forward(cnn *c, int i, int64_t n, bool training)
{
    cnn_conv *v = &c->conv[i];
    views w = { .n = 0 };
    mxp_status st = MXP_OK;
    mxp_array *x = first(&w, v->input < 0 ? c->x : c->conv[v->input].y, n, &st);
    mxp_array *z = first(&w, v->z, n, &st), *y = first(&w, v->y, n, &st);
    const mxp_conv_opts o = conv_opts(v);
    if (st == MXP_OK)
        st = mxp_conv2d_into(z, x, v->w, NULL, &o);
    if (st == MXP_OK)
        st = mxp_batch_norm_into(y, z, -1, v->mean, v->var, v->gamma, v->beta, training, BN_MOMENTUM, BN_EPS);
    views_free(&w);
    return st;
}

/* y_i = relu(y_i + y_add) (add < 0: relu(y_i)), in place. */
static mxp_status relu_sum(cnn *c, int i, int add, int64_t n)
{
    views w = { .n = 0 };
    mxp_status st = MXP_OK;
    mxp_array *y = first(&w, c->conv[i].y, n, &st);
    mxp_array *a = add < 0 ? NULL : first(&w, c->conv[add].y, n, &st);
    if (st == MXP_OK && a)
        st = mxp_binary_into(y, MXP_OP_ADD, y, a, NULL);
    if (st == MXP_OK)
        st = mxp_unary_into(y, MXP_OP_RELU, y, NULL);
    views_free(&w);
    return st;
}

mxp_status cnn_forward(cnn *c, int64_t n, bool training)
{
    if (n < 1 || n > c->max_batch)
        return MXP_ERR_INVALID_ARGUMENT;
    /* the conv-bns in the order they run, each followed (relu) by y = relu(y + y_add), add -1: y = relu(y) */
    static const struct {
        int conv, add;
        bool relu;
    } plan[CNN_CONVS] = { { STEM, -1, true }, { B1A, -1, true }, { B1B, STEM, true },
                          { B2A, -1, true },  { B2B, -1, false }, { B2D, -1, false } };
    mxp_status st = MXP_OK;
    for (int s = 0; s < CNN_CONVS && st == MXP_OK; s++) {
        st = unit_forward(c, plan[s].conv, n, training);
        if (st == MXP_OK && plan[s].relu)
            st = relu_sum(c, plan[s].conv, plan[s].add, n);
    }
    if (st == MXP_OK) /* block2's output: relu(b + down) */
        st = relu_sum(c, B2B, B2D, n);
    views w = { .n = 0 };
    const mxp_array *y = first(&w, c->conv[B2B].y, n, &st);
    mxp_array *p = pooled(&w, c->head->act[0], n, &st);
    const mxp_pool_opts global = { .layout = MXP_NHWC };
    if (st == MXP_OK)
        st = mxp_avg_pool2d_into(p, y, &global);
    views_free(&w);
    return st == MXP_OK ? mlp_forward(c->head, n) : st;
}

mxp_status cnn_loss(cnn *c, int64_t n, const int32_t *labels, double grad_seed, double *loss, int64_t *correct)
{
    return mlp_loss(c->head, n, labels, grad_seed, loss, correct);
}

/* ---- backward --------------------------------------------------------------- */

/* From dy (the gradient of conv i's y, before any relu there): the
 * gradients of its batch norm and its weights, and *dx (NULL: not wanted)
 * the gradient of its input, a new array. */
static mxp_status unit_backward(cnn *c, int i, const mxp_array *dy, int64_t n, mxp_array **dx)
{
    cnn_conv *v = &c->conv[i];
    views w = { .n = 0 };
    mxp_status st = MXP_OK;
    mxp_array *x = first(&w, v->input < 0 ? c->x : c->conv[v->input].y, n, &st), *z = first(&w, v->z, n, &st);
    mxp_array *dz = NULL, *dgamma = NULL, *dbeta = NULL, *dw = NULL;
    if (st == MXP_OK)
        st = mxp_batch_norm_backward(&dz, &dgamma, &dbeta, dy, z, -1, v->gamma, BN_EPS);
    if (st == MXP_OK)
        st = mxp_array_copyto(v->ggamma, dgamma, MXP_CASTING_NO, NULL);
    if (st == MXP_OK)
        st = mxp_array_copyto(v->gbeta, dbeta, MXP_CASTING_NO, NULL);
    const mxp_conv_opts o = conv_opts(v);
    if (st == MXP_OK)
        st = mxp_conv2d_backward(dx, &dw, NULL, dz, x, v->w, &o);
    if (st == MXP_OK)
        st = mxp_array_copyto(v->gw, dw, MXP_CASTING_NO, NULL);
    mxp_array_free(dz);
    mxp_array_free(dgamma);
    mxp_array_free(dbeta);
    mxp_array_free(dw);
    views_free(&w);
    return st;
}

/* g = relu'(y_i) g, in place (g: the gradient of the relu's output y_i). */
static void mask(cnn *c, int i, mxp_array *g)
{
    train_relu_mask(g, c->conv[i].y, mxp_array_size(g));
}

/* g = g + h in place (NULL g: *st says why). */
static void add_into(mxp_array *g, const mxp_array *h, mxp_status *st)
{
    if (*st == MXP_OK)
        *st = mxp_binary_into(g, MXP_OP_ADD, g, h, NULL);
}

/* One residual block backward from g, the gradient of its output (its
 * relu undone here): the gradients of its parameters and *gx (a new array)
 * its input's.  down < 0: the shortcut is the input itself. */
static mxp_status block_backward(cnn *c, int a, int b, int down, mxp_array *g, int64_t n, mxp_array **gx)
{
    mxp_array *gm = NULL, *gd = NULL;
    mask(c, b, g);
    mxp_status st = unit_backward(c, b, g, n, &gm);
    if (st == MXP_OK) {
        mask(c, a, gm);
        st = unit_backward(c, a, gm, n, gx);
    }
    if (st == MXP_OK && down >= 0)
        st = unit_backward(c, down, g, n, &gd);
    add_into(*gx, down >= 0 ? gd : g, &st);
    mxp_array_free(gm);
    mxp_array_free(gd);
    return st;
}

mxp_status cnn_backward(cnn *c, int64_t n)
{
    if (n < 1 || n > c->max_batch)
        return MXP_ERR_INVALID_ARGUMENT;
    mxp_status st = mlp_backward(c->head, n);
    views w = { .n = 0 };
    const mxp_array *y = first(&w, c->conv[B2B].y, n, &st), *dp = pooled(&w, c->head->dact[0], n, &st);
    mxp_array *g3 = NULL, *g2 = NULL, *g1 = NULL;
    const mxp_pool_opts global = { .layout = MXP_NHWC };
    if (st == MXP_OK)
        st = mxp_avg_pool2d_backward(&g3, dp, y, &global);
    if (st == MXP_OK)
        st = block_backward(c, B2A, B2B, B2D, g3, n, &g2);
    if (st == MXP_OK)
        st = block_backward(c, B1A, B1B, -1, g2, n, &g1);
    if (st == MXP_OK) {
        mask(c, STEM, g1);
        st = unit_backward(c, STEM, g1, n, NULL);
    }
    mxp_array_free(g3);
    mxp_array_free(g2);
    mxp_array_free(g1);
    views_free(&w);
    return st;
}

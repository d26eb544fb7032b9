/* mxp train: the MLP — forward and backward passes on mxp_gemm (bias and
 * relu in the GEMM epilogue), softmax cross-entropy, in the dtypes of an
 * autocast policy (train.h).  Any float dtype works, float64 included
 * (the gradient test checks the backward pass by finite differences). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

static mxp_status new_array(mxp_array **out, mxp_dtype dt, int64_t rows, int64_t cols)
{
    const int64_t shape[2] = { rows, cols };
    return rows ? mxp_array_zeros(out, dt, 2, shape) : mxp_array_zeros(out, dt, 1, &shape[1]);
}

static mxp_status create_arrays(mlp *m, const int64_t *sizes)
{
    mxp_status st = MXP_OK;
    const int L = m->nlayers;
    for (int l = 0; l < L && st == MXP_OK; l++) {
        mlp_layer *y = &m->layer[l];
        y->in = sizes[l];
        y->out = sizes[l + 1];
        st = new_array(&y->w, m->dt_matmul, y->in, y->out);
        if (st == MXP_OK)
            st = new_array(&y->gw, m->dt_matmul, y->in, y->out);
        if (st == MXP_OK)
            st = new_array(&y->b, m->dt_matmul, 0, y->out);
        if (st == MXP_OK)
            st = new_array(&y->gb, m->dt_matmul, 0, y->out);
    }
    for (int l = 0; l <= L && st == MXP_OK; l++) {
        /* the input and the logits in the matmul dtype, hidden activations in the elementwise one */
        const mxp_dtype dt = l == 0 || l == L ? m->dt_matmul : m->dt_elementwise;
        st = new_array(&m->act[l], dt, m->max_batch, sizes[l]);
        if (st == MXP_OK && l > 0)
            st = new_array(&m->dact[l], dt, m->max_batch, sizes[l]);
    }
    if (st == MXP_OK)
        st = new_array(&m->dlogits_loss, m->dt_loss, m->max_batch, sizes[L]);
    if (st == MXP_OK)
        st = mxp_array_ones(&m->ones, m->dt_matmul, 1, &m->max_batch);
    return st;
}

mxp_status mlp_create(mlp **out, int nlayers, const int64_t *sizes, const mxp_autocast *policy, int64_t max_batch)
{
    *out = NULL;
    if (nlayers < 1 || nlayers > MLP_MAX_LAYERS || max_batch < 1 || !policy)
        return MXP_ERR_INVALID_ARGUMENT;
    for (int l = 0; l <= nlayers; l++) {
        if (sizes[l] < 1)
            return MXP_ERR_INVALID_ARGUMENT;
    }
    mlp *m = calloc(1, sizeof *m);
    if (!m)
        return MXP_ERR_NO_MEMORY;
    m->nlayers = nlayers;
    m->max_batch = max_batch;
    m->dt_matmul = mxp_autocast_dtype(policy, MXP_AUTOCAST_MATMUL);
    m->dt_elementwise = mxp_autocast_dtype(policy, MXP_AUTOCAST_ELEMENTWISE);
    m->dt_softmax = mxp_autocast_dtype(policy, MXP_AUTOCAST_SOFTMAX);
    m->dt_loss = mxp_autocast_dtype(policy, MXP_AUTOCAST_LOSS);
    m->zbuf = malloc((size_t)(max_batch * sizes[nlayers]) * sizeof *m->zbuf);
    mxp_status st = m->zbuf ? create_arrays(m, sizes) : MXP_ERR_NO_MEMORY;
    if (st != MXP_OK) {
        mlp_free(m);
        return st;
    }
    *out = m;
    return MXP_OK;
}

void mlp_free(mlp *m)
{
    if (!m)
        return;
    for (int l = 0; l < m->nlayers; l++) {
        mxp_array_free(m->layer[l].w);
        mxp_array_free(m->layer[l].b);
        mxp_array_free(m->layer[l].gw);
        mxp_array_free(m->layer[l].gb);
    }
    for (int l = 0; l <= m->nlayers; l++) {
        mxp_array_free(m->act[l]);
        mxp_array_free(m->dact[l]);
    }
    mxp_array_free(m->dlogits_loss);
    mxp_array_free(m->ones);
    free(m->zbuf);
    free(m);
}

mxp_status mlp_init_params(const mlp *m, uint64_t seed, mxp_array **params)
{
    mxp_status st = MXP_OK;
    for (int l = 0; l < 2 * m->nlayers; l++)
        params[l] = NULL;
    for (int l = 0; l < m->nlayers && st == MXP_OK; l++) {
        const mlp_layer *y = &m->layer[l];
        const int64_t shape[2] = { y->in, y->out };
        st = mxp_array_random_normal(&params[2 * l], MXP_F32, 2, shape, 0.0, sqrt(2.0 / (double)y->in),
                                     seed * 1000003u + (uint64_t)l);
        if (st == MXP_OK)
            st = mxp_array_zeros(&params[2 * l + 1], MXP_F32, 1, &y->out);
    }
    if (st != MXP_OK) {
        for (int l = 0; l < 2 * m->nlayers; l++) {
            mxp_array_free(params[l]);
            params[l] = NULL;
        }
    }
    return st;
}

mxp_status mlp_set_input(mlp *m, const float *x, const int64_t *rows, int64_t n)
{
    const int64_t f = m->layer[0].in;
    const mxp_dtype dt = mxp_array_dtype(m->act[0]);
    char *dst = mxp_array_data(m->act[0]);
    const size_t row_bytes = (size_t)f * mxp_array_itemsize(m->act[0]);
    for (int64_t i = 0; i < n; i++) {
        mxp_status st = mxp_convert(dst + (size_t)i * row_bytes, dt, x + rows[i] * f, MXP_F32, (size_t)f, NULL);
        if (st != MXP_OK)
            return st;
    }
    return MXP_OK;
}

mxp_status mlp_forward(mlp *m, int64_t n)
{
    for (int l = 0; l < m->nlayers; l++) {
        const mlp_layer *y = &m->layer[l];
        mxp_gemm_opts o = { .bias = mxp_array_data(y->b), .bias_dtype = mxp_array_dtype(y->b),
                            .bias_kind = MXP_BIAS_PER_COL,
                            .activation = l + 1 < m->nlayers ? MXP_ACT_RELU : MXP_ACT_NONE };
        mxp_status st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, (size_t)n, (size_t)y->out, (size_t)y->in, 1.0,
                                 mxp_array_data(m->act[l]), mxp_array_dtype(m->act[l]), (size_t)y->in,
                                 mxp_array_data(y->w), mxp_array_dtype(y->w), (size_t)y->out, 0.0,
                                 mxp_array_data(m->act[l + 1]), mxp_array_dtype(m->act[l + 1]), (size_t)y->out, &o);
        if (st != MXP_OK)
            return st;
    }
    return MXP_OK;
}

/* v rounded once to dt and widened back (what storing it in dt keeps). */
static mxp_status round_through(double *v, size_t n, mxp_dtype dt)
{
    uint64_t tmp[256];
    for (size_t off = 0; off < n; off += 256) {
        const size_t k = n - off < 256 ? n - off : 256;
        mxp_status st = mxp_convert(tmp, dt, v + off, MXP_F64, k, NULL);
        if (st == MXP_OK)
            st = mxp_convert(v + off, MXP_F64, tmp, dt, k, NULL);
        if (st != MXP_OK)
            return st;
    }
    return MXP_OK;
}

/* Softmax of each row of z in place; returns the row's log-sum-exp pieces. */
static double row_softmax(double *z, int64_t c, int32_t label, int64_t *hit)
{
    double max = z[0];
    int64_t arg = 0;
    for (int64_t j = 1; j < c; j++) {
        if (z[j] > max) {
            max = z[j];
            arg = j;
        }
    }
    *hit += arg == label;
    double sum = 0.0;
    for (int64_t j = 0; j < c; j++)
        sum += exp(z[j] - max);
    const double loss = log(sum) - (z[label] - max); /* -log softmax(z)[label] */
    for (int64_t j = 0; j < c; j++)
        z[j] = exp(z[j] - max) / sum;
    return loss;
}

mxp_status mlp_loss(mlp *m, int64_t n, const int32_t *labels, double grad_seed, double *loss, int64_t *correct)
{
    const int L = m->nlayers;
    const int64_t c = m->layer[L - 1].out;
    double *z = m->zbuf, total = 0.0;
    mxp_status st = mxp_convert(z, MXP_F64, mxp_array_data(m->act[L]), mxp_array_dtype(m->act[L]), (size_t)(n * c),
                                NULL);
    if (st != MXP_OK)
        return st;
    int64_t hits = 0;
    for (int64_t i = 0; i < n; i++)
        total += row_softmax(z + i * c, c, labels[i], &hits);
    double mean = total / (double)n;
    if ((st = round_through(z, (size_t)(n * c), m->dt_softmax)) != MXP_OK ||
        (st = round_through(&mean, 1, m->dt_loss)) != MXP_OK)
        return st;
    *loss = mean;
    if (correct)
        *correct = hits;
    if (grad_seed == 0.0)
        return MXP_OK;
    /* d(seed * mean loss) / dz = seed (softmax - onehot) / n, in the loss
     * dtype, then cast to the logits' dtype */
    const double k = grad_seed / (double)n;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < c; j++)
            z[i * c + j] = (z[i * c + j] - (j == labels[i])) * k;
    }
    st = mxp_convert(mxp_array_data(m->dlogits_loss), m->dt_loss, z, MXP_F64, (size_t)(n * c), NULL);
    if (st == MXP_OK)
        st = mxp_convert(mxp_array_data(m->dact[L]), mxp_array_dtype(m->dact[L]), mxp_array_data(m->dlogits_loss),
                         m->dt_loss, (size_t)(n * c), NULL);
    return st;
}

/* relu's backward: the gradient is zeroed where the output is not > 0 --
 * as signed integers, a float's bits are > 0 exactly when it is > 0 (or a
 * positive NaN).  One loop per width, which the compiler vectorizes where
 * the gradient has the output's width (element by element through memcpy
 * and memset it was a quarter of a bfloat16 epoch). */
#define RELU_MASK(T)                                                                 \
    do {                                                                             \
        const T *ov = (const T *)(const void *)o;                                    \
        if (gsize == sizeof(T)) {                                                    \
            T *gv = (T *)(void *)g;                                                  \
            for (int64_t i = 0; i < count; i++)                                      \
                gv[i] = ov[i] > 0 ? gv[i] : 0;                                       \
        } else {                                                                     \
            for (int64_t i = 0; i < count; i++)                                      \
                if (ov[i] <= 0)                                                      \
                    memset(g + (size_t)i * gsize, 0, gsize);                         \
        }                                                                            \
    } while (0)

void train_relu_mask(mxp_array *grad, const mxp_array *out, int64_t count)
{
    const size_t gsize = mxp_array_itemsize(grad);
    const unsigned char *o = mxp_array_data(out);
    unsigned char *g = mxp_array_data(grad);
    switch (mxp_array_itemsize(out)) {
    case 1: RELU_MASK(int8_t); break;
    case 2: RELU_MASK(int16_t); break;
    case 4: RELU_MASK(int32_t); break;
    default: RELU_MASK(int64_t); break;
    }
}
#undef RELU_MASK

static mxp_status layer_backward(mlp *m, int l, int64_t n)
{
    mlp_layer *y = &m->layer[l];
    const mxp_array *a = m->act[l], *dz = m->dact[l + 1];
    const mxp_dtype adt = mxp_array_dtype(a), zdt = mxp_array_dtype(dz);
    /* gW = A^T dZ;  gb = 1^T dZ (a reduction over the batch, float32 accumulator);  dA = dZ W^T */
    mxp_status st = mxp_gemm(MXP_TRANS, MXP_NO_TRANS, (size_t)y->in, (size_t)y->out, (size_t)n, 1.0,
                             mxp_array_data(a), adt, (size_t)y->in, mxp_array_data(dz), zdt, (size_t)y->out, 0.0,
                             mxp_array_data(y->gw), mxp_array_dtype(y->gw), (size_t)y->out, NULL);
    if (st == MXP_OK)
        st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 1, (size_t)y->out, (size_t)n, 1.0, mxp_array_data(m->ones),
                      mxp_array_dtype(m->ones), (size_t)n, mxp_array_data(dz), zdt, (size_t)y->out, 0.0,
                      mxp_array_data(y->gb), mxp_array_dtype(y->gb), (size_t)y->out, NULL);
    if (st == MXP_OK && (l > 0 || m->input_grad))
        st = mxp_gemm(MXP_NO_TRANS, MXP_TRANS, (size_t)n, (size_t)y->in, (size_t)y->out, 1.0, mxp_array_data(dz), zdt,
                      (size_t)y->out, mxp_array_data(y->w), mxp_array_dtype(y->w), (size_t)y->out, 0.0,
                      mxp_array_data(m->dact[l]), mxp_array_dtype(m->dact[l]), (size_t)y->in, NULL);
    return st;
}

mxp_status mlp_enable_input_grad(mlp *m)
{
    if (!m->dact[0]) {
        mxp_status st = new_array(&m->dact[0], mxp_array_dtype(m->act[0]), m->max_batch, m->layer[0].in);
        if (st != MXP_OK)
            return st;
    }
    m->input_grad = true;
    return MXP_OK;
}

mxp_status mlp_backward(mlp *m, int64_t n)
{
    for (int l = m->nlayers - 1; l >= 0; l--) {
        if (l + 1 < m->nlayers)
            train_relu_mask(m->dact[l + 1], m->act[l + 1], n * m->layer[l].out);
        mxp_status st = layer_backward(m, l, n);
        if (st != MXP_OK)
            return st;
    }
    return MXP_OK;
}

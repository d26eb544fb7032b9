/* mxp train: the demo networks — an MLP classifier on the digits, written on
 * mxp_gemm with its epilogue, and the ResNet-style CNN of mxp.models.cnn on
 * mxp's convolution, batch norm and pooling — their data, training
 * configurations and the MLP's post-training quantization.  Not part of
 * the library: it shows the library's training layer (include/mxp/train.h)
 * at work. */
#ifndef MXP_TOOLS_TRAIN_H
#define MXP_TOOLS_TRAIN_H

#include <stdio.h>

#include "mxp.h"

enum { MLP_MAX_LAYERS = 4 };

/* The CNN's images and split (mxp.models.cnn): 8x8 pixels; of the digits'
 * 1797 images, the first 450 of numpy.random.default_rng(2026).permutation
 * are held out (of other data, the same share). */
enum { CNN_SIDE = 8, CNN_PIXELS = 64, CNN_HELD_OUT = 450, CNN_DIGITS = 1797, CNN_SPLIT_SEED = 2026 };

/* ---- the data (train_data.c) ------------------------------------------- */

/* The digits split once by a seeded shuffle: images as float32 in [0, 1]
 * (gray level / 16), labels 0..9. */
typedef struct digits {
    int64_t n_train, n_test, features, classes;
    float *x_train, *x_test; /* rows of `features` values */
    int32_t *y_train, *y_test;
    int64_t *test_rows; /* the row of the files each test image comes from */
} digits;

enum { DIGITS_MIN_ROWS = 10, DIGITS_MAX_FEATURES = 65536 };

/* Reads DIR/digits_x.npy (uint8, C order, n x F: n >= 10 images of
 * 1 <= F <= 65536 gray levels 0..16; the digits are 1797 x 64) and
 * DIR/digits_y.npy (uint8, n labels 0..9); test_share of the rows
 * (shuffled with seed) become the test split.  On failure (MXP_ERR_FORMAT
 * for data that breaks these rules) a sentence naming the file is in err
 * and d holds nothing. */
mxp_status digits_load(digits *d, const char *dir, double test_share, uint64_t seed, char *err, size_t err_size);
/* The same from the two files' bytes in memory (the fuzz target's door:
 * tests/fuzz/fuzz_train_data.c); messages name "(buffer)/digits_x.npy". */
mxp_status digits_load_buffers(digits *d, const void *x, size_t x_size, const void *y, size_t y_size,
                               double test_share, uint64_t seed, char *err, size_t err_size);
/* The same files split as mxp.models.cnn.split() splits them: the first
 * round(n 450 / 1797) rows of numpy.random.default_rng(2026).permutation(n)
 * are the test split, the others (in that order) the training split; the
 * images must have 64 columns (8x8). */
mxp_status digits_load_cnn(digits *d, const char *dir, char *err, size_t err_size);
void digits_free(digits *d);
/* numpy.random.default_rng(seed).permutation(n) (NumPy's PCG64 seeded by
 * SeedSequence, Generator.shuffle's draws) into order[0..n), bit for bit,
 * for 1 <= n <= 2^32. */
void numpy_permutation(int64_t *order, int64_t n, uint32_t seed);
/* The first directory of the list that holds the files: NULL if none. */
const char *digits_find_dir(void);

/* ---- the network (train_mlp.c) ------------------------------------------
 * Layer l: out = act(in W_l + b_l), W_l (in x out) row-major, relu on the
 * hidden layers, none on the logits; softmax cross-entropy, mean over the
 * batch.  Dtypes from an autocast policy: weights, layer inputs, logits
 * and their gradients in the matmul dtype; hidden activations (bias + relu,
 * fused into the GEMM) in the elementwise dtype; softmax and loss in
 * theirs (computed in float64, rounded to them); bias gradients are GEMM
 * reductions accumulated in float32. */

typedef struct mlp_layer {
    int64_t in, out;
    mxp_array *w, *b;   /* parameters: (in, out) and (out,) */
    mxp_array *gw, *gb; /* their gradients, same shapes and dtypes */
} mlp_layer;

typedef struct mlp {
    int nlayers;
    mlp_layer layer[MLP_MAX_LAYERS];
    mxp_dtype dt_matmul, dt_elementwise, dt_softmax, dt_loss;
    int64_t max_batch;
    mxp_array *act[MLP_MAX_LAYERS + 1];  /* act[0] the input, act[l + 1] layer l's output */
    mxp_array *dact[MLP_MAX_LAYERS + 1]; /* gradients of act[1..] */
    mxp_array *dlogits_loss;             /* the loss gradient in the loss dtype, before
                                            its cast to the matmul dtype */
    mxp_array *ones;                     /* max_batch ones: bias gradients as a GEMM */
    double *zbuf;                        /* max_batch x classes, float64 */
    bool input_grad;                     /* the backward pass also gives dact[0] */
} mlp;

/* sizes[0] inputs, sizes[nlayers] classes.  Parameters are zero. */
mxp_status mlp_create(mlp **out, int nlayers, const int64_t *sizes, const mxp_autocast *policy, int64_t max_batch);
void mlp_free(mlp *m);
/* He-normal float32 weights N(0, 2 / in) seeded per layer, zero biases:
 * 2 * nlayers new arrays (w0, b0, w1, b1, ...) for the caller to free. */
mxp_status mlp_init_params(const mlp *m, uint64_t seed, mxp_array **params);
/* act[0] = rows of x (float32, row-major `features` wide), rounded once. */
mxp_status mlp_set_input(mlp *m, const float *x, const int64_t *rows, int64_t n);
mxp_status mlp_forward(mlp *m, int64_t n);
/* Softmax cross-entropy of the logits against labels: *loss the mean,
 * *correct the argmax hits.  grad_seed != 0 also writes the gradient of
 * grad_seed * loss into dact[nlayers] (the backward pass starts there). */
mxp_status mlp_loss(mlp *m, int64_t n, const int32_t *labels, double grad_seed, double *loss, int64_t *correct);
mxp_status mlp_backward(mlp *m, int64_t n);
/* From now on mlp_backward also writes the gradient of the input into
 * dact[0] (in act[0]'s dtype): the MLP as a head on another network. */
mxp_status mlp_enable_input_grad(mlp *m);
/* relu's backward: grad[i] = 0 where out[i] is not > 0 (the first count
 * elements of both, C-contiguous, any float dtypes). */
void train_relu_mask(mxp_array *grad, const mxp_array *out, int64_t count);

/* ---- the CNN (train_cnn.c) ------------------------------------------------
 * mxp.models.cnn's network, NHWC (the implicit GEMM of a convolution then
 * spans the whole batch; NCHW makes one GEMM call per image): a stem conv
 * 3x3 1->16 + batch norm + relu; block1 relu(bn(conv(relu(bn(conv x)))) +
 * x) at 16 channels; block2 the same at 32 channels, stride 2, with a 1x1
 * stride-2 conv + bn shortcut; global average pooling; a linear head 32->10
 * (an mlp of one layer, whose loss is the MLP's).  Dtypes from an autocast
 * policy: conv weights, conv inputs and outputs and the head in the matmul
 * dtype (float32 accumulation); batch norm outputs, relu and the residual
 * sums in the elementwise dtype; batch norm's parameters and running
 * statistics in the normalization dtype (float32 in every policy here),
 * computed in float64 by mxp_batch_norm; gradients in their tensors'
 * dtypes. */

enum { CNN_CONVS = 6, CNN_PARAMS = 3 * CNN_CONVS + 2, CNN_PARAMETERS = 19706 /* values */ };
/* Conv i's name, "stem", "block1.a", ... (the torch module's) in cnn.conv's order; NULL out of range. */
const char *cnn_conv_name(int i);

typedef struct cnn_conv {
    const char *name;                /* "stem", "block1.a", ... (the torch module's) */
    int64_t cin, cout, k, stride, pad, side; /* side: the output's height and width */
    int input;                       /* the conv whose y is the input; -1: the images */
    mxp_array *w, *gw;               /* OHWI [cout, k, k, cin], matmul dtype */
    mxp_array *gamma, *beta, *ggamma, *gbeta, *mean, *var; /* [cout], normalization dtype */
    mxp_array *z;                    /* the conv's output [B, side, side, cout]: batch norm's input */
    mxp_array *y;                    /* batch norm's output; relu and residual sums in place */
} cnn_conv;

typedef struct cnn {
    cnn_conv conv[CNN_CONVS]; /* stem, block1.a, block1.b, block2.a, block2.b, block2.down */
    mlp *head;                /* act[0] the pooled features, dact[0] their gradient */
    mxp_dtype dt_matmul, dt_elementwise, dt_norm;
    int64_t max_batch;
    mxp_array *x;             /* the images [B, 8, 8, 1], matmul dtype */
} cnn;

mxp_status cnn_create(cnn **out, const mxp_autocast *policy, int64_t max_batch);
void cnn_free(cnn *c);
/* He-normal float32 conv weights N(0, 2 / (k k cin)) and head weights
 * N(0, 2 / 32), seeded per tensor, zero head bias: CNN_CONVS + 2 new arrays
 * (the convs' w, then the head's w and b) for the caller to free. */
mxp_status cnn_init_params(const cnn *c, uint64_t seed, mxp_array **params);
/* x = rows of images (float32, 64 values each), rounded once. */
mxp_status cnn_set_input(cnn *c, const float *images, const int64_t *rows, int64_t n);
/* training: batch norm on the batch's statistics (the running ones
 * updated); else on the running statistics. */
mxp_status cnn_forward(cnn *c, int64_t n, bool training);
/* The loss of the logits: mlp_loss of the head. */
mxp_status cnn_loss(cnn *c, int64_t n, const int32_t *labels, double grad_seed, double *loss, int64_t *correct);
/* After a training forward pass and cnn_loss with a grad_seed: every gw,
 * ggamma, gbeta and the head's gradients. */
mxp_status cnn_backward(cnn *c, int64_t n);
/* The parameters in the optimizer's order (each conv's w, gamma, beta;
 * the head's w, b) and their gradients. */
void cnn_params(cnn *c, mxp_array **params, mxp_array **grads);

/* ---- training configurations (train_run.c) ------------------------------ */

typedef struct train_setup {
    int epochs;
    int64_t batch;
    int nlayers;
    int64_t sizes[MLP_MAX_LAYERS + 1];
    double lr, momentum;
    double weight_decay;     /* SGD's L2 decay (scaled by the loss weight as the gradients) */
    bool cosine;             /* the learning rate follows a cosine from lr to 0 over the steps */
    double loss_weight;      /* the loss is multiplied by this (and lr divided) */
    int64_t growth_interval; /* the loss scaler's */
    uint64_t seed;
    FILE *progress;          /* a line per epoch (NULL: none) */
} train_setup;

typedef struct train_config {
    const char *name;      /* the table's first column */
    const char *key;       /* for JSON: "fp32", "bf16_master", ... */
    const char *policy;    /* autocast: "fp32", "bf16", "fp16" */
    bool scaler;           /* dynamic loss scaling */
    bool master;           /* float32 master weights */
    mxp_rounding rounding; /* master (or update) -> weights */
} train_config;

typedef struct train_result {
    const train_config *config;
    double test_accuracy;  /* share of the test split, 0..1 */
    double final_loss;     /* mean training loss of the last epoch (unweighted) */
    double epoch_s;        /* median seconds per epoch (training steps only) */
    int64_t steps, skipped;
    int64_t weight_bytes, act_bytes;
    double *epoch_loss, *epoch_acc, *epoch_time; /* epochs entries */
    double *scale;         /* the loss scale after each step (scaler only) */
    int64_t nscale;
    char suggest[MLP_MAX_LAYERS][16];            /* the monitor's dtype per layer's gradient */
    unsigned grad_flags;                         /* the monitor's flags on the gradients */
    double grad_flushed;                         /* mean share of the loss gradient's squared norm
                                                    in values that flush to zero in the matmul dtype */
    mxp_array *weights[2 * MLP_MAX_LAYERS];      /* trained float32 masters (w0, b0, ...) */
    char *monitor_json, *monitor_text;           /* the monitor's reports */
    uint64_t weights_hash;                       /* CNN: FNV-1a of the trained float32 masters and
                                                    running statistics (bit-for-bit repeatability) */
} train_result;

extern const train_config train_configs[5];

/* The setup `mxp train` uses (train.c): MLP 64-512-512-10, SGD lr 0.05
 * momentum 0.9, batch 64, 20 epochs, loss weight 2^-20, scaler growth
 * interval 20, seed 1. */
void train_default_setup(train_setup *s);
/* The network's input and output widths from the data: sizes[0] =
 * d->features, sizes[nlayers] = d->classes. */
void train_fit_setup(train_setup *s, const digits *d);

/* train_run and train_ptq refuse (MXP_ERR_INVALID_ARGUMENT, before anything
 * is allocated) a setup whose widths are not the data's. */

mxp_status train_run(const train_setup *s, const digits *d, const train_config *c, train_result *r);
void train_result_free(train_result *r);

/* ---- the loop both networks train in (train_loop.c) ----------------------- */

/* A network and what updates it.  Exactly one of m and c. */
typedef struct train_net {
    mlp *m;
    cnn *c;
    mxp_optimizer *opt;
    mxp_loss_scaler *scaler; /* NULL: none */
    /* called after the backward pass of each epoch's first step, its time
     * left out of the epoch's (NULL: none): the MLP's monitor */
    mxp_status (*observe)(void *ctx, int64_t step, int64_t n);
    void *ctx;
} train_net;

/* Fisher-Yates over 0..n-1 with seed: every configuration sees the same batches. */
void train_shuffle(int64_t *order, int64_t n, uint64_t seed);
/* s->epochs epochs over d's training split, shuffled by seed * 7919 +
 * epoch, in batches of s->batch: forward (training), the loss seeded with
 * the loss weight times the scaler's scale, backward, observe, the cosine
 * learning rate when s->cosine, one update (through the scaler, whose
 * scale r records); after each epoch the test accuracy and the progress
 * line.  Fills r's curves, steps, skipped, epoch_s, final_loss and
 * test_accuracy (r zeroed by the caller, its config set). */
mxp_status train_loop(const train_setup *s, const digits *d, const train_config *c, const train_net *t,
                      train_result *r);

/* ---- the CNN's runs (train_cnn_run.c) ------------------------------------- */

/* The setup of `mxp train --model cnn`: SGD lr 0.05 momentum 0.9 weight
 * decay 5e-4 with a cosine schedule, batch 64, 10 epochs, loss weight
 * 2^-20, scaler growth interval 20, seed 1. */
void cnn_default_setup(train_setup *s);
/* One configuration from He-initialized weights (seed) on d, which
 * digits_load_cnn split; r->weights stays empty. */
mxp_status cnn_run(const train_setup *s, const digits *d, const train_config *c, train_result *r);

/* ---- post-training quantization and float8 inference (train_ptq.c) ------ */

typedef struct ptq_result {
    char name[48], key[24];
    double test_accuracy;
    double infer_s;          /* the test split, seconds */
    int64_t weight_bytes, act_bytes;
} ptq_result;

enum { PTQ_ROWS = 5 }; /* int8 with each of 4 observers, e4m3 */

/* From the float32 weights of `fp32`: int8 per-channel weights with the
 * activations calibrated by each observer on the training split, and
 * float8 e4m3 with per-tensor scales. */
mxp_status train_ptq(const train_setup *s, const digits *d, const train_result *fp32, ptq_result *rows);

#endif

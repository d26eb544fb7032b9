/* mxp train: the demo network — an MLP classifier on the digits, written on
 * mxp_gemm with its epilogue — its data, training configurations and
 * post-training quantization.  Not part of the library: it shows the
 * library's training layer (include/mxp/train.h) at work. */
#ifndef MXP_TOOLS_TRAIN_H
#define MXP_TOOLS_TRAIN_H

#include <stdio.h>

#include "mxp.h"

enum { MLP_MAX_LAYERS = 4 };

/* ---- the data (train_data.c) ------------------------------------------- */

/* The digits split once by a seeded shuffle: images as float32 in [0, 1]
 * (gray level / 16), labels 0..9. */
typedef struct digits {
    int64_t n_train, n_test, features, classes;
    float *x_train, *x_test; /* rows of `features` values */
    int32_t *y_train, *y_test;
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
void digits_free(digits *d);
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

/* ---- training configurations (train_run.c) ------------------------------ */

typedef struct train_setup {
    int epochs;
    int64_t batch;
    int nlayers;
    int64_t sizes[MLP_MAX_LAYERS + 1];
    double lr, momentum;
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

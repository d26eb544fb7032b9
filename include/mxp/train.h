/* mxp — mixed-precision training aids: SGD and Adam/AdamW on float32
 * master weights, gradient clipping, a dynamic loss scaler with PyTorch
 * GradScaler's rules, the autocast policy table and a stability monitor.
 * Plain objects (create / use / free); zero-initialized (or NULL) option
 * structs mean the defaults.  Rules and formulas: docs/train.md. */
#ifndef MXP_TRAIN_H
#define MXP_TRAIN_H

#include "array.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- optimizers with master weights ---------------------------------------
 * A parameter is the compute copy the forward pass reads (float32, float16,
 * bfloat16 or float8, C-contiguous, writeable); its gradient may be any
 * float dtype of the same shape.  Each step reads the gradient, updates a
 * float32 master copy (and float32 optimizer state) in float32 arithmetic,
 * and writes the parameter from the master with one rounding, saturating
 * (a weight beyond the dtype's range becomes its largest finite value).
 * Parameters that are float32 are their own master. */

typedef enum mxp_optimizer_kind {
    MXP_OPTIM_SGD = 1, /* momentum, dampening, Nesterov, L2 weight decay (torch.optim.SGD) */
    MXP_OPTIM_ADAM,    /* L2 weight decay added to the gradient (torch.optim.Adam) */
    MXP_OPTIM_ADAMW    /* decoupled weight decay: w -= lr wd w (torch.optim.AdamW) */
} mxp_optimizer_kind;

typedef enum mxp_master_mode {
    MXP_MASTER_AUTO = 0, /* a float32 master copy for parameters narrower than float32 */
    MXP_MASTER_NONE      /* no copy: the parameter is read, updated in float32 and
                            rounded back each step (pair with MXP_ROUND_STOCHASTIC) */
} mxp_master_mode;

typedef struct mxp_optimizer_opts {
    size_t struct_size;    /* 0: this release's layout, or sizeof(mxp_optimizer_opts); docs/abi.md */
    double lr;             /* 0: 0.01 (SGD), 0.001 (Adam, AdamW); finite, >= 0 */
    double momentum;       /* SGD: [0, 1) */
    double dampening;      /* SGD: [0, 1] */
    bool nesterov;         /* SGD: needs momentum > 0 and dampening 0 */
    double weight_decay;   /* >= 0; 0: none (torch's AdamW defaults to 0.01: set it) */
    double beta1, beta2;   /* Adam: (0, 1); 0: 0.9 and 0.999 */
    double eps;            /* Adam: > 0; 0: 1e-8 */
    double max_grad_norm;  /* > 0: each step scales the gradients so that their global
                              norm (float64) is at most this; 0: no clipping */
    mxp_master_mode master;
    mxp_rounding rounding; /* master -> parameter: 0 nearest even; MXP_ROUND_STOCHASTIC */
    uint64_t seed;         /* stochastic rounding: every step and parameter draws new bits */
} mxp_optimizer_opts;

typedef struct mxp_optimizer mxp_optimizer; /* opaque */

MXP_API mxp_status mxp_optimizer_create(mxp_optimizer **out, mxp_optimizer_kind kind, const mxp_optimizer_opts *opts);
MXP_API void mxp_optimizer_free(mxp_optimizer *opt);

/* Registers param and its gradient; the optimizer holds a reference to
 * each (the caller may free its own) and reads grad at every step.  master_init NULL: the master is param, widened exactly;
 * else an array of param's shape (any float dtype) that the master starts
 * from, and param is overwritten with it rounded once (opts.rounding).
 * Errors: a float64 or non-float param (MXP_ERR_UNSUPPORTED), shapes that
 * differ (MXP_ERR_SHAPE), a read-only or non-contiguous array. */
MXP_API mxp_status mxp_optimizer_add_param(mxp_optimizer *opt, mxp_array *param, const mxp_array *grad,
                                           const mxp_array *master_init);

/* One update of every parameter from its gradient. */
MXP_API mxp_status mxp_optimizer_step(mxp_optimizer *opt);
/* The same with every gradient multiplied by grad_scale (finite, > 0) as it
 * is read, in float32: unscaling fused into the step, the gradients left as
 * they are (see mxp_loss_scaler_step). */
MXP_API mxp_status mxp_optimizer_step_scaled(mxp_optimizer *opt, double grad_scale);

MXP_API mxp_status mxp_optimizer_set_lr(mxp_optimizer *opt, double lr); /* finite, >= 0 */
MXP_API double mxp_optimizer_lr(const mxp_optimizer *opt);
MXP_API int64_t mxp_optimizer_steps(const mxp_optimizer *opt);       /* steps taken */
MXP_API size_t mxp_optimizer_param_count(const mxp_optimizer *opt);
/* Parameter i's float32 master (the parameter itself when it is float32 or
 * has no master); not a new reference.  NULL for i out of range. */
MXP_API const mxp_array *mxp_optimizer_master(const mxp_optimizer *opt, size_t i);
/* The global gradient norm the last step computed for clipping (after
 * grad_scale), NaN when it computed none. */
MXP_API double mxp_optimizer_last_grad_norm(const mxp_optimizer *opt);

/* torch.nn.utils.clip_grad_norm_: the global L2 norm of n gradients (any
 * float dtypes, C-contiguous, writeable) summed in float64; when
 * c = max_norm / (norm + 1e-6) is below 1 (max_norm > 0) every gradient is
 * multiplied in place by c, rounded once to its dtype.  A non-finite norm
 * leaves the gradients as they are.  *total_norm (may be NULL) gets the norm before clipping. */
MXP_API mxp_status mxp_clip_grad_norm(mxp_array *const *grads, size_t n, double max_norm, double *total_norm);

/* ---- dynamic loss scaling -------------------------------------------------
 * PyTorch GradScaler's rules: the backward pass starts from loss * scale;
 * gradients are unscaled (times 1/scale, computed as float32) while inf/NaN
 * are looked for; a step with inf/NaN is skipped and the scale multiplied
 * by backoff_factor; after growth_interval clean steps in a row it is
 * multiplied by growth_factor.  The scale is a float32 value and stays a
 * positive normal number in [min_scale, max_scale]. */

typedef struct mxp_loss_scaler_opts {
    size_t struct_size;      /* 0: this release's layout, or sizeof(mxp_loss_scaler_opts); docs/abi.md */
    double init_scale;       /* 0: 65536 (2^16) */
    double growth_factor;    /* 0: 2.0; > 1 */
    double backoff_factor;   /* 0: 0.5; in (0, 1) */
    int64_t growth_interval; /* 0: 2000; > 0 */
    double min_scale;        /* 0: 2^-126 (float32's smallest normal) */
    double max_scale;        /* 0: FLT_MAX (float32's largest finite value) */
    bool fixed;              /* static loss scaling: the scale stays init_scale
                                (steps with inf/NaN are still skipped) */
} mxp_loss_scaler_opts;

/* What mxp_loss_scaler_get_state saves and set_state restores. */
typedef struct mxp_loss_scaler_state {
    double scale;           /* a float32 value in [min_scale, max_scale] */
    int64_t growth_tracker; /* clean steps since the last change, [0, growth_interval) */
    int64_t steps;          /* updates so far */
    int64_t skipped;        /* of which had inf/NaN (the optimizer step was skipped) */
} mxp_loss_scaler_state;

typedef struct mxp_loss_scaler mxp_loss_scaler; /* opaque */

MXP_API mxp_status mxp_loss_scaler_create(mxp_loss_scaler **out, const mxp_loss_scaler_opts *opts);
MXP_API void mxp_loss_scaler_free(mxp_loss_scaler *s);

/* The current scale (NaN for NULL): seed the backward pass with it. */
MXP_API double mxp_loss_scaler_scale(const mxp_loss_scaler *s);
/* loss * scale (NaN for NULL). */
MXP_API double mxp_loss_scaler_scale_loss(const mxp_loss_scaler *s, double loss);

/* Multiplies grad (any float dtype, C-contiguous, writeable) in place by
 * the float32 1/scale, in float32 (float64 for float64), rounding once to
 * nearest even, and counts its inf/NaN in the same pass.  (float16
 * gradients of a small loss may underflow here: then let the optimizer
 * unscale as it reads them, mxp_loss_scaler_step.) */
MXP_API mxp_status mxp_loss_scaler_unscale(mxp_loss_scaler *s, mxp_array *grad);
/* Counts the inf/NaN of x (any layout, any dtype) without changing it:
 * for a loss, or gradients unscaled elsewhere. */
MXP_API mxp_status mxp_loss_scaler_check(mxp_loss_scaler *s, const mxp_array *x);
/* Whether unscale/check/step found inf/NaN since the last update. */
MXP_API bool mxp_loss_scaler_found_inf(const mxp_loss_scaler *s);

/* GradScaler.step: if mxp_loss_scaler_unscale ran since the last update,
 * the optimizer's gradients are taken as unscaled and checked already;
 * otherwise they are checked here (read only) and the optimizer multiplies
 * them by 1/scale as it reads them (mxp_optimizer_step_scaled).  The step
 * runs only if no inf/NaN was found; *stepped (may be NULL) says whether. */
MXP_API mxp_status mxp_loss_scaler_step(mxp_loss_scaler *s, mxp_optimizer *opt, bool *stepped);

/* GradScaler.update: ends the step.  inf/NaN found: skipped + 1, the scale
 * times backoff_factor (at least min_scale), the tracker 0.  Otherwise the
 * tracker + 1; when it reaches growth_interval the scale grows by
 * growth_factor unless that would pass max_scale (then it stays, as torch's
 * stays when the growth would give inf), and the tracker restarts at 0. */
MXP_API mxp_status mxp_loss_scaler_update(mxp_loss_scaler *s);

MXP_API mxp_status mxp_loss_scaler_get_state(const mxp_loss_scaler *s, mxp_loss_scaler_state *out);
/* Restores a saved state (checked against this scaler's options; the
 * found-inf record of the current step is cleared). */
MXP_API mxp_status mxp_loss_scaler_set_state(mxp_loss_scaler *s, const mxp_loss_scaler_state *state);

/* ---- autocast: which dtype each kind of operation computes in -------------
 * The CPU counterpart of torch.autocast's op lists, as a table a network
 * consults.  Policies: "fp32" (everything float32); "bf16" / "fp16"
 * (matmul and elementwise in bfloat16 / float16; reductions, softmax, loss
 * and normalisation in float32).  Matmuls accumulate in float32 whatever
 * their inputs. */

typedef enum mxp_autocast_op {
    MXP_AUTOCAST_MATMUL = 0,    /* matmul, linear, conv: inputs and output */
    MXP_AUTOCAST_ELEMENTWISE,   /* bias, activations, residual adds */
    MXP_AUTOCAST_REDUCTION,     /* sum, mean, norms */
    MXP_AUTOCAST_SOFTMAX,       /* softmax, log_softmax */
    MXP_AUTOCAST_LOSS,          /* cross entropy, MSE */
    MXP_AUTOCAST_NORMALIZATION, /* layer / batch / group norm */
    MXP_AUTOCAST_OP_COUNT
} mxp_autocast_op;

typedef struct mxp_autocast mxp_autocast; /* opaque */

/* policy: "fp32", "bf16", "fp16", or a float dtype name ("bfloat16",
 * "float16", "float32", "f16" ...) meaning the same; NULL: "fp32". */
MXP_API mxp_status mxp_autocast_create(mxp_autocast **out, const char *policy);
MXP_API void mxp_autocast_free(mxp_autocast *ac);
/* MXP_DTYPE_INVALID for NULL or an op out of range. */
MXP_API mxp_dtype mxp_autocast_dtype(const mxp_autocast *ac, mxp_autocast_op op);
/* Changes one entry (any float dtype). */
MXP_API mxp_status mxp_autocast_set(mxp_autocast *ac, mxp_autocast_op op, mxp_dtype dtype);
/* "fp32", "bf16", "fp16"; "custom" once an entry differs from the policy. */
MXP_API const char *mxp_autocast_policy_name(const mxp_autocast *ac);
/* x in the dtype of op: a view of x when it has that dtype already, else a
 * C-contiguous copy rounded to nearest even. */
MXP_API mxp_status mxp_autocast_cast(mxp_array **out, const mxp_autocast *ac, mxp_autocast_op op,
                                     const mxp_array *x);
MXP_API const char *mxp_autocast_op_name(mxp_autocast_op op);        /* "matmul", ...; "invalid" */
MXP_API mxp_autocast_op mxp_autocast_op_from_name(const char *name); /* MXP_AUTOCAST_OP_COUNT if unknown */

/* ---- stability monitor ----------------------------------------------------
 * Statistics of named tensors step by step, measured against a target
 * dtype (what the values would do if stored in it, rounding to nearest
 * even), flags, and a dtype suggestion per tensor. */

typedef enum mxp_tensor_role {
    MXP_ROLE_WEIGHT = 0,
    MXP_ROLE_ACTIVATION,
    MXP_ROLE_GRADIENT,
    MXP_ROLE_COUNT
} mxp_tensor_role;

/* Flags of one record. */
#define MXP_MONITOR_NONFINITE 0x1u  /* NaN or inf in the tensor */
#define MXP_MONITOR_OVERFLOW 0x2u   /* overflow_share above its threshold */
#define MXP_MONITOR_UNDERFLOW 0x4u  /* underflow_share above its threshold */
#define MXP_MONITOR_EXPLODING 0x8u  /* gradients: norm above exploding_norm, or
                                       exploding_ratio times the previous record's */
#define MXP_MONITOR_VANISHING 0x10u /* gradients: norm below vanishing_norm */

typedef struct mxp_monitor_opts {
    size_t struct_size;      /* 0: this release's layout, or sizeof(mxp_monitor_opts); docs/abi.md */
    mxp_dtype target;        /* float dtype the shares refer to; 0: float16 */
    double overflow_share;   /* flag when more than this share overflows; default 0 (any) */
    double underflow_share;  /* flag when more than this share flushes to zero; 0: 0.01 */
    double exploding_norm;   /* 0: 1e4 */
    double exploding_ratio;  /* 0: 100 */
    double vanishing_norm;   /* 0: 1e-7 (a gradient exactly 0 is vanishing too) */
    double headroom;         /* suggestions: max |x| times this must fit; 0: 2 */
    int64_t max_history;     /* records kept per tensor (oldest dropped); 0: all */
} mxp_monitor_opts;

/* One record.  Counts are over elements; the shares' denominators are the
 * finite elements (overflow) and the nonzero finite ones (underflow).  A
 * report (docs/abi.md): set struct_size before mxp_monitor_record or
 * mxp_monitor_history_get fills it; the records of mxp_monitor_history are
 * the library's own, each with struct_size = the library's sizeof. */
typedef struct mxp_tensor_stats {
    size_t struct_size;  /* 0 (this release's layout) or sizeof(mxp_tensor_stats) */
    int64_t step;
    int64_t count;       /* elements */
    int64_t nan, inf;
    int64_t zeros;
    int64_t overflow;    /* finite values that would become inf/NaN in the target */
    int64_t underflow;   /* nonzero finite values that would become 0 in the target */
    int64_t subnormal;   /* nonzero finite values that would become target subnormals */
    double norm;         /* L2 norm of the finite values, float64 */
    double max_abs;      /* largest finite |x| (0 if none) */
    double min_abs;      /* smallest nonzero finite |x| (0 if none) */
    double overflow_share, underflow_share;
    double underflow_norm_share; /* share of the squared norm held by the values that
                                    would flush: how much of the signal is lost */
    unsigned flags;      /* MXP_MONITOR_* */
} mxp_tensor_stats;

typedef struct mxp_monitor mxp_monitor; /* opaque */

MXP_API mxp_status mxp_monitor_create(mxp_monitor **out, const mxp_monitor_opts *opts);
MXP_API void mxp_monitor_free(mxp_monitor *m);

/* Records x (any real dtype, any layout) under name (1..63 characters) at
 * step; a name keeps the role it was first recorded with (another:
 * MXP_ERR_INVALID_ARGUMENT).  stats (may be NULL) gets the record. */
MXP_API mxp_status mxp_monitor_record(mxp_monitor *m, int64_t step, const char *name, mxp_tensor_role role,
                                      const mxp_array *x, mxp_tensor_stats *stats);

MXP_API size_t mxp_monitor_tensor_count(const mxp_monitor *m);
MXP_API const char *mxp_monitor_tensor_name(const mxp_monitor *m, size_t i); /* NULL out of range */
MXP_API mxp_tensor_role mxp_monitor_tensor_role(const mxp_monitor *m, size_t i); /* MXP_ROLE_COUNT out of range */
MXP_API mxp_dtype mxp_monitor_target(const mxp_monitor *m);
/* The records kept for name, oldest first (valid until the next record).
 * The array is in the library's layout of mxp_tensor_stats (docs/abi.md);
 * mxp_monitor_history_get reads one record in the caller's. */
MXP_API mxp_status mxp_monitor_history(const mxp_monitor *m, const char *name, const mxp_tensor_stats **records,
                                       size_t *count);
/* Record i of name (0: the oldest kept; i >= the count: MXP_ERR_INDEX)
 * copied into *out, within out->struct_size. */
MXP_API mxp_status mxp_monitor_history_get(const mxp_monitor *m, const char *name, size_t i, mxp_tensor_stats *out);
/* OR of the flags of every record kept. */
MXP_API unsigned mxp_monitor_flags(const mxp_monitor *m);
MXP_API const char *mxp_monitor_flag_name(unsigned flag); /* "overflow", ...; "invalid" */
MXP_API const char *mxp_tensor_role_name(mxp_tensor_role role); /* "weight", ...; "invalid" */

/* The narrowest float dtype for name from everything recorded: float16 when
 * no value seen overflows it with `headroom` and at most underflow_share of
 * them would flush to zero; else bfloat16 under the same rule; else
 * float32.  reason (may be NULL) gets a sentence (reason_size bytes). */
MXP_API mxp_status mxp_monitor_suggest(const mxp_monitor *m, const char *name, mxp_dtype *dtype, char *reason,
                                       size_t reason_size);

/* A report of every tensor: a text table, or JSON with the histories.
 * *out is a NUL-terminated string from mxp_malloc (release: mxp_free). */
MXP_API mxp_status mxp_monitor_report(const mxp_monitor *m, bool json, char **out);

#ifdef __cplusplus
}
#endif
#endif

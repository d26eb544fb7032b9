/* SGD and Adam/AdamW on float32 master weights: the parameter list, the
 * step (gradients read in chunks, widened to float32, the update in
 * float32, the parameter rounded once from the master) and clipping.  The
 * per-element formulas are torch.optim's (docs/train.md). */
#include <math.h>
#include <string.h>

#include "train/train-internal.h"
#include "core/abi.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "core/rng.h"

typedef struct opt_param {
    mxp_array *param;     /* a reference to the caller's compute copy */
    mxp_array *grad;      /* a reference to its gradient */
    mxp_array *master;    /* float32 master; NULL: param is float32, or no master */
    float *state1;        /* SGD momentum buffer / Adam exp_avg (NULL if unused) */
    float *state2;        /* Adam exp_avg_sq */
    int64_t steps;        /* this parameter's steps (Adam's bias correction) */
} opt_param;

struct mxp_optimizer {
    mxp_optimizer_kind kind;
    mxp_optimizer_opts o;
    opt_param *params;
    size_t count, cap;
    int64_t steps;
    double last_norm;
};

/* The hyperparameters of one step, as float32 values the way torch's
 * float32 kernels use them. */
typedef struct step_consts {
    float lr, wd, momentum, one_minus_damp;
    float beta1, beta2, one_minus_b1, one_minus_b2, eps;
    float decay;          /* AdamW: 1 - lr wd */
    float step_size;      /* Adam: lr / (1 - beta1^t) */
    float bc2_sqrt;       /* Adam: sqrt(1 - beta2^t) */
    bool nesterov, first; /* first: SGD's buffer starts as the gradient */
} step_consts;

static mxp_status check_opts(mxp_optimizer_kind kind, mxp_optimizer_opts *o)
{
    const char *what = "mxp_optimizer_create";
    if (kind < MXP_OPTIM_SGD || kind > MXP_OPTIM_ADAMW)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %d is not an mxp_optimizer_kind", what, (int)kind);
    if (!(isfinite(o->lr) && o->lr >= 0.0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: learning rate %g must be finite and >= 0", what, o->lr);
    if (o->lr == 0.0)
        o->lr = kind == MXP_OPTIM_SGD ? 0.01 : 0.001;
    if (o->beta1 == 0.0)
        o->beta1 = 0.9;
    if (o->beta2 == 0.0)
        o->beta2 = 0.999;
    if (o->eps == 0.0)
        o->eps = 1e-8;
    if (!(o->momentum >= 0.0 && o->momentum < 1.0) || !(o->dampening >= 0.0 && o->dampening <= 1.0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: momentum %g must be in [0, 1), dampening %g in [0, 1]",
                         what, o->momentum, o->dampening);
    if (o->nesterov && !(o->momentum > 0.0 && o->dampening == 0.0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: Nesterov momentum needs momentum > 0 and dampening 0",
                         what);
    if (!(isfinite(o->weight_decay) && o->weight_decay >= 0.0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: weight decay %g must be finite and >= 0", what,
                         o->weight_decay);
    if (!(o->beta1 > 0.0 && o->beta1 < 1.0) || !(o->beta2 > 0.0 && o->beta2 < 1.0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: betas (%g, %g) must be in (0, 1)", what, o->beta1,
                         o->beta2);
    if (!(isfinite(o->eps) && o->eps > 0.0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: eps %g must be finite and > 0", what, o->eps);
    if (!(isfinite(o->max_grad_norm) && o->max_grad_norm >= 0.0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: max_grad_norm %g must be finite and >= 0 (0: none)",
                         what, o->max_grad_norm);
    if (o->master != MXP_MASTER_AUTO && o->master != MXP_MASTER_NONE)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %d is not an mxp_master_mode", what, (int)o->master);
    if ((unsigned)o->rounding >= MXP_ROUNDING_COUNT)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %d is not an mxp_rounding", what, (int)o->rounding);
    return MXP_OK;
}

mxp_status mxp_optimizer_create(mxp_optimizer **out, mxp_optimizer_kind kind, const mxp_optimizer_opts *opts)
{
    MXP_ABI_IN_OUT(opts, optimizer_opts, "mxp_optimizer_create", out);
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_optimizer_create: out is NULL");
    *out = NULL;
    mxp_optimizer_opts o = { 0 };
    if (opts)
        o = *opts;
    mxp_status st = check_opts(kind, &o);
    if (st != MXP_OK)
        return st;
    mxp_optimizer *opt = mxp_malloc(sizeof *opt);
    if (!opt)
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_optimizer_create: out of memory");
    memset(opt, 0, sizeof *opt);
    opt->kind = kind;
    opt->o = o;
    opt->last_norm = NAN;
    *out = opt;
    return MXP_OK;
}

static void free_param(opt_param *p)
{
    mxp_array_free(p->param);
    mxp_array_free(p->grad);
    mxp_array_free(p->master);
    mxp_free(p->state1);
    mxp_free(p->state2);
}

void mxp_optimizer_free(mxp_optimizer *opt)
{
    if (!opt)
        return;
    for (size_t i = 0; i < opt->count; i++)
        free_param(&opt->params[i]);
    mxp_free(opt->params);
    mxp_free(opt);
}

/* How the master is rounded into the parameter: opts.rounding with a seed
 * per (step, parameter), saturating (a weight past the dtype's range becomes
 * its largest finite value, not inf, or NaN in float8_e4m3fn). */
static mxp_convert_opts write_opts(const mxp_optimizer *opt, size_t index, int64_t step, int64_t off)
{
    mxp_convert_opts c = { .rounding = opt->o.rounding, .overflow = MXP_OVERFLOW_SATURATE,
                           .index_offset = (uint64_t)off };
    /* one stream per (step, parameter) */
    c.seed = mxp_splitmix64(opt->o.seed ^ mxp_splitmix64(((uint64_t)step << 20) ^ (uint64_t)index));
    return c;
}

static mxp_status check_add(const mxp_optimizer *opt, const mxp_array *param, const mxp_array *grad,
                            const mxp_array *master_init)
{
    const char *what = "mxp_optimizer_add_param";
    if (!opt)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: optimizer is NULL", what);
    mxp_status st = mxp_train_check_float(param, "mxp_optimizer_add_param: param", true);
    if (st == MXP_OK)
        st = mxp_train_check_float(grad, "mxp_optimizer_add_param: grad", false);
    if (st == MXP_OK && master_init)
        st = mxp_train_check_float(master_init, "mxp_optimizer_add_param: master_init", false);
    if (st != MXP_OK)
        return st;
    if (mxp_array_dtype(param) == MXP_F64)
        return mxp_error(MXP_ERR_UNSUPPORTED, "%s: float64 parameters are not supported (the optimizers "
                         "compute in float32)", what);
    st = mxp_train_check_same_shape(param, "param", grad, "grad", what);
    if (st == MXP_OK && master_init)
        st = mxp_train_check_same_shape(param, "param", master_init, "master_init", what);
    if (st == MXP_OK && mxp_array_data(param) == mxp_array_data(grad) && mxp_array_size(param) > 0)
        st = mxp_error(MXP_ERR_OVERLAP, "%s: param and grad are the same memory", what);
    return st;
}

static mxp_status alloc_state(float **state, int64_t n)
{
    *state = mxp_malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!*state)
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_optimizer_add_param: out of memory");
    memset(*state, 0, (size_t)(n > 0 ? n : 1) * sizeof(float));
    return MXP_OK;
}

/* The master starts from master_init (or param); param is set from it. */
static mxp_status init_copies(mxp_optimizer *opt, opt_param *p, const mxp_array *master_init)
{
    const mxp_dtype pdt = mxp_array_dtype(p->param);
    const int64_t n = mxp_array_size(p->param);
    const size_t index = opt->count;
    mxp_convert_opts wo = write_opts(opt, index, -1, 0);
    mxp_status st = MXP_OK;
    if (pdt != MXP_F32 && opt->o.master == MXP_MASTER_AUTO) {
        st = mxp_array_empty(&p->master, MXP_F32, mxp_array_ndim(p->param), mxp_array_shape(p->param));
        if (st != MXP_OK)
            return st;
        const mxp_array *src = master_init ? master_init : p->param;
        st = mxp_convert(mxp_array_data(p->master), MXP_F32, mxp_array_data(src), mxp_array_dtype(src), (size_t)n,
                         NULL);
        if (st == MXP_OK && master_init)
            st = mxp_convert(mxp_array_data(p->param), pdt, mxp_array_data(p->master), MXP_F32, (size_t)n, &wo);
    } else if (master_init) {
        /* the parameter is its own master: float32 from the init, or the
         * init rounded once to the parameter's dtype */
        if (pdt == MXP_F32)
            wo.rounding = MXP_ROUND_NEAREST_EVEN;
        st = mxp_convert(mxp_array_data(p->param), pdt, mxp_array_data(master_init), mxp_array_dtype(master_init),
                         (size_t)n, &wo);
    }
    return st;
}

mxp_status mxp_optimizer_add_param(mxp_optimizer *opt, mxp_array *param, const mxp_array *grad,
                                   const mxp_array *master_init)
{
    mxp_status st = check_add(opt, param, grad, master_init);
    if (st != MXP_OK)
        return st;
    if (opt->count == opt->cap) {
        size_t cap = opt->cap ? 2 * opt->cap : 8;
        opt_param *grown = mxp_malloc(cap * sizeof *grown);
        if (!grown)
            return mxp_error(MXP_ERR_NO_MEMORY, "mxp_optimizer_add_param: out of memory");
        if (opt->count)
            memcpy(grown, opt->params, opt->count * sizeof *grown);
        mxp_free(opt->params);
        opt->params = grown;
        opt->cap = cap;
    }
    opt_param p;
    memset(&p, 0, sizeof p);
    const int64_t n = mxp_array_size(param);
    st = mxp_array_ascontiguous(&p.param, param, 'C'); /* contiguous already: a new reference */
    if (st == MXP_OK)
        st = mxp_array_ascontiguous(&p.grad, grad, 'C');
    if (st == MXP_OK && (opt->kind != MXP_OPTIM_SGD || opt->o.momentum > 0.0))
        st = alloc_state(&p.state1, n);
    if (st == MXP_OK && opt->kind != MXP_OPTIM_SGD)
        st = alloc_state(&p.state2, n);
    if (st == MXP_OK)
        st = init_copies(opt, &p, master_init);
    if (st != MXP_OK) {
        free_param(&p);
        return st;
    }
    opt->params[opt->count++] = p;
    return MXP_OK;
}

/* ---- the per-element updates (torch.optim, float32) ---------------------- */

static void sgd_chunk(float *w, const float *g, float *buf, size_t n, const step_consts *c)
{
    for (size_t i = 0; i < n; i++) {
        float d = g[i];
        if (c->wd != 0.0f)
            d = d + c->wd * w[i];
        if (buf) {
            buf[i] = c->first ? d : buf[i] * c->momentum + c->one_minus_damp * d;
            d = c->nesterov ? d + c->momentum * buf[i] : buf[i];
        }
        w[i] = w[i] - c->lr * d;
    }
}

static void adam_chunk(float *w, const float *g, float *m, float *v, size_t n, bool decoupled,
                       const step_consts *c)
{
    for (size_t i = 0; i < n; i++) {
        float gi = g[i];
        if (decoupled)
            w[i] = w[i] * c->decay;
        else if (c->wd != 0.0f)
            gi = gi + c->wd * w[i];
        m[i] = m[i] * c->beta1 + c->one_minus_b1 * gi;
        v[i] = v[i] * c->beta2 + c->one_minus_b2 * (gi * gi);
        const float denom = sqrtf(v[i]) / c->bc2_sqrt + c->eps;
        w[i] = w[i] - c->step_size * (m[i] / denom);
    }
}

static step_consts make_consts(const mxp_optimizer *opt, const opt_param *p)
{
    const mxp_optimizer_opts *o = &opt->o;
    step_consts c;
    memset(&c, 0, sizeof c);
    c.lr = (float)o->lr;
    c.wd = (float)o->weight_decay;
    c.momentum = (float)o->momentum;
    c.one_minus_damp = (float)(1.0 - o->dampening);
    c.nesterov = o->nesterov;
    c.first = p->steps == 0;
    c.beta1 = (float)o->beta1;
    c.beta2 = (float)o->beta2;
    c.one_minus_b1 = (float)(1.0 - o->beta1);
    c.one_minus_b2 = (float)(1.0 - o->beta2);
    c.eps = (float)o->eps;
    c.decay = (float)(1.0 - o->lr * o->weight_decay);
    const double t = (double)(p->steps + 1);
    c.step_size = (float)(o->lr / (1.0 - pow(o->beta1, t)));
    c.bc2_sqrt = (float)sqrt(1.0 - pow(o->beta2, t));
    return c;
}

/* One parameter: chunks of the gradient times mult, the master (or the
 * parameter widened), the update, the parameter rounded once. */
static mxp_status step_param(mxp_optimizer *opt, size_t index, float mult)
{
    opt_param *p = &opt->params[index];
    const step_consts c = make_consts(opt, p);
    const mxp_dtype pdt = mxp_array_dtype(p->param), gdt = mxp_array_dtype(p->grad);
    const int64_t n = mxp_array_size(p->param);
    const size_t psize = mxp_array_itemsize(p->param), gsize = mxp_array_itemsize(p->grad);
    char *pdata = mxp_array_data(p->param);
    const char *gdata = mxp_array_data(p->grad);
    float *master = p->master ? mxp_array_data(p->master) : pdt == MXP_F32 ? (float *)(void *)pdata : NULL;
    float gbuf[TRAIN_CHUNK], wbuf[TRAIN_CHUNK];
    for (int64_t off = 0; off < n; off += TRAIN_CHUNK) {
        const size_t m = (size_t)(n - off < TRAIN_CHUNK ? n - off : TRAIN_CHUNK);
        mxp_status st = mxp_convert(gbuf, MXP_F32, gdata + (size_t)off * gsize, gdt, m, NULL);
        if (st != MXP_OK)
            return st;
        if (mult != 1.0f) {
            for (size_t i = 0; i < m; i++)
                gbuf[i] = gbuf[i] * mult;
        }
        float *w = master ? master + off : wbuf;
        if (!master)
            (void)mxp_convert(wbuf, MXP_F32, pdata + (size_t)off * psize, pdt, m, NULL);
        float *s1 = p->state1 ? p->state1 + off : NULL, *s2 = p->state2 ? p->state2 + off : NULL;
        if (opt->kind == MXP_OPTIM_SGD)
            sgd_chunk(w, gbuf, s1, m, &c);
        else
            adam_chunk(w, gbuf, s1, s2, m, opt->kind == MXP_OPTIM_ADAMW, &c);
        if (pdt != MXP_F32) {
            const mxp_convert_opts wo = write_opts(opt, index, p->steps, off);
            st = mxp_convert(pdata + (size_t)off * psize, pdt, w, MXP_F32, m, &wo);
            if (st != MXP_OK)
                return st;
        }
    }
    p->steps++;
    return MXP_OK;
}

mxp_status mxp_optimizer_step_scaled(mxp_optimizer *opt, double grad_scale)
{
    if (!opt)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_optimizer_step: optimizer is NULL");
    if (!(isfinite(grad_scale) && grad_scale > 0.0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_optimizer_step_scaled: grad_scale %g must be finite and > 0",
                         grad_scale);
    const mxp_fpenv env = mxp_fpenv_enter();
    double mult = grad_scale;
    opt->last_norm = NAN;
    if (opt->o.max_grad_norm > 0.0) {
        double sum = 0.0;
        for (size_t i = 0; i < opt->count; i++)
            sum += mxp_train_sum_squares(opt->params[i].grad);
        const double norm = grad_scale * sqrt(sum);
        opt->last_norm = norm;
        const double coef = opt->o.max_grad_norm / (norm + 1e-6); /* torch's, clamped to 1 */
        if (isfinite(norm) && coef < 1.0)
            mult *= coef;
    }
    mxp_status st = MXP_OK;
    for (size_t i = 0; i < opt->count && st == MXP_OK; i++)
        st = step_param(opt, i, (float)mult);
    mxp_fpenv_leave(env);
    if (st == MXP_OK)
        opt->steps++;
    return st;
}

mxp_status mxp_optimizer_step(mxp_optimizer *opt)
{
    return mxp_optimizer_step_scaled(opt, 1.0);
}

mxp_status mxp_optimizer_set_lr(mxp_optimizer *opt, double lr)
{
    if (!opt)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_optimizer_set_lr: optimizer is NULL");
    if (!(isfinite(lr) && lr >= 0.0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_optimizer_set_lr: learning rate %g must be finite and >= 0",
                         lr);
    opt->o.lr = lr;
    return MXP_OK;
}

double mxp_optimizer_lr(const mxp_optimizer *opt)
{
    return opt ? opt->o.lr : NAN;
}

int64_t mxp_optimizer_steps(const mxp_optimizer *opt)
{
    return opt ? opt->steps : 0;
}

size_t mxp_optimizer_param_count(const mxp_optimizer *opt)
{
    return opt ? opt->count : 0;
}

const mxp_array *mxp_optimizer_master(const mxp_optimizer *opt, size_t i)
{
    if (!opt || i >= opt->count)
        return NULL;
    return opt->params[i].master ? opt->params[i].master : opt->params[i].param;
}

double mxp_optimizer_last_grad_norm(const mxp_optimizer *opt)
{
    return opt ? opt->last_norm : NAN;
}

size_t mxp_optimizer_grad_count(const mxp_optimizer *opt)
{
    return opt->count;
}

const mxp_array *mxp_optimizer_grad(const mxp_optimizer *opt, size_t i)
{
    return opt->params[i].grad;
}

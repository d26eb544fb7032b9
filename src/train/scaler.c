/* The dynamic loss scaler: PyTorch GradScaler's rules (its
 * _amp_update_scale_ and _amp_foreach_non_finite_check_and_unscale_
 * kernels), with the scale kept a normal float32 in [min_scale, max_scale]. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "train/train-internal.h"
#include "core/abi.h"
#include "core/error.h"
#include "core/fpenv.h"

struct mxp_loss_scaler {
    mxp_loss_scaler_opts o;
    float scale;
    int64_t tracker, steps, skipped;
    int64_t nonfinite; /* inf/NaN seen since the last update */
    bool unscaled;     /* mxp_loss_scaler_unscale ran since the last update */
};

/* A float32 value, normal, inside [lo, hi]. */
static bool good_scale(double x, double lo, double hi)
{
    return isfinite(x) && (double)(float)x == x && x >= FLT_MIN && x >= lo && x <= hi;
}

static mxp_status check_opts(mxp_loss_scaler_opts *o)
{
    const char *what = "mxp_loss_scaler_create";
    if (o->init_scale == 0.0)
        o->init_scale = 65536.0;
    if (o->growth_factor == 0.0)
        o->growth_factor = 2.0;
    if (o->backoff_factor == 0.0)
        o->backoff_factor = 0.5;
    if (o->growth_interval == 0)
        o->growth_interval = 2000;
    if (o->min_scale == 0.0)
        o->min_scale = FLT_MIN;
    if (o->max_scale == 0.0)
        o->max_scale = FLT_MAX;
    if (!good_scale(o->min_scale, FLT_MIN, FLT_MAX) || !good_scale(o->max_scale, o->min_scale, FLT_MAX))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: min_scale %g and max_scale %g must be normal float32 "
                         "values with min_scale <= max_scale", what, o->min_scale, o->max_scale);
    if (!(isfinite(o->init_scale) && o->init_scale > 0.0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: init_scale %g must be finite and > 0", what, o->init_scale);
    o->init_scale = (double)(float)o->init_scale; /* the scale is a float32, as torch's */
    if (!good_scale(o->init_scale, o->min_scale, o->max_scale))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: init_scale %g is outside [min_scale %g, max_scale %g] "
                         "(or not a normal float32)", what, o->init_scale, o->min_scale, o->max_scale);
    if (!(isfinite(o->growth_factor) && o->growth_factor > 1.0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: growth_factor %g must be finite and > 1", what,
                         o->growth_factor);
    if (!(o->backoff_factor > 0.0 && o->backoff_factor < 1.0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: backoff_factor %g must be in (0, 1)", what,
                         o->backoff_factor);
    if (o->growth_interval < 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: growth_interval %lld must be > 0", what,
                         (long long)o->growth_interval);
    return MXP_OK;
}

mxp_status mxp_loss_scaler_create(mxp_loss_scaler **out, const mxp_loss_scaler_opts *opts)
{
    MXP_ABI_IN_OUT(opts, loss_scaler_opts, "mxp_loss_scaler_create", out);
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_loss_scaler_create: out is NULL");
    *out = NULL;
    mxp_loss_scaler_opts o = { 0 };
    if (opts)
        o = *opts;
    mxp_status st = check_opts(&o);
    if (st != MXP_OK)
        return st;
    mxp_loss_scaler *s = mxp_malloc(sizeof *s);
    if (!s)
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_loss_scaler_create: out of memory");
    memset(s, 0, sizeof *s);
    s->o = o;
    s->scale = (float)o.init_scale;
    *out = s;
    return MXP_OK;
}

void mxp_loss_scaler_free(mxp_loss_scaler *s)
{
    mxp_free(s);
}

double mxp_loss_scaler_scale(const mxp_loss_scaler *s)
{
    return s ? (double)s->scale : NAN;
}

double mxp_loss_scaler_scale_loss(const mxp_loss_scaler *s, double loss)
{
    return s ? loss * (double)s->scale : NAN;
}

bool mxp_loss_scaler_found_inf(const mxp_loss_scaler *s)
{
    return s && s->nonfinite > 0;
}

/* torch: inv_scale = scale.double().reciprocal().float() */
static float inv_scale(const mxp_loss_scaler *s)
{
    return (float)(1.0 / (double)s->scale);
}

/* One pass: count inf/NaN of the values as they are, multiply by inv,
 * round once into the gradient's dtype (unscale_f32, unscale_f64). */
#define DEFINE_UNSCALE(name, T)                        \
    static int64_t name(T *g, size_t n, T inv)         \
    {                                                  \
        int64_t bad = 0;                               \
        for (size_t i = 0; i < n; i++) {               \
            bad += !isfinite(g[i]);                    \
            g[i] = g[i] * inv;                         \
        }                                              \
        return bad;                                    \
    }
DEFINE_UNSCALE(unscale_f32, float)
DEFINE_UNSCALE(unscale_f64, double)
#undef DEFINE_UNSCALE

mxp_status mxp_loss_scaler_unscale(mxp_loss_scaler *s, mxp_array *grad)
{
    if (!s)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_loss_scaler_unscale: scaler is NULL");
    mxp_status st = mxp_train_check_float(grad, "mxp_loss_scaler_unscale: grad", true);
    if (st != MXP_OK)
        return st;
    const mxp_dtype dt = mxp_array_dtype(grad);
    const int64_t n = mxp_array_size(grad);
    const size_t size = mxp_array_itemsize(grad);
    char *data = mxp_array_data(grad);
    const mxp_fpenv env = mxp_fpenv_enter();
    const float inv = inv_scale(s);
    int64_t bad = 0;
    if (dt == MXP_F32) {
        bad = unscale_f32((float *)(void *)data, (size_t)n, inv);
    } else if (dt == MXP_F64) {
        bad = unscale_f64((double *)(void *)data, (size_t)n, (double)inv);
    } else {
        float buf[TRAIN_CHUNK];
        for (int64_t off = 0; off < n; off += TRAIN_CHUNK) {
            const size_t m = (size_t)(n - off < TRAIN_CHUNK ? n - off : TRAIN_CHUNK);
            char *p = data + (size_t)off * size;
            (void)mxp_convert(buf, MXP_F32, p, dt, m, NULL); /* exact */
            bad += unscale_f32(buf, m, inv);
            (void)mxp_convert(p, dt, buf, MXP_F32, m, NULL);
        }
    }
    mxp_fpenv_leave(env);
    s->nonfinite += bad;
    s->unscaled = true;
    return MXP_OK;
}

mxp_status mxp_loss_scaler_check(mxp_loss_scaler *s, const mxp_array *x)
{
    if (!s)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_loss_scaler_check: scaler is NULL");
    if (!x)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_loss_scaler_check: array is NULL");
    int64_t bad = 0;
    mxp_status st = mxp_train_count_nonfinite(x, &bad);
    if (st == MXP_OK)
        s->nonfinite += bad;
    return st;
}

mxp_status mxp_loss_scaler_step(mxp_loss_scaler *s, mxp_optimizer *opt, bool *stepped)
{
    if (stepped)
        *stepped = false;
    if (!s || !opt)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_loss_scaler_step: %s is NULL", s ? "optimizer" : "scaler");
    if (!s->unscaled) {
        for (size_t i = 0; i < mxp_optimizer_grad_count(opt); i++) {
            int64_t bad = 0;
            mxp_status st = mxp_train_count_nonfinite(mxp_optimizer_grad(opt, i), &bad);
            if (st != MXP_OK)
                return st;
            s->nonfinite += bad;
        }
    }
    if (s->nonfinite > 0)
        return MXP_OK; /* skipped: update() backs off */
    const mxp_fpenv env = mxp_fpenv_enter();
    const double inv = (double)inv_scale(s);
    mxp_fpenv_leave(env);
    mxp_status st = s->unscaled ? mxp_optimizer_step(opt) : mxp_optimizer_step_scaled(opt, inv);
    if (st == MXP_OK && stepped)
        *stepped = true;
    return st;
}

mxp_status mxp_loss_scaler_update(mxp_loss_scaler *s)
{
    if (!s)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_loss_scaler_update: scaler is NULL");
    const mxp_loss_scaler_opts *o = &s->o;
    const mxp_fpenv env = mxp_fpenv_enter();
    s->steps++;
    if (s->nonfinite > 0) {
        s->skipped++;
        if (!o->fixed) {
            float next = (float)((double)s->scale * o->backoff_factor);
            s->scale = (double)next < o->min_scale ? (float)o->min_scale : next;
        }
        s->tracker = 0;
    } else if (!o->fixed && s->tracker + 1 >= o->growth_interval) {
        const float next = (float)((double)s->scale * o->growth_factor);
        if ((double)next <= o->max_scale) /* torch refuses a growth to inf the same way */
            s->scale = next;
        s->tracker = 0;
    } else if (!o->fixed) {
        s->tracker++;
    }
    mxp_fpenv_leave(env);
    s->nonfinite = 0;
    s->unscaled = false;
    return MXP_OK;
}

mxp_status mxp_loss_scaler_get_state(const mxp_loss_scaler *s, mxp_loss_scaler_state *out)
{
    if (!s || !out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_loss_scaler_get_state: %s is NULL", s ? "out" : "scaler");
    out->scale = (double)s->scale;
    out->growth_tracker = s->tracker;
    out->steps = s->steps;
    out->skipped = s->skipped;
    return MXP_OK;
}

mxp_status mxp_loss_scaler_set_state(mxp_loss_scaler *s, const mxp_loss_scaler_state *state)
{
    const char *what = "mxp_loss_scaler_set_state";
    if (!s || !state)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what, s ? "state" : "scaler");
    if (!good_scale(state->scale, s->o.min_scale, s->o.max_scale))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: scale %g is not a normal float32 in [%g, %g]", what,
                         state->scale, s->o.min_scale, s->o.max_scale);
    if (state->growth_tracker < 0 || state->growth_tracker >= s->o.growth_interval || state->steps < 0 ||
        state->skipped < 0 || state->skipped > state->steps)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: growth_tracker %lld (interval %lld), steps %lld, skipped "
                         "%lld are inconsistent", what, (long long)state->growth_tracker,
                         (long long)s->o.growth_interval, (long long)state->steps, (long long)state->skipped);
    s->scale = (float)state->scale;
    s->tracker = state->growth_tracker;
    s->steps = state->steps;
    s->skipped = state->skipped;
    s->nonfinite = 0;
    s->unscaled = false;
    return MXP_OK;
}

/* A convolution's arguments checked once, at the entry point, and laid out
 * for the GEMM: the geometry, dense inputs, the epilogue. */
#include <math.h>
#include <string.h>

#include "core/checked.h"
#include "core/error.h"
#include "nn/conv-plan.h"

/* opts' 0 means 1 for strides, dilations and groups; negatives are errors. */
static mxp_status positive(const char *fn, const char *what, int64_t v, int64_t *out)
{
    if (v < 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s %lld is negative", fn, what, (long long)v);
    *out = v ? v : 1;
    return MXP_OK;
}

static mxp_status check_opts(const char *fn, const mxp_conv_opts *o, nn_geom *g)
{
    if (o->layout != MXP_NCHW && o->layout != MXP_NHWC)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: layout %d is neither MXP_NCHW nor MXP_NHWC", fn,
                         (int)o->layout);
    if ((unsigned)o->activation > MXP_ACT_SILU)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: activation %d is not an mxp_activation", fn,
                         (int)o->activation);
    if (o->clamp && !(o->clamp_lo <= o->clamp_hi))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: clamp [%g, %g] is empty or NaN", fn, o->clamp_lo,
                         o->clamp_hi);
    if (o->padding[0] < 0 || o->padding[1] < 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: padding (%lld, %lld) is negative", fn,
                         (long long)o->padding[0], (long long)o->padding[1]);
    g->nhwc = o->layout == MXP_NHWC;
    g->ph = o->padding[0];
    g->pw = o->padding[1];
    mxp_status st = positive(fn, "stride[0]", o->stride[0], &g->sh);
    if (st == MXP_OK)
        st = positive(fn, "stride[1]", o->stride[1], &g->sw);
    if (st == MXP_OK)
        st = positive(fn, "dilation[0]", o->dilation[0], &g->dh);
    if (st == MXP_OK)
        st = positive(fn, "dilation[1]", o->dilation[1], &g->dw);
    if (st == MXP_OK)
        st = positive(fn, "groups", o->groups, &g->groups);
    return st;
}

static mxp_status check_arrays(const char *fn, const mxp_array *x, const mxp_array *w, const mxp_array *bias)
{
    mxp_status st = nn_check_input(fn, "x", x);
    if (st == MXP_OK)
        st = nn_check_input(fn, "weight", w);
    if (st == MXP_OK && bias)
        st = nn_check_input(fn, "bias", bias);
    if (st == MXP_OK)
        st = nn_check_float(fn, "x", x->dtype);
    if (st == MXP_OK)
        st = nn_check_float(fn, "weight", w->dtype);
    if (st == MXP_OK && bias)
        st = nn_check_float(fn, "bias", bias->dtype);
    if (st != MXP_OK)
        return st;
    if (x->ndim != 4 || w->ndim != 4)
        return mxp_error(MXP_ERR_SHAPE, "%s: x and weight must be 4-d, not %d-d and %d-d", fn, x->ndim, w->ndim);
    return MXP_OK;
}

/* The geometry from the shapes: channels and groups agree, the windows fit. */
static mxp_status geometry(const char *fn, nn_geom *g, const mxp_array *x, const mxp_array *w,
                           const mxp_array *bias, int64_t *cg)
{
    int64_t d[4];
    nn_geom_nchw(x, g->nhwc, d);
    g->n = d[0], g->c = d[1], g->h = d[2], g->w = d[3];
    const int64_t *ws = w->shape;
    g->o = ws[0];
    *cg = g->nhwc ? ws[3] : ws[1];
    g->kh = g->nhwc ? ws[1] : ws[2];
    g->kw = g->nhwc ? ws[2] : ws[3];
    if (g->c % g->groups || g->o % g->groups)
        return mxp_error(MXP_ERR_SHAPE, "%s: %lld input and %lld output channels do not split into %lld groups", fn,
                         (long long)g->c, (long long)g->o, (long long)g->groups);
    if (*cg != g->c / g->groups)
        return mxp_error(MXP_ERR_SHAPE, "%s: weight has %lld input channels per group, x %lld in %lld groups", fn,
                         (long long)*cg, (long long)g->c, (long long)g->groups);
    if (g->kh < 1 || g->kw < 1)
        return mxp_error(MXP_ERR_SHAPE, "%s: the kernel is %lld x %lld: it must have elements", fn,
                         (long long)g->kh, (long long)g->kw);
    if (bias && (bias->ndim != 1 || bias->shape[0] != g->o))
        return mxp_error(MXP_ERR_SHAPE, "%s: bias must have shape (%lld,), one value per output channel", fn,
                         (long long)g->o);
    mxp_status st = nn_window_out(fn, "row", g->h, g->kh, g->sh, g->ph, g->dh, false, &g->oh);
    if (st == MXP_OK)
        st = nn_window_out(fn, "column", g->w, g->kw, g->sw, g->pw, g->dw, false, &g->ow);
    int64_t t, u;
    if (st == MXP_OK && (!mxp_checked_mul_i64(g->kh, g->kw, &t) || !mxp_checked_mul_i64(t, *cg, &t) ||
                         !mxp_checked_mul_i64(g->oh, g->ow, &u) || !mxp_checked_mul_i64(u, g->n, &u) ||
                         !mxp_checked_mul_i64(u, g->o, &u) || !mxp_checked_mul_i64(u, g->kh, &u) ||
                         !mxp_checked_mul_i64(u, g->kw, &u)))
        st = mxp_error(MXP_ERR_SIZE_OVERFLOW, "%s: the output or window sizes overflow", fn);
    return st;
}

mxp_status conv_plan_init(conv_plan *c, const char *fn, const mxp_array *x, const mxp_array *weight,
                          const mxp_array *bias, const mxp_conv_opts *opts, bool layout)
{
    memset(c, 0, sizeof *c);
    const mxp_conv_opts zero = { 0 };
    mxp_status st = check_arrays(fn, x, weight, bias);
    if (st == MXP_OK)
        st = check_opts(fn, opts ? opts : &zero, &c->g);
    if (st == MXP_OK)
        st = geometry(fn, &c->g, x, weight, bias, &c->cg);
    if (st != MXP_OK)
        return st;
    const nn_geom *g = &c->g;
    const mxp_conv_opts *o = opts ? opts : &zero;
    c->og = g->o / g->groups;
    c->k = g->kh * g->kw * c->cg;
    if (!layout)
        return MXP_OK;
    st = mxp_array_ascontiguous(&c->own[0], x, 'C');
    if (st == MXP_OK)
        st = mxp_array_ascontiguous(&c->own[1], weight, 'C');
    if (st == MXP_OK && bias)
        st = mxp_array_ascontiguous(&c->own[2], bias, 'C');
    if (st != MXP_OK) {
        conv_plan_free(c);
        return st;
    }
    c->x = c->own[0]->data;
    c->w = c->own[1]->data;
    c->xt = x->dtype;
    c->wt = weight->dtype;
    c->xsize = mxp_dtype_itemsize(x->dtype);
    c->wsize = mxp_dtype_itemsize(weight->dtype);
    c->direct = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0;
    if (bias) {
        c->gemm.bias = c->own[2]->data;
        c->gemm.bias_dtype = bias->dtype;
        c->gemm.bias_kind = g->nhwc ? MXP_BIAS_PER_COL : MXP_BIAS_PER_ROW;
        c->gemm.bias_len = (size_t)c->og;
    }
    c->gemm.activation = o->activation;
    c->gemm.clamp = o->clamp;
    c->gemm.clamp_lo = o->clamp_lo;
    c->gemm.clamp_hi = o->clamp_hi;
    return MXP_OK;
}

void conv_plan_free(conv_plan *c)
{
    for (int k = 0; k < 3; k++) {
        mxp_array_free(c->own[k]);
        c->own[k] = NULL;
    }
}

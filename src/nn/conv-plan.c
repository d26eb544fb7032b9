/* A convolution's arguments checked once, at the entry point, and laid out
 * for the GEMM: the geometry, dense inputs, the epilogue. */
#include <math.h>
#include <string.h>

#include "core/checked.h"
#include "core/error.h"
#include "mxp/alloc.h"
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
    if ((unsigned)o->algorithm > MXP_CONV_WINOGRAD)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: algorithm %d is not an mxp_conv_algorithm", fn,
                         (int)o->algorithm);
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

static bool int8_type(mxp_dtype t)
{
    return t == MXP_U8 || t == MXP_S8;
}

/* *quant: uint8/int8 x by int8 weights (and an int32 bias), else floats. */
static mxp_status check_arrays(const char *fn, const mxp_array *x, const mxp_array *w, const mxp_array *bias,
                               bool *quant)
{
    mxp_status st = nn_check_input(fn, "x", x);
    if (st == MXP_OK)
        st = nn_check_input(fn, "weight", w);
    if (st == MXP_OK && bias)
        st = nn_check_input(fn, "bias", bias);
    if (st != MXP_OK)
        return st;
    *quant = int8_type(x->dtype) || int8_type(w->dtype);
    if (*quant && (!int8_type(x->dtype) || w->dtype != MXP_S8 || (bias && bias->dtype != MXP_S32)))
        return mxp_error(MXP_ERR_UNSUPPORTED, "%s: x %s, weight %s, bias %s: a quantized convolution takes uint8 "
                         "or int8 x, int8 weights and an int32 bias", fn, mxp_dtype_name(x->dtype),
                         mxp_dtype_name(w->dtype), bias ? mxp_dtype_name(bias->dtype) : "none");
    if (!*quant)
        st = nn_check_float(fn, "x", x->dtype);
    if (st == MXP_OK && !*quant)
        st = nn_check_float(fn, "weight", w->dtype);
    if (st == MXP_OK && bias && !*quant)
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
    mxp_status st = check_arrays(fn, x, weight, bias, &c->quant);
    if (st == MXP_OK)
        st = check_opts(fn, opts ? opts : &zero, &c->g);
    if (st == MXP_OK)
        st = geometry(fn, &c->g, x, weight, bias, &c->cg);
    if (st != MXP_OK)
        return st;
    const nn_geom *g = &c->g;
    const mxp_conv_opts *o = opts ? opts : &zero;
    c->opts = *o;
    c->has_bias = bias != NULL;
    c->og = g->o / g->groups;
    c->k = g->kh * g->kw * c->cg;
    if (c->quant) {
        const int32_t lo = x->dtype == MXP_U8 ? 0 : -128, hi = x->dtype == MXP_U8 ? 255 : 127;
        if (o->x_zero_point < lo || o->x_zero_point > hi || o->w_zero_point < -128 || o->w_zero_point > 127)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: x_zero_point %d (%s: [%d, %d]) or w_zero_point %d "
                             "(int8) out of range", fn, (int)o->x_zero_point, mxp_dtype_name(x->dtype), (int)lo,
                             (int)hi, (int)o->w_zero_point);
    }
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
    c->direct = c->direct && !(c->quant && !g->nhwc); /* NCHW quantized: through a panel (conv.c) */
    c->alpha = 1;
    if (c->quant) {
        c->pad = (unsigned char)o->x_zero_point; /* the padding contributes x_zero_point - x_zero_point */
        c->gemm.a_zero_point = o->x_zero_point;
        c->gemm.b_zero_point = o->w_zero_point;
        c->gemm.scales = o->w_scales;
        c->gemm.n_scales = o->w_scales ? o->n_w_scales : 0;
    }
    if (bias && !c->quant) {
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

/* The quantized output's GEMM options: alpha, the output's zero point,
 * the int32 bias in the output's scale (float64). */
static mxp_status quant_output(conv_plan *c, const char *fn, mxp_dtype yt, const mxp_conv_opts *o)
{
    const mxp_gemm_opts *q = &c->gemm;
    const double xs = o->x_scale ? o->x_scale : 1, ys = o->y_scale ? o->y_scale : 1;
    if (!(isfinite(xs) && isfinite(ys) && xs > 0 && ys > 0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: x_scale %g and y_scale %g must be finite and positive", fn,
                         xs, ys);
    if (o->w_scales && o->n_w_scales != 1 && o->n_w_scales != (size_t)c->g.o)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %zu weight scales for %lld output channels (1 or one each)",
                         fn, o->n_w_scales, (long long)c->g.o);
    if (yt == MXP_S32) {
        if (c->has_bias || o->activation || o->clamp || o->w_scales || o->x_scale || o->y_scale || o->y_zero_point)
            return mxp_error(MXP_ERR_UNSUPPORTED, "%s: an int32 output holds the exact sums: no bias, activation, "
                             "clamp, scales or output zero point", fn);
        return MXP_OK;
    }
    if (yt != MXP_U8 && yt != MXP_S8 && nn_check_float(fn, "out", yt) != MXP_OK)
        return mxp_error(MXP_ERR_UNSUPPORTED, "%s: a quantized convolution gives int32, uint8, int8 or a float "
                         "dtype, not %s", fn, mxp_dtype_name(yt));
    const int32_t lo = yt == MXP_U8 ? 0 : yt == MXP_S8 ? -128 : 0, hi = yt == MXP_U8 ? 255 : yt == MXP_S8 ? 127 : 0;
    if (o->y_zero_point < lo || o->y_zero_point > hi)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: y_zero_point %d for a %s output (range [%d, %d])", fn,
                         (int)o->y_zero_point, mxp_dtype_name(yt), (int)lo, (int)hi);
    const bool requant = yt == MXP_U8 || yt == MXP_S8;
    c->alpha = requant ? xs / ys : xs;
    c->gemm.c_zero_point = requant ? o->y_zero_point : 0;
    if (!c->own[2]) /* no bias, or only checking (conv_plan_init without the layout) */
        return MXP_OK;
    c->qbias = mxp_malloc((size_t)c->g.o * sizeof(double) + 1);
    if (!c->qbias)
        return mxp_error(MXP_ERR_NO_MEMORY, "%s: no memory for the bias", fn);
    for (int64_t k = 0; k < c->g.o; k++) { /* acc + b in the output's scale: alpha w_scale (acc + b) */
        int32_t b; /* any alignment */
        memcpy(&b, c->own[2]->data + 4 * k, sizeof b);
        c->qbias[k] = (double)b * c->alpha * (q->scales ? (double)q->scales[q->n_scales > 1 ? k : 0] : 1);
    }
    c->gemm.bias = c->qbias;
    c->gemm.bias_dtype = MXP_F64;
    c->gemm.bias_kind = c->g.nhwc || c->quant ? MXP_BIAS_PER_COL : MXP_BIAS_PER_ROW;
    c->gemm.bias_len = (size_t)c->og;
    return MXP_OK;
}

mxp_status conv_plan_output(conv_plan *c, const char *fn, mxp_dtype yt)
{
    if (!c->quant)
        return nn_check_float(fn, "out", yt);
    return quant_output(c, fn, yt, &c->opts);
}

void conv_plan_free(conv_plan *c)
{
    mxp_free(c->qbias);
    c->qbias = NULL;
    for (int k = 0; k < 3; k++) {
        mxp_array_free(c->own[k]);
        c->own[k] = NULL;
    }
}

/* The gradients of conv2d, on mxp_gemm in the forward's chunks of output
 * pixels (conv.c's im2col panels):
 *   NHWC: dW_g += dy[pixels, Og]^T panel[pixels, K],
 *         dcol[pixels, K] = dy[pixels, Og] W_g[Og, K];
 *   NCHW: dW_g += dy_n[Og, pixels] panel[K, pixels]^T,
 *         dcol[K, pixels] = W_g[Og, K]^T dy_n[Og, pixels];
 * dcol scattered back onto x's positions (col2im) into an accumulator of
 * x's shape.  Sums in float32 (float64 when x, the weights or dy is
 * float64), each gradient rounded once into its dtype; db in float64. */
#include <string.h>

#include "core/error.h"
#include "core/fpenv.h"
#include "mxp/alloc.h"
#include "nn/conv-plan.h"

typedef struct back {
    const conv_plan *c;
    const char *dy;
    mxp_dtype dyt, acc;
    size_t dys, accs;
    char *dx, *dw;     /* accumulators (acc), NULL: not wanted */
    char *panel, *dcol;
} back;

static inline void add_at(const back *b, char *dst, int64_t i, const char *src, int64_t j)
{
    if (b->acc == MXP_F64)
        ((double *)(void *)dst)[i] += ((const double *)(const void *)src)[j];
    else
        ((float *)(void *)dst)[i] += ((const float *)(const void *)src)[j];
}

/* NHWC: dcol rows (pixels pix0 ..) onto dx. */
static void col2im_nhwc(const back *b, int64_t pix0, int64_t np, int64_t grp)
{
    const conv_plan *c = b->c;
    const nn_geom *g = &c->g;
    for (int64_t t = 0; t < np; t++) {
        const int64_t pix = pix0 + t, j = pix % g->ow, i = pix / g->ow % g->oh, n = pix / (g->ow * g->oh);
        for (int64_t p = 0; p < g->kh; p++) {
            const int64_t ih = i * g->sh - g->ph + p * g->dh;
            for (int64_t q = 0; q < g->kw; q++) {
                const int64_t iw = j * g->sw - g->pw + q * g->dw;
                if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w)
                    continue;
                const int64_t to = ((n * g->h + ih) * g->w + iw) * g->c + grp * c->cg;
                const int64_t from = t * c->k + (p * g->kw + q) * c->cg;
                for (int64_t ch = 0; ch < c->cg; ch++)
                    add_at(b, b->dx, to + ch, b->dcol, from + ch);
            }
        }
    }
}

/* NCHW: dcol rows (c, p, q) of image n, pixels pix0 .. pix0 + np, onto dx. */
static void col2im_nchw(const back *b, int64_t n, int64_t pix0, int64_t np, int64_t grp)
{
    const conv_plan *c = b->c;
    const nn_geom *g = &c->g;
    for (int64_t ch = 0; ch < c->cg; ch++)
        for (int64_t p = 0; p < g->kh; p++)
            for (int64_t q = 0; q < g->kw; q++) {
                const int64_t r = (ch * g->kh + p) * g->kw + q;
                const int64_t plane = (n * g->c + grp * c->cg + ch) * g->h;
                for (int64_t t = 0; t < np; t++) {
                    const int64_t pix = pix0 + t, i = pix / g->ow, j = pix % g->ow;
                    const int64_t ih = i * g->sh - g->ph + p * g->dh, iw = j * g->sw - g->pw + q * g->dw;
                    if (ih >= 0 && ih < g->h && iw >= 0 && iw < g->w)
                        add_at(b, b->dx, (plane + ih) * g->w + iw, b->dcol, r * np + t);
                }
            }
}

static mxp_status chunk_nhwc(const back *b, int64_t pix0, int64_t np, int64_t grp)
{
    const conv_plan *c = b->c;
    const char *dy = b->dy + (size_t)(pix0 * c->g.o + grp * c->og) * b->dys;
    const size_t k = (size_t)c->k, og = (size_t)c->og, o = (size_t)c->g.o;
    mxp_status st = MXP_OK;
    if (b->dw) {
        conv_panel_nhwc(c, b->panel, pix0, np, grp);
        st = mxp_gemm(MXP_TRANS, MXP_NO_TRANS, og, k, (size_t)np, 1, dy, b->dyt, o, b->panel, c->xt, k, 1,
                      b->dw + (size_t)grp * og * k * b->accs, b->acc, k, NULL);
    }
    if (st == MXP_OK && b->dx) {
        st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, (size_t)np, k, og, 1, dy, b->dyt, o,
                      c->w + (size_t)grp * og * k * c->wsize, c->wt, k, 0, b->dcol, b->acc, k, NULL);
        if (st == MXP_OK)
            col2im_nhwc(b, pix0, np, grp);
    }
    return st;
}

static mxp_status chunk_nchw(const back *b, int64_t n, int64_t pix0, int64_t np, int64_t grp)
{
    const conv_plan *c = b->c;
    const size_t ohw = (size_t)(c->g.oh * c->g.ow), k = (size_t)c->k, og = (size_t)c->og;
    const char *dy = b->dy + ((size_t)(n * c->g.o + grp * c->og) * ohw + (size_t)pix0) * b->dys;
    mxp_status st = MXP_OK;
    if (b->dw) {
        conv_panel_nchw(c, b->panel, n, pix0, np, grp);
        st = mxp_gemm(MXP_NO_TRANS, MXP_TRANS, og, k, (size_t)np, 1, dy, b->dyt, ohw, b->panel, c->xt, (size_t)np, 1,
                      b->dw + (size_t)grp * og * k * b->accs, b->acc, k, NULL);
    }
    if (st == MXP_OK && b->dx) {
        st = mxp_gemm(MXP_TRANS, MXP_NO_TRANS, k, (size_t)np, og, 1, c->w + (size_t)grp * og * k * c->wsize, c->wt,
                      k, dy, b->dyt, ohw, 0, b->dcol, b->acc, (size_t)np, NULL);
        if (st == MXP_OK)
            col2im_nchw(b, n, pix0, np, grp);
    }
    return st;
}

static mxp_status run_chunks(const back *b)
{
    const nn_geom *g = &b->c->g;
    const int64_t ohw = g->oh * g->ow, total = g->nhwc ? g->n * ohw : ohw;
    const int64_t chunk = conv_chunk_pixels(b->c, total);
    mxp_status st = MXP_OK;
    for (int64_t n = 0; n < (g->nhwc ? 1 : g->n) && st == MXP_OK; n++)
        for (int64_t pix0 = 0; pix0 < total && st == MXP_OK; pix0 += chunk)
            for (int64_t grp = 0; grp < g->groups && st == MXP_OK; grp++) {
                const int64_t np = total - pix0 < chunk ? total - pix0 : chunk;
                st = g->nhwc ? chunk_nhwc(b, pix0, np, grp) : chunk_nchw(b, n, pix0, np, grp);
            }
    return st;
}

/* db[o] = the sum of dy over every pixel, in float64. */
static void bias_grad(const back *b, double *db)
{
    const nn_geom *g = &b->c->g;
    const int64_t ohw = g->oh * g->ow;
    double *row = db + g->o;
    memset(db, 0, (size_t)g->o * sizeof(double));
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t o = 0; o < g->o; o++) {
            const int64_t first = g->nhwc ? n * ohw * g->o + o : (n * g->o + o) * ohw;
            nn_load(row, b->dy + (size_t)first * b->dys, b->dyt, (int64_t)b->dys * (g->nhwc ? g->o : 1), ohw);
            db[o] += nn_sum(row, ohw);
        }
}

/* An array of shape like `like` in dtype dt from n accumulator values. */
static mxp_status give(mxp_array **out, const mxp_array *like, mxp_dtype dt, const void *src, mxp_dtype st_t)
{
    mxp_array *r = NULL;
    mxp_status st = mxp_array_new_owner(&r, dt, like->ndim, like->shape);
    if (st == MXP_OK)
        st = mxp_convert(r->data, dt, src, st_t, (size_t)mxp_array_size(r), NULL);
    return nn_give_out(out, r, st);
}

static mxp_status backward(const conv_plan *c, const mxp_array *dy, const mxp_array *x, const mxp_array *w,
                           mxp_array **dx, mxp_array **dw, mxp_array **db)
{
    const nn_geom *g = &c->g;
    back b = { .c = c, .dy = dy->data, .dyt = dy->dtype, .dys = mxp_dtype_itemsize(dy->dtype) };
    b.acc = c->xt == MXP_F64 || c->wt == MXP_F64 || dy->dtype == MXP_F64 ? MXP_F64 : MXP_F32;
    b.accs = mxp_dtype_itemsize(b.acc);
    const int64_t total = g->nhwc ? g->n * g->oh * g->ow : g->oh * g->ow, chunk = conv_chunk_pixels(c, total);
    const size_t nx = (size_t)mxp_array_size(x), nw = (size_t)mxp_array_size(w), pk = (size_t)(chunk * c->k);
    b.dx = dx ? mxp_malloc(nx * b.accs + 1) : NULL;
    b.dw = dw ? mxp_malloc(nw * b.accs + 1) : NULL;
    b.panel = dw ? mxp_malloc(pk * c->xsize + 1) : NULL;
    b.dcol = dx ? mxp_malloc(pk * b.accs + 1) : NULL;
    double *dbs = db ? mxp_malloc((size_t)(g->o + g->oh * g->ow + 1) * sizeof(double)) : NULL;
    mxp_status st = MXP_OK;
    if ((dx && (!b.dx || !b.dcol)) || (dw && (!b.dw || !b.panel)) || (db && !dbs))
        st = mxp_error(MXP_ERR_NO_MEMORY, "mxp_conv2d_backward: no memory for the gradients' accumulators");
    if (st == MXP_OK) {
        if (b.dx)
            memset(b.dx, 0, nx * b.accs);
        if (b.dw)
            memset(b.dw, 0, nw * b.accs);
        if (g->oh * g->ow * g->n > 0 && (dx || dw))
            st = run_chunks(&b);
    }
    if (st == MXP_OK && db)
        bias_grad(&b, dbs);
    if (st == MXP_OK && dx)
        st = give(dx, x, x->dtype, b.dx, b.acc);
    if (st == MXP_OK && dw)
        st = give(dw, w, w->dtype, b.dw, b.acc);
    if (st == MXP_OK && db) {
        mxp_array *r = NULL;
        st = mxp_array_new_owner(&r, w->dtype, 1, &g->o);
        if (st == MXP_OK)
            nn_store(r->data, w->dtype, (int64_t)c->wsize, dbs, g->o);
        st = nn_give_out(db, r, st);
    }
    mxp_free(b.dx);
    mxp_free(b.dw);
    mxp_free(b.panel);
    mxp_free(b.dcol);
    mxp_free(dbs);
    return st;
}

mxp_status mxp_conv2d_backward(mxp_array **dx, mxp_array **dweight, mxp_array **dbias, const mxp_array *dy,
                               const mxp_array *x, const mxp_array *weight, const mxp_conv_opts *opts)
{
    const char *fn = "mxp_conv2d_backward";
    mxp_array **outs[3] = { dx, dweight, dbias };
    for (int k = 0; k < 3; k++)
        if (outs[k])
            *outs[k] = NULL;
    MXP_ABI_IN(opts, conv_opts, fn);
    conv_plan c;
    mxp_status st = conv_plan_init(&c, fn, x, weight, NULL, opts, true);
    if (st != MXP_OK)
        return st;
    if (c.quant) {
        conv_plan_free(&c);
        return mxp_error(MXP_ERR_UNSUPPORTED, "%s: x %s: the gradients are for float types", fn,
                         mxp_dtype_name(x->dtype));
    }
    int64_t shape[4];
    nn_geom_out_shape(&c.g, shape);
    mxp_array *dyc = NULL;
    st = nn_check_input(fn, "dy", dy);
    if (st == MXP_OK)
        st = nn_check_float(fn, "dy", dy->dtype);
    if (st == MXP_OK && (dy->ndim != 4 || memcmp(dy->shape, shape, sizeof shape))) {
        char want[512], got[512];
        mxp_format_shape(want, sizeof want, 4, shape);
        mxp_format_shape(got, sizeof got, dy->ndim, dy->shape);
        st = mxp_error(MXP_ERR_SHAPE, "%s: dy has shape %s, the forward's output %s", fn, got, want);
    }
    if (st == MXP_OK)
        st = mxp_array_ascontiguous(&dyc, dy, 'C');
    if (st == MXP_OK) {
        const mxp_fpenv env = mxp_fpenv_enter();
        st = backward(&c, dyc, x, weight, dx, dweight, dbias);
        mxp_fpenv_leave(env);
    }
    if (st != MXP_OK)
        for (int k = 0; k < 3; k++)
            if (outs[k]) {
                mxp_array_free(*outs[k]);
                *outs[k] = NULL;
            }
    mxp_array_free(dyc);
    conv_plan_free(&c);
    return st;
}

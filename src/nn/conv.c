/* 2-d convolution forward as implicit GEMM on mxp_gemm.  The im2col panel
 * of a chunk of output pixels (conv-panel.c) is built and multiplied at
 * once, so no copy of the whole im2col matrix exists:
 *   NHWC: Y[pixels, Og] = panel[pixels, (p, q, c)] W_g[Og, (p, q, c)]^T,
 *         a 1x1, stride 1, unpadded one is a single GEMM on x itself;
 *   NCHW: Y_n[Og, pixels] = W_g[Og, (c, p, q)] panel[(c, p, q), pixels],
 *         a 1x1 one a GEMM per image on x itself.
 * The bias, activation and clamp are the GEMM's epilogue; depthwise
 * convolutions (groups == C == O) take the direct loops of dwconv.c
 * (float32 x) or window.c (the other dtypes). */
#include <stdint.h>
#include <string.h>

#include "core/alloc-internal.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "core/profile-internal.h"
#include "mxp/alloc.h"
#include "gemm/gemm-internal.h"
#include "nn/conv-plan.h"

/* The GEMM epilogue of group grp: its Og bias values. */
static mxp_gemm_opts group_opts(const conv_plan *c, int64_t grp)
{
    mxp_gemm_opts o = c->gemm;
    if (o.bias)
        o.bias = (const char *)o.bias + (size_t)(grp * c->og) * mxp_dtype_itemsize(o.bias_dtype);
    if (o.scales && o.n_scales > 1) { /* quantized, per output channel */
        o.scales += grp * c->og;
        o.n_scales = (size_t)c->og;
    }
    return o;
}

/* Whether the NHWC product of x and the weights as type t (theirs, or the
 * one they are widened into exactly: w the weights it reads, NULL for an
 * aligned copy) into y makes its panel block by block inside the GEMM
 * (mxp_gemm_gathered: each block built in cache right before its tiles,
 * the weights packed once a call) instead of a chunk of pixels at a time
 * into a panel buffer.  bfloat16 only when neither holds a value the
 * bfloat16 kernels flush (widened ones have none: widen_to): one scan of
 * x, where mxp_gemm scanned each panel, nine times x. */
static bool nhwc_gathers(const conv_plan *c, mxp_dtype t, const char *w, const char *y)
{
    const nn_geom *g = &c->g;
    if (c->direct || c->quant || !mxp_gemm_gather_ok(t, w, t, y, c->yt, &c->gemm))
        return false;
    const size_t xn = (size_t)(g->n * g->h * g->w * g->c);
    return t != MXP_BF16 || !(mxp_gemm_has_tiny_bf16(c->x, c->xt, 1, xn, xn) ||
             mxp_gemm_has_tiny_bf16(c->w, c->wt, (size_t)g->o, (size_t)c->k, (size_t)c->k));
}

/* NHWC pixels [pix0, pix0 + count) of the batch into y (their rows, ld O),
 * through the panel a chunk at a time, or gathered by the GEMM (panel
 * NULL: nhwc_gathers holds). */
static mxp_status gemm_nhwc_rows(const conv_plan *c, char *y, char *panel, int64_t pix0, int64_t count)
{
    const nn_geom *g = &c->g;
    const size_t ys = c->ysize, ws = c->wsize;
    mxp_status st = MXP_OK;
    if (!panel) {
        for (int64_t grp = 0; grp < g->groups && st == MXP_OK; grp++) {
            const conv_gather ctx = { c, grp, pix0 };
            const mxp_gemm_gather ga = { conv_gather_rows, &ctx };
            const mxp_gemm_opts o = group_opts(c, grp);
            st = mxp_gemm_gathered(&ga, c->xt, MXP_TRANS, (size_t)count, (size_t)c->og, (size_t)c->k, c->alpha,
                                   c->w + (size_t)(grp * c->og * c->k) * ws, c->wt, (size_t)c->k, 0,
                                   y + (size_t)(grp * c->og) * ys, c->yt, (size_t)g->o, &o);
        }
        return st;
    }
    const int64_t chunk = conv_chunk_pixels(c, g->n * g->oh * g->ow);
    for (int64_t p0 = 0; p0 < count && st == MXP_OK; p0 += chunk) {
        const int64_t np = count - p0 < chunk ? count - p0 : chunk;
        for (int64_t grp = 0; grp < g->groups && st == MXP_OK; grp++) {
            conv_panel_nhwc(c, panel, pix0 + p0, np, grp);
            const mxp_gemm_opts o = group_opts(c, grp);
            st = mxp_gemm(MXP_NO_TRANS, MXP_TRANS, (size_t)np, (size_t)c->og, (size_t)c->k, c->alpha, panel, c->xt,
                          (size_t)c->k, c->w + (size_t)(grp * c->og * c->k) * ws, c->wt, (size_t)c->k, 0,
                          y + (size_t)(p0 * g->o + grp * c->og) * ys, c->yt, (size_t)g->o, &o);
        }
    }
    return st;
}

static mxp_status gemm_nhwc(const conv_plan *c, char *y, char *panel)
{
    const nn_geom *g = &c->g;
    const int64_t total = g->n * g->oh * g->ow;
    const size_t ys = c->ysize, ws = c->wsize;
    mxp_status st = MXP_OK;
    if (c->direct) { /* 1x1, stride 1, no padding: x is the panel */
        for (int64_t grp = 0; grp < g->groups && st == MXP_OK; grp++) {
            const mxp_gemm_opts o = group_opts(c, grp);
            st = mxp_gemm(MXP_NO_TRANS, MXP_TRANS, (size_t)total, (size_t)c->og, (size_t)c->cg, c->alpha,
                          c->x + (size_t)(grp * c->cg) * c->xsize, c->xt, (size_t)g->c,
                          c->w + (size_t)(grp * c->og * c->k) * ws, c->wt, (size_t)c->k, 0,
                          y + (size_t)(grp * c->og) * ys, c->yt, (size_t)g->o, &o);
        }
        return st;
    }
    conv_taps t;
    if (conv_taps_init(&t, c, false, panel == NULL)) { /* no panel: the gathered GEMM's scan found x clean */
        st = conv_taps_rows(&t, y, 0, total);
        conv_taps_free(&t);
        return st;
    }
    conv_plan padded;
    char *xp = conv_pad_x(c, &padded);
    st = gemm_nhwc_rows(xp ? &padded : c, y, panel, 0, total);
    mxp_workspace_put(xp);
    return st;
}

static mxp_status gemm_nchw(const conv_plan *c, char *y, char *panel)
{
    const nn_geom *g = &c->g;
    const int64_t ohw = g->oh * g->ow;
    const size_t ys = c->ysize, ws = c->wsize;
    const int64_t chunk = conv_chunk_pixels(c, ohw);
    mxp_status st = MXP_OK;
    for (int64_t n = 0; n < g->n && st == MXP_OK; n++)
        for (int64_t pix0 = 0; pix0 < ohw && st == MXP_OK; pix0 += chunk) {
            const int64_t np = ohw - pix0 < chunk ? ohw - pix0 : chunk;
            for (int64_t grp = 0; grp < g->groups && st == MXP_OK; grp++) {
                const char *b = c->x + (size_t)((n * g->c + grp * c->cg) * ohw) * c->xsize;
                int64_t ldb = ohw;
                if (!c->direct) {
                    conv_panel_nchw(c, panel, n, pix0, np, grp);
                    b = panel;
                    ldb = np;
                }
                const mxp_gemm_opts o = group_opts(c, grp);
                st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, (size_t)c->og, (size_t)np, (size_t)c->k, 1,
                              c->w + (size_t)(grp * c->og * c->k) * ws, c->wt, (size_t)c->k, b, c->xt, (size_t)ldb,
                              0, y + (size_t)((n * g->o + grp * c->og) * ohw + pix0) * ys, c->yt, (size_t)ohw, &o);
            }
        }
    return st;
}

/* dst[oc * ldd + t] = src[t * og + oc] for oc < og, t < np: elements of
 * 1, 2, 4 or 8 bytes; those of 4 and 2 by the transpose kernels
 * (bfloat16's element by element had been 12% of a 1x64x56x56 3x3 NCHW
 * convolution on a Zen 4), the others in tiles of 32 pixels so that both
 * sides stay in cache (one memcpy an element was 10x the GEMM for int8
 * outputs). */
static void transpose_out(char *dst, size_t ldd, const char *src, size_t og, size_t np, size_t size)
{
    enum { TILE = 32 };
    if (size == 4 && (uintptr_t)dst % 4 == 0) {
        mxp_x32_transpose_kernel(mxp_isa_current(), np)(src, og * 4, np, og, dst, ldd);
        return;
    }
    if (size == 2 && (uintptr_t)dst % 2 == 0) {
        mxp_x16_transpose_kernel(mxp_isa_current(), np)(src, og * 2, np, og, dst, ldd);
        return;
    }
    if ((uintptr_t)dst % size || (uintptr_t)src % size) { /* unaligned (the GEMM's tmp is aligned) */
        for (size_t oc = 0; oc < og; oc++)
            for (size_t t = 0; t < np; t++)
                memcpy(dst + (oc * ldd + t) * size, src + (t * og + oc) * size, size);
        return;
    }
    for (size_t t0 = 0; t0 < np; t0 += TILE) {
        const size_t t1 = np - t0 < TILE ? np : t0 + TILE;
        for (size_t oc = 0; oc < og; oc++) {
#define MXP_TRANSPOSE_OUT(T)                                                                                          \
    for (size_t t = t0; t < t1; t++)                                                                                  \
        ((T *)(void *)dst)[oc * ldd + t] = ((const T *)(const void *)src)[t * og + oc];
            switch (size) {
            case 1: MXP_TRANSPOSE_OUT(uint8_t) break;
            case 2: MXP_TRANSPOSE_OUT(uint16_t) break;
            case 4: MXP_TRANSPOSE_OUT(uint32_t) break;
            default: MXP_TRANSPOSE_OUT(uint64_t) break;
            }
#undef MXP_TRANSPOSE_OUT
        }
    }
}

/* NCHW quantized: the integer GEMM takes the uint8/int8 side as A, so
 * each chunk is Y^T[pixels, Og] = panel^T W_g^T, into tmp, then
 * transposed into y. */
static mxp_status gemm_nchw_quant(const conv_plan *c, char *y, char *panel)
{
    const nn_geom *g = &c->g;
    const int64_t ohw = g->oh * g->ow, chunk = conv_chunk_pixels(c, ohw);
    const size_t ys = c->ysize;
    char *tmp = mxp_malloc((size_t)(chunk * c->og) * ys + 1);
    if (!tmp)
        return mxp_error(MXP_ERR_NO_MEMORY, "no memory for a quantized output panel");
    mxp_status st = MXP_OK;
    for (int64_t n = 0; n < g->n && st == MXP_OK; n++)
        for (int64_t pix0 = 0; pix0 < ohw && st == MXP_OK; pix0 += chunk) {
            const int64_t np = ohw - pix0 < chunk ? ohw - pix0 : chunk;
            for (int64_t grp = 0; grp < g->groups && st == MXP_OK; grp++) {
                conv_panel_nchw(c, panel, n, pix0, np, grp);
                const mxp_gemm_opts o = group_opts(c, grp);
                st = mxp_gemm(MXP_TRANS, MXP_TRANS, (size_t)np, (size_t)c->og, (size_t)c->k, c->alpha, panel, c->xt,
                              (size_t)np, c->w + (size_t)(grp * c->og * c->k) * c->wsize, c->wt, (size_t)c->k, 0, tmp,
                              c->yt, (size_t)c->og, &o);
                if (st == MXP_OK)
                    transpose_out(y + (size_t)((n * g->o + grp * c->og) * ohw + pix0) * ys, (size_t)ohw, tmp,
                                  (size_t)c->og, (size_t)np, ys);
            }
        }
    mxp_free(tmp);
    return st;
}

/* NCHW float32 depthwise through the NHWC loops (a channel's sums are the
 * same sequence either way: the same bits): x transposed to NHWC, the
 * output back, by the x32 transpose kernel, where dwconv.c's planes would
 * take a kernel call per window offset and output row of each channel
 * (strides above 1; stride-1 planes sum in registers there, faster than
 * the transposes: 0.35 against 0.54 ms for 128 planes of 56 x 56, 3x3). */
static mxp_status depthwise_via_nhwc(const nn_window *win, const conv_plan *c, const float *wf, char *y)
{
    const nn_geom *g = &c->g;
    const int64_t hw = g->h * g->w, ohw = g->oh * g->ow;
    const size_t xb = (size_t)(g->n * hw * g->c) * 4, yb = (size_t)(g->n * ohw * g->c) * 4;
    char *buf = mxp_workspace_get(xb + yb + 1); /* kept for the next call */
    if (!buf)
        return mxp_error(MXP_ERR_NO_MEMORY, "no memory for the NHWC copies of a depthwise convolution");
    const mxp_isa isa = mxp_isa_current();
    for (int64_t n = 0; n < g->n; n++) /* [C][HW] -> [HW][C] */
        mxp_x32_transpose_kernel(isa, (size_t)g->c)(c->x + (size_t)(n * g->c * hw) * 4, (size_t)hw * 4, (size_t)g->c,
                                                    (size_t)hw, buf + (size_t)(n * hw * g->c) * 4, (size_t)g->c);
    nn_window w2 = *win;
    w2.g.nhwc = true;
    mxp_array ya = { .dtype = MXP_F32, .data = buf + xb };
    const mxp_status st = nn_dwconv_f32(&w2, (const float *)(const void *)buf, wf, &ya);
    for (int64_t n = 0; n < g->n && st == MXP_OK; n++) /* [OHW][C] -> [C][OHW] */
        mxp_x32_transpose_kernel(isa, (size_t)ohw)(buf + xb + (size_t)(n * ohw * g->c) * 4, (size_t)g->c * 4,
                                                   (size_t)ohw, (size_t)g->c, y + (size_t)(n * g->c * ohw) * 4,
                                                   (size_t)ohw);
    mxp_workspace_put(buf);
    return st;
}

/* Depthwise: the weights as [kh][kw][c] and the bias in float64. */
static mxp_status depthwise(const conv_plan *c, mxp_array *y)
{
    const nn_geom *g = &c->g;
    const int64_t kk = g->kh * g->kw;
    double *buf = mxp_malloc((size_t)(2 * kk * g->c + g->c) * sizeof(double));
    if (!buf)
        return mxp_error(MXP_ERR_NO_MEMORY, "no memory for the depthwise weights");
    double *wk = buf + kk * g->c, *bias = wk + kk * g->c;
    nn_load(buf, c->w, c->wt, (int64_t)c->wsize, kk * g->c); /* [c][kh][kw] in both layouts */
    for (int64_t ch = 0; ch < g->c; ch++)
        for (int64_t t = 0; t < kk; t++)
            wk[t * g->c + ch] = buf[ch * kk + t];
    if (c->gemm.bias)
        nn_load(bias, c->gemm.bias, c->gemm.bias_dtype, (int64_t)mxp_dtype_itemsize(c->gemm.bias_dtype), g->c);
    const nn_window win = { .kind = NN_WIN_DEPTHWISE, .g = *g, .wk = wk, .bias = c->gemm.bias ? bias : NULL,
                            .act = c->gemm.activation, .clamp = c->gemm.clamp, .lo = c->gemm.clamp_lo,
                            .hi = c->gemm.clamp_hi };
    mxp_status st;
    if (c->xt == MXP_F32 && c->wt != MXP_F64 && !((uintptr_t)c->x % sizeof(float))) {
        /* float32 sums, as the GEMM's: the weights narrowed exactly (every
         * dtype but float64 fits in float32) over the float64 copy */
        float *wf = (float *)(void *)buf;
        for (int64_t t = 0; t < kk * g->c; t++)
            wf[t] = (float)wk[t];
        if (!g->nhwc && !nn_dwconv_nchw_direct(g) && y->dtype == MXP_F32 && !((uintptr_t)y->data % sizeof(float)))
            st = depthwise_via_nhwc(&win, c, wf, y->data);
        else
            st = nn_dwconv_f32(&win, (const float *)(const void *)c->x, wf, y);
    } else {
        const mxp_array xa = { .dtype = c->xt, .data = (void *)c->x };
        st = nn_window_run(&win, &xa, y);
    }
    mxp_free(buf);
    return st;
}

/* [rows][cols] -> [cols][rows] of elements of `size` bytes. */
static void transpose(char *dst, const char *src, size_t rows, size_t cols, size_t size)
{
    transpose_out(dst, rows, src, cols, rows, size);
}

/* NCHW with one group, float32 or bfloat16 (when the NHWC panel of
 * bfloat16 is made inside the GEMM: nhwc_gathers), through the NHWC path:
 * x and the weights reordered to NHWC and OHWI, the product of pixels by
 * channels (the GEMM shape that runs near the FMA peak; an NCHW GEMM of O
 * rows by pixels ran at 0.6-0.7x), the output transposed back into its
 * planes -- each a pass over its array.  The sums run over (p, q, c)
 * instead of (c, p, q): the NHWC path's bits.  false: not taken. */
static bool nchw_via_nhwc(const conv_plan *c, char *y, mxp_status *st)
{
    const nn_geom *g = &c->g;
    if (g->nhwc || c->quant || c->direct || g->groups != 1 || c->xt != c->wt ||
        (c->xt != MXP_F32 && !(c->xt == MXP_BF16 && nhwc_gathers(c, MXP_BF16, NULL, NULL))))
        return false;
    const int64_t hw = g->h * g->w, ohw = g->oh * g->ow, kk = g->kh * g->kw;
    const size_t xs = c->xsize, ys = c->ysize;
    const size_t xb = (size_t)(g->n * hw * g->c) * xs, wb = (size_t)(g->o * kk * g->c) * xs;
    /* the output a tile of pixels at a time, transposed into y while in
       cache: 256 pixels, at most 256 KB of them (a pass over the whole NHWC
       output at the end read and wrote it from L3: a quarter of a 7x7
       stem convolution; 1024-pixel tiles of its 64 channels made it 3%
       slower than 256 on a Zen 4, 64 and 128 slower again where O = 256) */
    int64_t tile = (int64_t)((256u << 10) / ((size_t)g->o * ys));
    tile = tile < 16 ? 16 : tile > 256 ? 256 : tile / 16 * 16;
    tile = tile < ohw ? tile : ohw;
    const size_t yb = (size_t)(tile * g->o) * ys;
    conv_plan h = *c;
    h.g.nhwc = true;
    h.gemm.bias_kind = c->gemm.bias ? MXP_BIAS_PER_COL : c->gemm.bias_kind;
    const bool gathers = c->xt == MXP_BF16 || nhwc_gathers(&h, MXP_F32, NULL, NULL);
    const size_t pb = gathers ? 0 : (size_t)(conv_chunk_pixels(&h, g->n * ohw) * h.k) * xs;
    char *buf = mxp_workspace_get(xb + wb + yb + pb + 1); /* kept for the next call: no page faults */
    if (!buf) {
        *st = mxp_error(MXP_ERR_NO_MEMORY, "no memory for the NHWC copies of a %zu-byte convolution", xb + yb);
        return true;
    }
    char *xt = buf, *wt = buf + xb, *yt = wt + wb, *panel = yt + yb;
    for (int64_t o = 0; o < g->o; o++) /* [C][KH KW] -> [KH KW][C] */
        transpose(wt + (size_t)(o * kk * g->c) * xs, c->w + (size_t)(o * g->c * kk) * xs, (size_t)g->c, (size_t)kk,
                  xs);
    h.w = wt;
    /* the taps path transposes x a band at a time (float32); else all of it here */
    conv_taps taps;
    bool by_taps = conv_taps_init(&taps, &h, true, false); /* float32 only */
    if (!by_taps) {
        for (int64_t n = 0; n < g->n; n++) /* [C][HW] -> [HW][C] */
            transpose(xt + (size_t)(n * hw * g->c) * xs, c->x + (size_t)(n * g->c * hw) * xs, (size_t)g->c,
                      (size_t)hw, xs);
        h.x = xt;
        by_taps = conv_taps_init(&taps, &h, false, gathers); /* bfloat16 only when nhwc_gathers: scanned */
    }
    conv_plan padded;
    char *xp = by_taps ? NULL : conv_pad_x(&h, &padded);
    *st = MXP_OK;
    for (int64_t n = 0; n < g->n && *st == MXP_OK; n++)
        for (int64_t p0 = 0; p0 < ohw && *st == MXP_OK; p0 += tile) {
            const int64_t np = ohw - p0 < tile ? ohw - p0 : tile;
            *st = by_taps ? conv_taps_rows(&taps, yt, n * ohw + p0, np)
                          : gemm_nhwc_rows(xp ? &padded : &h, yt, gathers ? NULL : panel, n * ohw + p0, np);
            char *dst = y + (size_t)(n * g->o * ohw + p0) * ys; /* [np][O] -> [O][np] of ld OHW */
            if (*st == MXP_OK)
                transpose_out(dst, (size_t)ohw, yt, (size_t)g->o, (size_t)np, ys);
        }
    if (by_taps)
        conv_taps_free(&taps);
    mxp_workspace_put(xp);
    mxp_workspace_put(buf);
    return true;
}

/* The type NHWC x of a narrow float type (and its weights) can be widened
 * into once, exactly, for the GEMM configuration it takes already (the
 * same kernel and blocks: the same bits): float32 for float16 (whose
 * panels the GEMM widened line by line while packing), bfloat16 for the
 * float8/6/4 types where bfloat16's kernel takes them (the avx512bf16 and
 * amx levels); MXP_DTYPE_INVALID where none. */
static mxp_dtype widen_to(const conv_plan *c)
{
    if (!c->g.nhwc || c->quant || c->xt == MXP_F32 || c->xt == MXP_F64 || c->xt == MXP_BF16 ||
        c->wt == MXP_F64 || mxp_dtype_get_traits(c->xt)->kind != MXP_KIND_FLOAT)
        return MXP_DTYPE_INVALID;
    const mxp_isa isa = mxp_isa_current();
    const mxp_gemm_config *cfg = mxp_gemm_config_for(MXP_F32, c->xt, c->wt, isa);
    if (mxp_gemm_fits_bf16(c->xt) && (c->wt == c->xt || c->wt == MXP_BF16) &&
        cfg == mxp_gemm_config_for(MXP_F32, MXP_BF16, MXP_BF16, isa))
        return MXP_BF16;
    if (cfg == mxp_gemm_config_for(MXP_F32, MXP_F32, MXP_F32, isa))
        return MXP_F32;
    return MXP_DTYPE_INVALID;
}

/* x (and weights not of type t already) widened once into copies of type
 * t (widen_to) and convolved as such. */
static mxp_status nhwc_widened(const conv_plan *c, char *y, mxp_dtype t)
{
    const nn_geom *g = &c->g;
    const size_t ts = mxp_dtype_itemsize(t), xn = (size_t)(g->n * g->h * g->w * g->c);
    const size_t wn = c->wt != t ? (size_t)(g->o * c->k) : 0;
    conv_plan h = *c;
    h.xt = h.wt = t;
    h.xsize = h.wsize = ts;
    const bool gathers = nhwc_gathers(c, t, wn ? NULL : c->w, y);
    const size_t pb = h.direct || gathers ? 0 : (size_t)(conv_chunk_pixels(&h, g->n * g->oh * g->ow) * h.k) * ts;
    char *buf = mxp_workspace_get((xn + wn) * ts + pb + 1); /* kept for the next call */
    if (!buf)
        return mxp_error(MXP_ERR_NO_MEMORY, "no memory for the %s copies of a %zu-element convolution",
                         mxp_dtype_name(t), xn + wn);
    mxp_status st = mxp_convert(buf, t, c->x, c->xt, xn, NULL);
    if (st == MXP_OK && wn)
        st = mxp_convert(buf + xn * ts, t, c->w, c->wt, wn, NULL);
    h.x = buf;
    h.w = wn ? buf + xn * ts : c->w;
    if (st == MXP_OK)
        st = gemm_nhwc(&h, y, gathers ? NULL : buf + (xn + wn) * ts);
    mxp_workspace_put(buf);
    return st;
}

mxp_status conv_forward(const conv_plan *c, mxp_array *y)
{
    const nn_geom *g = &c->g;
    if (g->n == 0 || g->o == 0 || g->oh == 0 || g->ow == 0)
        return MXP_OK;
    mxp_status st;
    if (conv_winograd(c, y->data, &st))
        return st;
    if (c->cg == 1 && g->groups == g->c && g->o == g->c && !c->quant)
        return depthwise(c, y);
    if (nchw_via_nhwc(c, y->data, &st))
        return st;
    const mxp_dtype wide = widen_to(c);
    if (wide != MXP_DTYPE_INVALID)
        return nhwc_widened(c, y->data, wide);
    char *panel = NULL;
    if (!c->direct && !(g->nhwc && nhwc_gathers(c, c->xt, c->w, y->data))) { /* kept for the next call */
        const int64_t total = g->nhwc ? g->n * g->oh * g->ow : g->oh * g->ow;
        const size_t bytes = (size_t)(conv_chunk_pixels(c, total) * c->k) * c->xsize;
        if (!(panel = mxp_workspace_get(bytes ? bytes : 1)))
            return mxp_error(MXP_ERR_NO_MEMORY, "no memory for a %zu-byte im2col panel", bytes);
    }
    st = g->nhwc    ? gemm_nhwc(c, y->data, panel)
         : c->quant ? gemm_nchw_quant(c, y->data, panel)
                    : gemm_nchw(c, y->data, panel);
    mxp_workspace_put(panel);
    return st;
}

/* ---- entry points ---------------------------------------------------------- */

typedef struct conv_args {
    const char *fn;
    const mxp_array *x, *w, *bias;
    const mxp_conv_opts *opts;
} conv_args;

static mxp_status conv_into(mxp_array *out, const void *args)
{
    const conv_args *a = args;
    conv_plan c;
    mxp_status st = nn_check_input(a->fn, "out", out);
    if (st == MXP_OK)
        st = conv_plan_init(&c, a->fn, a->x, a->w, a->bias, a->opts, true);
    if (st != MXP_OK)
        return st;
    int64_t shape[4];
    nn_geom_out_shape(&c.g, shape);
    st = nn_check_out_shape(a->fn, out, 4, shape);
    if (st == MXP_OK)
        st = conv_plan_output(&c, a->fn, out->dtype);
    mxp_array *work = NULL;
    const mxp_array *in[3] = { a->x, a->w, a->bias };
    if (st == MXP_OK)
        st = nn_dense_out_begin(a->fn, out, in, 3, &work);
    if (st == MXP_OK) {
        c.yt = work->dtype;
        c.ysize = mxp_dtype_itemsize(work->dtype);
        const mxp_fpenv env = mxp_fpenv_enter();
        st = conv_forward(&c, work);
        mxp_fpenv_leave(env);
        st = nn_out_end(out, work, st);
    }
    conv_plan_free(&c);
    return st;
}

static mxp_status conv2d_into_entry(mxp_array *out, const mxp_array *x, const mxp_array *weight, const mxp_array *bias,
                                    const mxp_conv_opts *opts)
{
    MXP_ABI_IN(opts, conv_opts, "mxp_conv2d_into");
    return conv_into(out, &(conv_args){ "mxp_conv2d_into", x, weight, bias, opts });
}

static mxp_status conv2d_entry(mxp_array **out, const mxp_array *x, const mxp_array *weight, const mxp_array *bias,
                               const mxp_conv_opts *opts, mxp_dtype out_dtype)
{
    MXP_ABI_IN_OUT(opts, conv_opts, "mxp_conv2d", out);
    const char *fn = "mxp_conv2d";
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    conv_plan c;
    mxp_status st = conv_plan_init(&c, fn, x, weight, bias, opts, false);
    if (st != MXP_OK)
        return st;
    int64_t shape[4];
    nn_geom_out_shape(&c.g, shape);
    const mxp_dtype dt = out_dtype ? out_dtype : c.quant ? MXP_S32 : nn_out_dtype(0, x->dtype);
    st = conv_plan_output(&c, fn, dt);
    conv_plan_free(&c);
    mxp_array *r = NULL;
    if (st == MXP_OK)
        st = mxp_array_new_owner(&r, dt, 4, shape);
    if (st == MXP_OK)
        st = conv_into(r, &(conv_args){ fn, x, weight, bias, opts });
    return nn_give_out(out, r, st);
}

static mxp_status conv1d_entry(mxp_array **out, const mxp_array *x, const mxp_array *weight, const mxp_array *bias,
                               const mxp_conv_opts *opts, mxp_dtype out_dtype)
{
    MXP_ABI_IN_OUT(opts, conv_opts, "mxp_conv1d", out);
    const char *fn = "mxp_conv1d";
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    mxp_status st = nn_check_input(fn, "x", x);
    if (st == MXP_OK)
        st = nn_check_input(fn, "weight", weight);
    if (st != MXP_OK)
        return st;
    if (x->ndim != 3 || weight->ndim != 3)
        return mxp_error(MXP_ERR_SHAPE, "%s: x and weight must be 3-d, not %d-d and %d-d", fn, x->ndim,
                         weight->ndim);
    mxp_conv_opts o = opts ? *opts : (mxp_conv_opts){ 0 };
    o.stride[0] = o.dilation[0] = 1;
    o.padding[0] = 0;
    const int axis = o.layout == MXP_NHWC ? 1 : 2;
    mxp_array *x4 = NULL, *w4 = NULL, *y4 = NULL;
    st = mxp_array_expand_dims(&x4, x, axis);
    if (st == MXP_OK)
        st = mxp_array_expand_dims(&w4, weight, axis);
    if (st == MXP_OK)
        st = mxp_conv2d(&y4, x4, w4, bias, &o, out_dtype);
    if (st == MXP_OK)
        st = mxp_array_squeeze(out, y4, axis);
    mxp_array_free(x4);
    mxp_array_free(w4);
    mxp_array_free(y4);
    return st;
}

/* ---- the entry points, profiled (src/core/profile-internal.h) ---------- */

mxp_status mxp_conv2d(mxp_array **out, const mxp_array *x, const mxp_array *weight, const mxp_array *bias,
                      const mxp_conv_opts *opts, mxp_dtype out_dtype)
{
    MXP_PROF_RETURN_AFTER("conv2d", conv2d_entry(out, x, weight, bias, opts, out_dtype),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(weight) + mxp_prof_array_bytes(bias),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(weight) + mxp_prof_array_bytes(bias) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          mxp_prof_conv_flops(mxp_prof_made(out), weight));
}

mxp_status mxp_conv2d_into(mxp_array *out, const mxp_array *x, const mxp_array *weight, const mxp_array *bias,
                           const mxp_conv_opts *opts)
{
    MXP_PROF_RETURN_AFTER("conv2d", conv2d_into_entry(out, x, weight, bias, opts),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(weight) + mxp_prof_array_bytes(bias),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(weight) + mxp_prof_array_bytes(bias) + mxp_prof_array_bytes(out),
                          mxp_prof_conv_flops(out, weight));
}

mxp_status mxp_conv1d(mxp_array **out, const mxp_array *x, const mxp_array *weight, const mxp_array *bias,
                      const mxp_conv_opts *opts, mxp_dtype out_dtype)
{
    MXP_PROF_RETURN_AFTER("conv1d", conv1d_entry(out, x, weight, bias, opts, out_dtype),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(weight) + mxp_prof_array_bytes(bias),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(weight) + mxp_prof_array_bytes(bias) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          mxp_prof_conv_flops(mxp_prof_made(out), weight));
}

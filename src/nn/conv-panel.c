/* The im2col panels of the convolutions (conv.c): the rows of a chunk of
 * output pixels, NHWC ((p, q, c) per pixel) or NCHW ((c, p, q) rows of
 * pixels), built whole or, for the GEMM that gathers its A (NHWC), block
 * by block; pad outside x.  At most CONV_PANEL_BYTES, at least
 * CONV_MIN_PIXELS pixels a chunk, so no copy of the whole im2col matrix
 * exists. */
#include <stdint.h>
#include <string.h>

#include "core/alloc-internal.h"
#include "nn/conv-plan.h"

enum { CONV_PANEL_BYTES = 1 << 20, CONV_MIN_PIXELS = 64, CONV_PAD_BYTES = 64 << 20 };

/* n elements of size bytes, src step elements apart, to contiguous dst. */
static void copy_strided(char *dst, const char *src, int64_t n, int64_t step, size_t size)
{
    if (step == 1) {
        memcpy(dst, src, (size_t)n * size);
        return;
    }
    const size_t s = (size_t)step * size;
    switch (size) {
    case 1: for (int64_t t = 0; t < n; t++) dst[t] = src[(size_t)t * s]; break;
    case 2: for (int64_t t = 0; t < n; t++) memcpy(dst + 2 * t, src + (size_t)t * s, 2); break;
    case 4: for (int64_t t = 0; t < n; t++) memcpy(dst + 4 * t, src + (size_t)t * s, 4); break;
    default: for (int64_t t = 0; t < n; t++) memcpy(dst + (size_t)t * size, src + (size_t)t * s, size);
    }
}

int64_t conv_chunk_pixels(const conv_plan *c, int64_t total)
{
    int64_t per = c->k * (int64_t)c->xsize;
    int64_t p = per > 0 ? CONV_PANEL_BYTES / per : total;
    p = p < CONV_MIN_PIXELS ? CONV_MIN_PIXELS : p;
    return p < total ? p : total;
}

/* The panel rows of np pixels from (n, i, j) whose windows lie inside x
 * (no padding, one group, dw 1): each window row one run of kw taps of
 * cgb bytes (kw and cgb constants in each copy: moves inline; a run over
 * 256 bytes tap by tap, where one memcpy of 384 was a call to the
 * library's). */
static inline __attribute__((always_inline)) void panel_nhwc_runs(char *panel, size_t rowb, const char *x, int64_t np,
                                                                  const nn_geom *g, size_t pixb, size_t cgb, int kw,
                                                                  int64_t j, int64_t i, int64_t n)
{
    const int64_t h = g->h, w = g->w, oh = g->oh, ow = g->ow, kh = g->kh, sh = g->sh, sw = g->sw;
    const size_t down = (size_t)(g->dh * w) * pixb; /* a window row to the next */
    for (int64_t t = 0; t < np; t++) {
        char *dst = panel + (size_t)t * rowb;
        const char *src = x + (size_t)((n * h + i * sh) * w + j * sw) * pixb;
        for (int64_t p = 0; p < kh; p++, dst += (size_t)kw * cgb, src += down)
            if (kw * cgb <= 256)
                memcpy(dst, src, (size_t)kw * cgb);
            else
                for (int q = 0; q < kw; q++)
                    memcpy(dst + (size_t)q * cgb, src + (size_t)q * cgb, cgb);
        if (++j == ow) {
            j = 0;
            if (++i == oh)
                i = 0, n++;
        }
    }
}

/* NHWC: panel row t (pixel pix0 + t of the whole batch, rowb bytes
 * apart) = the window's taps t0 .. t1 (tap p kw + q: the (p, q) values of
 * the group's channels), pad outside x: a tap (cgb bytes, a group's
 * channels) at a time; cgb a constant for the common channel counts, so
 * that each tap's copy is a few moves inline (a call to memcpy or memset
 * per 16-byte tap cost more than the GEMM of small int8 convolutions). */
static inline __attribute__((always_inline)) void panel_nhwc(const conv_plan *c, char *panel, size_t rowb,
                                                             int64_t pix0, int64_t np, int64_t grp, size_t cgb,
                                                             bool all, int64_t t0, int64_t t1)
{
    /* the geometry in locals: the panel's byte stores could alias c */
    const nn_geom *g = &c->g;
    const int64_t h = g->h, w = g->w, oh = g->oh, ow = g->ow, kw = g->kw, sh = g->sh, sw = g->sw;
    const int64_t ph = g->ph, pw = g->pw, dh = g->dh, dw = g->dw;
    const bool one_group = g->groups == 1;
    const int pad = c->pad;
    const size_t pixb = (size_t)g->c * c->xsize;
    /* rows p0 .. p1, the first from tap qa, the last to qb (all: every tap, constants once inlined) */
    const int64_t p0 = all ? 0 : t0 / kw, p1 = all ? g->kh - 1 : (t1 - 1) / kw;
    const int64_t qa = all ? 0 : t0 % kw, qb = all ? kw : (t1 - 1) % kw + 1;
    const char *x = c->x + (size_t)(grp * c->cg) * c->xsize;
    int64_t j = pix0 % ow, i = pix0 / ow % oh, n = pix0 / (ow * oh); /* then counted, not divided */
    if (all && ph == 0 && pw == 0 && one_group && dw == 1) { /* every window inside x: kh runs of kw taps */
        switch (kw) {
        case 3: panel_nhwc_runs(panel, rowb, x, np, g, pixb, cgb, 3, j, i, n); return;
        case 7: panel_nhwc_runs(panel, rowb, x, np, g, pixb, cgb, 7, j, i, n); return;
        default: break;
        }
    }
    for (int64_t t = 0; t < np; t++) {
        char *dst = panel + (size_t)t * rowb;
        for (int64_t p = p0; p <= p1; p++) {
            const int64_t q0 = p == p0 ? qa : 0, q1 = p == p1 ? qb : kw;
            const int64_t ih = i * sh - ph + p * dh, iw0 = j * sw - pw;
            const bool in_h = ih >= 0 && ih < h;
            const char *row = in_h ? x + (size_t)((n * h + ih) * w) * pixb : x; /* only read inside x */
            if (in_h && iw0 + q0 * dw >= 0 && iw0 + (q1 - 1) * dw < w) { /* the window row inside x */
                const char *src = row + (size_t)(iw0 + q0 * dw) * pixb;
                if (cgb > 128 && one_group && dw == 1) /* wide taps, one group: one run of x's row */
                    memcpy(dst, src, (size_t)(q1 - q0) * cgb);
                else
                    for (int64_t q = 0; q < q1 - q0; q++)
                        memcpy(dst + (size_t)q * cgb, src + (size_t)(q * dw) * pixb, cgb);
                dst += (size_t)(q1 - q0) * cgb;
                continue;
            }
            for (int64_t q = q0; q < q1; q++, dst += cgb) {
                const int64_t iw = iw0 + q * dw;
                if (!in_h || iw < 0 || iw >= w)
                    memset(dst, pad, cgb);
                else
                    memcpy(dst, row + (size_t)iw * pixb, cgb);
            }
        }
        if (++j == ow) { /* the next pixel */
            j = 0;
            if (++i == oh)
                i = 0, n++;
        }
    }
}

/* panel_nhwc with cgb a constant for one channel (an image's stem) to 32
 * float32 ones, and for three (RGB stems) of 1, 2 and 4 bytes; every tap
 * (all) or some (a KC step's). */
static void panel_nhwc_taps(const conv_plan *c, char *panel, size_t rowb, int64_t pix0, int64_t np, int64_t grp,
                            int64_t t0, int64_t t1)
{
    const size_t cgb = (size_t)c->cg * c->xsize;
    const bool all = t0 == 0 && t1 == c->g.kh * c->g.kw;
#define MXP_PANEL_CASE(bytes)                                                                                          \
    case bytes:                                                                                                        \
        if (all)                                                                                                       \
            panel_nhwc(c, panel, rowb, pix0, np, grp, bytes, true, t0, t1);                                            \
        else                                                                                                           \
            panel_nhwc(c, panel, rowb, pix0, np, grp, bytes, false, t0, t1);                                           \
        break;
    switch (cgb) {
    MXP_PANEL_CASE(1) MXP_PANEL_CASE(2) MXP_PANEL_CASE(3) MXP_PANEL_CASE(4) MXP_PANEL_CASE(6) MXP_PANEL_CASE(8)
    MXP_PANEL_CASE(12) MXP_PANEL_CASE(16) MXP_PANEL_CASE(32) MXP_PANEL_CASE(64) MXP_PANEL_CASE(128)
    default: panel_nhwc(c, panel, rowb, pix0, np, grp, cgb, all, t0, t1); break;
    }
#undef MXP_PANEL_CASE
}

void conv_panel_nhwc(const conv_plan *c, char *panel, int64_t pix0, int64_t np, int64_t grp)
{
    panel_nhwc_taps(c, panel, (size_t)c->k * c->xsize, pix0, np, grp, 0, c->g.kh * c->g.kw);
}

/* Columns k0 .. k1 of NHWC panel row pix (a range that starts or ends
 * inside a tap) at dst: tap by tap, each clipped to the range. */
static void panel_nhwc_span(const conv_plan *c, char *dst, int64_t pix, int64_t grp, int64_t k0, int64_t k1)
{
    const nn_geom *g = &c->g;
    const size_t xs = c->xsize;
    const int64_t j = pix % g->ow, i = pix / g->ow % g->oh, n = pix / (g->ow * g->oh);
    for (int64_t tap = k0 / c->cg; tap * c->cg < k1; tap++) {
        const int64_t lo = k0 > tap * c->cg ? k0 - tap * c->cg : 0;
        const int64_t hi = k1 < (tap + 1) * c->cg ? k1 - tap * c->cg : c->cg;
        const int64_t ih = i * g->sh - g->ph + tap / g->kw * g->dh, iw = j * g->sw - g->pw + tap % g->kw * g->dw;
        const size_t bytes = (size_t)(hi - lo) * xs;
        if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w)
            memset(dst, c->pad, bytes);
        else
            memcpy(dst, c->x + (size_t)(((n * g->h + ih) * g->w + iw) * g->c + grp * c->cg + lo) * xs, bytes);
        dst += bytes;
    }
}

char *conv_pad_x(const conv_plan *c, conv_plan *padded)
{
    const nn_geom *g = &c->g;
    const size_t pixb = (size_t)g->c * c->xsize, cgb = (size_t)c->cg * c->xsize;
    /* taps of 128 bytes on a large image (bfloat16 x 64 channels on 56 x 56: 7% of the pixels at an edge)
       paid the copy (8% of the convolution) and got nothing back */
    if (!g->nhwc || c->direct || (g->ph == 0 && g->pw == 0) || cgb > 128 || (cgb > 64 && g->h * g->w > 1024))
        return NULL;
    const int64_t hp = g->h + 2 * g->ph, wp = g->w + 2 * g->pw;
    const size_t rowb = (size_t)wp * pixb, bytes = (size_t)(g->n * hp) * rowb;
    if (bytes > CONV_PAD_BYTES)
        return NULL;
    char *xp = mxp_workspace_get(bytes ? bytes : 1);
    if (!xp)
        return NULL;
    const size_t top = (size_t)g->ph * rowb, side = (size_t)g->pw * pixb, inner = (size_t)g->w * pixb;
    char *d = xp;
    for (int64_t n = 0; n < g->n; n++) {
        memset(d, c->pad, top);
        d += top;
        for (int64_t i = 0; i < g->h; i++, d += rowb) {
            memset(d, c->pad, side);
            memcpy(d + side, c->x + (size_t)((n * g->h + i) * g->w) * pixb, inner);
            memset(d + side + inner, c->pad, side);
        }
        memset(d, c->pad, top);
        d += top;
    }
    *padded = *c;
    padded->x = xp;
    padded->g.h = hp;
    padded->g.w = wp;
    padded->g.ph = padded->g.pw = 0;
    return xp;
}

/* Whole taps by panel_nhwc_taps, else column by column. */
void conv_gather_rows(const void *ctx, size_t i0, size_t mc, size_t k0, size_t kc, void *dst, size_t ld)
{
    const conv_gather *ga = ctx;
    const conv_plan *c = ga->c;
    const size_t xs = c->xsize, cg = (size_t)c->cg, rowb = ld * xs;
    char *d = dst;
    if (k0 % cg == 0 && kc % cg == 0)
        panel_nhwc_taps(c, d, rowb, ga->pix0 + (int64_t)i0, (int64_t)mc, ga->grp, (int64_t)(k0 / cg),
                        (int64_t)((k0 + kc) / cg));
    else /* a KC step that is not a multiple of the group's channels */
        for (size_t r = 0; r < mc; r++)
            panel_nhwc_span(c, d + r * rowb, ga->pix0 + (int64_t)(i0 + r), ga->grp, (int64_t)k0, (int64_t)(k0 + kc));
    if (ld > kc)
        for (size_t r = 0; r < mc; r++)
            memset(d + r * rowb + kc * xs, 0, (ld - kc) * xs);
}

/* NCHW: panel row (c, p, q) of group grp for pixels pix0 .. pix0 + np of
 * image n (ld np), pad outside x. */
void conv_panel_nchw(const conv_plan *c, char *panel, int64_t n, int64_t pix0, int64_t np, int64_t grp)
{
    const nn_geom *g = &c->g;
    const size_t xs = c->xsize;
    for (int64_t ch = 0; ch < c->cg; ch++)
        for (int64_t p = 0; p < g->kh; p++)
            for (int64_t q = 0; q < g->kw; q++) {
                char *row = panel + (size_t)(((ch * g->kh + p) * g->kw + q) * np) * xs;
                const char *plane = c->x + (size_t)((n * g->c + grp * c->cg + ch) * g->h * g->w) * xs;
                const int64_t off = q * g->dw - g->pw;
                for (int64_t t = 0; t < np;) { /* one output row's stretch at a time */
                    const int64_t pix = pix0 + t, i = pix / g->ow, j0 = pix % g->ow;
                    const int64_t len = g->ow - j0 < np - t ? g->ow - j0 : np - t;
                    const int64_t ih = i * g->sh - g->ph + p * g->dh;
                    char *d = row + (size_t)t * xs;
                    int64_t lo = j0 + len, hi = lo;
                    if (ih >= 0 && ih < g->h) {
                        lo = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;
                        hi = g->w - 1 - off < 0 ? 0 : (g->w - 1 - off) / g->sw + 1;
                        lo = lo < j0 ? j0 : lo > j0 + len ? j0 + len : lo;
                        hi = hi > j0 + len ? j0 + len : hi < lo ? lo : hi;
                    }
                    memset(d, c->pad, (size_t)(lo - j0) * xs);
                    const char *src = plane + (size_t)(ih * g->w + lo * g->sw + off) * xs;
                    if (hi > lo)
                        copy_strided(d + (size_t)(lo - j0) * xs, src, hi - lo, g->sw, xs);
                    memset(d + (size_t)(hi - j0) * xs, c->pad, (size_t)(j0 + len - hi) * xs);
                    t += len;
                }
            }
}

/* Depthwise convolution of float32 inputs in float32 sums, as the GEMM
 * path sums (window.c has the float64 loop for the other dtypes): each
 * window offset (p, q) adds x * w over a run of output columns through a
 * row kernel (src/kernels/f32-dwconv/), then the epilogue runs in float64
 * on the row and one rounding stores it.  x is read in place.
 *
 * NCHW: a row of the job is a plane (n, c), its output rows in turn, one
 * channel a pixel; NHWC: an output row (n, i), every channel of a pixel
 * at once. */
#include <string.h>

#include "nn/conv-internal.h"

typedef struct dw_job {
    const nn_window *win;
    const float *x, *wk;
    char *y;
    mxp_dtype yt;
    size_t ysize;
    mxp_f32_dwconv_ukernel *k;
    mxp_f32_dwconv_taps_ukernel *taps; /* NHWC windows inside the image, in registers */
    bool direct; /* float32 out, no epilogue: the float32 sums are the results, summed in place */
    size_t skew;       /* NHWC at stride 1: floats from x to its next 64-byte line (0: x on a line) */
    const float *wrot; /* then wk with each pixel's channels rotated by skew (dw_skewed_taps) */
} dw_job;

enum {
    DW_MAX_ROWS = 32,  /* window rows the taps kernel takes (more: the row kernel alone) */
    DW_MAX_TAPS = 1024, /* an NCHW channel's window gathered for it (more: the row kernel alone) */
    DW_GAP = 16         /* floats zeroed between the padded plane's rows at once */
};

/* The output columns [*in0, *in1) whose every tap column lies inside the
 * image (in0 <= in1 <= ow; empty: in0 == in1). */
static void dw_inside_columns(const nn_window *win, int64_t *in0, int64_t *in1)
{
    const nn_geom *g = &win->g;
    int64_t a = 0, b = g->ow;
    for (int64_t q = 0; q < g->kw; q++) {
        int64_t lo, hi;
        nn_window_columns(win, q * g->dw - g->pw, &lo, &hi);
        a = lo > a ? lo : a;
        b = hi < b ? hi : b;
    }
    *in0 = a;
    *in1 = b > a ? b : a;
}

/* NHWC at stride 1 with x off a 64-byte line (NumPy's large arrays lie
 * 16 bytes past one): the taps kernel's loads, every one split across two
 * lines, made it 25% slower.  At stride 1 output pixel j, channel c reads
 * x at (j + q) c_n + c and writes j c_n + c (c_n channels a pixel), so the
 * flat index t = j c_n + c runs over consecutive floats; the kernel called
 * with every pointer moved skew floats on (x's rows then on a line) and
 * the weights rotated to match (wrot[q c_n + c] = w[q c_n + (c + skew) mod
 * c_n]) computes t in [skew, skew + (n - 1) c_n): pixels [0, n - 1) but
 * the first skew channels of pixel 0, and the first skew channels of
 * pixel n - 1; the rest of those two by the row kernel (the same products
 * and sums per element: the same bits).
 * Reads stay within pixel n - 1's window.  AMD Zen 4, one thread,
 * 1x128x56x56 3x3, x 16 bytes past a line, y on one: 0.148-0.150 ->
 * 0.135-0.137 ms (x on a line: 0.115-0.127; docs/nn.md). */
static void dw_skewed_taps(const dw_job *j, float *acc, const float *const *rows, const float *const *wrows,
                           size_t nrows, size_t n)
{
    const nn_geom *g = &j->win->g;
    const size_t vl = (size_t)g->c, kw = (size_t)g->kw, dstep = (size_t)g->dw * vl, s = j->skew;
    const float *rs[DW_MAX_ROWS], *ws[DW_MAX_ROWS], *last[DW_MAX_ROWS];
    for (size_t r = 0; r < nrows; r++) {
        rs[r] = rows[r] + s;
        ws[r] = j->wrot + (wrows[r] - j->wk);
        last[r] = rows[r] + (n - 1) * vl;
    }
    j->taps(acc + s, rs, ws, nrows, kw, n - 1, vl, vl, dstep);
    /* pixel 0's first s channels and pixel n - 1's others, tap after tap
       by the row kernel on zeroed sums (its additions per element) */
    float *tail = acc + (n - 1) * vl + s;
    memset(acc, 0, s * sizeof(float));
    memset(tail, 0, (vl - s) * sizeof(float));
    for (size_t r = 0; r < nrows; r++)
        for (size_t q = 0; q < kw; q++) {
            j->k(acc, rows[r] + q * dstep, wrows[r] + q * vl, 1, s, vl);
            j->k(tail, last[r] + q * dstep + s, wrows[r] + q * vl + s, 1, vl - s, vl);
        }
}

/* Output row i of image n (NCHW: of channel ch, vl 1; NHWC: vl = c
 * channels) from the input rows at xrow(ih) = base + ih * rowlen, summed
 * in acc (ow vl floats), widened into t for the epilogue. */
static void dw_row(const dw_job *j, const float *base, int64_t rowlen, int64_t i, int64_t vl, int64_t ch, float *acc,
                   double *t)
{
    const nn_geom *g = &j->win->g;
    /* NHWC: the pixels [in0, in1) whose every tap column is inside the
     * image take the taps kernel (sums in registers); the others, and NCHW
     * rows, the row kernel tap after tap.  Per element the same additions. */
    int64_t in0 = 0, in1 = 0;
    const bool taps = j->taps && vl > 1 && g->kh <= DW_MAX_ROWS;
    if (taps)
        dw_inside_columns(j->win, &in0, &in1);
    /* the row kernel's sums start from zero; the taps kernel writes its
     * pixels whole */
    memset(acc, 0, (size_t)(in0 * vl) * sizeof(float));
    memset(acc + in1 * vl, 0, (size_t)((g->ow - in1) * vl) * sizeof(float)); /* in0 <= in1 <= ow */
    const float *rows[DW_MAX_ROWS], *wrows[DW_MAX_ROWS];
    size_t nrows = 0;
    for (int64_t p = 0; p < g->kh; p++) {
        const int64_t ih = i * g->sh - g->ph + p * g->dh;
        if (ih < 0 || ih >= g->h)
            continue;
        if (taps && in1 > in0) {
            rows[nrows] = base + ih * rowlen + (in0 * g->sw - g->pw) * vl;
            wrows[nrows++] = j->wk + p * g->kw * g->c + ch;
        }
        for (int64_t q = 0; q < g->kw; q++) {
            const int64_t off = q * g->dw - g->pw;
            int64_t lo, hi;
            nn_window_columns(j->win, off, &lo, &hi);
            const float *xr = base + ih * rowlen, *w = j->wk + (p * g->kw + q) * g->c + ch;
            const int64_t seg[2][2] = { { lo, in1 > in0 && hi > in0 ? in0 : hi }, { in1 > in0 && lo < in1 ? in1 : lo, hi } };
            for (int s = 0; s < (in1 > in0 ? 2 : 1); s++)
                if (seg[s][1] > seg[s][0])
                    j->k(acc + seg[s][0] * vl, xr + (seg[s][0] * g->sw + off) * vl, w, (size_t)(seg[s][1] - seg[s][0]),
                         (size_t)vl, (size_t)(g->sw * vl));
        }
    }
    if (in1 > in0 && j->wrot && in1 - in0 >= 2)
        dw_skewed_taps(j, acc + in0 * vl, rows, wrows, nrows, (size_t)(in1 - in0));
    else if (in1 > in0)
        j->taps(acc + in0 * vl, rows, wrows, nrows, (size_t)g->kw, (size_t)(in1 - in0), (size_t)vl,
                (size_t)(g->sw * vl), (size_t)(g->dw * vl));
    if (!t)
        return;
    for (int64_t v = 0; v < g->ow * vl; v++)
        t[v] = acc[v];
    nn_window_finish(j->win, t, i, vl, ch);
}

bool nn_dwconv_nchw_direct(const nn_geom *g)
{
    return g->sw == 1 && g->kh <= DW_MAX_ROWS && g->kh * g->kw <= DW_MAX_TAPS;
}

/* Output pixel (i, c) of an NCHW plane at stride 1, tap after tap. */
static float dw_edge_pixel(const nn_geom *g, const float *base, int64_t i, int64_t c, const float *wl)
{
    float a = 0.0f;
    for (int64_t p = 0; p < g->kh; p++) {
        const int64_t ih = i * g->sh - g->ph + p * g->dh;
        if (ih < 0 || ih >= g->h)
            continue;
        for (int64_t q = 0; q < g->kw; q++) {
            const int64_t col = c - g->pw + q * g->dw;
            if (col >= 0 && col < g->w) {
                const float prod = base[ih * g->w + col] * wl[p * g->kw + q];
                a += prod;
            }
        }
    }
    return a;
}

/* NCHW at stride 1: output row i of a plane, its columns [in0, in1)
 * (every tap column inside the image) by the taps kernel over wl (the
 * channel's kh x kw window), the others pixel by pixel -- each the same
 * additions as the row kernel's tap after tap: the products of the taps
 * inside the image, in order, from +0.  Per row, the row kernel's calls
 * for single edge pixels and the column bounds cost more than the
 * arithmetic. */
static void dw_plane_row(const dw_job *j, const float *base, int64_t i, const float *wl, int64_t in0, int64_t in1,
                         float *acc, double *t, int64_t ch)
{
    const nn_geom *g = &j->win->g;
    const float *rows[DW_MAX_ROWS], *wrows[DW_MAX_ROWS];
    size_t nrows = 0;
    for (int64_t p = 0; p < g->kh && in1 > in0; p++) { /* in0 >= pw: the rows' first taps inside */
        const int64_t ih = i * g->sh - g->ph + p * g->dh;
        if (ih < 0 || ih >= g->h)
            continue;
        rows[nrows] = base + ih * g->w + in0 - g->pw;
        wrows[nrows++] = wl + p * g->kw;
    }
    if (in1 > in0)
        j->taps(acc + in0, rows, wrows, nrows, (size_t)g->kw, (size_t)(in1 - in0), 1, 1, (size_t)g->dw);
    for (int64_t c = 0; c < in0; c++)
        acc[c] = dw_edge_pixel(g, base, i, c, wl);
    for (int64_t c = in1; c < g->ow; c++)
        acc[c] = dw_edge_pixel(g, base, i, c, wl);
    if (!t)
        return;
    for (int64_t v = 0; v < g->ow; v++)
        t[v] = acc[v];
    nn_window_finish(j->win, t, i, 1, ch);
}

/* The whole-plane path (NCHW, strides 1): the plane padded with zeros
 * (ph rows above and below, pw columns each side: rows of L = w + 2 pw),
 * where each output pixel (i, j) reads its taps at padded (i + p dh, j +
 * q dw), so that the taps kernel makes every output row in one call: its
 * "pixels" are padded columns (i L + j), those past ow in a row (j >= ow)
 * left unused.  dw_whole_shape: the geometries it takes; dw_whole_plane:
 * whether it serves channel ch's window (wl, ntaps) too, its weights
 * finite -- then each padded tap adds x w = 0 w = +-0 to a sum that is
 * never -0 (it starts at +0, and nearest-even gives -0 only for -0 + -0),
 * which changes nothing: the bits of the taps inside the image alone.
 * On AMD Zen 4, 1x128x56x56 3x3: the edge pixels summed one at a time
 * were 38% of the time and the calls a row much of the rest. */
static bool dw_whole_shape(const nn_geom *g)
{
    return !g->nhwc && g->sh == 1 && g->sw == 1 && nn_dwconv_nchw_direct(g);
}

static bool dw_whole_plane(const nn_geom *g, const float *wl, int64_t ntaps)
{
    if (!dw_whole_shape(g))
        return false;
    for (int64_t k = 0; k < ntaps; k++)
        if (!(wl[k] - wl[k] == 0)) /* inf or NaN */
            return false;
    return true;
}

/* Floats of the whole-plane path's scratch: the sums (oh rows of L), then
 * the padded plane ((h + 2 ph) rows of L). */
static int64_t dw_whole_floats(const nn_geom *g)
{
    return (g->oh + g->h + 2 * g->ph) * (g->w + 2 * g->pw) + DW_GAP;
}

/* Plane r (channel ch) by the whole-plane path into y (or through the
 * epilogue); acc: dw_whole_floats floats, t: the float64 row. */
static void dw_plane_whole(const dw_job *j, const float *base, const float *wl, int64_t r, int64_t ch, float *acc,
                           double *t)
{
    const nn_geom *g = &j->win->g;
    const int64_t L = g->w + 2 * g->pw, ohw = g->oh * g->ow;
    const float *src = base;
    if (g->ph || g->pw) {
        float *pad = acc + g->oh * L;
        memset(pad, 0, (size_t)(g->ph * L + g->pw) * sizeof(float)); /* the rows above, row 0's left columns */
        for (int64_t ih = 0; ih < g->h; ih++) {
            float *row = pad + (g->ph + ih) * L + g->pw;
            memcpy(row, base + ih * g->w, (size_t)g->w * sizeof(float));
            if (g->pw <= DW_GAP / 2) /* this row's right columns, the next one's left: a store of fixed size
                                        (the loop became two calls to memset a row), past them the next row's
                                        data, copied next, or the rows below, zeroed next (DW_GAP of slack) */
                memset(row + g->w, 0, DW_GAP * sizeof(float));
            else
                memset(row + g->w, 0, (size_t)(2 * g->pw) * sizeof(float));
        }
        memset(pad + (g->ph + g->h) * L, 0, (size_t)(g->ph * L) * sizeof(float));
        src = pad;
    }
    const float *rows[DW_MAX_ROWS], *wrows[DW_MAX_ROWS];
    for (int64_t p = 0; p < g->kh; p++) {
        rows[p] = src + p * g->dh * L;
        wrows[p] = wl + p * g->kw;
    }
    j->taps(acc, rows, wrows, (size_t)g->kh, (size_t)g->kw, (size_t)((g->oh - 1) * L + g->ow), 1, 1, (size_t)g->dw);
    for (int64_t i = 0; i < g->oh; i++) {
        char *yr = j->y + (size_t)(r * ohw + i * g->ow) * j->ysize;
        const float *a = acc + i * L;
        if (j->direct) {
            memcpy(yr, a, (size_t)g->ow * sizeof(float));
            continue;
        }
        for (int64_t v = 0; v < g->ow; v++)
            t[v] = a[v];
        nn_window_finish(j->win, t, i, 1, ch);
        nn_store(yr, j->yt, (int64_t)j->ysize, t, g->ow);
    }
}

static void plane_fn(const void *ctx, char **p, double *scratch, int64_t r)
{
    (void)p;
    const dw_job *j = ctx;
    const nn_geom *g = &j->win->g;
    const int64_t ohw = g->oh * g->ow, ch = r % g->c, ntaps = g->kh * g->kw;
    float *acc = (float *)(void *)(scratch + g->ow);
    const bool taps = j->taps && nn_dwconv_nchw_direct(g);
    float wl[DW_MAX_TAPS]; /* the channel's window for the taps kernel */
    for (int64_t k = 0; taps && k < ntaps; k++)
        wl[k] = j->wk[k * g->c + ch];
    const float *base = j->x + r * g->h * g->w;
    if (taps && dw_whole_plane(g, wl, ntaps)) {
        dw_plane_whole(j, base, wl, r, ch, acc, scratch);
        return;
    }
    int64_t in0 = 0, in1 = 0;
    if (taps)
        dw_inside_columns(j->win, &in0, &in1);
    for (int64_t i = 0; i < g->oh; i++) {
        char *yr = j->y + (size_t)(r * ohw + i * g->ow) * j->ysize;
        float *out = j->direct ? (float *)(void *)yr : acc;
        double *t = j->direct ? NULL : scratch;
        if (taps)
            dw_plane_row(j, base, i, wl, in0, in1, out, t, ch);
        else
            dw_row(j, base, g->w, i, 1, ch, out, t);
        if (!j->direct)
            nn_store(yr, j->yt, (int64_t)j->ysize, scratch, g->ow);
    }
}

static void image_fn(const void *ctx, char **p, double *scratch, int64_t r)
{
    (void)p;
    const dw_job *j = ctx;
    const nn_geom *g = &j->win->g;
    const int64_t len = g->ow * g->c;
    char *yr = j->y + (size_t)(r * len) * j->ysize;
    if (j->direct) {
        dw_row(j, j->x + r / g->oh * g->h * g->w * g->c, g->w * g->c, r % g->oh, g->c, 0, (float *)(void *)yr, NULL);
        return;
    }
    dw_row(j, j->x + r / g->oh * g->h * g->w * g->c, g->w * g->c, r % g->oh, g->c, 0,
           (float *)(void *)(scratch + len), scratch);
    nn_store(yr, j->yt, (int64_t)j->ysize, scratch, len);
}

/* wk rotated for dw_skewed_taps, or NULL (no skew wanted, or no memory:
 * the plain calls then) and *skew 0: NHWC, stride 1, whole lines a pixel
 * (c a multiple of 16: every row and image of x as far off a line as x),
 * x off a line. */
static float *dw_rotated_weights(const nn_geom *g, const float *x, const float *wk, size_t *skew)
{
    *skew = 0;
    if (!g->nhwc || g->sw != 1 || g->c % 16 || (uintptr_t)x % 64 == 0 || (uintptr_t)x % sizeof(float))
        return NULL;
    const size_t c = (size_t)g->c, taps = (size_t)(g->kh * g->kw), s = (64 - (uintptr_t)x % 64) / sizeof(float);
    float *w = mxp_malloc(taps * c * sizeof(float));
    for (size_t t = 0; w && t < taps; t++)
        for (size_t k = 0; k < c; k++)
            w[t * c + k] = wk[t * c + (k + s) % c];
    *skew = w ? s : 0;
    return w;
}

mxp_status nn_dwconv_f32(const nn_window *win, const float *x, const float *wk, mxp_array *y)
{
    const nn_geom *g = &win->g;
    mxp_f32_dwconv_taps_ukernel *taps = nn_f32_dwconv_taps_kernel(mxp_isa_current());
    size_t skew = 0;
    float *wrot = taps ? dw_rotated_weights(g, x, wk, &skew) : NULL;
    const dw_job j = { win, x, wk, y->data, y->dtype, mxp_dtype_itemsize(y->dtype),
                       nn_f32_dwconv_kernel(mxp_isa_current()), taps,
                       y->dtype == MXP_F32 && !win->bias && win->act == MXP_ACT_NONE && !win->clamp &&
                           (uintptr_t)y->data % sizeof(float) == 0,
                       skew, wrot };
    nn_rows r;
    memset(&r, 0, sizeof r);
    r.nd = 1;
    r.nrows = g->nhwc ? g->n * g->oh : g->n * g->c;
    r.shape[0] = r.nrows;
    const int64_t vl = g->nhwc ? g->c : 1;
    /* the float64 row, then the float32 sums (half as many doubles; NCHW
       at strides 1, the whole-plane path's) */
    size_t scratch = (size_t)(g->ow * vl + (g->ow * vl + 1) / 2 + 1);
    if (j.taps && dw_whole_shape(g))
        scratch = (size_t)(g->ow + (dw_whole_floats(g) + 1) / 2 + 1);
    const mxp_status st = nn_run_rows(&r, g->ow * vl * g->kh * g->kw, scratch, true, g->nhwc ? image_fn : plane_fn, &j);
    mxp_free(wrot);
    return st;
}

/* Float32 3x3 stride-1 convolutions by Winograd F(2x2, 3x3) (Lavin and
 * Gray, 2015): each 2x2 block of outputs (a tile) from the 4x4 input patch
 * under it, as 16 elementwise products summed over the channels -- 16
 * GEMMs of tiles x C by C x O (mxp_gemm) between the transforms of
 * kernels/winograd-kernels.h -- instead of 36 multiply-adds a channel:
 * 2.25 times fewer.
 *
 *   U[k][c][o]  the weights transformed (G g G^T), once a call
 *   xp          the images, NHWC, padded with zeros on every side so that
 *               each tile's 4x4 patch lies inside (NCHW transposed into it)
 *   V[k][t][c]  a chunk of tiles' patches transformed (B^T d B)
 *   M[k][t][o]  = V[k] U[k], 16 mxp_gemm calls a chunk
 *   y           A^T M A, the tiles' outputs inside the image, then the
 *               epilogue (bias, activation, clamp in float64, rounded
 *               once: the taps path's) and, for NCHW, a transpose
 *
 * The bits depend on neither the thread count nor the chunking (each
 * output is the same operations on the same values), nor on the ISA level
 * from avx2 up (the transform kernels give their twins' bits; mxp_gemm's
 * float32 sums are fused multiply-add chains in k order at every SIMD
 * level).  docs/nn.md, "Winograd". */
#include <string.h>

#include "core/alloc-internal.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "core/threads-internal.h"
#include "gemm/gemm-internal.h"
#include "mxp/convert.h"
#include "mxp/gemm.h"
#include "nn/conv-plan.h"

/* AUTO's thresholds (pays(), below): channels in and out, tiles, and
 * input times output channels where the tiles are fewer than
 * WINO_MANY_TILES. */
enum { WINO_MIN_CHANNELS = 16, WINO_MIN_TILES = 48, WINO_MIN_PAIRS = 4096, WINO_MANY_TILES = 256 };
/* V and M of a chunk of tiles: kept in L2/L3 (all 6272 tiles of
 * 8x64x56x56 at once ran the GEMMs at 68 GFLOPS on a Zen 4 against 106
 * for 784) */
#define WINO_CHUNK_BYTES ((size_t)8 << 20)
/* The padded images of a group (the images are taken in groups) and,
 * for NCHW, their NHWC outputs; AUTO takes Winograd only where one image's
 * fit (the direct path bounds its panels whatever the input's size) */
#define WINO_PAD_BYTES ((size_t)64 << 20)

bool conv_winograd_applies(const conv_plan *c)
{
    const nn_geom *g = &c->g;
    return !c->quant && c->xt == MXP_F32 && c->wt == MXP_F32 && c->yt == MXP_F32 && g->kh == 3 && g->kw == 3 &&
           g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 && g->groups == 1 &&
           (c->gemm.acc_dtype == 0 || c->gemm.acc_dtype == MXP_F32) && conv_default_rounding(&c->gemm.convert);
}

/* Where Winograd is faster than the direct path (AMD Zen 4, one thread,
 * 3x3 padding 1, Winograd's time over the direct path's): the tiles must
 * cover the outputs closely -- 9 OH OW >= 32 TH TW, at least 2x fewer
 * multiply-adds: 7x7 outputs take 16 tiles of 4 for 49 (1.72x fewer),
 * and 1x64x7x7 ran 1.9x slower, 4x512x7x7 1.04x, 8x512x7x7 0.85x --,
 * enough tiles (16 of 1x16x8x8: 3.7x slower, 36 of 1x16x12x12 1.4x), and
 * with few tiles enough channel pairs for the products to outweigh the
 * transforms (1x32x16x16, 64 tiles: 1.06x slower; 1x64x14x14, 49 tiles,
 * 4096 pairs: 0.83x; 1x16x56x56, 784 tiles: 0.79x; 1x512x14x14 0.92x). */
static bool pays(const conv_plan *c)
{
    const nn_geom *g = &c->g;
    const int64_t th = (g->oh + 1) / 2, tw = (g->ow + 1) / 2, tiles = g->n * th * tw;
    /* and one image's buffers within WINO_PAD_BYTES: beyond, the direct path's bounded panels */
    const int64_t image = (2 * th + 2) * (2 * tw + 2) * g->c + (g->nhwc ? 0 : g->oh * g->ow * g->o);
    return mxp_isa_current() >= MXP_ISA_AVX2 && g->c >= WINO_MIN_CHANNELS && g->o >= WINO_MIN_CHANNELS &&
           tiles >= WINO_MIN_TILES && 9 * g->oh * g->ow >= 32 * th * tw &&
           (g->c * g->o >= WINO_MIN_PAIRS || tiles >= WINO_MANY_TILES) &&
           (uint64_t)image * sizeof(float) <= WINO_PAD_BYTES;
}

typedef struct wino_job {
    const conv_plan *c;
    mxp_f32_wino_ukernel *fn;
    int64_t th, tw, hp, wp;  /* tiles a column and a row; the padded images' rows and columns */
    float *u, *xp, *v, *m;   /* U, the padded images of the group, V and M of the chunk */
    float *y;                /* NHWC output of the group (y itself for NHWC) */
    float *out;              /* NCHW: y's planes of the group */
    float *wt;               /* the weights as [K][O] */
    int64_t n0, images;      /* the group */
    int64_t t0, count, cap;  /* the chunk's tiles (of the group), and V's and M's rows */
    const double *bias;      /* the epilogue's (NULL: none) */
    double *ebuf;            /* the epilogue's rows, O doubles a thread */
} wino_job;

static void share(int64_t n, int th, int nthreads, int64_t *lo, int64_t *hi)
{
    size_t a, b;
    mxp_share_range((size_t)n, 1, th, nthreads, &a, &b);
    *lo = (int64_t)a;
    *hi = (int64_t)b;
}

/* The weights as [K][O] (rows k = (p, q, c) for OHWI, (c, p, q) for
 * OIHW): one transpose of all of them, so that U's rows are O wide and
 * the GEMMs take B as it lies (B transposed, each GEMM's packing had
 * transposed its U[k]: 12% of 1x256x14x14). */
static void weights_t_share(void *ctx, int th, int nthreads)
{
    const wino_job *j = ctx;
    const nn_geom *g = &j->c->g;
    const size_t k = 9 * (size_t)g->c, on = (size_t)g->o;
    int64_t lo, hi;
    share(g->o / 16 + 1, th, nthreads, &lo, &hi); /* blocks of 16 filters */
    const int64_t o0 = lo * 16, o1 = hi * 16 < g->o ? hi * 16 : g->o;
    if (o0 < o1)
        mxp_x32_transpose_kernel(mxp_isa_current(), (size_t)(o1 - o0))(
            (const float *)(const void *)j->c->w + (size_t)o0 * k, k * sizeof(float), (size_t)(o1 - o0), k,
            j->wt + o0, on);
}

/* U[k][c][o] for the input channels of a share, from the weights' [K][O]. */
static void weights_share(void *ctx, int th, int nthreads)
{
    const wino_job *j = ctx;
    const nn_geom *g = &j->c->g;
    const size_t cn = (size_t)g->c, on = (size_t)g->o;
    int64_t lo, hi;
    share(g->c, th, nthreads, &lo, &hi);
    for (int64_t ch = lo; ch < hi; ch++) { /* tap t of channel ch: row t C + ch (OHWI), 9 ch + t (OIHW) */
        const float *src = j->wt + (g->nhwc ? (size_t)ch : 9 * (size_t)ch) * on;
        const mxp_f32_wino_params p = { MXP_WINO_W, src, g->nhwc ? cn * on : on, 0, j->u + (size_t)ch * on,
                                        cn * on, 0, on, 0, 0 };
        j->fn(&p);
    }
}

/* The group's images padded: x's rows at [ph, ph + H) and its columns at
 * [pw, pw + W), zeros elsewhere (each (image, padded row) one unit of the
 * shares). */
static void pad_share(void *ctx, int th, int nthreads)
{
    const wino_job *j = ctx;
    const nn_geom *g = &j->c->g;
    const size_t cn = (size_t)g->c, rowf = (size_t)j->wp * cn;
    int64_t lo, hi;
    share(j->images * j->hp, th, nthreads, &lo, &hi);
    for (int64_t u = lo; u < hi; u++) {
        const int64_t n = j->n0 + u / j->hp, r = u % j->hp, ih = r - g->ph;
        float *d = j->xp + (size_t)u * rowf;
        if (ih < 0 || ih >= g->h) {
            memset(d, 0, rowf * sizeof(float));
            continue;
        }
        const size_t left = (size_t)g->pw * cn, inner = (size_t)g->w * cn;
        memset(d, 0, left * sizeof(float));
        const float *x = (const float *)(const void *)j->c->x;
        if (g->nhwc)
            memcpy(d + left, x + ((size_t)(n * g->h + ih) * (size_t)g->w) * cn, inner * sizeof(float));
        else /* [C][W] of planes H W apart -> [W][C] */
            mxp_x32_transpose_kernel(mxp_isa_current(), cn)(x + ((size_t)(n * g->c) * (size_t)g->h + (size_t)ih) *
                                                                     (size_t)g->w,
                                                             (size_t)(g->h * g->w) * sizeof(float), cn,
                                                             (size_t)g->w, d + left, cn);
        memset(d + left + inner, 0, (rowf - left - inner) * sizeof(float));
    }
}

/* Tile t of the group: its image (within the group), row and column. */
static void tile_at(const wino_job *j, int64_t t, int64_t *n, int64_t *i, int64_t *jj)
{
    const int64_t per = j->th * j->tw;
    *n = t / per;
    *i = t % per / j->tw;
    *jj = t % j->tw;
}

static void input_share(void *ctx, int th, int nthreads)
{
    const wino_job *j = ctx;
    const size_t cn = (size_t)j->c->g.c;
    int64_t lo, hi;
    share(j->count, th, nthreads, &lo, &hi);
    for (int64_t t = lo; t < hi; t++) {
        int64_t n, i, jj;
        tile_at(j, j->t0 + t, &n, &i, &jj);
        const float *patch = j->xp + ((size_t)(n * j->hp + 2 * i) * (size_t)j->wp + (size_t)(2 * jj)) * cn;
        const mxp_f32_wino_params p = { MXP_WINO_IN, patch, (size_t)j->wp * cn, cn, j->v + (size_t)t * cn,
                                        (size_t)j->cap * cn, 0, cn, 0, 0 };
        j->fn(&p);
    }
}

static void output_share(void *ctx, int th, int nthreads)
{
    const wino_job *j = ctx;
    const nn_geom *g = &j->c->g;
    const size_t on = (size_t)g->o;
    int64_t lo, hi;
    share(j->count, th, nthreads, &lo, &hi);
    for (int64_t t = lo; t < hi; t++) {
        int64_t n, i, jj;
        tile_at(j, j->t0 + t, &n, &i, &jj);
        float *y = j->y + ((size_t)(n * g->oh + 2 * i) * (size_t)g->ow + (size_t)(2 * jj)) * on;
        const int rows = g->oh - 2 * i < 2 ? 1 : 2, cols = g->ow - 2 * jj < 2 ? 1 : 2;
        const mxp_f32_wino_params p = { MXP_WINO_OUT, j->m + (size_t)t * on, (size_t)j->cap * on, 0, y,
                                        (size_t)g->ow * on, on, on, rows, cols };
        j->fn(&p);
    }
}

/* The epilogue over the group's output pixels: float64 sum + bias, the
 * activation and clamp, rounded once to float32 (conv-taps.c's). */
static void epilogue_share(void *ctx, int th, int nthreads)
{
    const wino_job *j = ctx;
    const nn_geom *g = &j->c->g;
    const size_t on = (size_t)g->o;
    double *buf = j->ebuf + (size_t)th * on;
    int64_t lo, hi;
    share(j->images * g->oh * g->ow, th, nthreads, &lo, &hi);
    for (int64_t px = lo; px < hi; px++) {
        float *y = j->y + (size_t)px * on;
        for (size_t q = 0; q < on; q++)
            buf[q] = j->bias ? (double)y[q] + j->bias[q] : (double)y[q];
        mxp_gemm_epilogue_act(&j->c->gemm, buf, on);
        for (size_t q = 0; q < on; q++)
            y[q] = (float)buf[q];
    }
}

/* The group's NHWC output into y's NCHW planes. */
static void planes_share(void *ctx, int th, int nthreads)
{
    const wino_job *j = ctx;
    const nn_geom *g = &j->c->g;
    const size_t ohw = (size_t)(g->oh * g->ow), on = (size_t)g->o;
    int64_t lo, hi;
    share(j->images, th, nthreads, &lo, &hi);
    for (int64_t n = lo; n < hi; n++) /* [OHW][O] -> [O][OHW] */
        mxp_x32_transpose_kernel(mxp_isa_current(), ohw)(j->y + (size_t)n * ohw * on, on * sizeof(float), ohw, on,
                                                         j->out + (size_t)n * on * ohw, ohw);
}

static void run(int nthreads, void (*fn)(void *, int, int), wino_job *j)
{
    if (nthreads > 1)
        mxp_parallel(nthreads, fn, j);
    else
        fn(j, 0, 1);
}

/* Threads for `units` units of about `work` operations each. */
static int threads_for(int64_t units, double work)
{
    const double ops = (double)units * work;
    int nt = mxp_share_threads(ops > 1e15 ? (size_t)1e15 : (size_t)ops, (size_t)1 << 18);
    return nt > units ? (int)(units > 0 ? units : 1) : nt;
}

static mxp_status winograd(const conv_plan *c, char *y)
{
    const nn_geom *g = &c->g;
    const size_t cn = (size_t)g->c, on = (size_t)g->o;
    wino_job j = { .c = c, .fn = nn_f32_wino_kernel(mxp_isa_current()) };
    j.th = (g->oh + 1) / 2;
    j.tw = (g->ow + 1) / 2;
    j.hp = 2 * j.th + 2;
    j.wp = 2 * j.tw + 2;
    const size_t image_pad = (size_t)(j.hp * j.wp) * cn, image_out = (size_t)(g->oh * g->ow) * on;
    /* images a group: their padded copies and (NCHW) their NHWC outputs within WINO_PAD_BYTES */
    int64_t group = (int64_t)(WINO_PAD_BYTES / ((image_pad + (g->nhwc ? 0 : image_out)) * sizeof(float)));
    group = group < 1 ? 1 : group > g->n ? g->n : group;
    const int64_t per = j.th * j.tw;
    int64_t cap = (int64_t)(WINO_CHUNK_BYTES / (16 * (cn + on) * sizeof(float)));
    cap = cap < 16 ? 16 : cap;
    cap = cap < group * per ? cap : group * per;
    const int nt_max = mxp_get_num_threads();
    const size_t fu = 16 * on * cn, fwt = 9 * cn * on, fxp = (size_t)group * image_pad;
    const size_t fv = (size_t)cap * 16 * cn, fm = (size_t)cap * 16 * on, fy = g->nhwc ? 0 : (size_t)group * image_out;
    const size_t fe = (size_t)nt_max * on + (c->gemm.bias ? on : 0);
    const size_t bytes = (fu + fwt + fxp + fv + fm + fy) * sizeof(float) + fe * sizeof(double) + 64;
    char *buf = mxp_workspace_get(bytes); /* kept for the next call */
    if (!buf)
        return mxp_error(MXP_ERR_NO_MEMORY, "no memory for a Winograd convolution's %zu-byte buffers", bytes);
    double *ebuf = (double *)(void *)buf; /* first: the doubles' alignment */
    float *f = (float *)(void *)(ebuf + fe);
    j.u = f;
    j.wt = j.u + fu;
    j.xp = j.wt + fwt;
    j.v = j.xp + fxp;
    j.m = j.v + fv;
    float *ygroup = j.m + fm;
    j.ebuf = ebuf;
    const bool epilogue = c->gemm.bias || c->gemm.activation || c->gemm.clamp;
    if (c->gemm.bias) { /* widened once a call, after the threads' rows */
        double *b = ebuf + (size_t)nt_max * on;
        mxp_convert(b, MXP_F64, c->gemm.bias, c->gemm.bias_dtype, on, NULL);
        j.bias = b;
    }
    j.cap = cap;
    run(threads_for(g->o / 16 + 1, 160.0 * (double)cn), weights_t_share, &j);
    run(threads_for(g->c, 40.0 * (double)on), weights_share, &j);
    mxp_status st = MXP_OK;
    for (j.n0 = 0; j.n0 < g->n && st == MXP_OK; j.n0 += group) {
        j.images = g->n - j.n0 < group ? g->n - j.n0 : group;
        j.y = g->nhwc ? (float *)(void *)y + (size_t)j.n0 * image_out : ygroup;
        j.out = (float *)(void *)y + (size_t)j.n0 * image_out;
        run(threads_for(j.images * j.hp, (double)(j.wp * g->c)), pad_share, &j);
        const int64_t tiles = j.images * per;
        for (j.t0 = 0; j.t0 < tiles && st == MXP_OK; j.t0 += cap) {
            j.count = tiles - j.t0 < cap ? tiles - j.t0 : cap;
            run(threads_for(j.count, 48.0 * (double)cn), input_share, &j);
            for (size_t k = 0; k < 16 && st == MXP_OK; k++)
                st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, (size_t)j.count, on, cn, 1.0, j.v + k * (size_t)cap * cn,
                              MXP_F32, cn, j.u + k * on * cn, MXP_F32, on, 0.0, j.m + k * (size_t)cap * on, MXP_F32,
                              on, NULL);
            if (st == MXP_OK)
                run(threads_for(j.count, 40.0 * (double)on), output_share, &j);
        }
        if (st == MXP_OK && epilogue)
            run(threads_for(j.images * g->oh * g->ow, 8.0 * (double)on), epilogue_share, &j);
        if (st == MXP_OK && !g->nhwc)
            run(threads_for(j.images, (double)image_out), planes_share, &j);
    }
    mxp_workspace_put(buf);
    return st;
}

bool conv_winograd(const conv_plan *c, char *y, mxp_status *st)
{
    const mxp_conv_algorithm a = c->opts.algorithm;
    if (a == MXP_CONV_DIRECT) /* (conv_forward has returned already where there is no output) */
        return false;
    const bool applies = conv_winograd_applies(c);
    if (a == MXP_CONV_WINOGRAD && !applies) {
        *st = mxp_error(MXP_ERR_UNSUPPORTED, "MXP_CONV_WINOGRAD takes float32 x, weights and output, a 3x3 kernel, "
                        "stride 1, dilation 1 and one group (and no rounding mode or accumulator asked for)");
        return true;
    }
    if (!applies || (a == MXP_CONV_AUTO && !pays(c)))
        return false;
    *st = winograd(c, y);
    return true;
}

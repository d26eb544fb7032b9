/* NHWC float32 and bfloat16 convolutions with no im2col panel (float16 x
 * arrives widened into float32, float8 into bfloat16): the GEMM's
 * micro-tiles read each output pixel's window where it lies.  In rows of x padded to
 * Wp = W + 2 pw (every window inside them), the window of output pixel
 * (oh, ow) starts at row oh sh, column ow sw, and its tap (p, q) is that
 * pointer plus off(p, q) = (p dh Wp + q dw) C elements, cg channels long:
 * the K = KH KW cg values of k in KH KW segments of cg, in the weights'
 * (p, q, c) order; with one group and no dilation across, a kernel row's
 * KW taps lie side by side, KH segments of KW C values (the RGB stem's
 * 7 x 21 instead of 49 x 3).  The taps kernels (gemm-list.inc's
 * MXP_GEMM_UKERNEL_TAPS) take a pointer per row of the tile and the
 * segments' offsets and sum each output through every segment in
 * registers: one chain of fused multiply-adds over all of K.  The panel
 * path (conv.c) copies the window rows into an im2col block first (12% of
 * a 64-channel 3x3 convolution at AVX-512) and splits K at the GEMM's KC.
 *
 * Work: pixels in chunks within an image (TAPS_CHUNK); a chunk's band of
 * input rows is copied with its padding into the thread's buffer (L2:
 * a padded copy of all of x went to memory and back, 8 images of 56x56x64
 * took 13.0 ms where one took 1.43), unless x has no padding (read in
 * place); then by group and NR-column panel of the packed weights (a
 * panel stays in L2 across the chunk's tiles), its MR-pixel tiles.  The
 * threads take contiguous ranges of pixels; each tile is computed by one
 * thread in the same order: the bits do not depend on the thread count.
 * NCHW float32 x (the NCHW path through NHWC, conv.c) is transposed into
 * NHWC a band at a time while it is padded: a whole NHWC copy went to
 * memory and back.
 * The epilogue (bias, activation, clamp) runs on a chunk's rows once they
 * are complete, in float64 rounded once, as mxp_gemm's; a bfloat16 y is
 * rounded from the chunk's float32 sums (a thread's buffer). */
#include <string.h>

#include "core/alloc-internal.h"
#include "core/error.h"
#include "convert/convert-config.h"
#include "core/threads-internal.h"
#include "gemm/gemm-internal.h"
#include "mxp/alloc.h"
#include "nn/conv-plan.h"

enum {
    TAPS_MIN_SEG = 16,    /* values of k a segment at least: shorter segments are mostly switching */
    TAPS_CHUNK = 384,     /* pixels a chunk at most (a multiple of 8 and 6) */
    TAPS_MAX_TAPS = 4096, /* kernel windows up to 64 x 64 */
    /* the most bytes of a group's packed weights: all of them are packed before the first tile, so
       they should still be in L2 when the tiles read them (512 channels 3x3 on 7x7, 9.4 MB packed:
       1.82 -> 2.32 ms against the panel path, whose GEMM packs a KC block just before its tiles;
       256 channels, 2.4 MB: 2-3% slower; 128 channels, 590 KB: 5% faster) */
    TAPS_MAX_WEIGHT_BYTES = 1 << 20,
    /* the same for the AVX-512 8 x 48 float32 tile: on a Zen 4 (1 MiB of L2), 256 channels 3x3 (2.4 MB) on
       8x14x14 measured 8-10% faster than the panel path in both layouts (17.1-17.2 against 18.6-19.1 ms);
       at AVX2's 6 x 16 tile NCHW was 13% slower (21.8 against 19.4 ms), NHWC even */
    TAPS_MAX_WEIGHT_BYTES_WIDE = 4 << 20,
    /* the most bytes of a band of padded rows (a thread's buffer) */
    TAPS_MAX_BAND_BYTES = 4 << 20,
    TAPS_EPILOGUE = 512,  /* output values an epilogue call takes at most (whole rows; one row if wider) */
};

/* The float64 rounding mxp_gemm's epilogue ends with, in its default
 * conversion only (other modes, overflow rules or counters: the GEMM path). */
/* The output rows a chunk of at most TAPS_CHUNK pixels touches, and the
 * input rows they read. */
static int64_t band_rows(const nn_geom *g)
{
    int64_t out = (TAPS_CHUNK + g->ow - 1) / g->ow + 1;
    out = out < g->oh ? out : g->oh;
    return (out - 1) * g->sh + (g->kh - 1) * g->dh + 1;
}

bool conv_taps_init(conv_taps *t, const conv_plan *c, bool planar, bool clean)
{
    const nn_geom *g = &c->g;
    const bool bf16 = c->xt == MXP_BF16 && c->wt == MXP_BF16;
    /* a kernel row's taps lie side by side in x (one group, no dilation across): one segment */
    const bool rows_whole = g->groups == 1 && g->dw == 1;
    const size_t seglen = (size_t)(rows_whole ? g->kw * c->cg : c->cg);
    if (!g->nhwc || c->direct || c->quant || !((bf16 && clean) || (c->xt == MXP_F32 && c->wt == MXP_F32)) ||
        !(c->yt == MXP_F32 || (bf16 && c->yt == MXP_BF16)) || seglen < TAPS_MIN_SEG || g->kh * g->kw > TAPS_MAX_TAPS ||
        (c->gemm.acc_dtype != 0 && c->gemm.acc_dtype != MXP_F32) || !conv_default_rounding(&c->gemm.convert) ||
        (c->gemm.bias && c->gemm.bias_kind != MXP_BIAS_PER_COL))
        return false;
    const mxp_isa isa = mxp_isa_current();
    const mxp_gemm_config *cfg = mxp_gemm_config_for(MXP_F32, c->xt, c->wt, isa);
    const mxp_gemm_ukernel_taps_fn fn = cfg ? mxp_gemm_config_ukernel_taps(cfg) : NULL;
    /* bfloat16: the AMX tiles, on segments of whole 32-value chunks */
    if (!fn || cfg->mr > 32 || cfg->packed != c->xt || seglen % cfg->kpack || (planar && c->xt != MXP_F32))
        return false;
    const size_t es = mxp_dtype_itemsize(c->xt), k = (size_t)c->k, nseg = k / seglen;
    const size_t panels = ((size_t)c->og + cfg->nr - 1) / cfg->nr;
    const int64_t wp = g->w + 2 * g->pw;
    const size_t band = g->ph || g->pw || planar ? ((size_t)(band_rows(g) * wp * g->c) * es + 63) / 64 * 64 : 0;
    const size_t max_weights = c->xt == MXP_F32 && cfg->nr >= 48 ? TAPS_MAX_WEIGHT_BYTES_WIDE : TAPS_MAX_WEIGHT_BYTES;
    if (panels * cfg->nr * k * es > max_weights || band > TAPS_MAX_BAND_BYTES)
        return false;
    mxp_cvt_fn round32 = NULL, round64 = NULL;
    if (c->yt == MXP_BF16) {
        const mxp_cvt_kernel *k32 = mxp_cvt_find(MXP_BF16, MXP_F32, MXP_ROUND_NEAREST_EVEN, isa);
        const mxp_cvt_kernel *k64 = mxp_cvt_find(MXP_BF16, MXP_F64, MXP_ROUND_NEAREST_EVEN, isa);
        if (!k32 || !k64)
            return false;
        round32 = k32->fn, round64 = k64->fn;
    }
    memset(t, 0, sizeof *t);
    t->c = c;
    t->es = es;
    t->mr = cfg->mr;
    t->nr = cfg->nr;
    t->fn = fn;
    t->release = mxp_gemm_config_release(cfg);
    t->round32 = round32;
    t->round64 = round64;
    t->wp = wp;
    t->nseg = nseg;
    t->seglen = seglen;
    t->band_bytes = band;
    t->planar = planar ? mxp_x32_transpose_kernel(isa, (size_t)g->c) : NULL;
    t->group_bytes = panels * cfg->nr * k * es;
    const size_t wbytes = (size_t)g->groups * t->group_bytes;
    if (!(t->bp = mxp_workspace_get(wbytes + nseg * sizeof(ptrdiff_t))))
        return false; /* no memory: the panel path (which will say so) */
    t->off = (ptrdiff_t *)(void *)(t->bp + wbytes);
    for (size_t sg = 0; sg < nseg; sg++) { /* segment sg: tap (p, q), or kernel row p */
        const int64_t p = rows_whole ? (int64_t)sg : (int64_t)sg / g->kw, q = rows_whole ? 0 : (int64_t)sg % g->kw;
        t->off[sg] = (ptrdiff_t)((p * g->dh * wp + q * g->dw) * g->c);
    }
    for (int64_t grp = 0; grp < g->groups; grp++) {
        const mxp_gemm_operand w = { (const unsigned char *)c->w + (size_t)(grp * c->og) * k * es, c->wt, k, 1,
                                     NULL };
        (void)mxp_gemm_pack_b(cfg, &w, 0, k, 0, (size_t)c->og, t->bp + (size_t)grp * t->group_bytes, false);
    }
    return true;
}

void conv_taps_free(conv_taps *t)
{
    mxp_workspace_put(t->bp);
    t->bp = NULL;
}

typedef struct taps_job {
    const conv_taps *t;
    char *y;
    int64_t pix0, count;
    char *scratch; /* a thread's: its band of padded rows, float32 sums of a chunk for a bfloat16 y, then
                      O doubles for the epilogue */
    size_t scratch_bytes, sums_bytes;
    bool epilogue;
    const double *bias; /* the O bias values widened (NULL: none) */
} taps_job;

/* A chunk's rows [r0, r1) of the job: float32 sums s (rows O apart; y
 * itself for a float32 y) through the epilogue (bias, activation, clamp:
 * mxp_gemm's, in float64) into y, rounded once.  The rows are contiguous
 * in y: as many as fit TAPS_EPILOGUE values go through each call (rows of
 * 16 or 32 channels one call each were half of a small CNN's convolution
 * time). */
static void taps_finish(const taps_job *j, int64_t r0, int64_t r1, const float *s, double *buf)
{
    const conv_taps *t = j->t;
    const conv_plan *c = t->c;
    const size_t o = (size_t)c->g.o, ys = mxp_dtype_itemsize(c->yt);
    const mxp_cvt_params rne = { MXP_ROUND_NEAREST_EVEN, MXP_OVERFLOW_INF, 0, 0, NULL };
    if (!j->epilogue) { /* a bfloat16 y: the sums rounded */
        t->round32(j->y + (size_t)r0 * o * ys, s, (size_t)(r1 - r0) * o, &rne);
        return;
    }
    const size_t per = o < TAPS_EPILOGUE ? TAPS_EPILOGUE / o : 1; /* rows a call */
    for (int64_t r = r0; r < r1; r += (int64_t)per) {
        const size_t rows = (size_t)(r1 - r) < per ? (size_t)(r1 - r) : per, len = rows * o;
        const float *sr = s + (size_t)(r - r0) * o;
        for (size_t i = 0; i < rows; i++)
            if (j->bias)
                for (size_t q = 0; q < o; q++)
                    buf[i * o + q] = (double)sr[i * o + q] + j->bias[q];
            else
                for (size_t q = 0; q < o; q++)
                    buf[i * o + q] = sr[i * o + q];
        mxp_gemm_epilogue_act(&c->gemm, buf, len);
        if (t->round64) {
            t->round64(j->y + (size_t)r * o * ys, buf, len, &rne);
        } else {
            float *yr = (float *)(void *)(j->y + (size_t)r * o * ys);
            for (size_t q = 0; q < len; q++)
                yr[q] = (float)buf[q];
        }
    }
}

/* Input rows [ih0, ih0 + rows) of image n, padded (zeros outside x), into
 * band: rows wp pixels wide. */
static void fill_band(const conv_taps *t, char *band, int64_t n, int64_t ih0, int64_t rows)
{
    const nn_geom *g = &t->c->g;
    const size_t pixb = (size_t)g->c * t->es, side = (size_t)g->pw * pixb, inner = (size_t)g->w * pixb;
    for (int64_t r = 0; r < rows; r++) {
        char *d = band + (size_t)(r * t->wp) * pixb;
        const int64_t ih = ih0 + r;
        if (ih < 0 || ih >= g->h) {
            memset(d, 0, 2 * side + inner);
            continue;
        }
        memset(d, 0, side);
        if (t->planar) /* [C][W] of planes H W apart -> [W][C] */
            t->planar(t->c->x + (size_t)((n * g->c * g->h + ih) * g->w) * t->es, (size_t)(g->h * g->w) * t->es,
                      (size_t)g->c, (size_t)g->w, d + side, (size_t)g->c);
        else
            memcpy(d + side, t->c->x + (size_t)((n * g->h + ih) * g->w) * pixb, inner);
        memset(d + side + inner, 0, side);
    }
}

static void taps_share(void *ctx, int th, int nthreads)
{
    const taps_job *j = ctx;
    const conv_taps *t = j->t;
    const conv_plan *c = t->c;
    const nn_geom *g = &c->g;
    size_t lo, hi;
    mxp_share_range((size_t)j->count, t->mr, th, nthreads, &lo, &hi);
    char *scratch = j->scratch + (size_t)th * j->scratch_bytes, *band = scratch;
    float *sums = (float *)(void *)(scratch + t->band_bytes);
    double *tmp = (double *)(void *)(scratch + t->band_bytes + j->sums_bytes);
    const int64_t o = g->o, ohw = g->oh * g->ow;
    const size_t mr = t->mr, nr = t->nr, og = (size_t)c->og, es = t->es;
    const void *rows[TAPS_CHUNK], *grows[TAPS_CHUNK];
    for (size_t c0 = lo, c1; c0 < hi; c0 = c1) {
        /* the chunk: at most TAPS_CHUNK pixels of one image, (n, oh, ow) walked from the first */
        const int64_t p = j->pix0 + (int64_t)c0, n = p / ohw, r0 = p % ohw, oh0 = r0 / g->ow;
        c1 = hi - c0 < TAPS_CHUNK ? hi : c0 + TAPS_CHUNK;
        c1 = c1 - c0 < (size_t)(ohw - r0) ? c1 : c0 + (size_t)(ohw - r0);
        /* the window of (oh, ow) at base + ((oh - top) sh width + ow sw) C elements */
        const char *base = c->x + (size_t)(n * g->h * g->w * g->c) * es; /* x in place */
        int64_t top = 0, width = g->w;
        if (t->band_bytes) { /* the chunk's input rows padded into the band */
            const int64_t oh1 = (r0 + (int64_t)(c1 - c0) - 1) / g->ow;
            fill_band(t, band, n, oh0 * g->sh - g->ph, (oh1 - oh0) * g->sh + (g->kh - 1) * g->dh + 1);
            base = band, top = oh0, width = t->wp;
        }
        int64_t oh = oh0, ow = r0 % g->ow;
        for (size_t i = 0; i < c1 - c0; i++) {
            rows[i] = base + (size_t)((oh - top) * g->sh * width + ow * g->sw) * (size_t)g->c * es;
            if (++ow == g->ow)
                ow = 0, oh++;
        }
        /* float32 sums into y itself, or (a bfloat16 y) into the thread's chunk of them */
        float *s = t->round32 ? sums : (float *)(void *)(j->y + c0 * (size_t)o * sizeof(float));
        for (int64_t grp = 0; grp < g->groups; grp++) {
            const void *const *rg = rows;
            if (grp > 0) { /* the group's channels */
                for (size_t i = 0; i < c1 - c0; i++)
                    grows[i] = (const char *)rows[i] + (size_t)(grp * c->cg) * es;
                rg = grows;
            }
            const char *bg = t->bp + (size_t)grp * t->group_bytes;
            for (size_t jr = 0; jr < og; jr += nr) {
                const size_t ncols = og - jr < nr ? og - jr : nr;
                const char *bp = bg + jr * (size_t)c->k * es;
                for (size_t ir = c0; ir < c1; ir += mr)
                    t->fn(c1 - ir < mr ? c1 - ir : mr, ncols, t->nseg, t->seglen, rg + (ir - c0), t->off, bp,
                          s + (ir - c0) * (size_t)o + (size_t)grp * og + jr, (size_t)o, c->alpha, 0.0);
            }
        }
        if (j->epilogue || t->round32)
            taps_finish(j, (int64_t)c0, (int64_t)c1, s, tmp);
    }
    if (t->release)
        t->release();
}

mxp_status conv_taps_rows(const conv_taps *t, char *y, int64_t pix0, int64_t count)
{
    const conv_plan *c = t->c;
    const mxp_gemm_opts *o = &c->gemm;
    taps_job j = { t, y, pix0, count, NULL, 0, 0, o->bias || o->activation || o->clamp, NULL };
    const double macs = (double)count * (double)c->g.o * (double)c->k;
    int nthreads = mxp_share_threads(macs > 1e15 ? (size_t)1e15 : (size_t)macs, (size_t)1 << 21);
    const size_t tiles = ((size_t)count + t->mr - 1) / t->mr;
    if ((size_t)nthreads > tiles)
        nthreads = (int)tiles;
    const size_t ob = (size_t)c->g.o * sizeof(double); /* the bias widened, the epilogue's rows (eb) */
    const size_t eb = ((size_t)c->g.o > TAPS_EPILOGUE ? (size_t)c->g.o : TAPS_EPILOGUE) * sizeof(double);
    j.sums_bytes = t->round32 ? (size_t)TAPS_CHUNK * (size_t)c->g.o * sizeof(float) : 0;
    j.scratch_bytes = (t->band_bytes + j.sums_bytes + eb + 63) / 64 * 64;
    if (!(j.scratch = mxp_workspace_get((size_t)nthreads * j.scratch_bytes + ob)))
        return mxp_error(MXP_ERR_NO_MEMORY, "no memory for a convolution's rows (%zu bytes)",
                         (size_t)nthreads * j.scratch_bytes + ob);
    if (o->bias) { /* widened once a call, after the threads' scratch */
        double *b = (double *)(void *)(j.scratch + (size_t)nthreads * j.scratch_bytes);
        mxp_convert(b, MXP_F64, o->bias, o->bias_dtype, (size_t)c->g.o, NULL);
        j.bias = b;
    }
    if (nthreads > 1)
        mxp_parallel(nthreads, taps_share, &j);
    else
        taps_share(&j, 0, 1);
    mxp_workspace_put(j.scratch);
    return MXP_OK;
}

/* Internal: a convolution checked and laid out for the GEMM (src/nn/conv.c,
 * conv-backward.c): the geometry, dense copies of x and the weights where
 * needed, the GEMM's epilogue options. */
#ifndef MXP_NN_CONV_PLAN_H
#define MXP_NN_CONV_PLAN_H

#include "core/abi.h"
#include "kernels/cvt-kernel.h"
#include "kernels/gemm-kernels.h"
#include "kernels/pack-kernels.h"
#include "nn/conv-internal.h"

typedef struct conv_plan {
    nn_geom g;
    int64_t cg, og, k;   /* channels per group in and out; K = kh kw cg */
    const char *x, *w;   /* dense */
    mxp_dtype xt, wt, yt;
    size_t xsize, wsize, ysize;
    unsigned char pad;   /* the byte outside x in the panel (0: zero for every float dtype) */
    bool direct;         /* 1x1, stride 1, unpadded: the GEMM reads x in place */
    bool quant;          /* uint8/int8 x by int8 weights: the integer GEMM */
    bool has_bias;
    double alpha;        /* the GEMM's alpha (quantized: x_scale / y_scale or x_scale; else 1) */
    mxp_gemm_opts gemm;  /* bias (dense), activation, clamp; quantized: zero points, scales */
    mxp_array *own[3];   /* dense copies of x, weight, bias (or new references) */
    double *qbias;       /* quantized: the int32 bias in the output's scale (mxp_malloc) */
    mxp_conv_opts opts;  /* the caller's (zero: the defaults) */
} conv_plan;

/* Checks the arguments (x, weight 4-d of float dtypes; bias NULL or [O];
 * opts NULL or valid) and fills c: the geometry only, or (layout) the
 * dense arrays and epilogue too; conv_plan_free after MXP_OK. */
mxp_status conv_plan_init(conv_plan *c, const char *fn, const mxp_array *x, const mxp_array *weight,
                          const mxp_array *bias, const mxp_conv_opts *opts, bool layout);
void conv_plan_free(conv_plan *c);

/* The output's dtype yt checked (float; quantized: int32, uint8, int8 or
 * float) and the GEMM's options for it completed. */
mxp_status conv_plan_output(conv_plan *c, const char *fn, mxp_dtype yt);

/* The pixels of one im2col panel (of total). */
int64_t conv_chunk_pixels(const conv_plan *c, int64_t total);
/* The im2col panels (conv.c): NHWC rows of pixels of the batch, NCHW rows
 * of (c, p, q) of image n with np columns. */
void conv_panel_nhwc(const conv_plan *c, char *panel, int64_t pix0, int64_t np, int64_t grp);
void conv_panel_nchw(const conv_plan *c, char *panel, int64_t n, int64_t pix0, int64_t np, int64_t grp);
/* NHWC x with its padding written out (the pad byte) into a workspace
 * (mxp_workspace_put it), *padded the plan on it (no padding: every
 * window inside x, so the panels copy whole window rows without edge
 * tests; small images have a quarter to half of their pixels at an
 * edge); NULL, *padded untouched, where it does not pay (taps wider than
 * 128 bytes copy window rows already, and 65 to 128 only on images of
 * up to 1024 pixels; no padding; a 1x1 direct product) or does not fit
 * (64 MiB) or no memory. */
char *conv_pad_x(const conv_plan *c, conv_plan *padded);
/* The GEMM's A made block by block (mxp_gemm_gather's fill, ctx a
 * conv_gather): rows i0 .. i0+mc of the NHWC panel of group grp, its
 * columns k0 .. k0+kc, rows ld elements apart with zeros past kc. */
typedef struct conv_gather {
    const conv_plan *c;
    int64_t grp;
    int64_t pix0; /* the batch's pixel of the GEMM's row 0 */
} conv_gather;
void conv_gather_rows(const void *ctx, size_t i0, size_t mc, size_t k0, size_t kc, void *dst, size_t ld);
/* NHWC float32 and bfloat16 convolutions whose GEMM tiles read x's taps
 * where they lie (src/nn/conv-taps.c): no im2col panel.  conv_taps_init
 * takes c (an NHWC plan, x dense) when the configuration has a taps
 * kernel and the product suits it, packing the weights (a workspace);
 * false: not taken, nothing held.  planar: c's x is stored NCHW (float32
 * only), each chunk's band of rows transposed into NHWC while it is
 * padded (no NHWC copy of all of x).  clean: the caller has found that x
 * and the weights hold no value the bfloat16 kernels flush (its scan for
 * the gathered GEMM, nhwc_gathers); bfloat16 is taken only then.  conv_taps_rows computes the output rows
 * of pixels [pix0, pix0 + count) of the batch into y (ld O), epilogue
 * included; conv_taps_free gives the workspace back. */
typedef struct conv_taps {
    const conv_plan *c;
    char *bp;              /* the weights packed, group after group, then off (a workspace) */
    ptrdiff_t *off;        /* the taps' offsets in the rows the tiles read, elements */
    size_t es;             /* bytes of an element of x and the weights: 4 (float32) or 2 (bfloat16) */
    size_t mr, nr, group_bytes;
    size_t nseg, seglen;   /* k in segments: a tap's cg channels, or a kernel row's KW C values (one group,
                              dilation 1 across: its taps lie side by side) */
    int64_t wp;            /* the width of those rows: W + 2 pw */
    size_t band_bytes;     /* padded or planar: a band of x's rows (the most a chunk reads), else 0: x in place */
    mxp_x32_transpose_fn planar; /* x stored NCHW: the transpose of a band's rows into it, else NULL */
    mxp_gemm_ukernel_taps_fn fn;
    void (*release)(void); /* the kernel's state in a thread, given back after its share (NULL: none) */
    mxp_cvt_fn round32, round64; /* a bfloat16 y: float32 sums, float64 epilogue rows into it (else NULL) */
} conv_taps;
bool conv_taps_init(conv_taps *t, const conv_plan *c, bool planar, bool clean);
mxp_status conv_taps_rows(const conv_taps *t, char *y, int64_t pix0, int64_t count);
void conv_taps_free(conv_taps *t);

/* Whether the output asks for the default rounding only (nearest even,
 * IEEE overflow, no counters): the taps and Winograd paths' condition. */
static inline bool conv_default_rounding(const mxp_convert_opts *co)
{
    return co->rounding == MXP_ROUND_NEAREST_EVEN && co->overflow == MXP_OVERFLOW_INF && !co->flags;
}

/* Winograd F(2x2, 3x3) (src/nn/conv-winograd.c): whether c is a product
 * it computes (float32 x, weights and output, 3x3, stride 1, dilation 1,
 * one group, default rounding); conv_winograd computes it into dense y
 * where c's algorithm asks for it (MXP_CONV_AUTO: where it also pays),
 * *st the status (MXP_ERR_UNSUPPORTED for MXP_CONV_WINOGRAD where it
 * does not apply); false: not taken, nothing done. */
bool conv_winograd_applies(const conv_plan *c);
bool conv_winograd(const conv_plan *c, char *y, mxp_status *st);

/* The forward product into dense y of the output's shape (y's dtype in c->yt). */
mxp_status conv_forward(const conv_plan *c, mxp_array *y);

#endif

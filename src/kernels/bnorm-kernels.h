/* Float32 blocks of batch norm (src/kernels/f32-bnorm/, list
 * f32-bnorm-list.inc; the operation is src/nn/batchnorm.c).  A block is
 * x[k][i], k < c channels, i < inner values each (NCHW: inner = H W; NHWC:
 * inner = 1), dense.  One call does one of batch norm's passes over it, in
 * float64 and the order of src/nn/'s generic loops:
 *
 *   MXP_BNORM_SUM    s[k] += sum_i x[k][i]              (inner > 1: sum8.h's order
 *   MXP_BNORM_SUMSQ  s[k] += sum_i (x[k][i] - mean[k])^2  over the row, then added)
 *   MXP_BNORM_NORM   y[k][i] = round(fma(x - mean[k], a[k], b[k])), a[k] = rstd[k] * w[k]
 *
 * (w, b NULL: a = rstd, + 0; round: the float32 cast under the library's
 * environment) so every kernel gives its twin's bits, which are the
 * generic path's.  The sums are norm-kernels.h's row sums.
 *
 * A call may take `blocks` such blocks of the same channels, x_ld floats
 * apart in x (y_ld in y; blocks 0 or 1: one block): each channel's sums
 * are added block after block, as one call a block would, and the sums
 * run MXP_NORM_ROWS rows at once over the (channel, block) pairs -- with
 * few channels a group, a call a block ran short, latency-bound chains. */
#ifndef MXP_KERNELS_BNORM_KERNELS_H
#define MXP_KERNELS_BNORM_KERNELS_H

#include <math.h>
#include <stddef.h>

#include "kernels/norm-kernels.h"

enum { MXP_BNORM_SUM, MXP_BNORM_SUMSQ, MXP_BNORM_NORM };

typedef struct mxp_f32_bnorm_params {
    int pass;
    float *y;
    const float *x;
    size_t c, inner;
    const double *mean, *rstd, *w, *b; /* c each */
    double *s;                         /* c sums */
    size_t blocks;                     /* see above; 0: one block */
    ptrdiff_t x_ld, y_ld;
} mxp_f32_bnorm_params;

typedef void mxp_f32_bnorm_ukernel(const mxp_f32_bnorm_params *p);

#define MXP_F32_BNORM(isa, tile, fn, twin) mxp_f32_bnorm_ukernel fn;
#include "kernels/f32-bnorm-list.inc"
#undef MXP_F32_BNORM

/* Channel k's factor rstd w (rstd without w). */
static inline double mxp_bnorm_scale(const mxp_f32_bnorm_params *p, size_t k)
{
    return p->w ? p->rstd[k] * p->w[k] : p->rstd[k];
}

static inline float mxp_bnorm_out1(const mxp_f32_bnorm_params *p, size_t k, float x)
{
    return (float)fma((double)x - p->mean[k], mxp_bnorm_scale(p, k), p->b ? p->b[k] : 0);
}

static inline size_t mxp_bnorm_nblocks(const mxp_f32_bnorm_params *p)
{
    return p->blocks ? p->blocks : 1;
}

/* Block o of p as a call of one block. */
static inline mxp_f32_bnorm_params mxp_bnorm_block(const mxp_f32_bnorm_params *p, size_t o)
{
    mxp_f32_bnorm_params q = *p;
    q.x += (ptrdiff_t)o * p->x_ld;
    q.y = p->y ? p->y + (ptrdiff_t)o * p->y_ld : NULL;
    q.blocks = 1;
    return q;
}

/* The rows of up to MXP_NORM_ROWS (channel, block) pairs from pair t
 * (inner > 1; pair t is channel t / blocks of block t % blocks) and their
 * centres (the mean for MXP_BNORM_SUMSQ, else 0), for the kernels' sums
 * of several rows at once (independent chains; each row's order
 * unchanged); returns how many. */
static inline size_t mxp_bnorm_rows(const mxp_f32_bnorm_params *p, size_t t, const float **x, double *c)
{
    const size_t nb = mxp_bnorm_nblocks(p), pairs = p->c * nb;
    const size_t rows = pairs - t < MXP_NORM_ROWS ? pairs - t : MXP_NORM_ROWS;
    for (size_t r = 0; r < rows; r++) {
        const size_t k = (t + r) / nb, o = (t + r) % nb;
        x[r] = p->x + (ptrdiff_t)o * p->x_ld + k * p->inner;
        c[r] = p->pass == MXP_BNORM_SUMSQ ? p->mean[k] : 0;
    }
    return rows;
}

/* MXP_BNORM_SUM or _SUMSQ over blocks with inner > 1: s[k] += each row's
 * sum, block after block, MXP_NORM_ROWS rows at a time through the
 * kernel's sums(x, rows, p, c, out), an always-inline body called with
 * the row count a constant. */
#define MXP_BNORM_CHANNEL_SUMS(p, sums)                                                                               \
    do {                                                                                                              \
        const size_t nb_ = mxp_bnorm_nblocks(p);                                                                      \
        for (size_t t_ = 0; t_ < (p)->c * nb_; t_ += MXP_NORM_ROWS) {                                                 \
            const float *x_[MXP_NORM_ROWS] = { NULL };                                                                \
            double c_[MXP_NORM_ROWS] = { 0 }, out_[MXP_NORM_ROWS];                                                    \
            const size_t rows_ = mxp_bnorm_rows(p, t_, x_, c_);                                                       \
            switch (rows_) {                                                                                          \
            case MXP_NORM_ROWS: sums(x_, MXP_NORM_ROWS, p, c_, out_); break;                                          \
            case 3: sums(x_, 3, p, c_, out_); break;                                                                  \
            case 2: sums(x_, 2, p, c_, out_); break;                                                                  \
            default: sums(x_, 1, p, c_, out_);                                                                        \
            }                                                                                                         \
            for (size_t r_ = 0; r_ < rows_; r_++)                                                                     \
                (p)->s[(t_ + r_) / nb_] += out_[r_];                                                                  \
        }                                                                                                             \
    } while (0)

/* A vector kernel's entry: MXP_BNORM_SUM and _SUMSQ over blocks with
 * inner > 1 through MXP_BNORM_CHANNEL_SUMS(p, sums), everything else
 * block after block through one_block(const mxp_f32_bnorm_params *). */
#define MXP_BNORM_KERNEL_BODY(p, sums, one_block)                                                                     \
    do {                                                                                                              \
        if ((p)->inner > 1 && (p)->pass != MXP_BNORM_NORM) {                                                          \
            MXP_BNORM_CHANNEL_SUMS(p, sums);                                                                          \
            break;                                                                                                    \
        }                                                                                                             \
        for (size_t o_ = 0; o_ < mxp_bnorm_nblocks(p); o_++) {                                                        \
            const mxp_f32_bnorm_params q_ = mxp_bnorm_block(p, o_);                                                   \
            one_block(&q_);                                                                                           \
        }                                                                                                             \
    } while (0)

/* Channels [k0, c) of an NHWC block (inner 1): the portable loop, the
 * kernels' tails. */
static inline void mxp_bnorm_pixel_tail(const mxp_f32_bnorm_params *p, size_t k0)
{
    for (size_t k = k0; k < p->c; k++) {
        const double v = p->x[k];
        if (p->pass == MXP_BNORM_SUM)
            p->s[k] += v;
        else if (p->pass == MXP_BNORM_SUMSQ)
            p->s[k] += (v - p->mean[k]) * (v - p->mean[k]);
        else
            p->y[k] = mxp_bnorm_out1(p, k, p->x[k]);
    }
}

/* Values [i0, inner) of channel k's row, normalized: the tails. */
static inline void mxp_bnorm_row_tail(const mxp_f32_bnorm_params *p, size_t k, size_t i0)
{
    for (size_t i = i0; i < p->inner; i++)
        p->y[k * p->inner + i] = mxp_bnorm_out1(p, k, p->x[k * p->inner + i]);
}

#endif

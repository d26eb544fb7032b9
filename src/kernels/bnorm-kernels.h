/* Float32 blocks of batch norm (src/kernels/f32-bnorm/, list
 * f32-bnorm-list.inc; the operation is src/nn/batchnorm.c).  A block is
 * x[k][i], k < c channels, i < inner values each (NCHW: inner = H W; NHWC:
 * inner = 1), dense.  One call does one of batch norm's passes over it, in
 * float64 and the order of src/nn/'s generic loops:
 *
 *   MXP_BNORM_SUM    s[k] += sum_i x[k][i]              (inner > 1: sum8.h's order
 *   MXP_BNORM_SUMSQ  s[k] += sum_i (x[k][i] - mean[k])^2  over the row, then added)
 *   MXP_BNORM_NORM   y[k][i] = round((((x - mean[k]) * rstd[k]) * w[k]) + b[k])
 *
 * (w, b NULL: no product, + 0; round: the float32 cast under the library's
 * environment) so every kernel gives its twin's bits, which are the
 * generic path's.  The sums are norm-kernels.h's row sums. */
#ifndef MXP_KERNELS_BNORM_KERNELS_H
#define MXP_KERNELS_BNORM_KERNELS_H

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
} mxp_f32_bnorm_params;

typedef void mxp_f32_bnorm_ukernel(const mxp_f32_bnorm_params *p);

#define MXP_F32_BNORM(isa, tile, fn, twin) mxp_f32_bnorm_ukernel fn;
#include "kernels/f32-bnorm-list.inc"
#undef MXP_F32_BNORM

static inline float mxp_bnorm_out1(const mxp_f32_bnorm_params *p, size_t k, float x)
{
    const double h = ((double)x - p->mean[k]) * p->rstd[k];
    return (float)((p->w ? h * p->w[k] : h) + (p->b ? p->b[k] : 0));
}

/* The rows of up to MXP_NORM_ROWS channels from k (inner > 1) and their
 * centres (the mean for MXP_BNORM_SUMSQ, else 0), for the kernels' sums
 * of several channels at once (independent chains; each channel's order
 * unchanged); returns how many. */
static inline size_t mxp_bnorm_rows(const mxp_f32_bnorm_params *p, size_t k, const float **x, double *c)
{
    const size_t rows = p->c - k < MXP_NORM_ROWS ? p->c - k : MXP_NORM_ROWS;
    for (size_t r = 0; r < rows; r++) {
        x[r] = p->x + (k + r) * p->inner;
        c[r] = p->pass == MXP_BNORM_SUMSQ ? p->mean[k + r] : 0;
    }
    return rows;
}

/* MXP_BNORM_SUM or _SUMSQ over a block with inner > 1: s[k] += each
 * channel's sum, MXP_NORM_ROWS channels at a time through the kernel's
 * sums(x, rows, p, c, out), an always-inline body called with the row
 * count a constant. */
#define MXP_BNORM_CHANNEL_SUMS(p, sums)                                                                               \
    do {                                                                                                              \
        for (size_t k_ = 0; k_ < (p)->c; k_ += MXP_NORM_ROWS) {                                                       \
            const float *x_[MXP_NORM_ROWS] = { NULL };                                                                \
            double c_[MXP_NORM_ROWS] = { 0 }, out_[MXP_NORM_ROWS];                                                    \
            const size_t rows_ = mxp_bnorm_rows(p, k_, x_, c_);                                                       \
            switch (rows_) {                                                                                          \
            case MXP_NORM_ROWS: sums(x_, MXP_NORM_ROWS, p, c_, out_); break;                                          \
            case 3: sums(x_, 3, p, c_, out_); break;                                                                  \
            case 2: sums(x_, 2, p, c_, out_); break;                                                                  \
            default: sums(x_, 1, p, c_, out_);                                                                        \
            }                                                                                                         \
            for (size_t r_ = 0; r_ < rows_; r_++)                                                                     \
                (p)->s[k_ + r_] += out_[r_];                                                                          \
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

/* One float32 row of layer norm or RMS norm, computed in float64
 * (src/kernels/f32-norm/, list f32-norm-list.inc; the operation is
 * src/nn/norm.c).
 *
 *   mean = sum(x) / n                 (0 for RMS norm: rms != 0)
 *   rstd = 1 / sqrt(sum((x - mean)^2) / n + eps)
 *   y[i] = (float)(((x[i] - mean) * rstd) * w[i] + b[i])
 *
 * with w NULL: no product (h itself), b NULL: + 0; each sum in the order
 * of mxp_sum8 (sum8.h): element i into running sum i mod 8, folded
 * pairwise, the tail after -- eight float64 lanes of a vector.  The
 * arithmetic is the portable code's, operation for operation (no fused
 * multiply-adds), and the cast rounds to nearest even under the library's
 * environment: every kernel gives its twin's bits, which are those of
 * src/nn/'s generic path.  n >= 1; x and y may be the same row. */
#ifndef MXP_KERNELS_NORM_KERNELS_H
#define MXP_KERNELS_NORM_KERNELS_H

#include <math.h>
#include <stddef.h>

#include "kernels/sum8.h"

typedef void mxp_f32_norm_ukernel(float *y, const float *x, size_t n, const double *w, const double *b, double eps,
                                  int rms);

/* The scalar pieces every kernel shares: what element i adds to a sum
 * (sq: (x - c)^2, else x), the sums folded with the elements from i on,
 * the statistics, and output elements from i on. */
static inline double mxp_f32_norm_term(const float *x, size_t i, double c, int sq)
{
    const double d = (double)x[i] - c;
    return sq ? d * d : (double)x[i];
}

static inline double mxp_f32_norm_fold(const double s[8], const float *x, size_t i, size_t n, double c, int sq)
{
    double t = 0;
    for (; i < n; i++)
        t += mxp_f32_norm_term(x, i, c, sq);
    return mxp_sum8_fold(s, t);
}

static inline double mxp_f32_norm_rstd(double sumsq, size_t n, double eps)
{
    return 1 / sqrt(sumsq / (double)n + eps);
}

static inline void mxp_f32_norm_out(float *y, const float *x, size_t i, size_t n, const double *w, const double *b,
                                    double mean, double rstd)
{
    for (; i < n; i++) {
        const double h = ((double)x[i] - mean) * rstd;
        y[i] = (float)((w ? h * w[i] : h) + (b ? b[i] : 0));
    }
}

#define MXP_F32_NORM(isa, tile, fn, twin) mxp_f32_norm_ukernel fn;
#include "kernels/f32-norm-list.inc"
#undef MXP_F32_NORM

#endif

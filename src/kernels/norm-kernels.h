/* One float32 or bfloat16 row of layer norm or RMS norm, computed in
 * float64 (src/kernels/f32-norm/, bf16-norm/, lists f32-norm-list.inc,
 * bf16-norm-list.inc; the operation is src/nn/norm.c).
 *
 *   mean = sum(x) / n                 (0 for RMS norm: rms != 0)
 *   rstd = 1 / sqrt(sum((x - mean)^2) / n + eps)
 *   y[i] = round(((x[i] - mean) * rstd) * w[i] + b[i])
 *
 * with w NULL: no product (h itself), b NULL: + 0; and L2 normalization
 * (mode MXP_NORM_L2; w, b unused):
 *
 *   s = sqrt(sum(x^2)); s = s > eps ? s : eps;   y[i] = round(x[i] / s)
 *
 * each sum in the order
 * of mxp_sum8 (sum8.h): element i into running sum i mod 8, folded
 * pairwise, the tail after -- eight float64 lanes of a vector.  The
 * arithmetic is the portable code's, operation for operation (no fused
 * multiply-adds), and round is nearest even (float32: the cast under the
 * library's environment; bfloat16: mxp_f64_to_bf16_rne): every kernel
 * gives its twin's bits, which are those of src/nn/'s generic path.
 * n >= 1; x and y may be the same row. */
#ifndef MXP_KERNELS_NORM_KERNELS_H
#define MXP_KERNELS_NORM_KERNELS_H

#include <math.h>
#include <stddef.h>

#include <stdint.h>

#include "kernels/bf16-round.h"
#include "kernels/sum8.h"

/* mode: the row's operation */
enum { MXP_NORM_LAYER, MXP_NORM_RMS, MXP_NORM_L2 };

typedef void mxp_f32_norm_ukernel(float *y, const float *x, size_t n, const double *w, const double *b, double eps,
                                  int mode);
/* Bfloat16 rows compute in float32 (bf16-narrow.h), weight and bias
 * float32 too. */
typedef void mxp_bf16_norm_ukernel(uint16_t *y, const uint16_t *x, size_t n, const float *w, const float *b,
                                   double eps, int mode);

/* The scalar pieces every kernel shares (bf16: the row is bfloat16, else
 * float32; a constant where they are inlined): element i widened, what
 * it adds to a sum (sq: (x - c)^2, else x), the sums folded with the
 * elements from i on, the statistics, and output elements from i on. */
static inline double mxp_norm_x(const void *x, size_t i, int bf16)
{
    return bf16 ? mxp_bf16_to_f64_exact(((const uint16_t *)x)[i]) : (double)((const float *)x)[i];
}

static inline double mxp_norm_term(const void *x, size_t i, double c, int sq, int bf16)
{
    const double d = mxp_norm_x(x, i, bf16) - c;
    return sq ? d * d : mxp_norm_x(x, i, bf16);
}

static inline double mxp_norm_fold(const double s[8], const void *x, size_t i, size_t n, double c, int sq, int bf16)
{
    double t = 0;
    for (; i < n; i++)
        t += mxp_norm_term(x, i, c, sq, bf16);
    return mxp_sum8_fold(s, t);
}

static inline double mxp_norm_rstd(double sumsq, size_t n, double eps)
{
    return 1 / sqrt(sumsq / (double)n + eps);
}

static inline void mxp_norm_put(void *y, size_t i, double v, int bf16)
{
    if (bf16)
        ((uint16_t *)y)[i] = mxp_f64_to_bf16_rne(v);
    else
        ((float *)y)[i] = (float)v;
}

static inline void mxp_norm_out(void *y, const void *x, size_t i, size_t n, const double *w, const double *b,
                                double mean, double rstd, int bf16)
{
    for (; i < n; i++) {
        const double h = (mxp_norm_x(x, i, bf16) - mean) * rstd;
        mxp_norm_put(y, i, (w ? h * w[i] : h) + (b ? b[i] : 0), bf16);
    }
}

/* L2: the divisor from the sum of squares, and outputs i .. n. */
static inline double mxp_norm_l2_div(double sumsq, double eps)
{
    const double s = sqrt(sumsq);
    return s > eps ? s : eps;
}

static inline void mxp_norm_l2_out(void *y, const void *x, size_t i, size_t n, double s, int bf16)
{
    for (; i < n; i++)
        mxp_norm_put(y, i, mxp_norm_x(x, i, bf16) / s, bf16);
}

/* The portable twin of both lists, for one element type. */
static inline double mxp_norm_sum_portable(const void *x, size_t n, double c, int sq, int bf16)
{
    double s[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            s[k] += mxp_norm_term(x, i + k, c, sq, bf16);
    return mxp_norm_fold(s, x, i, n, c, sq, bf16);
}

static inline void mxp_norm_portable(void *y, const void *x, size_t n, const double *w, const double *b, double eps,
                                     int mode, int bf16)
{
    if (mode == MXP_NORM_L2) {
        mxp_norm_l2_out(y, x, 0, n, mxp_norm_l2_div(mxp_norm_sum_portable(x, n, 0, 1, bf16), eps), bf16);
        return;
    }
    const double mean = mode == MXP_NORM_RMS ? 0 : mxp_norm_sum_portable(x, n, 0, 0, bf16) / (double)n;
    mxp_norm_out(y, x, 0, n, w, b, mean, mxp_norm_rstd(mxp_norm_sum_portable(x, n, mean, 1, bf16), n, eps), bf16);
}

#define MXP_F32_NORM(isa, tile, fn, twin) mxp_f32_norm_ukernel fn;
#include "kernels/f32-norm-list.inc"
#undef MXP_F32_NORM
#define MXP_BF16_NORM(isa, tile, fn, twin) mxp_bf16_norm_ukernel fn;
#include "kernels/bf16-norm-list.inc"
#undef MXP_BF16_NORM

#endif

/* Float32 rows of softmax and log_softmax, computed in float64
 * (src/kernels/f32-softmax/, list f32-softmax-list.inc; the operation is
 * src/nn/softmax.c); bfloat16 rows compute in float32
 * (src/kernels/bf16-softmax/, bf16-narrow.h), their type is here:
 *
 *   v[i] = x[i], or float64(x[i]) + float64(mask[i]) with a mask (float32,
 *                         additive: 0 keeps, -inf drops, as src/nn/'s generic
 *                         path adds a float mask)
 *   m = max(v)            (a NaN, +inf or every element -inf: a NaN row)
 *   e[i] = exp(v[i] - m)  (float64)
 *   s = sum(e)            (kernels/sum8.h's order)
 *   y[i] = round(e[i] * (1 / s))        softmax
 *   y[i] = round((v[i] - m) - log(s))   log_softmax
 *
 * round: nearest even (the cast under the library's environment).  exp is expshift.h's (within 1.1 float64
 * ulps) in the vector kernels, as src/nn/'s generic path has it at that
 * ISA level through the f64-expshift kernels (the same bits), and libm's
 * in the portable twin, as the generic path at the scalar level: kernel
 * and twin agree to about a float64 ulp of exp, the same bits once rounded
 * on the tests' inputs.
 * lg: log_softmax.  e is n doubles of scratch; n >= 1; y and x may be the
 * same row; mask NULL: none. */
#ifndef MXP_KERNELS_SOFTMAX_KERNELS_H
#define MXP_KERNELS_SOFTMAX_KERNELS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/bf16-narrow.h"
#include "kernels/sum8.h"

typedef void mxp_f32_softmax_ukernel(float *y, const float *x, const float *mask, size_t n, double *e, int lg);
/* bfloat16: rows (1 .. MXP_NARROW_ROWS) rows of n, x[k] into y[k], e rows n
 * floats of scratch (mxp_narrow_softmax_rows). */
typedef void mxp_bf16_softmax_ukernel(uint16_t *const *y, const mxp_narrow_src *x, size_t rows, size_t n, float *e,
                                      int lg);

#define MXP_F32_SOFTMAX(isa, tile, fn, twin) mxp_f32_softmax_ukernel fn;
#include "kernels/f32-softmax-list.inc"
#undef MXP_F32_SOFTMAX
#define MXP_BF16_SOFTMAX(isa, tile, fn, twin) mxp_bf16_softmax_ukernel fn;
#include "kernels/bf16-softmax-list.inc"
#undef MXP_BF16_SOFTMAX

/* The scalar pieces every float32 kernel shares. */

/* Whether the row is all NaN: a NaN, or a maximum of +-inf. */
static inline int mxp_softmax_nan_row(float *y, size_t n, double m, int nan)
{
    if (!nan && m != -INFINITY && m != INFINITY)
        return 0;
    for (size_t i = 0; i < n; i++)
        y[i] = NAN;
    return 1;
}

/* Outputs i .. n from e (softmax, r = 1 / s) or v (log_softmax, ls = log s):
 * v the float32 x, or with a mask the float64 sums the kernel left in e. */
static inline void mxp_softmax_out(float *y, const float *x, const double *e, size_t i, size_t n, double m, double r,
                                   double ls, int lg, int masked)
{
    for (; i < n; i++)
        y[i] = (float)(lg ? ((masked ? e[i] : (double)x[i]) - m) - ls : e[i] * r);
}

/* The portable twin of the float32 list (libm's exp). */
static inline void mxp_softmax_portable(float *y, const float *x, const float *mask, size_t n, double *e, int lg)
{
    double m = -INFINITY;
    int nan = 0;
    for (size_t i = 0; i < n; i++) {
        const double v = mask ? (double)x[i] + (double)mask[i] : (double)x[i];
        if (mask)
            e[i] = v;
        nan |= v != v;
        m = v > m ? v : m;
    }
    if (mxp_softmax_nan_row(y, n, m, nan))
        return;
    double s[8] = { 0, 0, 0, 0, 0, 0, 0, 0 }, t = 0;
    for (size_t i = 0; i < n; i++) {
        const double ex = exp((mask ? e[i] : (double)x[i]) - m);
        if (!lg) /* log_softmax keeps v in e */
            e[i] = ex;
        if (i < n / 8 * 8)
            s[i % 8] += ex;
        else
            t += ex;
    }
    const double sum = mxp_sum8_fold(s, t);
    mxp_softmax_out(y, x, e, 0, n, m, 1 / sum, lg ? log(sum) : 0, lg, mask != NULL);
}

#endif

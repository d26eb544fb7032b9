/* Float32 rows of softmax and log_softmax, computed in float64
 * (src/kernels/f32-softmax/, list f32-softmax-list.inc; the operation is
 * src/nn/softmax.c); bfloat16 rows compute in float32
 * (src/kernels/bf16-softmax/, bf16-narrow.h), their type is here:
 *
 *   m = max(x)            (a NaN, +inf or every element -inf: a NaN row)
 *   e[i] = exp(x[i] - m)  (float64)
 *   s = sum(e)            (kernels/sum8.h's order)
 *   y[i] = round(e[i] * (1 / s))        softmax
 *   y[i] = round((x[i] - m) - log(s))   log_softmax
 *
 * round: nearest even (the cast under the library's environment).  exp is expshift.h's (within 1.1 float64
 * ulps) in the vector kernels, as src/nn/'s generic path has it at that
 * ISA level through the f64-expshift kernels (the same bits), and libm's
 * in the portable twin, as the generic path at the scalar level: kernel
 * and twin agree to about a float64 ulp of exp, the same bits once rounded
 * on the tests' inputs.
 * lg: log_softmax.  e is n doubles of scratch; n >= 1; y and x may be the
 * same row. */
#ifndef MXP_KERNELS_SOFTMAX_KERNELS_H
#define MXP_KERNELS_SOFTMAX_KERNELS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/bf16-narrow.h"
#include "kernels/sum8.h"

typedef void mxp_f32_softmax_ukernel(float *y, const float *x, size_t n, double *e, int lg);
typedef void mxp_bf16_softmax_ukernel(uint16_t *y, const mxp_narrow_src *x, size_t n, double *e, int lg);

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

/* Outputs i .. n from e (softmax, r = 1 / s) or x (log_softmax, ls = log s). */
static inline void mxp_softmax_out(float *y, const float *x, const double *e, size_t i, size_t n, double m, double r,
                                   double ls, int lg)
{
    for (; i < n; i++)
        y[i] = (float)(lg ? ((double)x[i] - m) - ls : e[i] * r);
}

/* The portable twin of the float32 list (libm's exp). */
static inline void mxp_softmax_portable(float *y, const float *x, size_t n, double *e, int lg)
{
    double m = -INFINITY;
    int nan = 0;
    for (size_t i = 0; i < n; i++) {
        const double v = x[i];
        nan |= v != v;
        m = v > m ? v : m;
    }
    if (mxp_softmax_nan_row(y, n, m, nan))
        return;
    for (size_t i = 0; i < n; i++)
        e[i] = exp((double)x[i] - m);
    double s[8] = { 0, 0, 0, 0, 0, 0, 0, 0 }, t = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            s[k] += e[i + k];
    for (; i < n; i++)
        t += e[i];
    const double sum = mxp_sum8_fold(s, t);
    mxp_softmax_out(y, x, e, 0, n, m, 1 / sum, lg ? log(sum) : 0, lg);
}

#endif

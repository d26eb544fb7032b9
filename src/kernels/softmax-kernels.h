/* Float32 and bfloat16 rows of softmax and log_softmax, computed in
 * float64 (src/kernels/f32-softmax/, bf16-softmax/, lists
 * f32-softmax-list.inc, bf16-softmax-list.inc; the operation is
 * src/nn/softmax.c):
 *
 *   m = max(x)            (a NaN, +inf or every element -inf: a NaN row)
 *   e[i] = exp(x[i] - m)  (float64)
 *   s = sum(e)            (kernels/sum8.h's order)
 *   y[i] = round(e[i] * (1 / s))        softmax
 *   y[i] = round((x[i] - m) - log(s))   log_softmax
 *
 * round: nearest even (float32: the cast under the library's environment;
 * bfloat16: mxp_f64_to_bf16_rne).  exp is expshift.h's (within 1.1 float64
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

#include "kernels/bf16-round.h"
#include "kernels/sum8.h"

typedef void mxp_f32_softmax_ukernel(float *y, const float *x, size_t n, double *e, int lg);
typedef void mxp_bf16_softmax_ukernel(uint16_t *y, const uint16_t *x, size_t n, double *e, int lg);

#define MXP_F32_SOFTMAX(isa, tile, fn, twin) mxp_f32_softmax_ukernel fn;
#include "kernels/f32-softmax-list.inc"
#undef MXP_F32_SOFTMAX
#define MXP_BF16_SOFTMAX(isa, tile, fn, twin) mxp_bf16_softmax_ukernel fn;
#include "kernels/bf16-softmax-list.inc"
#undef MXP_BF16_SOFTMAX

/* The scalar pieces every kernel shares (bf16: the row is bfloat16, else
 * float32; a constant where they are inlined). */
static inline double mxp_softmax_x(const void *x, size_t i, int bf16)
{
    return bf16 ? mxp_bf16_to_f64_exact(((const uint16_t *)x)[i]) : (double)((const float *)x)[i];
}

static inline void mxp_softmax_put(void *y, size_t i, double v, int bf16)
{
    if (bf16)
        ((uint16_t *)y)[i] = mxp_f64_to_bf16_rne(v);
    else
        ((float *)y)[i] = (float)v;
}

/* Whether the row is all NaN: a NaN, or a maximum of +-inf. */
static inline int mxp_softmax_nan_row(void *y, size_t n, double m, int nan, int bf16)
{
    if (!nan && m != -INFINITY && m != INFINITY)
        return 0;
    for (size_t i = 0; i < n; i++)
        mxp_softmax_put(y, i, NAN, bf16);
    return 1;
}

/* Outputs i .. n from e (softmax, r = 1 / s) or x (log_softmax, ls = log s). */
static inline void mxp_softmax_out(void *y, const void *x, const double *e, size_t i, size_t n, double m, double r,
                                   double ls, int lg, int bf16)
{
    for (; i < n; i++)
        mxp_softmax_put(y, i, lg ? (mxp_softmax_x(x, i, bf16) - m) - ls : e[i] * r, bf16);
}

/* The portable twin of both lists (libm's exp), for one element type. */
static inline void mxp_softmax_portable(void *y, const void *x, size_t n, double *e, int lg, int bf16)
{
    double m = -INFINITY;
    int nan = 0;
    for (size_t i = 0; i < n; i++) {
        const double v = mxp_softmax_x(x, i, bf16);
        nan |= v != v;
        m = v > m ? v : m;
    }
    if (mxp_softmax_nan_row(y, n, m, nan, bf16))
        return;
    for (size_t i = 0; i < n; i++)
        e[i] = exp(mxp_softmax_x(x, i, bf16) - m);
    double s[8] = { 0, 0, 0, 0, 0, 0, 0, 0 }, t = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            s[k] += e[i + k];
    for (; i < n; i++)
        t += e[i];
    const double sum = mxp_sum8_fold(s, t);
    mxp_softmax_out(y, x, e, 0, n, m, 1 / sum, lg ? log(sum) : 0, lg, bf16);
}

#endif

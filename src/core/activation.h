/* Internal: the activation functions in float64, the one definition that
 * the elementwise operations (src/ops/elementwise-math.c, -loops.c) and
 * the GEMM epilogue (src/gemm/epilogue.c) both use. */
#ifndef MXP_CORE_ACTIVATION_H
#define MXP_CORE_ACTIVATION_H

#include <math.h>

#define MXP_SQRT1_2 0.70710678118654752440
#define MXP_SQRT_2_OVER_PI 0.79788456080286535588

/* Written so nothing cancels or overflows on the way: for x < 0,
 * e^x / (1 + e^x) keeps the tiny values that 1 / (1 + e^-x) loses. */
static inline double mxp_sigmoid(double x)
{
    if (x >= 0)
        return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

static inline double mxp_relu(double x)
{
    return x > 0 ? x : x == x ? 0.0 : x; /* NaN stays NaN */
}

/* erfc and the sigmoid form instead of 1 + erf / 1 + tanh, which cancel
 * for negative x: 0.5 (1 + tanh z) = 1 / (1 + e^-2z). */
static inline double mxp_gelu(double x)
{
    return 0.5 * x * erfc(-x * MXP_SQRT1_2);
}

static inline double mxp_gelu_tanh(double x)
{
    return x * mxp_sigmoid(2.0 * MXP_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x));
}

static inline double mxp_silu(double x)
{
    return x * mxp_sigmoid(x);
}

#endif

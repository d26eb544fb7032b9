/* The elementwise loops per compute type.  One loop per operation, so the
 * compiler vectorizes the simple ones; NaN propagates through maximum and
 * minimum (as NumPy's). */
#include <math.h>
#include <stdint.h>

#include "ops/ops-internal.h"

#define SQRT1_2 0.70710678118654752440
#define SQRT_2_OVER_PI 0.79788456080286535588

/* Written so nothing cancels or overflows on the way: for x < 0,
 * e^x / (1 + e^x) keeps the tiny values that 1 / (1 + e^-x) loses. */
static double sigmoid(double x)
{
    if (x >= 0)
        return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

static double apply_unary(int op, double x)
{
    switch (op) {
    case MXP_OP_NEGATIVE: return -x;
    case MXP_OP_ABS: return fabs(x);
    case MXP_OP_SQRT: return sqrt(x);
    case MXP_OP_EXP: return exp(x);
    case MXP_OP_LOG: return log(x);
    case MXP_OP_TANH: return tanh(x);
    case MXP_OP_SIGMOID: return sigmoid(x);
    case MXP_OP_RELU: return x > 0 ? x : x == x ? 0.0 : x; /* NaN stays NaN */
    /* erfc and the sigmoid form instead of 1 + erf / 1 + tanh, which cancel
     * for negative x: 0.5 (1 + tanh z) = 1 / (1 + e^-2z). */
    case MXP_OP_GELU: return 0.5 * x * erfc(-x * SQRT1_2);
    case MXP_OP_GELU_TANH: return x * sigmoid(2.0 * SQRT_2_OVER_PI * (x + 0.044715 * x * x * x));
    default: return x * sigmoid(x); /* silu */
    }
}

static double apply_binary(int op, double x, double y)
{
    switch (op) {
    case MXP_OP_ADD: return x + y;
    case MXP_OP_SUBTRACT: return x - y;
    case MXP_OP_MULTIPLY: return x * y;
    case MXP_OP_DIVIDE: return x / y;
    case MXP_OP_MAXIMUM: return x != x ? x : y != y ? y : x > y ? x : y;
    case MXP_OP_MINIMUM: return x != x ? x : y != y ? y : x < y ? x : y;
    case MXP_OP_POWER: return pow(x, y);
    case MXP_OP_EQUAL: return x == y;
    case MXP_OP_NOT_EQUAL: return x != y;
    case MXP_OP_LESS: return x < y;
    case MXP_OP_LESS_EQUAL: return x <= y;
    case MXP_OP_GREATER: return x > y;
    default: return x >= y;
    }
}

static void f64_binary(int op, void *out, const void *a, const void *b, size_t n)
{
    double *r = out;
    const double *x = a, *y = b;
    switch (op) {
    case MXP_OP_ADD: for (size_t i = 0; i < n; i++) r[i] = x[i] + y[i]; break;
    case MXP_OP_SUBTRACT: for (size_t i = 0; i < n; i++) r[i] = x[i] - y[i]; break;
    case MXP_OP_MULTIPLY: for (size_t i = 0; i < n; i++) r[i] = x[i] * y[i]; break;
    case MXP_OP_DIVIDE: for (size_t i = 0; i < n; i++) r[i] = x[i] / y[i]; break;
    default: for (size_t i = 0; i < n; i++) r[i] = apply_binary(op, x[i], y[i]); break;
    }
}

static void f32_binary(int op, void *out, const void *a, const void *b, size_t n)
{
    float *r = out;
    const float *x = a, *y = b;
    switch (op) {
    case MXP_OP_ADD: for (size_t i = 0; i < n; i++) r[i] = x[i] + y[i]; break;
    case MXP_OP_SUBTRACT: for (size_t i = 0; i < n; i++) r[i] = x[i] - y[i]; break;
    case MXP_OP_MULTIPLY: for (size_t i = 0; i < n; i++) r[i] = x[i] * y[i]; break;
    case MXP_OP_DIVIDE: for (size_t i = 0; i < n; i++) r[i] = x[i] / y[i]; break;
    default: for (size_t i = 0; i < n; i++) r[i] = (float)apply_binary(op, x[i], y[i]); break;
    }
}

/* Integer arithmetic wraps in 64 bits (through uint64_t: no undefined
 * behaviour); the result is then converted, saturating, to the output. */
static void s64_binary(int op, void *out, const void *a, const void *b, size_t n)
{
    int64_t *r = out;
    const int64_t *x = a, *y = b;
    for (size_t i = 0; i < n; i++) {
        uint64_t ux = (uint64_t)x[i], uy = (uint64_t)y[i];
        switch (op) {
        case MXP_OP_ADD: r[i] = (int64_t)(ux + uy); break;
        case MXP_OP_SUBTRACT: r[i] = (int64_t)(ux - uy); break;
        case MXP_OP_MULTIPLY: r[i] = (int64_t)(ux * uy); break;
        case MXP_OP_MAXIMUM: r[i] = x[i] > y[i] ? x[i] : y[i]; break;
        case MXP_OP_MINIMUM: r[i] = x[i] < y[i] ? x[i] : y[i]; break;
        case MXP_OP_EQUAL: r[i] = x[i] == y[i]; break;
        case MXP_OP_NOT_EQUAL: r[i] = x[i] != y[i]; break;
        case MXP_OP_LESS: r[i] = x[i] < y[i]; break;
        case MXP_OP_LESS_EQUAL: r[i] = x[i] <= y[i]; break;
        case MXP_OP_GREATER: r[i] = x[i] > y[i]; break;
        default: r[i] = x[i] >= y[i]; break;
        }
    }
}

static void u64_binary(int op, void *out, const void *a, const void *b, size_t n)
{
    uint64_t *r = out;
    const uint64_t *x = a, *y = b;
    for (size_t i = 0; i < n; i++) {
        switch (op) {
        case MXP_OP_ADD: r[i] = x[i] + y[i]; break;
        case MXP_OP_SUBTRACT: r[i] = x[i] - y[i]; break;
        case MXP_OP_MULTIPLY: r[i] = x[i] * y[i]; break;
        case MXP_OP_MAXIMUM: r[i] = x[i] > y[i] ? x[i] : y[i]; break;
        case MXP_OP_MINIMUM: r[i] = x[i] < y[i] ? x[i] : y[i]; break;
        case MXP_OP_EQUAL: r[i] = x[i] == y[i]; break;
        case MXP_OP_NOT_EQUAL: r[i] = x[i] != y[i]; break;
        case MXP_OP_LESS: r[i] = x[i] < y[i]; break;
        case MXP_OP_LESS_EQUAL: r[i] = x[i] <= y[i]; break;
        case MXP_OP_GREATER: r[i] = x[i] > y[i]; break;
        default: r[i] = x[i] >= y[i]; break;
        }
    }
}

static void f64_unary(int op, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    double *r = out;
    const double *x = a;
    for (size_t i = 0; i < n; i++)
        r[i] = apply_unary(op, x[i]);
}

static void f32_unary(int op, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    float *r = out;
    const float *x = a;
    if (op == MXP_OP_SQRT) {
        for (size_t i = 0; i < n; i++)
            r[i] = sqrtf(x[i]);
        return;
    }
    for (size_t i = 0; i < n; i++)
        r[i] = (float)apply_unary(op, x[i]);
}

static void s64_unary(int op, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    int64_t *r = out;
    const int64_t *x = a;
    for (size_t i = 0; i < n; i++) {
        uint64_t ux = (uint64_t)x[i];
        switch (op) {
        case MXP_OP_NEGATIVE: r[i] = (int64_t)(0 - ux); break;
        case MXP_OP_ABS: r[i] = x[i] < 0 ? (int64_t)(0 - ux) : x[i]; break;
        default: r[i] = x[i] > 0 ? x[i] : 0; break; /* relu */
        }
    }
}

static void u64_unary(int op, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    uint64_t *r = out;
    const uint64_t *x = a;
    for (size_t i = 0; i < n; i++)
        r[i] = op == MXP_OP_NEGATIVE ? 0 - x[i] : x[i];
}

mxp_kernel_fn mxp_binary_kernel(mxp_dtype ct)
{
    switch (ct) {
    case MXP_F32: return f32_binary;
    case MXP_F64: return f64_binary;
    case MXP_U64: return u64_binary;
    default: return s64_binary;
    }
}

mxp_kernel_fn mxp_unary_kernel(mxp_dtype ct)
{
    switch (ct) {
    case MXP_F32: return f32_unary;
    case MXP_F64: return f64_unary;
    case MXP_U64: return u64_unary;
    default: return s64_unary;
    }
}

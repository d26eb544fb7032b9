/* The twins of the kernels whose reference is the portable path of the
 * elementwise operations rather than a kernel (src/ops/kernel-config.h):
 * float16/bfloat16 + - * as the blocked path of src/ops/strided.c takes
 * them (widen, the float32 loop, NaN made canonical, round to nearest
 * even), and the vector-math functions as libm computes them
 * (mxp_ew_unary1 in float64, then one rounding).  For the tests: these
 * are what every kernel of src/kernels/{f16,bf16}-arith, f32-vmath,
 * f64-vmath, f16-vmath, f32-gelu and f64-gelu is compared with. */
#include <math.h>
#include <string.h>

#include "ops/kernel-config.h"
#include "ops/ops-internal.h"

enum { BLOCK = 256 };

static void h16_arith(mxp_dtype t, int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n)
{
    float fa[BLOCK], fb[BLOCK];
    for (size_t j = 0; j < n; j += BLOCK) {
        const size_t m = n - j < BLOCK ? n - j : BLOCK;
        mxp_convert(fa, MXP_F32, a + j, t, m, NULL); /* exact */
        mxp_convert(fb, MXP_F32, b + j, t, m, NULL);
        mxp_f32_arith__scalar(op, fa, fa, fb, m);
        mxp_f32_canonical_nan__scalar(fa, m);
        mxp_convert(y + j, t, fa, MXP_F32, m, NULL); /* nearest even, infinities kept */
    }
}

void mxp_f16_arith_ref(int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n)
{
    h16_arith(MXP_F16, op, y, a, b, n);
}

void mxp_bf16_arith_ref(int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n)
{
    h16_arith(MXP_BF16, op, y, a, b, n);
}

/* ---- vector math: libm in float64 ---------------------------------------- */

static const mxp_unary_op vmath_ops[MXP_VMATH_COUNT] = {
    [MXP_VMATH_EXP] = MXP_OP_EXP,         [MXP_VMATH_LOG] = MXP_OP_LOG,   [MXP_VMATH_TANH] = MXP_OP_TANH,
    [MXP_VMATH_SIN] = MXP_OP_SIN,         [MXP_VMATH_COS] = MXP_OP_COS,   [MXP_VMATH_SIGMOID] = MXP_OP_SIGMOID,
    [MXP_VMATH_SILU] = MXP_OP_SILU,       [MXP_VMATH_GELU] = MXP_OP_GELU, [MXP_VMATH_GELU_TANH] = MXP_OP_GELU_TANH,
};

/* fn(x) as the elementwise operation computes it in float64 for an output
 * of dtype out (silu, gelu, gelu_tanh of tiny x nudge for outputs of at
 * most 32 bits; MXP_F64: none) */
static double libm(int fn, double x, mxp_dtype out)
{
    const mxp_ew_ctx c = { (int)vmath_ops[fn], false, mxp_dtype_get_traits(out), NULL };
    return mxp_ew_unary1(&c, x);
}

size_t mxp_f32_vmath_ref(int fn, float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const double d = libm(fn, x[i], MXP_F32);
        y[i] = d == d ? (float)d : NAN; /* NAN: the positive quiet NaN */
    }
    return 0;
}

/* d rounded to float32 toward zero, the last bit set when inexact. */
static float round_odd(double d)
{
    float f = (float)d;
    if (d != d || (double)f == d)
        return f;
    uint32_t b;
    memcpy(&b, &f, 4);
    if (fabs((double)f) > fabs(d)) /* rounded away from zero: one step back */
        b--;
    b |= 1;
    memcpy(&f, &b, 4);
    return f;
}

size_t mxp_f32_vmath_odd_ref(int fn, float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = round_odd(libm(fn, x[i], MXP_F32));
    return 0;
}

void mxp_f64_vmath_ref(int fn, double *y, const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = libm(fn, x[i], MXP_F32);
}

size_t mxp_f16_vmath_ref(int fn, uint16_t *y, const uint16_t *x, size_t n)
{
    double d[BLOCK];
    for (size_t j = 0; j < n; j += BLOCK) {
        const size_t m = n - j < BLOCK ? n - j : BLOCK;
        mxp_convert(d, MXP_F64, x + j, MXP_F16, m, NULL);
        for (size_t i = 0; i < m; i++) {
            d[i] = libm(fn, d[i], MXP_F16);
            d[i] = d[i] == d[i] ? d[i] : NAN;
        }
        mxp_convert(y + j, MXP_F16, d, MXP_F64, m, NULL); /* nearest even, infinities kept */
    }
    return 0;
}

size_t mxp_f32_gelu_ref(float *y, const float *x, size_t n)
{
    return mxp_f32_vmath_ref(MXP_VMATH_GELU, y, x, n);
}

void mxp_f64_gelu_ref(double *y, const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = libm(MXP_VMATH_GELU, x[i], MXP_F64);
}

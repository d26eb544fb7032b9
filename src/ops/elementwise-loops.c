/* The elementwise loops per compute type.  The cheap operations have a loop
 * of their own, so the compiler vectorizes them; the rest call
 * mxp_ew_binary1/mxp_ew_unary1 per element.  + - * / of float32 and
 * float64 are the kernels of src/kernels/f32-arith/ and f64-arith/, chosen
 * for the ISA level with the plan.  float32 has loops for comparisons and a
 * few unary operations and runs everything else through float64 in chunks:
 * for the operations computed in float32 (exact ones, and sqrt, which
 * double then float rounds correctly: 53 >= 2 * 24 + 2) that gives
 * float32's result. */
#include <math.h>
#include <stdint.h>

#include "core/activation.h"
#include "ops/kernel-config.h"
#include "ops/ops-internal.h"

static void f64_binary(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    double *r = out;
    const double *x = a, *y = b;
    switch (c->op) { /* + - * /: the kernels of src/kernels/f64-arith (arith below) */
    case MXP_OP_MAXIMUM: for (size_t i = 0; i < n; i++) r[i] = mxp_ew_maximum(x[i], y[i]); break;
    case MXP_OP_MINIMUM: for (size_t i = 0; i < n; i++) r[i] = mxp_ew_minimum(x[i], y[i]); break;
    case MXP_OP_FMAX: for (size_t i = 0; i < n; i++) r[i] = mxp_ew_fmax(x[i], y[i]); break;
    case MXP_OP_FMIN: for (size_t i = 0; i < n; i++) r[i] = mxp_ew_fmin(x[i], y[i]); break;
    case MXP_OP_EQUAL: for (size_t i = 0; i < n; i++) r[i] = x[i] == y[i]; break;
    case MXP_OP_NOT_EQUAL: for (size_t i = 0; i < n; i++) r[i] = x[i] != y[i]; break;
    case MXP_OP_LESS: for (size_t i = 0; i < n; i++) r[i] = x[i] < y[i]; break;
    case MXP_OP_LESS_EQUAL: for (size_t i = 0; i < n; i++) r[i] = x[i] <= y[i]; break;
    case MXP_OP_GREATER: for (size_t i = 0; i < n; i++) r[i] = x[i] > y[i]; break;
    case MXP_OP_GREATER_EQUAL: for (size_t i = 0; i < n; i++) r[i] = x[i] >= y[i]; break;
    case MXP_OP_COPYSIGN: for (size_t i = 0; i < n; i++) r[i] = copysign(x[i], y[i]); break;
    default: for (size_t i = 0; i < n; i++) r[i] = mxp_ew_binary1(c, x[i], y[i]); break;
    }
}

static void f64_unary(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    double *r = out;
    const double *x = a;
    switch (c->op) {
    case MXP_OP_NEGATIVE: for (size_t i = 0; i < n; i++) r[i] = -x[i]; break;
    case MXP_OP_ABS: for (size_t i = 0; i < n; i++) r[i] = fabs(x[i]); break;
    case MXP_OP_POSITIVE: for (size_t i = 0; i < n; i++) r[i] = x[i]; break;
    case MXP_OP_SQRT: for (size_t i = 0; i < n; i++) r[i] = sqrt(x[i]); break;
    case MXP_OP_SQUARE: for (size_t i = 0; i < n; i++) r[i] = x[i] * x[i]; break;
    case MXP_OP_RECIPROCAL: for (size_t i = 0; i < n; i++) r[i] = 1.0 / x[i]; break;
    case MXP_OP_ISNAN: for (size_t i = 0; i < n; i++) r[i] = x[i] != x[i]; break;
    case MXP_OP_LOGICAL_NOT: for (size_t i = 0; i < n; i++) r[i] = x[i] == 0; break;
    /* relu as a loop the compiler vectorizes (as the GEMM epilogue's: a
     * call per element was a fifth of a bfloat16 MLP's training step) */
    case MXP_OP_RELU: for (size_t i = 0; i < n; i++) r[i] = mxp_relu(x[i]); break;
    default: for (size_t i = 0; i < n; i++) r[i] = mxp_ew_unary1(c, x[i]); break;
    }
}

enum { WIDE = 256 }; /* float32 through float64: chunk of the stack buffers */

/* The float32 loop through float64 (f64 = f64_binary or f64_unary). */
static void f32_via_f64(mxp_kernel_fn f64, const mxp_ew_ctx *c, float *r, const float *x, const float *y, size_t n)
{
    double xd[WIDE], yd[WIDE], rd[WIDE];
    for (size_t j = 0; j < n; j += WIDE) {
        const size_t m = n - j < WIDE ? n - j : WIDE;
        for (size_t i = 0; i < m; i++)
            xd[i] = x[j + i];
        for (size_t i = 0; i < m && y; i++)
            yd[i] = y[j + i];
        f64(c, rd, xd, yd, m);
        for (size_t i = 0; i < m; i++)
            r[j + i] = (float)rd[i];
    }
}

static void f32_binary(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    float *r = out;
    const float *x = a, *y = b;
    switch (c->op) { /* + - * /: the kernels of src/kernels/f32-arith (arith below) */
    /* comparisons are exact in any type that holds both operands */
    case MXP_OP_EQUAL: for (size_t i = 0; i < n; i++) r[i] = x[i] == y[i]; break;
    case MXP_OP_NOT_EQUAL: for (size_t i = 0; i < n; i++) r[i] = x[i] != y[i]; break;
    case MXP_OP_LESS: for (size_t i = 0; i < n; i++) r[i] = x[i] < y[i]; break;
    case MXP_OP_LESS_EQUAL: for (size_t i = 0; i < n; i++) r[i] = x[i] <= y[i]; break;
    case MXP_OP_GREATER: for (size_t i = 0; i < n; i++) r[i] = x[i] > y[i]; break;
    case MXP_OP_GREATER_EQUAL: for (size_t i = 0; i < n; i++) r[i] = x[i] >= y[i]; break;
    default: f32_via_f64(f64_binary, c, r, x, y, n); break;
    }
}

static void f32_unary(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    float *r = out;
    const float *x = a;
    switch (c->op) {
    case MXP_OP_NEGATIVE: for (size_t i = 0; i < n; i++) r[i] = -x[i]; break;
    case MXP_OP_SQUARE: for (size_t i = 0; i < n; i++) r[i] = x[i] * x[i]; break;
    case MXP_OP_ABS: for (size_t i = 0; i < n; i++) r[i] = fabsf(x[i]); break;
    case MXP_OP_ISNAN: for (size_t i = 0; i < n; i++) r[i] = x[i] != x[i]; break;
    default: f32_via_f64(f64_unary, c, r, x, NULL, n); break;
    }
}

/* ---- integers: arithmetic wraps in 64 bits (through uint64_t: no
 * undefined behaviour), then converts, saturating, to the output; division
 * by zero gives 0, as NumPy's. */

/* Python's floor division and remainder (the sign of y); INT64_MIN // -1
 * wraps to INT64_MIN as NumPy's int64 loop does. */
static int64_t s64_floor_divide(int64_t x, int64_t y)
{
    if (y == 0)
        return 0;
    if (y == -1)
        return (int64_t)(0 - (uint64_t)x);
    int64_t q = x / y;
    return (x % y != 0 && (x < 0) != (y < 0)) ? q - 1 : q;
}

static int64_t s64_remainder(int64_t x, int64_t y, bool floored)
{
    if (y == 0 || y == -1)
        return 0;
    int64_t m = x % y;
    return floored && m != 0 && (m < 0) != (y < 0) ? m + y : m;
}

/* x < y as 64-bit integers, signed (int64) or not (uint64) */
static inline __attribute__((always_inline)) bool int_less(bool sign, uint64_t x, uint64_t y)
{
    return sign ? (int64_t)x < (int64_t)y : x < y;
}

/* The int64 (sign) and uint64 loop: one body, sign a constant in each
 * caller, so each gets the code of its own type. */
static inline __attribute__((always_inline)) void int_binary(const mxp_ew_ctx *c, uint64_t *r, const uint64_t *x,
                                                             const uint64_t *y, size_t n, bool sign)
{
    for (size_t i = 0; i < n; i++) {
        const uint64_t ux = x[i], uy = y[i];
        const int64_t sx = (int64_t)ux, sy = (int64_t)uy;
        switch (c->op) {
        case MXP_OP_ADD: r[i] = ux + uy; break;
        case MXP_OP_SUBTRACT: r[i] = ux - uy; break;
        case MXP_OP_MULTIPLY: r[i] = ux * uy; break;
        case MXP_OP_MAXIMUM:
        case MXP_OP_FMAX: r[i] = int_less(sign, uy, ux) ? ux : uy; break;
        case MXP_OP_MINIMUM:
        case MXP_OP_FMIN: r[i] = int_less(sign, ux, uy) ? ux : uy; break;
        case MXP_OP_EQUAL: r[i] = ux == uy; break;
        case MXP_OP_NOT_EQUAL: r[i] = ux != uy; break;
        case MXP_OP_LESS: r[i] = int_less(sign, ux, uy); break;
        case MXP_OP_LESS_EQUAL: r[i] = !int_less(sign, uy, ux); break;
        case MXP_OP_GREATER: r[i] = int_less(sign, uy, ux); break;
        case MXP_OP_GREATER_EQUAL: r[i] = !int_less(sign, ux, uy); break;
        case MXP_OP_FLOOR_DIVIDE: r[i] = sign ? (uint64_t)s64_floor_divide(sx, sy) : uy ? ux / uy : 0; break;
        case MXP_OP_REMAINDER: r[i] = sign ? (uint64_t)s64_remainder(sx, sy, true) : uy ? ux % uy : 0; break;
        default: r[i] = sign ? (uint64_t)s64_remainder(sx, sy, false) : uy ? ux % uy : 0; break; /* fmod */
        }
    }
}

/* int64 through uint64_t pointers: the same type but for the sign, which
 * may alias it */
static void s64_binary(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    int_binary(c, out, a, b, n, true);
}

static void u64_binary(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    int_binary(c, out, a, b, n, false);
}

static void s64_unary(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    int64_t *r = out;
    const int64_t *x = a;
    for (size_t i = 0; i < n; i++) {
        uint64_t ux = (uint64_t)x[i];
        switch (c->op) {
        case MXP_OP_NEGATIVE: r[i] = (int64_t)(0 - ux); break;
        case MXP_OP_ABS: r[i] = x[i] < 0 ? (int64_t)(0 - ux) : x[i]; break;
        case MXP_OP_POSITIVE: r[i] = x[i]; break;
        case MXP_OP_SIGN: r[i] = (x[i] > 0) - (x[i] < 0); break;
        case MXP_OP_SQUARE: r[i] = (int64_t)(ux * ux); break;
        case MXP_OP_RECIPROCAL: r[i] = x[i] == 1 || x[i] == -1 ? x[i] : 0; break; /* 1/0: 0 */
        default: r[i] = x[i] > 0 ? x[i] : 0; break; /* relu */
        }
    }
}

static void u64_unary(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    uint64_t *r = out;
    const uint64_t *x = a;
    for (size_t i = 0; i < n; i++) {
        switch (c->op) {
        case MXP_OP_NEGATIVE: r[i] = 0 - x[i]; break;
        case MXP_OP_SIGN: r[i] = x[i] != 0; break;
        case MXP_OP_SQUARE: r[i] = x[i] * x[i]; break;
        case MXP_OP_RECIPROCAL: r[i] = x[i] == 1; break;
        default: r[i] = x[i]; break; /* abs, positive, relu */
        }
    }
}

static mxp_kernel_fn binary_kernel(mxp_dtype ct)
{
    switch (ct) {
    case MXP_F32: return f32_binary;
    case MXP_F64: return f64_binary;
    case MXP_U64: return u64_binary;
    default: return s64_binary;
    }
}

/* ---- float32/float64 + - * /: the kernel the list gives for the level
 * (src/kernels/f32-arith/, f64-arith/; the scalar twin at the scalar
 * level), passed in the context: one IEEE operation per element, the same
 * bits at every level. */
static int arith_op(int op)
{
    return op == MXP_OP_ADD ? MXP_ARITH_ADD : op == MXP_OP_SUBTRACT ? MXP_ARITH_SUB
         : op == MXP_OP_MULTIPLY ? MXP_ARITH_MUL : MXP_ARITH_DIV;
}

static void f32_arith(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    ((mxp_f32_arith_ukernel *)c->kernel)(arith_op(c->op), out, a, b, n);
}

static void f64_arith(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    ((mxp_f64_arith_ukernel *)c->kernel)(arith_op(c->op), out, a, b, n);
}

mxp_kernel_fn mxp_binary_kernel_for(mxp_dtype ct, int op, mxp_isa isa, mxp_kernel_any *kernel)
{
    const bool arith = op == MXP_OP_ADD || op == MXP_OP_SUBTRACT || op == MXP_OP_MULTIPLY || op == MXP_OP_DIVIDE;
    *kernel = NULL;
    if (arith && ct == MXP_F32) {
        *kernel = (mxp_kernel_any)mxp_f32_arith_kernel(isa);
        return f32_arith;
    }
    if (arith && ct == MXP_F64) {
        *kernel = (mxp_kernel_any)mxp_f64_arith_kernel(isa);
        return f64_arith;
    }
    return binary_kernel(ct);
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

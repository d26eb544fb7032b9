/* The vector-math loops: exp, log, tanh, sin, cos and the activations
 * through SLEEF (src/kernels/f32-vmath/, f64-vmath/, f16-vmath/,
 * f32-gelu/), the kernel for the ISA level asked of its list
 * (src/ops/kernel-config.c) and passed to the loop in its context; none at
 * the scalar level or in a build without SLEEF, where mxp_ew_unary1 (libm
 * in float64, the reference) computes them.  Which list serves which
 * output is decided here. */
#include "ops/kernel-config.h"
#include "ops/ops-internal.h"

static int vmath_fn(int op)
{
    switch (op) {
    case MXP_OP_EXP: return MXP_VMATH_EXP;
    case MXP_OP_LOG: return MXP_VMATH_LOG;
    case MXP_OP_TANH: return MXP_VMATH_TANH;
    case MXP_OP_SIN: return MXP_VMATH_SIN;
    case MXP_OP_COS: return MXP_VMATH_COS;
    case MXP_OP_SIGMOID: return MXP_VMATH_SIGMOID;
    case MXP_OP_SILU: return MXP_VMATH_SILU;
    case MXP_OP_GELU: return MXP_VMATH_GELU;
    case MXP_OP_GELU_TANH: return MXP_VMATH_GELU_TANH;
    default: return -1;
    }
}

/* The loops: the context's kernel on the contiguous block (float32
 * results, or float32 results for a 16-bit output; float64 results;
 * float32 gelu through its checked fast path). */
static void f32_loop(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    (void)((mxp_f32_vmath_ukernel *)c->kernel)(vmath_fn(c->op), out, a, n);
}

static void f64_loop(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    ((mxp_f64_vmath_ukernel *)c->kernel)(vmath_fn(c->op), out, a, n);
}

static void f32_gelu_loop(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    (void)((mxp_f32_gelu_ukernel *)c->kernel)(out, a, n);
}

mxp_kernel_fn mxp_vmath_kernel(mxp_dtype ct, int op, mxp_isa isa, mxp_kernel_any *kernel)
{
    const int fn = vmath_fn(op);
    *kernel = NULL;
    if (fn < 0)
        return NULL;
    if (ct == MXP_F32 && fn == MXP_VMATH_GELU) /* the checked fast path: the SLEEF path's bits */
        return (*kernel = (mxp_kernel_any)mxp_f32_gelu_kernel(isa)) ? f32_gelu_loop : NULL;
    if (ct == MXP_F32)
        return (*kernel = (mxp_kernel_any)mxp_f32_vmath_kernel(isa, MXP_VMATH_FOR_F32 | MXP_VMATH_FN(fn))) ? f32_loop
                                                                                                           : NULL;
    if (ct == MXP_F64)
        return (*kernel = (mxp_kernel_any)mxp_f64_vmath_kernel(isa)) ? f64_loop : NULL;
    return NULL;
}

mxp_kernel_fn mxp_vmath_kernel_h16(mxp_dtype in, mxp_dtype out, int op, mxp_isa isa, mxp_kernel_any *kernel)
{
    const int fn = vmath_fn(op);
    *kernel = NULL;
    if (fn < 0 || (out != MXP_F16 && out != MXP_BF16))
        return NULL;
    /* bfloat16 exp, log, tanh, sin, cos of bfloat16 inputs: the plain
     * float32 kernel -- its result rounded once more is the correctly
     * rounded one on all 65,536 inputs (test_vmath checks every one), and
     * the check cost ~20% of bfloat16 exp's speed.  From any other input
     * (float32, float16) SLEEF's float32 result rounded again is wrong
     * about once in 10^5 (test_vmath's h16_from_other_type): the checked kernel of
     * each 16-bit format (the float64 path's bits).  gelu: its float32
     * fast path with the check (the float64 approximation rounded to
     * float32 for float16, gelu_p32/gelu_q32 in float32 for bfloat16).
     * The other activations: none (the float64 kernel). */
    uint32_t need = MXP_VMATH_FN(fn);
    if (in == MXP_BF16 && out == MXP_BF16 && fn < MXP_VMATH_F32_COUNT)
        need |= MXP_VMATH_FOR_F32;
    else
        need |= out == MXP_F16 ? MXP_VMATH_FOR_F16 : MXP_VMATH_FOR_BF16;
    return (*kernel = (mxp_kernel_any)mxp_f32_vmath_kernel(isa, need)) ? f32_loop : NULL;
}

mxp_f16_vmath_ukernel *mxp_vmath_fused_f16(int op, mxp_isa isa, int *fn)
{
    *fn = vmath_fn(op);
    return *fn < 0 ? NULL : mxp_f16_vmath_kernel(isa, MXP_VMATH_FN(*fn));
}

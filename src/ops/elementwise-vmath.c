/* The vector-math loops: exp, log, tanh, sin, cos and the activations
 * through SLEEF (src/kernels/vmath/), chosen by ISA level; none at the
 * scalar level or in a build without SLEEF, where mxp_ew_unary1 (libm in
 * float64, the reference) computes them. */
#include "ops/ops-internal.h"

#include "kernels/vmath-kernels.h"

#ifdef MXP_HAVE_SLEEF
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

static void f32_avx2(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    mxp_vmath_f32__avx2(vmath_fn(c->op), out, a, n);
}

static void f32_avx512(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    mxp_vmath_f32__avx512f(vmath_fn(c->op), out, a, n);
}

/* float32 gelu: the checked fast path, the SLEEF path's bits */
static void f32_gelu_avx2(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)c;
    (void)b;
    (void)mxp_vmath_f32_gelu__avx2(out, a, n);
}

static void f32_gelu_avx512(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)c;
    (void)b;
    (void)mxp_vmath_f32_gelu__avx512f(out, a, n);
}

/* float32 results for a float16 output rounded to nearest even
 * (mxp_vmath_kernel_h16) */
static void h16_avx2(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    (void)mxp_vmath_f32_h16__avx2(vmath_fn(c->op), out, a, n);
}

static void h16_avx512(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    (void)mxp_vmath_f32_h16__avx512f(vmath_fn(c->op), out, a, n);
}

static void bf16_avx512(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    (void)mxp_vmath_f32_bf16__avx512f(vmath_fn(c->op), out, a, n);
}

/* float16 -> float16 in one pass (mxp_vmath_fused_f16) */
static void f16_avx2(int fn, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n)
{
    (void)b;
    (void)mxp_vmath_f16__avx2(fn, y, a, n);
}

static void f16_avx512(int fn, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n)
{
    (void)b;
    (void)mxp_vmath_f16__avx512f(fn, y, a, n);
}

static void f64_avx2(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    mxp_vmath_f64__avx2(vmath_fn(c->op), out, a, n);
}

static void f64_avx512(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n)
{
    (void)b;
    mxp_vmath_f64__avx512f(vmath_fn(c->op), out, a, n);
}
#endif

mxp_kernel_fn mxp_vmath_kernel(mxp_dtype ct, int op, mxp_isa isa)
{
#ifdef MXP_HAVE_SLEEF
    const int fn = vmath_fn(op);
    if (fn < 0 || isa < MXP_ISA_AVX2)
        return NULL;
    if (ct == MXP_F32 && fn == MXP_VMATH_GELU)
        return isa >= MXP_ISA_AVX512 ? f32_gelu_avx512 : f32_gelu_avx2;
    if (ct == MXP_F32)
        return isa >= MXP_ISA_AVX512 ? f32_avx512 : f32_avx2;
    if (ct == MXP_F64)
        return isa >= MXP_ISA_AVX512 ? f64_avx512 : f64_avx2;
    return NULL;
#else
    (void)ct;
    (void)op;
    (void)isa;
    return NULL;
#endif
}

mxp_kernel_fn mxp_vmath_kernel_h16(mxp_dtype out, int op, mxp_isa isa)
{
#ifdef MXP_HAVE_SLEEF
    const int fn = vmath_fn(op);
    /* gelu at AVX-512: the fast path's float64 approximation rounded to
     * float32 with the check of each 16-bit format (the float64 path's bits;
     * a second rounding of the float32 kernel's result is not always right) */
    if (fn == MXP_VMATH_GELU && isa >= MXP_ISA_AVX512)
        return out == MXP_F16 ? h16_avx512 : out == MXP_BF16 ? bf16_avx512 : NULL;
    if (fn < 0 || fn >= MXP_VMATH_F32_COUNT || isa < MXP_ISA_AVX2)
        return NULL;
    /* bfloat16: the plain float32 kernel -- its result rounded once more is
     * the correctly rounded one on all 65,536 inputs (bfloat16 outputs come
     * only from bfloat16 inputs; test_vmath checks every one), and the check
     * cost ~20% of bfloat16 exp's speed */
    if (out == MXP_BF16)
        return isa >= MXP_ISA_AVX512 ? f32_avx512 : f32_avx2;
    if (out != MXP_F16)
        return NULL;
    return isa >= MXP_ISA_AVX512 ? h16_avx512 : h16_avx2;
#else
    (void)out;
    (void)op;
    (void)isa;
    return NULL;
#endif
}

mxp_h16_fn mxp_vmath_fused_f16(int op, mxp_isa isa, int *fn)
{
#ifdef MXP_HAVE_SLEEF
    *fn = vmath_fn(op);
    if (*fn == MXP_VMATH_GELU && isa >= MXP_ISA_AVX512)
        return f16_avx512;
    if (*fn < 0 || *fn >= MXP_VMATH_F32_COUNT || isa < MXP_ISA_AVX2)
        return NULL;
    return isa >= MXP_ISA_AVX512 ? f16_avx512 : f16_avx2;
#else
    (void)op;
    (void)isa;
    *fn = -1;
    return NULL;
#endif
}

const char *mxp_vector_math(void)
{
    const mxp_isa isa = mxp_isa_current();
    if (!mxp_vmath_kernel(MXP_F32, MXP_OP_EXP, isa))
        return "libm";
    return isa >= MXP_ISA_AVX512 ? "sleef-avx512" : "sleef-avx2";
}

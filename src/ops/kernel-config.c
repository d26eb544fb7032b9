/* The elementwise and reduction kernel tables, expanded from their lists
 * (src/kernels/<dtype>-<op>-list.inc), and the one choice made from each: the most
 * capable row at or below the level (core/dispatch.h).  The callers ask
 * once per operation or per block, never per element. */
#include "ops/kernel-config.h"
#include "mxp/ops.h"

static const mxp_kernel f32_arith[] = {
#define MXP_F32_ARITH(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/f32-arith-list.inc"
#undef MXP_F32_ARITH
};

static const mxp_kernel f64_arith[] = {
#define MXP_F64_ARITH(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/f64-arith-list.inc"
#undef MXP_F64_ARITH
};

static const mxp_kernel f16_arith[] = {
#define MXP_F16_ARITH(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/f16-arith-list.inc"
#undef MXP_F16_ARITH
    { NULL, NULL, NULL, NULL, MXP_ISA_COUNT, 0, 0, 0 }, /* none in some builds: C has no empty arrays */
};

static const mxp_kernel bf16_arith[] = {
#define MXP_BF16_ARITH(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/bf16-arith-list.inc"
#undef MXP_BF16_ARITH
    { NULL, NULL, NULL, NULL, MXP_ISA_COUNT, 0, 0, 0 },
};

static const mxp_kernel f32_canonical_nan[] = {
#define MXP_F32_CANONICAL_NAN(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/f32-canonical-nan-list.inc"
#undef MXP_F32_CANONICAL_NAN
};

static const mxp_kernel f64_canonical_nan[] = {
#define MXP_F64_CANONICAL_NAN(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/f64-canonical-nan-list.inc"
#undef MXP_F64_CANONICAL_NAN
};

static const mxp_kernel f32_sum[] = {
#define MXP_F32_SUM(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/f32-sum-list.inc"
#undef MXP_F32_SUM
};

static const mxp_kernel f32_vmath[] = {
#define MXP_F32_VMATH(isa, tags, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, tags, fn, twin),
#include "kernels/f32-vmath-list.inc"
#undef MXP_F32_VMATH
    { NULL, NULL, NULL, NULL, MXP_ISA_COUNT, 0, 0, 0 },
};

static const mxp_kernel f64_vmath[] = {
#define MXP_F64_VMATH(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, MXP_VMATH_ALL, fn, twin),
#include "kernels/f64-vmath-list.inc"
#undef MXP_F64_VMATH
    { NULL, NULL, NULL, NULL, MXP_ISA_COUNT, 0, 0, 0 },
};

static const mxp_kernel f16_vmath[] = {
#define MXP_F16_VMATH(isa, tags, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, tags, fn, twin),
#include "kernels/f16-vmath-list.inc"
#undef MXP_F16_VMATH
    { NULL, NULL, NULL, NULL, MXP_ISA_COUNT, 0, 0, 0 },
};

static const mxp_kernel f32_gelu[] = {
#define MXP_F32_GELU(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/f32-gelu-list.inc"
#undef MXP_F32_GELU
    { NULL, NULL, NULL, NULL, MXP_ISA_COUNT, 0, 0, 0 },
};

static const mxp_kernel f64_gelu[] = {
#define MXP_F64_GELU(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/f64-gelu-list.inc"
#undef MXP_F64_GELU
    { NULL, NULL, NULL, NULL, MXP_ISA_COUNT, 0, 0, 0 },
};

#define LIST(t) { t, sizeof t / sizeof t[0] }
static const struct {
    const mxp_kernel *rows;
    size_t n; /* with the end marker of the lists that may be empty */
} lists[MXP_LIST_COUNT] = {
    [MXP_LIST_F32_ARITH] = LIST(f32_arith),
    [MXP_LIST_F64_ARITH] = LIST(f64_arith),
    [MXP_LIST_F16_ARITH] = LIST(f16_arith),
    [MXP_LIST_BF16_ARITH] = LIST(bf16_arith),
    [MXP_LIST_F32_CANONICAL_NAN] = LIST(f32_canonical_nan),
    [MXP_LIST_F64_CANONICAL_NAN] = LIST(f64_canonical_nan),
    [MXP_LIST_F32_SUM] = LIST(f32_sum),
    [MXP_LIST_F32_VMATH] = LIST(f32_vmath),
    [MXP_LIST_F64_VMATH] = LIST(f64_vmath),
    [MXP_LIST_F16_VMATH] = LIST(f16_vmath),
    [MXP_LIST_F32_GELU] = LIST(f32_gelu),
    [MXP_LIST_F64_GELU] = LIST(f64_gelu),
};
#undef LIST

const mxp_kernel *mxp_ops_kernels(mxp_ops_list list, size_t *n)
{
    const mxp_kernel *rows = lists[list].rows;
    size_t k = lists[list].n;
    if (k && !rows[k - 1].fn) /* the end marker */
        k--;
    *n = k;
    return rows;
}

const mxp_kernel *mxp_ops_kernel(mxp_ops_list list, mxp_isa isa, uint32_t need)
{
    size_t n;
    const mxp_kernel *rows = mxp_ops_kernels(list, &n);
    return mxp_kernel_pick(rows, n, isa, need);
}

/* The chosen row's function as its list's type (function pointers convert
 * to one another; each is called only as what it is). */
static mxp_kernel_any pick(mxp_ops_list list, mxp_isa isa, uint32_t need)
{
    const mxp_kernel *k = mxp_ops_kernel(list, isa, need);
    return k ? k->fn : NULL;
}

mxp_f32_arith_ukernel *mxp_f32_arith_kernel(mxp_isa isa)
{
    return (mxp_f32_arith_ukernel *)pick(MXP_LIST_F32_ARITH, isa, 0);
}

mxp_f64_arith_ukernel *mxp_f64_arith_kernel(mxp_isa isa)
{
    return (mxp_f64_arith_ukernel *)pick(MXP_LIST_F64_ARITH, isa, 0);
}

mxp_h16_arith_ukernel *mxp_f16_arith_kernel(mxp_isa isa)
{
    return (mxp_h16_arith_ukernel *)pick(MXP_LIST_F16_ARITH, isa, 0);
}

mxp_h16_arith_ukernel *mxp_bf16_arith_kernel(mxp_isa isa)
{
    return (mxp_h16_arith_ukernel *)pick(MXP_LIST_BF16_ARITH, isa, 0);
}

mxp_f32_canonical_nan_ukernel *mxp_f32_canonical_nan_kernel(mxp_isa isa)
{
    return (mxp_f32_canonical_nan_ukernel *)pick(MXP_LIST_F32_CANONICAL_NAN, isa, 0);
}

mxp_f64_canonical_nan_ukernel *mxp_f64_canonical_nan_kernel(mxp_isa isa)
{
    return (mxp_f64_canonical_nan_ukernel *)pick(MXP_LIST_F64_CANONICAL_NAN, isa, 0);
}

mxp_f32_sum_f64_ukernel *mxp_f32_sum_f64_kernel(mxp_isa isa)
{
    return (mxp_f32_sum_f64_ukernel *)pick(MXP_LIST_F32_SUM, isa, 0);
}

mxp_f32_vmath_ukernel *mxp_f32_vmath_kernel(mxp_isa isa, uint32_t need)
{
    return (mxp_f32_vmath_ukernel *)pick(MXP_LIST_F32_VMATH, isa, need);
}

mxp_f64_vmath_ukernel *mxp_f64_vmath_kernel(mxp_isa isa)
{
    return (mxp_f64_vmath_ukernel *)pick(MXP_LIST_F64_VMATH, isa, 0);
}

mxp_f16_vmath_ukernel *mxp_f16_vmath_kernel(mxp_isa isa, uint32_t need)
{
    return (mxp_f16_vmath_ukernel *)pick(MXP_LIST_F16_VMATH, isa, need);
}

mxp_f32_gelu_ukernel *mxp_f32_gelu_kernel(mxp_isa isa)
{
    return (mxp_f32_gelu_ukernel *)pick(MXP_LIST_F32_GELU, isa, 0);
}

const char *mxp_vector_math(void)
{
    const mxp_kernel *k = mxp_ops_kernel(MXP_LIST_F32_VMATH, mxp_isa_current(), MXP_VMATH_FOR_F32);
    return !k ? "libm" : k->isa >= MXP_ISA_AVX512 ? "sleef-avx512" : "sleef-avx2";
}

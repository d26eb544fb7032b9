/* The quantization kernel tables, expanded from their lists
 * (src/kernels/f32-quant-list.inc, f32-minmax-list.inc), and the one choice
 * made from each: the most capable row at or below the current level
 * (core/dispatch.h).  Every list has a scalar row, so every getter
 * answers. */
#include "quant/quant-internal.h"

static const mxp_kernel f32_quant[] = {
#define MXP_F32_QUANT(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, MXP_QUANT_TAG_ONE, fn, twin),
#define MXP_F32_QUANT_COLS(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, MXP_QUANT_TAG_COLS, fn, twin),
#include "kernels/f32-quant-list.inc"
#undef MXP_F32_QUANT
#undef MXP_F32_QUANT_COLS
};

static const mxp_kernel f32_minmax[] = {
#define MXP_F32_MINMAX(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, MXP_QUANT_TAG_ONE, fn, twin),
#define MXP_F32_MINMAX_COLS(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, MXP_QUANT_TAG_COLS, fn, twin),
#include "kernels/f32-minmax-list.inc"
#undef MXP_F32_MINMAX
#undef MXP_F32_MINMAX_COLS
};

const mxp_kernel *mxp_quant_kernels(bool minmax, size_t *n)
{
    *n = minmax ? sizeof f32_minmax / sizeof f32_minmax[0] : sizeof f32_quant / sizeof f32_quant[0];
    return minmax ? f32_minmax : f32_quant;
}

/* The chosen row's function, to be called as its list's type. */
static mxp_kernel_any pick(bool minmax, uint32_t kind)
{
    size_t n;
    const mxp_kernel *rows = mxp_quant_kernels(minmax, &n);
    return mxp_kernel_pick(rows, n, mxp_isa_current(), kind)->fn;
}

mxp_f32_quant_ukernel *mxp_f32_quant_kernel(void)
{
    return (mxp_f32_quant_ukernel *)pick(false, MXP_QUANT_TAG_ONE);
}

mxp_f32_quant_cols_ukernel *mxp_f32_quant_cols_kernel(void)
{
    return (mxp_f32_quant_cols_ukernel *)pick(false, MXP_QUANT_TAG_COLS);
}

mxp_f32_minmax_ukernel *mxp_f32_minmax_kernel(void)
{
    return (mxp_f32_minmax_ukernel *)pick(true, MXP_QUANT_TAG_ONE);
}

mxp_f32_minmax_cols_ukernel *mxp_f32_minmax_cols_kernel(void)
{
    return (mxp_f32_minmax_cols_ukernel *)pick(true, MXP_QUANT_TAG_COLS);
}

/* The nn layer's kernel tables, from src/kernels/f32-norm-list.inc,
 * bf16-norm-list.inc and f32-dwconv-list.inc, and their getters: the most
 * capable row for an ISA level. */
#include "core/dispatch.h"
#include "kernels/bnorm-kernels.h"
#include "kernels/dwconv-kernels.h"
#include "kernels/norm-kernels.h"
#include "kernels/pool-kernels.h"
#include "kernels/softmax-kernels.h"
#include "nn/conv-internal.h"

static const mxp_kernel f32_norm[] = {
#define MXP_F32_NORM(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/f32-norm-list.inc"
#undef MXP_F32_NORM
};
enum { F32_NORM_ROWS = sizeof f32_norm / sizeof f32_norm[0] };

mxp_f32_norm_ukernel *nn_f32_norm_kernel(mxp_isa isa)
{
    const mxp_kernel *k = mxp_kernel_pick(f32_norm, F32_NORM_ROWS, isa, 0);
    return k ? (mxp_f32_norm_ukernel *)k->fn : NULL;
}

const mxp_kernel *nn_f32_norm_kernels(size_t *n)
{
    *n = F32_NORM_ROWS;
    return f32_norm;
}

static const mxp_kernel bf16_norm[] = {
#define MXP_BF16_NORM(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/bf16-norm-list.inc"
#undef MXP_BF16_NORM
};
enum { BF16_NORM_ROWS = sizeof bf16_norm / sizeof bf16_norm[0] };

mxp_bf16_norm_ukernel *nn_bf16_norm_kernel(mxp_isa isa)
{
    const mxp_kernel *k = mxp_kernel_pick(bf16_norm, BF16_NORM_ROWS, isa, 0);
    return k ? (mxp_bf16_norm_ukernel *)k->fn : NULL;
}

const mxp_kernel *nn_bf16_norm_kernels(size_t *n)
{
    *n = BF16_NORM_ROWS;
    return bf16_norm;
}

/* ---- depthwise convolution rows (src/kernels/f32-dwconv-list.inc) ---- */

static const mxp_kernel f32_dwconv[] = {
#define MXP_F32_DWCONV(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/f32-dwconv-list.inc"
#undef MXP_F32_DWCONV
};
enum { F32_DWCONV_ROWS = sizeof f32_dwconv / sizeof f32_dwconv[0] };

mxp_f32_dwconv_ukernel *nn_f32_dwconv_kernel(mxp_isa isa)
{
    const mxp_kernel *k = mxp_kernel_pick(f32_dwconv, F32_DWCONV_ROWS, isa, 0);
    return k ? (mxp_f32_dwconv_ukernel *)k->fn : NULL;
}

const mxp_kernel *nn_f32_dwconv_kernels(size_t *n)
{
    *n = F32_DWCONV_ROWS;
    return f32_dwconv;
}

/* ---- pooling rows (src/kernels/f32-pool-list.inc) ---------------------- */

static const mxp_kernel f32_pool[] = {
#define MXP_F32_POOL(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/f32-pool-list.inc"
#undef MXP_F32_POOL
};
enum { F32_POOL_ROWS = sizeof f32_pool / sizeof f32_pool[0] };

mxp_f32_pool_ukernel *nn_f32_pool_kernel(mxp_isa isa)
{
    const mxp_kernel *k = mxp_kernel_pick(f32_pool, F32_POOL_ROWS, isa, 0);
    return k ? (mxp_f32_pool_ukernel *)k->fn : NULL;
}

const mxp_kernel *nn_f32_pool_kernels(size_t *n)
{
    *n = F32_POOL_ROWS;
    return f32_pool;
}

/* ---- f32 softmax rows (src/kernels/f32-softmax-list.inc) ------------------ */

static const mxp_kernel f32_softmax[] = {
#define MXP_F32_SOFTMAX(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/f32-softmax-list.inc"
#undef MXP_F32_SOFTMAX
};
enum { F32_SOFTMAX_ROWS = sizeof f32_softmax / sizeof f32_softmax[0] };

mxp_f32_softmax_ukernel *nn_f32_softmax_kernel(mxp_isa isa)
{
    const mxp_kernel *k = mxp_kernel_pick(f32_softmax, F32_SOFTMAX_ROWS, isa, 0);
    return k ? (mxp_f32_softmax_ukernel *)k->fn : NULL;
}

const mxp_kernel *nn_f32_softmax_kernels(size_t *n)
{
    *n = F32_SOFTMAX_ROWS;
    return f32_softmax;
}

/* ---- bf16 softmax rows (src/kernels/bf16-softmax-list.inc) ------------------ */

static const mxp_kernel bf16_softmax[] = {
#define MXP_BF16_SOFTMAX(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/bf16-softmax-list.inc"
#undef MXP_BF16_SOFTMAX
};
enum { BF16_SOFTMAX_ROWS = sizeof bf16_softmax / sizeof bf16_softmax[0] };

mxp_bf16_softmax_ukernel *nn_bf16_softmax_kernel(mxp_isa isa)
{
    const mxp_kernel *k = mxp_kernel_pick(bf16_softmax, BF16_SOFTMAX_ROWS, isa, 0);
    return k ? (mxp_bf16_softmax_ukernel *)k->fn : NULL;
}

const mxp_kernel *nn_bf16_softmax_kernels(size_t *n)
{
    *n = BF16_SOFTMAX_ROWS;
    return bf16_softmax;
}

/* ---- batch-norm blocks (src/kernels/f32-bnorm-list.inc) ------------------ */

static const mxp_kernel f32_bnorm[] = {
#define MXP_F32_BNORM(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),
#include "kernels/f32-bnorm-list.inc"
#undef MXP_F32_BNORM
};
enum { F32_BNORM_ROWS = sizeof f32_bnorm / sizeof f32_bnorm[0] };

mxp_f32_bnorm_ukernel *nn_f32_bnorm_kernel(mxp_isa isa)
{
    const mxp_kernel *k = mxp_kernel_pick(f32_bnorm, F32_BNORM_ROWS, isa, 0);
    return k ? (mxp_f32_bnorm_ukernel *)k->fn : NULL;
}

const mxp_kernel *nn_f32_bnorm_kernels(size_t *n)
{
    *n = F32_BNORM_ROWS;
    return f32_bnorm;
}

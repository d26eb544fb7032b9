/* The nn layer's kernel tables, one from each list (src/kernels/
 * f32-norm-list.inc, bf16-norm-list.inc, f32-dwconv-list.inc, f32-dwconv-taps-list.inc,
 * f32-pool-list.inc, f32-pool-plane-list.inc, f32-softmax-list.inc, bf16-softmax-list.inc,
 * f32-bnorm-list.inc, f64-expshift-list.inc, f32-winograd-list.inc), and their getters: nn_<name>_kernel(isa), the most
 * capable row for an ISA level, and nn_<name>_kernels(&n), the table for
 * the tests. */
#include "core/dispatch.h"
#include "kernels/bnorm-kernels.h"
#include "kernels/dwconv-kernels.h"
#include "kernels/expshift.h"
#include "kernels/norm-kernels.h"
#include "kernels/pool-kernels.h"
#include "kernels/softmax-kernels.h"
#include "kernels/winograd-kernels.h"
#include "nn/conv-internal.h"

/* The two getters of table `name` (static const mxp_kernel name[]) whose
 * functions have type `type`. */
#define NN_GETTERS(name, type)                                                                                        \
    type *nn_##name##_kernel(mxp_isa isa)                                                                             \
    {                                                                                                                 \
        const mxp_kernel *k = mxp_kernel_pick(name, sizeof name / sizeof name[0], isa, 0);                            \
        return k ? (type *)k->fn : NULL;                                                                              \
    }                                                                                                                 \
    const mxp_kernel *nn_##name##_kernels(size_t *n)                                                                  \
    {                                                                                                                 \
        *n = sizeof name / sizeof name[0];                                                                            \
        return name;                                                                                                  \
    }

/* Every list's lines have the shape (isa, tile, fn, twin). */
#define NN_ROW(isa, tile, fn, twin) MXP_KERNEL_ROW(isa, 0, tile, 0, fn, twin),

static const mxp_kernel f32_norm[] = {
#define MXP_F32_NORM NN_ROW
#include "kernels/f32-norm-list.inc"
#undef MXP_F32_NORM
};
NN_GETTERS(f32_norm, mxp_f32_norm_ukernel)

static const mxp_kernel bf16_norm[] = {
#define MXP_BF16_NORM NN_ROW
#include "kernels/bf16-norm-list.inc"
#undef MXP_BF16_NORM
};
NN_GETTERS(bf16_norm, mxp_bf16_norm_ukernel)

static const mxp_kernel f32_dwconv[] = {
#define MXP_F32_DWCONV NN_ROW
#include "kernels/f32-dwconv-list.inc"
#undef MXP_F32_DWCONV
};
NN_GETTERS(f32_dwconv, mxp_f32_dwconv_ukernel)

static const mxp_kernel f32_dwconv_taps[] = {
#define MXP_F32_DWCONV_TAPS NN_ROW
#include "kernels/f32-dwconv-taps-list.inc"
#undef MXP_F32_DWCONV_TAPS
};
NN_GETTERS(f32_dwconv_taps, mxp_f32_dwconv_taps_ukernel)

static const mxp_kernel f32_pool[] = {
#define MXP_F32_POOL NN_ROW
#include "kernels/f32-pool-list.inc"
#undef MXP_F32_POOL
};
NN_GETTERS(f32_pool, mxp_f32_pool_ukernel)

static const mxp_kernel f32_pool_plane[] = {
#define MXP_F32_POOL_PLANE NN_ROW
#include "kernels/f32-pool-plane-list.inc"
#undef MXP_F32_POOL_PLANE
};
NN_GETTERS(f32_pool_plane, mxp_f32_pool_plane_ukernel)

static const mxp_kernel f32_softmax[] = {
#define MXP_F32_SOFTMAX NN_ROW
#include "kernels/f32-softmax-list.inc"
#undef MXP_F32_SOFTMAX
};
NN_GETTERS(f32_softmax, mxp_f32_softmax_ukernel)

static const mxp_kernel bf16_softmax[] = {
#define MXP_BF16_SOFTMAX NN_ROW
#include "kernels/bf16-softmax-list.inc"
#undef MXP_BF16_SOFTMAX
};
NN_GETTERS(bf16_softmax, mxp_bf16_softmax_ukernel)

static const mxp_kernel f32_bnorm[] = {
#define MXP_F32_BNORM NN_ROW
#include "kernels/f32-bnorm-list.inc"
#undef MXP_F32_BNORM
};
NN_GETTERS(f32_bnorm, mxp_f32_bnorm_ukernel)

static const mxp_kernel f32_wino[] = {
#define MXP_F32_WINO NN_ROW
#include "kernels/f32-winograd-list.inc"
#undef MXP_F32_WINO
};
NN_GETTERS(f32_wino, mxp_f32_wino_ukernel)

static const mxp_kernel f64_expshift[] = {
#define MXP_F64_EXPSHIFT NN_ROW
#include "kernels/f64-expshift-list.inc"
#undef MXP_F64_EXPSHIFT
};
NN_GETTERS(f64_expshift, mxp_f64_expshift_ukernel)

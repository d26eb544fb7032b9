/* Internal: the elementwise and reduction kernels, one table per list
 * (src/kernels/<dtype>-<op>-list.inc: arith, canonical-nan, vmath, gelu, sum), and
 * the getters that choose from them (src/ops/kernel-config.c).  A getter
 * returns the most capable kernel at or below the level it is given, or
 * NULL where the list has none there (the caller then takes its portable
 * path, the twin's); the tables are for the tests, which run every row
 * against its twin. */
#ifndef MXP_OPS_KERNEL_CONFIG_H
#define MXP_OPS_KERNEL_CONFIG_H

#include "core/dispatch.h"
#include "kernels/arith-kernels.h"
#include "kernels/canonical-nan-kernels.h"
#include "kernels/sum-kernels.h"
#include "kernels/vmath-kernels.h"

typedef enum mxp_ops_list {
    MXP_LIST_F32_ARITH,
    MXP_LIST_F64_ARITH,
    MXP_LIST_F16_ARITH,
    MXP_LIST_BF16_ARITH,
    MXP_LIST_F32_CANONICAL_NAN,
    MXP_LIST_F64_CANONICAL_NAN,
    MXP_LIST_F32_SUM,
    MXP_LIST_F32_VMATH,
    MXP_LIST_F64_VMATH,
    MXP_LIST_F16_VMATH,
    MXP_LIST_F32_GELU,
    MXP_LIST_F64_GELU,
    MXP_LIST_COUNT
} mxp_ops_list;

/* The rows of a list, in the list's order (*n of them; none in a build
 * without the kernels: another architecture, or no SLEEF for vmath). */
const mxp_kernel *mxp_ops_kernels(mxp_ops_list list, size_t *n);

/* The row of list mxp_kernel_pick chooses at level isa for need (tags,
 * 0 for lists of one kind), or NULL. */
const mxp_kernel *mxp_ops_kernel(mxp_ops_list list, mxp_isa isa, uint32_t need);

/* The same, typed.  float32/float64 + - * /, canonical NaNs and the
 * float32 sum have a scalar row: never NULL. */
mxp_f32_arith_ukernel *mxp_f32_arith_kernel(mxp_isa isa);
mxp_f64_arith_ukernel *mxp_f64_arith_kernel(mxp_isa isa);
mxp_h16_arith_ukernel *mxp_f16_arith_kernel(mxp_isa isa);
mxp_h16_arith_ukernel *mxp_bf16_arith_kernel(mxp_isa isa);
mxp_f32_canonical_nan_ukernel *mxp_f32_canonical_nan_kernel(mxp_isa isa);
mxp_f64_canonical_nan_ukernel *mxp_f64_canonical_nan_kernel(mxp_isa isa);
mxp_f32_sum_f64_ukernel *mxp_f32_sum_f64_kernel(mxp_isa isa);
/* need: MXP_VMATH_FOR_* | MXP_VMATH_FN(fn) */
mxp_f32_vmath_ukernel *mxp_f32_vmath_kernel(mxp_isa isa, uint32_t need);
mxp_f64_vmath_ukernel *mxp_f64_vmath_kernel(mxp_isa isa);
mxp_f16_vmath_ukernel *mxp_f16_vmath_kernel(mxp_isa isa, uint32_t need);
mxp_f32_gelu_ukernel *mxp_f32_gelu_kernel(mxp_isa isa);

/* ---- the twins that are no kernel of their own (src/ops/kernel-refs.c) ----
 * The portable paths the levels below the kernels take, as functions of
 * the kernels' signatures, for the tests.  vmath: fn an enum mxp_vmath_fn,
 * computed as mxp_ew_unary1 does (libm in float64) for an output of at most
 * 32 bits; _ref rounds to float32 to nearest even, _odd_ref to odd (for a
 * 16-bit output: rounded once more it is the float64 value rounded once). */
void mxp_f16_arith_ref(int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n);
void mxp_bf16_arith_ref(int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n);
size_t mxp_f32_vmath_ref(int fn, float *y, const float *x, size_t n);
size_t mxp_f32_vmath_odd_ref(int fn, float *y, const float *x, size_t n);
void mxp_f64_vmath_ref(int fn, double *y, const double *x, size_t n);
size_t mxp_f16_vmath_ref(int fn, uint16_t *y, const uint16_t *x, size_t n);
size_t mxp_f32_gelu_ref(float *y, const float *x, size_t n);
void mxp_f64_gelu_ref(double *y, const double *x, size_t n);

#endif

/* Internal: the loops that apply an operation on contiguous scratch in a
 * compute type (float32, float64, int64 or uint64). */
#ifndef MXP_OPS_INTERNAL_H
#define MXP_OPS_INTERNAL_H

#include <stddef.h>

#include "mxp/ops.h"

/* out[i] = a[i] op b[i] (b unused by unary ops), n elements of the compute
 * type the function was chosen for. */
typedef void (*mxp_kernel_fn)(int op, void *out, const void *a, const void *b, size_t n);

mxp_kernel_fn mxp_binary_kernel(mxp_dtype compute_type);
mxp_kernel_fn mxp_unary_kernel(mxp_dtype compute_type);

/* Runs a caller's kernel over a (compute type ct) into a new array of
 * dtype rt; for src/ops/registry.c. */
mxp_status mxp_ops_run_custom(mxp_array **out, const mxp_array *a, mxp_dtype ct, mxp_dtype rt,
                              mxp_unary_kernel_fn fn, void *ctx, const mxp_ops_opts *opts);

#endif

/* Internal: elementwise operations as plans (types, compute loop, rounding)
 * run over 1-d strided rows, and the loops that apply an operation on
 * contiguous scratch in a compute type (float32, float64, int64 or uint64). */
#ifndef MXP_OPS_INTERNAL_H
#define MXP_OPS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/dispatch.h"
#include "kernels/arith-kernels.h"
#include "kernels/canonical-nan-kernels.h"
#include "kernels/vmath-kernels.h"
#include "mxp/cpu.h"
#include "mxp/ops.h"

/* What a compute loop is told besides its data. */
typedef struct mxp_ew_ctx {
    int op;                      /* an mxp_binary_op or mxp_unary_op */
    bool f32;                    /* the compute type is float32: floor_divide and
                                    remainder round every step to float32, as
                                    NumPy's float32 (and float16) loops do */
    const mxp_dtype_traits *out; /* the output dtype: nextafter and spacing step
                                    in it, ldexp clamps to its range; NULL: float64 */
    mxp_kernel_any kernel;       /* the list's kernel a loop calls (+ - * /, vector
                                    math), chosen for the ISA level with the plan */
} mxp_ew_ctx;

/* out[i] = a[i] op b[i] (b unused by unary ops), n elements of the compute
 * type the function was chosen for.  out may be a or b (in place). */
typedef void (*mxp_kernel_fn)(const mxp_ew_ctx *c, void *out, const void *a, const void *b, size_t n);

/* The loop for binary op in compute type ct at ISA level isa, and in
 * *kernel what it calls (its context's kernel): float32/float64 + - * /
 * through the list's kernel for the level (src/kernels/f32-arith/,
 * f64-arith/: the same bits at every level), the portable loops
 * otherwise (*kernel NULL).  src/ops/elementwise-loops.c */
mxp_kernel_fn mxp_binary_kernel_for(mxp_dtype compute_type, int op, mxp_isa isa, mxp_kernel_any *kernel);
mxp_kernel_fn mxp_unary_kernel(mxp_dtype compute_type);

/* The SLEEF loop for unary op (exp, log, tanh, sin, cos, sigmoid, silu,
 * gelu, gelu_tanh) in compute type ct (float32: results rounded to nearest
 * even; float64) at ISA level isa, and its kernel in *kernel; or NULL:
 * none (scalar level, another op, a build without SLEEF).
 * src/ops/elementwise-vmath.c */
mxp_kernel_fn mxp_vmath_kernel(mxp_dtype ct, int op, mxp_isa isa, mxp_kernel_any *kernel);

/* The float32 SLEEF loop of exp, log, tanh, sin, cos (and gelu) for
 * input type in (one that float32 holds) and a float16 or bfloat16 output
 * out rounded to nearest even: results whose one rounding into out is
 * correct (the float64 kernel redoes the lanes where the float32 error
 * could change it), and its kernel; or NULL.  src/ops/elementwise-vmath.c */
mxp_kernel_fn mxp_vmath_kernel_h16(mxp_dtype in, mxp_dtype out, int op, mxp_isa isa, mxp_kernel_any *kernel);

/* mxp_vmath_kernel_h16's loop for float16 input and output in one pass,
 * rounded to nearest even and overflowing to inf (no flags, no
 * saturation), its function index in *fn; or NULL. */
mxp_f16_vmath_ukernel *mxp_vmath_fused_f16(int op, mxp_isa isa, int *fn);

/* NumPy's maximum/minimum (NaN propagates) and fmax/fmin (NaN ignored);
 * for equal values (+0 and -0) y, as NumPy's float32/float64 loops. */
static inline double mxp_ew_maximum(double x, double y) { return x != x ? x : y != y ? y : x > y ? x : y; }
static inline double mxp_ew_minimum(double x, double y) { return x != x ? x : y != y ? y : x < y ? x : y; }
static inline double mxp_ew_fmax(double x, double y) { return y != y ? x : x != x ? y : x > y ? x : y; }
static inline double mxp_ew_fmin(double x, double y) { return y != y ? x : x != x ? y : x < y ? x : y; }

/* One element in float64 (src/ops/elementwise-math.c): the loops' path for
 * the operations they have no loop of their own for. */
double mxp_ew_binary1(const mxp_ew_ctx *c, double x, double y);
double mxp_ew_unary1(const mxp_ew_ctx *c, double x);

/* An elementwise operation prepared for given dtypes. */
typedef struct mxp_ew_plan {
    int nin;
    mxp_dtype in[2], out;
    mxp_dtype ct;                /* compute type */
    mxp_kernel_fn fn;
    mxp_ew_ctx ctx;
    mxp_unary_kernel_fn custom;  /* a caller's kernel instead of fn (src/ops/registry.c) */
    void *custom_ctx;
    mxp_convert_opts convert;    /* the one rounding into out */
    bool costly;                 /* a function per element (exp, tanh, gelu, power ...):
                                    compute-bound, so threads pay off on smaller arrays */
    /* a NaN result is written as the positive quiet NaN with no payload,
     * the same bits at every ISA level (every float operation but the sign
     * operations), by the kernel for the compute type
     * (src/kernels/f32-canonical-nan/, f64-canonical-nan/); both NULL:
     * results as the loop leaves them */
    mxp_f32_canonical_nan_ukernel *nan_f32;
    mxp_f64_canonical_nan_ukernel *nan_f64;
    /* one pass over contiguous, 2-byte aligned 16-bit operands, no scratch:
     * float16/bfloat16 + - x (h16: src/kernels/f16-arith/, bf16-arith/) or
     * a float16 function of float16 (h16_unary: src/kernels/f16-vmath/),
     * h16_op the kernel's op or function; NULL: none */
    mxp_h16_arith_ukernel *h16;
    mxp_f16_vmath_ukernel *h16_unary;
    int h16_op;
    /* a costly unary float16/bfloat16 operation: its table's key + 1
     * (src/ops/elementwise-lut.c); 0: none */
    int lut16;
    /* negative, positive, abs or copysign of one float dtype into itself
     * (every operand that dtype): its sign bit, the bit operation on
     * sign_size-byte elements, the result's bits above the dtype's width
     * (float6, float4 in a byte) cleared; 0: none */
    uint64_t sign_mask, sign_width;
    size_t sign_size;
} mxp_ew_plan;

/* Plans for valid ops and dtypes (src/ops/op-info.c); convert NULL: nearest even. */
void mxp_ew_plan_binary(mxp_ew_plan *p, mxp_binary_op op, mxp_dtype a, mxp_dtype b, mxp_dtype out,
                        const mxp_convert_opts *convert);
void mxp_ew_plan_unary(mxp_ew_plan *p, mxp_unary_op op, mxp_dtype a, mxp_dtype out, const mxp_convert_opts *convert);

/* ---- tables of 16-bit unary results (src/ops/elementwise-lut.c) ----
 *
 * mxp_ew_lut16_key: the key of p's table + 1 (p a unary plan of op), 0
 * when it has none (not costly, not 16-bit float in and out, stochastic
 * rounding, flag counters).  mxp_ew_lut16: the table of p -- out[x] is
 * the plan's result for the bit pattern x -- counting n more elements
 * toward building it; NULL while it has none.  mxp_lut16_u16_ref:
 * out[i*os] = table[in[i*is]] (strides in bytes, any alignment, in place
 * allowed).  The last two are for tests: tables off (each plan runs its
 * own loop) and all tables freed (no other thread may be in an operation). */
int mxp_ew_lut16_key(const mxp_ew_plan *p, int op);
const uint16_t *mxp_ew_lut16(const mxp_ew_plan *p, size_t n);
void mxp_lut16_u16_ref(void *out, ptrdiff_t os, const void *in, ptrdiff_t is, size_t n, const uint16_t *table);
void mxp_ew_lut16_set_enabled(bool on);
void mxp_ew_lut16_reset(void);

/* Checks an op's operand dtypes (ldexp's exponent must be an integer). */
mxp_status mxp_ew_check_binary(mxp_binary_op op, mxp_dtype a, mxp_dtype b);

/* out[i*os] = in[0][i*is[0]] op in[1][i*is[1]] for i < n: blocks of the
 * inputs converted exactly to the compute type (or read where they lie when
 * they are of it and contiguous), the loop applied, the result rounded once
 * into out.  Element 0 is element index0 of stochastic rounding's stream.
 * No checks; in place as mxp_binary_strided allows.  (src/ops/strided.c) */
void mxp_ew_run_1d(const mxp_ew_plan *p, size_t n, char *out, ptrdiff_t os, const char *const in[2],
                   const ptrdiff_t is[2], uint64_t index0);

/* ---- large operations over the thread pool (src/ops/strided.c) ----
 *
 * fn(p, ctx, lo, hi) computes elements [lo, hi) of an n-element operation
 * (flat indices; element i is element i of stochastic rounding's stream).
 * mxp_ew_parallel runs fn over [0, n) in mxp_ew_threads(p, n) shares on
 * the pool, each with a copy of p whose flag counters are its own (summed
 * into p's afterwards), so the bits and counts are those of one thread. */
typedef void (*mxp_ew_range_fn)(const mxp_ew_plan *p, const void *ctx, size_t lo, size_t hi);

/* Threads for n elements of p: 1 below the size threshold, for a caller's
 * kernel (not known to be thread-safe), else up to mxp_get_num_threads(). */
int mxp_ew_threads(const mxp_ew_plan *p, size_t n);
void mxp_ew_parallel(const mxp_ew_plan *p, size_t n, mxp_ew_range_fn fn, const void *ctx);

/* Runs a caller's kernel over a (compute type ct) into a new array of
 * dtype rt; for src/ops/registry.c. */
mxp_status mxp_ops_run_custom(mxp_array **out, const mxp_array *a, mxp_dtype ct, mxp_dtype rt,
                              mxp_unary_kernel_fn fn, void *ctx, const mxp_ops_opts *opts);

#endif

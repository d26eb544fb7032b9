/* Internal: GEMM configurations (micro-kernel + tile and block sizes) and
 * the layers below the API: driver (blocking, knows no dtype), packing
 * (convert while packing), micro-kernels (src/kernels/<acc>-gemm/). */
#ifndef MXP_GEMM_INTERNAL_H
#define MXP_GEMM_INTERNAL_H

#include <stddef.h>

#include "mxp/cpu.h"
#include "mxp/gemm.h"

/* c (mr x nr of ldc elements, accumulator type) = alpha * A~ B~ + beta * c,
 * where A~ is an MR x kc packed panel ([k][MR], or [k/2][MR][2] when the
 * config packs pairs) and B~ a kc x NR one likewise, zero-padded; kc is a
 * multiple of the config's kpack.  beta == 0 overwrites c, NaN included. */
typedef void (*mxp_gemm_ukernel_fn)(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                    size_t ldc, double alpha, double beta);

/* The same with A read in place (no A~): mr rows lda elements apart, k
 * contiguous, kc a multiple of kpack; rows beyond mr are never read. */
typedef void (*mxp_gemm_ukernel_a_fn)(size_t mr, size_t nr, size_t kc, const void *a, size_t lda, const void *b,
                                      void *c, size_t ldc, double alpha, double beta);

typedef struct mxp_gemm_config {
    const char *name;
    mxp_dtype acc;            /* MXP_F32 or MXP_F64: C tiles */
    mxp_dtype packed;         /* dtype of the packed panels (acc, or bf16 for dot-product kernels) */
    size_t kpack;             /* k values per packed group: 1, or 2 for [k/2][width][2] (vdpbf16ps) */
    mxp_isa isa;
    size_t mr, nr;            /* micro-tile */
    size_t mc, kc, nc;        /* cache blocks: mc % mr == 0, nc % nr == 0 */
    mxp_gemm_ukernel_fn ukernel;
    mxp_gemm_ukernel_a_fn ukernel_a; /* NULL: A is always packed */
} mxp_gemm_config;

/* The most capable configuration at or below isa for the accumulator and
 * input types (a packed dtype must hold every input value exactly). */
const mxp_gemm_config *mxp_gemm_config_for(mxp_dtype acc, mxp_dtype a_type, mxp_dtype b_type, mxp_isa isa);

/* One operand as stored: element (r, c) of op(X) is at
 * base + (trans ? c * ld + r : r * ld + c) * itemsize. */
typedef struct mxp_gemm_operand {
    const unsigned char *base;
    mxp_dtype dtype;
    size_t ld;
    int trans;
} mxp_gemm_operand;

/* Packs op(A)[i0 .. i0+mc, p0 .. p0+kc] into MR-row panels of acc type. */
void mxp_gemm_pack_a(const mxp_gemm_config *cfg, const mxp_gemm_operand *a, size_t i0, size_t mc, size_t p0,
                     size_t kc, void *dst);
/* Packs op(B)[p0 .. p0+kc, j0 .. j0+nc] into NR-column panels of acc type.
 * With check_tiny, for bfloat16 B into bfloat16 panels, returns whether
 * the block holds a nonzero |x| < 2^-63 (whose products vdpbf16ps could
 * flush), found on the way; false otherwise. */
/* dst[q * dst_ld + c] = the 32-bit word at src + c * ld + 4q (ld in bytes)
 * for c < lines, q < count: the transposing copy of packing (a float32
 * operand whose lines run along k; int8 K-quads of transposed B).
 * mxp_x32_transpose_kernel: the SIMD kernel for `lines` at this ISA level
 * (src/kernels/x32-transpose/), else the portable twin, _ref. */
typedef void (*mxp_x32_transpose_fn)(const void *src, size_t ld, size_t lines, size_t count, void *dst, size_t dst_ld);
void mxp_x32_transpose_ref(const void *src, size_t ld, size_t lines, size_t count, void *dst, size_t dst_ld);
mxp_x32_transpose_fn mxp_x32_transpose_kernel(size_t lines);

bool mxp_gemm_pack_b(const mxp_gemm_config *cfg, const mxp_gemm_operand *b, size_t p0, size_t kc, size_t j0,
                     size_t nc, void *dst, bool check_tiny);

/* Called once for every finished MC x NC block of w (rows i0.., columns
 * j0..; wb points at element (i0, j0), rows ldw apart), by the thread that
 * computed it, while the block is in cache. */
typedef void (*mxp_gemm_finish_fn)(void *ctx, size_t i0, size_t mc, size_t j0, size_t nc, const void *wb,
                                   size_t ldw);
/* The five loops.  Writes alpha*AB + beta*C into the acc-typed matrix w
 * (ldw elements; w may be C itself when C has the accumulator's dtype),
 * then calls finish on each block (NULL: none).  redo (NULL:
 * none) is for cfg's vdpbf16ps kernel, when C's old values do not count
 * (beta == 0) and finish only writes C: B is not scanned beforehand but
 * checked while it is packed, and when it holds a nonzero |x| < 2^-63 the
 * product is abandoned where it is and run again from the start with redo
 * (the float32 configuration), whose buffers are taken up front so that
 * nothing fails once C has been written. */
mxp_status mxp_gemm_drive_finish(const mxp_gemm_config *cfg, size_t m, size_t n, size_t k, double alpha,
                                 const mxp_gemm_operand *a, const mxp_gemm_operand *b, double beta, void *w,
                                 size_t ldw, mxp_gemm_finish_fn finish, void *finish_ctx,
                                 const mxp_gemm_config *redo);

/* Small M (a few rows of C): B is not packed but read in place by a
 * micro-kernel with a row stride; A is packed [k][mr] (or in k-pairs).
 * Only for B, not transposed, of the dtype the kernel multiplies. */
typedef void (*mxp_gemm_direct_fn)(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                   void *c, size_t ldc, double alpha, double beta);
typedef struct mxp_gemm_direct_config {
    const char *name;
    mxp_dtype acc;
    mxp_dtype packed; /* A~'s dtype and B's (read in place) */
    size_t kpack;     /* 1, or 2: A~ as [k/2][MR][2] (vdpbf16ps) */
    mxp_isa isa;
    size_t mr, nr, kc;
    size_t step, step_multi; /* rows of B per rank update (multiples of kpack): one row panel, several */
    size_t max_m; /* used for m <= max_m */
    mxp_gemm_direct_fn ukernel;
} mxp_gemm_direct_config;

/* NULL when none serves acc and B of dtype b_type at or below isa. */
const mxp_gemm_direct_config *mxp_gemm_direct_config_for(mxp_dtype acc, mxp_dtype b_type, mxp_isa isa);

/* The small-M loops: pc over KC, A packed once per step, NR strips of
 * columns split across threads, finish per thread's columns at the end. */
mxp_status mxp_gemm_drive_direct(const mxp_gemm_direct_config *cfg, size_t m, size_t n, size_t k, double alpha,
                                 const mxp_gemm_operand *a, const mxp_gemm_operand *b, double beta, void *w,
                                 size_t ldw, mxp_gemm_finish_fn finish, void *finish_ctx);

/* A matrix as stored, in bytes: rows of width bytes, stride bytes apart
 * (stride >= width; nothing when rows or width is 0). */
typedef struct mxp_gemm_region {
    const void *base;
    size_t rows, width, stride;
} mxp_gemm_region;

/* rows x cols elements of t, rows ld elements apart. */
mxp_gemm_region mxp_gemm_region_of(const void *p, size_t rows, size_t cols, size_t ld, mxp_dtype t);
/* Do two stored matrices share a byte?  Exact: interleaved rows that share
 * none do not overlap. */
bool mxp_gemm_regions_overlap(const mxp_gemm_region *x, const mxp_gemm_region *y);
/* After the sizes were checked: a bias_len too short for the bias kind is
 * MXP_ERR_INVALID_ARGUMENT, C sharing memory with A, B, the bias or the
 * scales MXP_ERR_OVERLAP (fn names the caller in the sentence). */
mxp_status mxp_gemm_check_buffers(const char *fn, mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k,
                                  const void *a, mxp_dtype at, size_t lda, const void *b, mxp_dtype bt, size_t ldb,
                                  const void *c, mxp_dtype ct, size_t ldc, const mxp_gemm_opts *opts);

/* t[0..len) holds row i, columns j0.., of alpha*AB + beta*C in float64;
 * adds the bias, applies the activation and the clamp of o.  tmp has room
 * for len values. */
/* A float16 or bfloat16 accumulator (lowp-acc.c): the portable emulation,
 * for float inputs; m, n, k > 0 and alpha != 0. */
mxp_status mxp_gemm_lowp_acc(mxp_dtype acc, size_t m, size_t n, size_t k, double alpha, const mxp_gemm_operand *a,
                             const mxp_gemm_operand *b, double beta, void *c, mxp_dtype ct, size_t ldc,
                             const mxp_gemm_opts *opts, bool epilogue);

void mxp_gemm_epilogue_row(const mxp_gemm_opts *o, double *t, size_t i, size_t j0, size_t len, double *tmp);

/* M = 1 without packing when a GEMV kernel serves the types: returns true
 * and sets *st when it handled the call. */
bool mxp_gemm_gemv(size_t n, size_t k, double alpha, const mxp_gemm_operand *a, const mxp_gemm_operand *b,
                   double beta, void *c, mxp_dtype c_type, const mxp_gemm_opts *opts, mxp_status *st);

/* A GEMV kernel of src/kernels/gemv/ (kind MXP_GEMV_F32/BF16/F16 with
 * float32 x and y, -1 float64, -2 int16 x by int8 B into int32 y with room
 * for n rounded up to 32) over column ranges on mxp_get_num_threads()
 * threads when B is large; ld in elements of B (itemsize bytes each). */
void mxp_gemm_gemv_run(int kind, int trans_b, size_t k, size_t n, const void *x, const void *b, size_t ld,
                       size_t itemsize, void *y);

/* Integer GEMM (src/gemm/int8.c): uint8 or int8 A by int8 B.  Is t an
 * integer input type?  Are these types a combination mxp_gemm takes (float
 * x float -> float, or integer)?  mxp_gemm_int8 runs once the common
 * checks passed; the kernel name for integer types. */
bool mxp_gemm_int8_input(mxp_dtype t);
mxp_status mxp_gemm_int8_check_types(mxp_dtype a_type, mxp_dtype b_type, mxp_dtype c_type);
mxp_status mxp_gemm_int8(mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k, double alpha, const void *a,
                         mxp_dtype a_type, size_t lda, const void *b, mxp_dtype b_type, size_t ldb, double beta,
                         void *c, mxp_dtype c_type, size_t ldc, const mxp_gemm_opts *opts);
const char *mxp_gemm_int8_kernel_name(mxp_dtype a_type, mxp_dtype b_type, const mxp_gemm_opts *opts);

/* Element buffers at any address (src/gemm/misaligned.c): whether one of
 * a, b, c is not aligned to its element size; then the checked call runs
 * again through `run` on aligned copies of the misaligned ones (C copied
 * back), one memcpy each way -- the packers and kernels read their
 * operands through typed pointers. */
typedef mxp_status (*mxp_gemm_fn)(mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k, double alpha,
                                  const void *a, mxp_dtype a_type, size_t lda, const void *b, mxp_dtype b_type,
                                  size_t ldb, double beta, void *c, mxp_dtype c_type, size_t ldc,
                                  const mxp_gemm_opts *opts);
bool mxp_gemm_misaligned(const void *a, mxp_dtype at, const void *b, mxp_dtype bt, const void *c, mxp_dtype ct);
mxp_status mxp_gemm_aligned_copies(mxp_gemm_fn run, mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k,
                                   double alpha, const void *a, mxp_dtype a_type, size_t lda, const void *b,
                                   mxp_dtype b_type, size_t ldb, double beta, void *c, mxp_dtype c_type, size_t ldc,
                                   const mxp_gemm_opts *opts);

#endif

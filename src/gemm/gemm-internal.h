/* Internal: GEMM configurations (micro-kernel + tile and block sizes, from
 * the kernel lists), the dispatch of the packing, GEMV and requantization
 * kernels, and the layers below the API: driver (src/gemm/driver.h: the
 * loops, which know no dtype), packing (convert while packing),
 * micro-kernels (src/kernels/<dtype>-gemm/). */
#ifndef MXP_GEMM_INTERNAL_H
#define MXP_GEMM_INTERNAL_H

#include <stddef.h>

#include "gemm/widen.h"
#include "kernels/gemm-kernels.h"
#include "kernels/gemv-kernels.h"
#include "kernels/pack-kernels.h"
#include "kernels/finish-kernels.h"
#include "kernels/requant-kernels.h"
#include "mxp/cpu.h"
#include "mxp/gemm.h"

/* ---- configurations (src/gemm/config.c) ----------------------------------- */

/* A micro-kernel with its tile and cache blocks: one line of
 * src/kernels/gemm-list.inc (float) or u8s8-gemm-list.inc (integer). */
typedef struct mxp_gemm_config {
    const char *name;         /* the micro-kernel's function name */
    mxp_dtype acc;            /* the C tiles: MXP_F32, MXP_F64, or MXP_S32 (integer sums) */
    mxp_dtype packed;         /* the panels: MXP_F32, MXP_F64 or MXP_BF16; integer: MXP_U8 (K-quads:
                                 A~ uint8, B~ int8) or MXP_S16 (K-pairs) */
    size_t kpack;             /* k values per packed group: 1, or 2 ([k/2][width][2]), 4 (K-quads) */
    mxp_isa isa;
    size_t mr, nr;            /* micro-tile */
    size_t mc, kc, nc;        /* cache blocks: mc % mr == 0, nc % nr == 0 */
    size_t deep_m;            /* integer: from this many rows of C on, MC / 2 and 2 KC (0: never) */
    mxp_gemm_ukernel_fn ukernel;          /* float (NULL for integer) */
    mxp_u8s8_gemm_ukernel_fn ukernel_s32; /* integer (NULL for float) */
    bool a7;                  /* integer: for uint8 A below 128 only (MXP_U8S8_GEMM_UKERNEL_U7) */
} mxp_gemm_config;

/* The most capable configuration at or below isa for the accumulator and
 * input types (a packed dtype must hold every input value exactly; MXP_S32
 * for uint8 or int8 A by int8 B; the scalar one always exists). */
const mxp_gemm_config *mxp_gemm_config_for(mxp_dtype acc, mxp_dtype a_type, mxp_dtype b_type, mxp_isa isa);
/* The integer configuration at or below isa for uint8 A whose every value
 * is below 128 (NULL: none), which mxp_gemm_config_for never returns. */
const mxp_gemm_config *mxp_gemm_config_a7_for(mxp_isa isa);

/* Does every value of the float dtype t multiply exactly in bfloat16
 * panels, none of them tiny for the bfloat16 kernels (config.c)? */
bool mxp_gemm_fits_bf16(mxp_dtype t);

/* The configuration's micro-kernel with A read in place (NULL: none). */
mxp_gemm_ukernel_a_fn mxp_gemm_config_ukernel_a(const mxp_gemm_config *cfg);
/* ... and the one reading A's rows through pointers, k in segments (NULL: none). */
mxp_gemm_ukernel_taps_fn mxp_gemm_config_ukernel_taps(const mxp_gemm_config *cfg);
/* columns up to which that variant is used (the list's max_n) */
size_t mxp_gemm_config_ukernel_a_max_n(const mxp_gemm_config *cfg);
mxp_u8s8_gemm_ukernel_a_fn mxp_gemm_config_ukernel_a_s32(const mxp_gemm_config *cfg);
/* The release of the state its micro-kernel keeps in a thread between
 * calls (gemm-list.inc's MXP_GEMM_UKERNEL_RELEASE; NULL: none). */
void (*mxp_gemm_config_release(const mxp_gemm_config *cfg))(void);

/* Small M: a direct kernel (B read in place) with its blocks. */
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

/* d's kernel with A in place too (tiny products), or NULL (none, or d NULL). */
mxp_gemm_direct_a_fn mxp_gemm_direct_a_for(const mxp_gemm_direct_config *d);

/* ---- the other kernels of GEMM, for an ISA level (src/gemm/dispatch.c) --- */

/* The first line of the kernel lists at or below isa (the scalar twins at
 * the bottom, so never NULL), or NULL where the list has none there. */
mxp_x32_transpose_fn mxp_x32_transpose_kernel(mxp_isa isa, size_t lines);
mxp_x64_transpose_fn mxp_x64_transpose_kernel(mxp_isa isa, size_t lines);
mxp_x16_transpose_fn mxp_x16_transpose_kernel(mxp_isa isa, size_t lines);
mxp_bf16_pack_b_fn mxp_bf16_pack_b_kernel(mxp_isa isa);
mxp_bf16_scan_fn mxp_bf16_scan_kernel(mxp_isa isa);
mxp_s8_pack_quads_fn mxp_s8_pack_quads_kernel(mxp_isa isa);
mxp_s8_pack_pairs_fn mxp_s8_pack_pairs_kernel(mxp_isa isa);
mxp_u8_pack_pairs6_fn mxp_u8_pack_pairs6_kernel(mxp_isa isa);
mxp_s8_sum_lines_fn mxp_s8_sum_lines_kernel(mxp_isa isa);
mxp_s8_scan_fn mxp_s8_scan_kernel(mxp_isa isa);
mxp_s32_requant_fn mxp_s32_requant_kernel(mxp_isa isa);
mxp_s32_requant_f64_fn mxp_s32_requant_f64_kernel(mxp_isa isa);
/* NULL below the levels with a vector kernel: */
mxp_f32_gemv_fn mxp_f32_gemv_kernel(mxp_isa isa);
mxp_f64_gemv_fn mxp_f64_gemv_kernel(mxp_isa isa);
mxp_s16s8_gemv_fn mxp_s16s8_gemv_kernel(mxp_isa isa);
mxp_f32_finish_fn mxp_f32_finish_kernel(mxp_isa isa);
/* The float32 bias + clamp kernel for float32 C at isa, NULL below AVX2
 * (then the twin's loop: gemm.c). */
mxp_f32_finish_bias_fn mxp_f32_finish_bias_kernel(mxp_isa isa);
/* ... and where none rounds in mode: */
mxp_s32_dequant_f32_fn mxp_s32_dequant_f32_kernel(mxp_isa isa, mxp_rounding mode);
mxp_s32_dequant_bias_f32_fn mxp_s32_dequant_bias_f32_kernel(mxp_isa isa, mxp_rounding mode);

/* ---- operands, packing ----------------------------------------------------- */

/* A made block by block instead of stored (an implicit GEMM: a
 * convolution's im2col rows): fill writes op(A)[i0 .. i0+mc, p0 .. p0+kc]
 * into dst row-major in A's dtype, rows ld elements apart, and zeros in
 * columns kc .. ld (a tile's whole k-groups).  Called by the thread that
 * multiplies those rows, right before (the block stays in its cache). */
typedef struct mxp_gemm_gather {
    void (*fill)(const void *ctx, size_t i0, size_t mc, size_t p0, size_t kc, void *dst, size_t ld);
    const void *ctx;
} mxp_gemm_gather;

/* One operand as stored: element (r, c) of op(X) is at
 * base + (trans ? c * ld + r : r * ld + c) * itemsize; or, for A, made
 * by gather (not NULL: base, ld and trans unused). */
typedef struct mxp_gemm_operand {
    const unsigned char *base;
    mxp_dtype dtype;
    size_t ld;
    int trans;
    const mxp_gemm_gather *gather;
} mxp_gemm_operand;

/* Whether mxp_gemm_gathered takes A of a_type by B (b) into C (c) with
 * these options at the ISA level in use: B and C aligned to their
 * elements, and a float configuration whose tile reads A's rows where they
 * lie, in A's dtype as it is (float32 A at the vector levels, bfloat16 A
 * at avx512bf16 and amx).  bfloat16: the caller has checked that neither A
 * nor B holds a value the bfloat16 kernels flush (mxp_gemm_has_tiny_bf16;
 * mxp_gemm takes the float32 kernel for those). */
bool mxp_gemm_gather_ok(mxp_dtype a_type, const void *b, mxp_dtype b_type, const void *c, mxp_dtype c_type,
                        const mxp_gemm_opts *opts);
/* Whether a rows x cols matrix of type t (rows ld apart) holds a nonzero
 * |x| < 2^-63, whose products vdpbf16ps could flush (false for any t but
 * bfloat16); the threads share large ones. */
bool mxp_gemm_has_tiny_bf16(const void *x, mxp_dtype t, size_t rows, size_t cols, size_t ld);
/* mxp_gemm(MXP_NO_TRANS, tb, m, n, k, alpha, A, ...) with A (m x k, of
 * a_type) made by ga block by block (mxp_gemm_gather_ok must hold): the
 * same checks, configuration, KC steps and epilogue, always through the
 * packed loops -- so the bits of mxp_gemm on the whole A stored wherever
 * mxp_gemm takes those too (not its one-row or small-M kernels). */
mxp_status mxp_gemm_gathered(const mxp_gemm_gather *ga, mxp_dtype a_type, mxp_trans tb, size_t m, size_t n, size_t k,
                             double alpha, const void *b, mxp_dtype b_type, size_t ldb, double beta, void *c,
                             mxp_dtype c_type, size_t ldc, const mxp_gemm_opts *opts);

/* Float packing (src/gemm/pack.c), converting exactly to cfg->packed.
 * Packs op(A)[i0 .. i0+mc, p0 .. p0+kc] into MR-row panels. */
void mxp_gemm_pack_a(const mxp_gemm_config *cfg, const mxp_gemm_operand *a, size_t i0, size_t mc, size_t p0,
                     size_t kc, void *dst);
/* Packs op(B)[p0 .. p0+kc, j0 .. j0+nc] into NR-column panels.  With
 * check_tiny, for bfloat16 B into bfloat16 panels, returns whether the
 * block holds a nonzero |x| < 2^-63 (whose products vdpbf16ps could flush),
 * found on the way; false otherwise. */
bool mxp_gemm_pack_b(const mxp_gemm_config *cfg, const mxp_gemm_operand *b, size_t p0, size_t kc, size_t j0,
                     size_t nc, void *dst, bool check_tiny);

/* Called once for every finished MC x NC block of sums (rows i0..,
 * columns j0..; wb points at sum (i0, j0), rows ldw apart), by the thread
 * that computed it, while the block is in cache. */
typedef void (*mxp_gemm_finish_fn)(void *ctx, size_t i0, size_t mc, size_t j0, size_t nc, const void *wb,
                                   size_t ldw);

/* ---- checks ---------------------------------------------------------------- */

/* A stored matrix of rows x cols (as stored) with leading dimension ld:
 * ld >= cols, p not NULL when it has elements, its extent within the
 * address space; errors begin with fn's name ("mxp_gemm: ldb = 3 is ..."). */
mxp_status mxp_gemm_check_matrix(const char *fn, const char *name, const void *p, size_t rows, size_t cols,
                                 size_t ld, mxp_dtype t);

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
/* Entry points other than mxp_gemm (the batched GEMM, mxp_matmul*): A's
 * per-row zero points and scales belong to one matrix, so they are
 * MXP_ERR_INVALID_ARGUMENT here; MXP_OK without them. */
mxp_status mxp_gemm_refuse_a_rows(const char *fn, const mxp_gemm_opts *o);

/* After the sizes were checked: a bias_len too short for the bias kind is
 * MXP_ERR_INVALID_ARGUMENT, C sharing memory with A, B, the bias or the
 * scales MXP_ERR_OVERLAP (fn names the caller in the sentence). */
mxp_status mxp_gemm_check_buffers(const char *fn, mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k,
                                  const void *a, mxp_dtype at, size_t lda, const void *b, mxp_dtype bt, size_t ldb,
                                  const void *c, mxp_dtype ct, size_t ldc, const mxp_gemm_opts *opts);

/* ---- the epilogue (src/gemm/epilogue.c) ------------------------------------ */

/* The epilogue of o prepared for one call: the bias's widening to float64
 * found once. */
typedef struct mxp_gemm_epilogue {
    const mxp_gemm_opts *o;
    mxp_gemm_widener bias;
} mxp_gemm_epilogue;

void mxp_gemm_epilogue_init(mxp_gemm_epilogue *e, const mxp_gemm_opts *o);

/* t[0..len) holds row i, columns j0.., of alpha*AB + beta*C in float64;
 * adds the bias, applies the activation and the clamp.  tmp has room for
 * len values. */
void mxp_gemm_epilogue_row(const mxp_gemm_epilogue *e, double *t, size_t i, size_t j0, size_t len, double *tmp);
/* Its activation and clamp alone (after the bias). */
void mxp_gemm_epilogue_act(const mxp_gemm_opts *o, double *t, size_t len);

/* ---- the other paths ------------------------------------------------------- */

/* A float16 or bfloat16 accumulator (lowp-acc.c): the portable emulation,
 * for float inputs; m, n, k > 0 and alpha != 0. */
mxp_status mxp_gemm_lowp_acc(mxp_dtype acc, size_t m, size_t n, size_t k, double alpha, const mxp_gemm_operand *a,
                             const mxp_gemm_operand *b, double beta, void *c, mxp_dtype ct, size_t ldc,
                             const mxp_gemm_opts *opts, bool epilogue);

/* M = 1 without packing when a GEMV kernel serves the types: returns true
 * and sets *st when it handled the call. */
bool mxp_gemm_gemv(size_t n, size_t k, double alpha, const mxp_gemm_operand *a, const mxp_gemm_operand *b,
                   double beta, void *c, mxp_dtype c_type, const mxp_gemm_opts *opts, mxp_status *st);

/* Runs a GEMV kernel over column ranges on mxp_get_num_threads() threads
 * when B is large: exactly one of f32 (with kind), f64, s16s8 set; ld in
 * elements of B (itemsize bytes each); y as the kernel wants it. */
typedef struct mxp_gemv_kernel {
    mxp_f32_gemv_fn f32;
    int kind;
    mxp_f64_gemv_fn f64;
    mxp_s16s8_gemv_fn s16s8;
} mxp_gemv_kernel;
void mxp_gemm_gemv_run(const mxp_gemv_kernel *g, int trans_b, size_t k, size_t n, const void *x, const void *b,
                       size_t ld, size_t itemsize, void *y);

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

/* B packed once for many integer products (a layer's int8 weights:
 * mxp_qtensor_prepack).  A cache is tied to the B operand at address b;
 * while it is bound to a thread (bind returns the one bound before; NULL
 * unbinds), mxp_gemm_int8 on that thread with that B (the same address)
 * keeps B~ -- every KC step's panels and B's column sums -- for each
 * kernel and blocking it meets (up to a few: the first ones), built at the
 * first such product and read by the later ones instead of packing: the
 * same sums.  B must not change while the cache lives; free it once no
 * product uses it.  No memory for it: the product packs as before. */
typedef struct mxp_int8_b_cache mxp_int8_b_cache;
mxp_int8_b_cache *mxp_int8_b_cache_new(const void *b);
void mxp_int8_b_cache_free(mxp_int8_b_cache *c);
mxp_int8_b_cache *mxp_int8_b_cache_bind(mxp_int8_b_cache *c);

/* Element buffers at any address (src/gemm/misaligned.c): whether one of
 * a, b (only read when k > 0) and c is not aligned to its element size;
 * then the checked call runs again through `run` on aligned copies of the
 * misaligned ones (C copied back), one memcpy each way -- the packers and
 * kernels read their operands through typed pointers. */
typedef mxp_status (*mxp_gemm_fn)(mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k, double alpha,
                                  const void *a, mxp_dtype a_type, size_t lda, const void *b, mxp_dtype b_type,
                                  size_t ldb, double beta, void *c, mxp_dtype c_type, size_t ldc,
                                  const mxp_gemm_opts *opts);
bool mxp_gemm_misaligned(size_t k, const void *a, mxp_dtype at, const void *b, mxp_dtype bt, const void *c,
                         mxp_dtype ct);
mxp_status mxp_gemm_aligned_copies(mxp_gemm_fn run, mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k,
                                   double alpha, const void *a, mxp_dtype a_type, size_t lda, const void *b,
                                   mxp_dtype b_type, size_t ldb, double beta, void *c, mxp_dtype c_type, size_t ldc,
                                   const mxp_gemm_opts *opts);

/* Sub-byte integer operands (src/gemm/sub-byte.c): the type t is widened
 * to beside the other operand (int8 / uint8 with an integer, float32 with
 * a float; other types unchanged), and the call on widened copies. */
bool mxp_gemm_sub_byte_int(mxp_dtype t);
mxp_dtype mxp_gemm_widened_type(mxp_dtype t, mxp_dtype other, bool is_b);
mxp_status mxp_gemm_sub_byte_copies(mxp_gemm_fn run, mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k,
                                    double alpha, const void *a, mxp_dtype a_type, size_t lda, const void *b,
                                    mxp_dtype b_type, size_t ldb, double beta, void *c, mxp_dtype c_type, size_t ldc,
                                    const mxp_gemm_opts *opts);

#endif

/* Internal: the one GEMM driver (src/gemm/driver.c), the five BLIS loops
 * for every dtype over a context that says how to pack, how to run a
 * micro-tile and how to block; and the float small-M loops
 * (src/gemm/direct.c).  The entries fill the context: mxp_gemm's float path
 * (src/gemm/gemm.c) and the integer path (src/gemm/int8.c). */
#ifndef MXP_GEMM_DRIVER_H
#define MXP_GEMM_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

#include "gemm/gemm-internal.h"

/* One micro-tile: rows i.., columns j.. of the product (mr x nr sums at c,
 * rows ldc apart), kcp the packed depth of this KC step; the A~ panel at a,
 * or, when lda != 0, A where it is stored (rows lda elements apart); the
 * B~ panel at b.  first: the first KC step (beta applies, the integer
 * corrections are added). */
typedef void (*mxp_gemm_tile_fn)(const void *kernel, size_t i, size_t j, size_t mr, size_t nr, size_t kcp,
                                 const void *a, size_t lda, const void *b, void *c, size_t ldc, bool first);

/* op(A)[i0 .. i0+mc, p0 .. p0+kc] as MR-row panels at dst. */
typedef void (*mxp_gemm_pack_a_fn)(const void *kernel, const mxp_gemm_operand *a, size_t i0, size_t mc, size_t p0,
                                   size_t kc, void *dst);

/* op(B)[p0 .. p0+kc, j0 .. j0+nc] as NR-column panels at dst.  With check,
 * returns whether the block holds a value the kernel cannot take (found on
 * the way: bfloat16 B's tiny values for vdpbf16ps); false otherwise. */
typedef bool (*mxp_gemm_pack_b_fn)(const void *kernel, const mxp_gemm_operand *b, size_t p0, size_t kc, size_t j0,
                                   size_t nc, void *dst, bool check);

typedef struct mxp_gemm_loops {
    size_t m, n, k;                /* all > 0 */
    const mxp_gemm_operand *a, *b;
    /* The micro-kernel: kernel is the entry's state, handed to the three
     * functions (prepare may fill it in). */
    void *kernel;
    mxp_gemm_tile_fn tile;
    mxp_gemm_pack_a_fn pack_a;
    mxp_gemm_pack_b_fn pack_b;
    void (*release)(void);         /* after a thread's share of a step: the tile's thread state (NULL: none) */
    size_t mr, nr, kpack;          /* the tile; k values per packed group */
    size_t slab_unit;              /* threads' slabs of columns start on multiples of it (NR or a vector) */
    size_t packed_size;            /* bytes of an element of A~ and B~ (and of A read in place) */
    bool a_in_place;               /* the tile can read A where it is stored (the driver decides when) */
    size_t a_max_n;                /* ... while at most this many columns reuse an A block */
    /* Blocks: kc is the KC step as the entry splits K (the float partial
     * sums' order: every result bit depends on it); mc and nc the most rows
     * and columns of a block.  even: MC and NC blocks evened over each
     * thread's range (integer sums, which no split changes). */
    size_t mc, kc, nc;
    bool even;
    /* The order of the tiles in a block: NR panels outer, MR panels inner
     * (BLIS's: a B~ micro-panel stays in L1 while A~'s stream), or with
     * rows_outer MR panels outer (an A~ micro-panel stays, B~'s stream and
     * C is written row block by row block).  Either gives the same bits. */
    bool rows_outer;
    /* The sums: w (w_size bytes an element, rows ldw apart), or NULL for a
     * workspace of one NC block per thread; finish (NULL: none) is called
     * on every finished block, by the thread that computed it. */
    size_t w_size;
    void *w;
    size_t ldw;
    mxp_gemm_finish_fn finish;
    void *finish_ctx;
    /* extra_bytes taken with the buffers, handed to prepare (NULL: none)
     * once they are all there, before the loops: nothing fails after it. */
    size_t extra_bytes;
    void (*prepare)(void *kernel, void *extra);
    int max_threads;
    /* NULL: B~ packed step by step; else all of it, packed before the
     * call by mxp_gemm_pack_b_all for these loops (the same kernel, n, k
     * and kc): the steps read their panels there (a layer's weights packed
     * once for many calls, src/quant/qtensor.c). */
    const void *b_packed;
} mxp_gemm_loops;

/* Sets every field of *L for configuration cfg of the m x n x k product,
 * sums into w (NULL: a workspace; rows ldw apart) and finish: cfg's tile,
 * packed element size and blocks as listed, the accumulator's element
 * size, mxp_get_num_threads() threads, no extra area.  The entry then sets
 * the micro-kernel (kernel, tile, packers, A in place) and changes the rest
 * where it needs to.  (Filled in place, field by field: the context is
 * built on every call, and a zeroed and copied struct cost a tenth of a
 * 32^3 integer product.) */
void mxp_gemm_loops_init(mxp_gemm_loops *L, const mxp_gemm_config *cfg, size_t m, size_t n, size_t k,
                         const mxp_gemm_operand *a, const mxp_gemm_operand *b, void *w, size_t ldw,
                         mxp_gemm_finish_fn finish, void *finish_ctx);

/* The bytes of B~ for the whole product, and B~ packed at dst (with
 * L->pack_b, unchecked) for L->b_packed: each KC step's panels of all N
 * columns, NR-padded, in turn. */
size_t mxp_gemm_packed_b_bytes(const mxp_gemm_loops *L);
void mxp_gemm_pack_b_all(const mxp_gemm_loops *L, void *dst);

/* The step that splits `total` into as few blocks of at most `block` as
 * it can, all about the same size (no thin last one), rounded up to a
 * multiple of `unit` (block is one). */
static inline size_t mxp_gemm_even_block(size_t total, size_t block, size_t unit)
{
    const size_t count = (total + block - 1) / block;
    return ((total + count - 1) / count + unit - 1) / unit * unit;
}

/* The five loops: jc over NC columns, pc over KC (B~ packed once per step),
 * ic over MC rows (A~ packed, or A read in place), then jr/ir over the
 * micro-tiles.  Every buffer is taken first, in one workspace:
 * MXP_ERR_NO_MEMORY leaves w and everything finish writes untouched.
 * redo (NULL: none) is another configuration of the same product, for a
 * kernel whose B is checked while it is packed: when the check finds a
 * value, the product is abandoned where it is and run again from the start
 * with redo, whose buffers were taken up front too (the caller passes redo
 * only when the first attempt's writes do not count). */
mxp_status mxp_gemm_drive(const mxp_gemm_loops *loops, const mxp_gemm_loops *redo);

/* The float path (src/gemm/float.c): alpha*AB + beta*C into the acc-typed
 * matrix w (ldw elements; w may be C itself when C has the accumulator's
 * dtype) by configuration cfg, finish on each block (NULL: none).  redo
 * (NULL: none) is for cfg's vdpbf16ps kernel, when C's old values do not
 * count (beta == 0) and finish only writes C: B is not scanned beforehand
 * but checked while it is packed, and when it holds a nonzero |x| < 2^-63
 * the product runs again from the start with redo (the float32
 * configuration). */
mxp_status mxp_gemm_float_drive(const mxp_gemm_config *cfg, size_t m, size_t n, size_t k, double alpha,
                                const mxp_gemm_operand *a, const mxp_gemm_operand *b, double beta, void *w,
                                size_t ldw, mxp_gemm_finish_fn finish, void *finish_ctx, const mxp_gemm_config *redo);

/* Small M (a few rows of C): B is not packed but read in place by a
 * micro-kernel with a row stride; A is packed [k][mr] (or in k-pairs).
 * Only for B, not transposed, of the dtype the kernel multiplies.  The
 * loops: pc over KC, A packed once per step, NR strips of columns split
 * across threads, finish per thread's columns at the end.  Writes alpha*AB
 * + beta*C into the acc-typed w (ldw elements). */
mxp_status mxp_gemm_drive_direct(const mxp_gemm_direct_config *cfg, size_t m, size_t n, size_t k, double alpha,
                                 const mxp_gemm_operand *a, const mxp_gemm_operand *b, double beta, void *w,
                                 size_t ldw, mxp_gemm_finish_fn finish, void *finish_ctx);

/* Tiny products (src/gemm/direct.c: TINY_MNK multiply-adds, B within
 * TINY_B_BYTES, k within kc_max, the packed configuration's KC): every MR
 * x NR tile of C by cfg's kernel with A (transposed or not) and B (not
 * transposed) both read in place (mxp_gemm_direct_a_for), all of k in one
 * call, one thread, nothing packed.  Returns false, doing nothing, where
 * cfg has no such kernel or the product is not tiny. */
bool mxp_gemm_drive_tiny(const mxp_gemm_direct_config *cfg, size_t kc_max, size_t m, size_t n, size_t k,
                         double alpha, const mxp_gemm_operand *a, const mxp_gemm_operand *b, double beta, void *c,
                         size_t ldc);

#endif

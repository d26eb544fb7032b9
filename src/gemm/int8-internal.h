/* Internal: integer GEMM below mxp_gemm_int8 (src/gemm/int8.c): the
 * configurations, the zero-point corrections and the driver
 * (src/gemm/int8-driver.c), packing (src/gemm/int8-pack.c).
 *
 * The kernels multiply raw values, unsigned A~ by signed B~ (vpdpbusd's
 * operand types; the AVX2 kernel has them widened to int16).  int8 A is packed as A + 128 (the byte with its top bit
 * flipped) and its zero point becomes za + 128, so with A' the packed A:
 *
 *   acc[i][j] = sum_k (A'[i][k] - za') (B[k][j] - zb)
 *             = sum_k A' B  -  zb * rowsum(A')[i]  -  za' * colsum(B)[j]  +  K za' zb
 *
 * The last three terms are row_off[i] + col_off[j], added by the kernel on
 * the first K block.  Everything runs modulo 2^32, so the result is exact
 * whenever the true acc fits int32, which mxp_gemm_int8 guarantees by
 * refusing K beyond its limit. */
#ifndef MXP_GEMM_INT8_INTERNAL_H
#define MXP_GEMM_INT8_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm/gemm-internal.h"

/* See src/kernels/gemm-kernels.h: A~ and B~ in the config's layout. */
typedef void (*mxp_u8s8_gemm_ukernel_fn)(size_t mr, size_t nr, size_t kc, const void *a, const void *b, int32_t *c,
                                         size_t ldc, const int32_t *row_off, const int32_t *col_off);

/* The same with uint8 A read in place: mr rows lda bytes apart (rows beyond
 * mr never read), kc % 4 == 0. */
typedef void (*mxp_u8s8_gemm_ukernel_a_fn)(size_t mr, size_t nr, size_t kc, const uint8_t *a, size_t lda,
                                           const int8_t *b, int32_t *c, size_t ldc, const int32_t *row_off,
                                           const int32_t *col_off);

typedef struct mxp_u8s8_gemm_config {
    const char *name;
    mxp_isa isa;
    size_t kpack;             /* the panels' K-group: 4, K-quads of bytes [k/4][width][4] (A~ uint8, B~ int8);
                                 2, K-pairs of int16 [k/2][width][2] */
    size_t mr, nr;
    size_t mc, kc, nc;        /* mc % mr == 0, nc % nr == 0, kc % kpack == 0 */
    size_t deep_m;            /* from this many rows of C on, blocks of MC / 2 rows and 2 KC (0: never);
                                 mc / 2 % mr == 0 */
    mxp_u8s8_gemm_ukernel_fn ukernel;
    mxp_u8s8_gemm_ukernel_a_fn ukernel_a; /* NULL: A is always packed */
} mxp_u8s8_gemm_config;

/* The most capable configuration at or below isa (the scalar one always). */
const mxp_u8s8_gemm_config *mxp_u8s8_gemm_config_for(mxp_isa isa);

/* Bytes of a packed panel (or panels) `width` rows or columns wide holding
 * kc values of k, padded to whole K-groups. */
static inline size_t mxp_int8_panel_bytes(const mxp_u8s8_gemm_config *cfg, size_t width, size_t kc)
{
    const size_t kcp = (kc + cfg->kpack - 1) / cfg->kpack * cfg->kpack;
    return width * kcp * (cfg->kpack == 2 ? sizeof(int16_t) : 1);
}

/* op(A)[i0 .. i0+mc, p0 .. p0+kc] as MR-row panels, op(B)[p0 .. p0+kc,
 * j0 .. j0+nc] as NR-column panels, in the kernels' layout
 * (src/gemm/int8-pack.c). */
void mxp_int8_pack_a(const mxp_u8s8_gemm_config *cfg, const mxp_gemm_operand *a, size_t i0, size_t mc, size_t p0,
                     size_t kc, void *dst);
void mxp_int8_pack_b(const mxp_u8s8_gemm_config *cfg, const mxp_gemm_operand *b, size_t p0, size_t kc, size_t j0,
                     size_t nc, void *dst);

/* Called once for every finished block of sums, by the thread that computed
 * it: rows i0 .. i0+mc, columns j0 .. j0+nc; w points at sum (i0, j0), rows
 * ldw apart. */
typedef void (*mxp_int8_finish_fn)(void *ctx, size_t i0, size_t mc, size_t j0, size_t nc, const int32_t *w,
                                   size_t ldw);

typedef struct mxp_int8_job {
    size_t m, n, k;              /* k > 0 */
    mxp_gemm_operand a, b;       /* A uint8 or int8, B int8 */
    int32_t a_zero, b_zero;      /* as the user gave them */
    int32_t *w;                  /* the sums: C itself (ldw), or NULL for a workspace of one NC block */
    size_t ldw;
    mxp_int8_finish_fn finish;   /* NULL: the sums in w are the result */
    void *finish_ctx;
    int max_threads;
} mxp_int8_job;

/* The five loops.  Allocates everything first: MXP_ERR_NO_MEMORY leaves
 * w and everything finish writes untouched. */
mxp_status mxp_int8_gemm_drive(const mxp_u8s8_gemm_config *cfg, const mxp_int8_job *job);

#endif

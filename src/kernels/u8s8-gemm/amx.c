/* uint8 x int8 GEMM micro-kernel, 32 x 32, AMX: four int32 C tiles of 16 x
 * 16, two A tiles (16 rows x 64 k) and two B tiles (16 K-quads x 16
 * columns) per 64 values of k, each `tdpbusd` 16 x 16 x 64.
 *
 * Panels: A~ uint8 [k/64][32][64] (each row's 64 values of k contiguous, as
 * a tile row wants them), B~ int8 [k/4][32][4] (the vpdpbusd kernels'
 * K-quads: a B tile is 16 of its quad rows, 128 bytes apart), kc a
 * multiple of 64.  Integer sums wrap modulo 2^32 in any order, so the
 * tiles start from C (or from the corrections row_off[i] + col_off[j]) and
 * every level gives the same bits. */
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/amx-tiles.h"
#include "kernels/gemm-kernels.h"

void mxp_u8s8_gemm_release__amx(void)
{
    mxp_amx_tiles_release();
}

/* C (mr x nr, rows ldc apart) = (row_off ? row_off[i] + col_off[j] : C) +
 * A~ B~ with A's rows a_row bytes apart and its chunks of 64 values of k
 * a_step bytes apart (A~: 64 and 32 x 64; in place: lda and 64). */
static inline __attribute__((always_inline)) void tile_32x32(size_t mr, size_t nr, size_t kc, const uint8_t *pa,
                                                             size_t a_row, size_t a_step, bool in_place,
                                                             const int8_t *pb, int32_t *c, size_t ldc,
                                                             const int32_t *row_off, const int32_t *col_off)
{
    int32_t buf[32][32] __attribute__((aligned(64)));
    const bool full = mr == 32 && nr == 32;
    mxp_amx_tiles_configure();
    if (full && !row_off) { /* the tiles start from C */
        mxp_amx_load_sums(c, ldc * 4);
    } else { /* from the corrections, or C's mr x nr, through buf */
        if (!full)
            memset(buf, 0, sizeof buf);
        for (size_t i = 0; i < mr; i++) {
            if (!row_off) {
                memcpy(buf[i], c + i * ldc, nr * 4);
                continue;
            }
            const uint32_t r = (uint32_t)row_off[i]; /* uint32: the corrections wrap as the sums do */
            for (size_t j = 0; j < nr; j++)
                buf[i][j] = (int32_t)(r + (uint32_t)col_off[j]);
        }
        mxp_amx_tile_memory_barrier();
        mxp_amx_load_sums(buf, 128);
    }
    mxp_amx_2x2(MXP_AMX_U8S8, mr, kc / 64, pa, a_row, a_step, in_place, (const uint8_t *)pb);
    if (full) {
        mxp_amx_store_sums(c, ldc * 4);
        return;
    }
    mxp_amx_store_sums(buf, 128);
    mxp_amx_tile_memory_barrier();
    for (size_t i = 0; i < mr; i++)
        memcpy(c + i * ldc, buf[i], nr * 4);
}

void mxp_u8s8_gemm_ukernel_32x32__amx(size_t mr, size_t nr, size_t kc, const void *a, const void *b, int32_t *c,
                                      size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    tile_32x32(mr, nr, kc, a, 64, 32 * 64, false, b, c, ldc, row_off, col_off);
}

/* uint8 A in place: rows lda bytes apart, kc a multiple of 64. */
void mxp_u8s8_gemm_ukernel_32x32_a__amx(size_t mr, size_t nr, size_t kc, const uint8_t *a, size_t lda,
                                        const int8_t *b, int32_t *c, size_t ldc, const int32_t *row_off,
                                        const int32_t *col_off)
{
    tile_32x32(mr, nr, kc, a, lda, 64, true, b, c, ldc, row_off, col_off);
}

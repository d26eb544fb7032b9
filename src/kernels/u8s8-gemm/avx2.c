/* uint8 x int8 GEMM micro-kernel, MR x NR = 6 x 16, AVX2 (no VNNI).
 * vpmaddubsw would multiply the bytes as they are, but it saturates its
 * int16 sum of two products (255 * 127 * 2 > 32767), so the panels hold
 * int16, widened while packing: A~ [kc/2][6][2] (0 .. 255) and B~
 * [kc/2][16][2] (-128 .. 127), a K-pair per 32-bit lane.  vpmaddwd adds the
 * two exact products of a pair (|sum| <= 2 * 255 * 128 < 2^31) into each
 * int32 lane, vpaddd accumulates modulo 2^32: the scalar twin's sums, bit
 * for bit.  12 accumulators, 2 vectors of B~, a broadcast pair of A~ and a
 * product: the 16 ymm registers. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/gemm-kernels.h"
#include "kernels/s32-tile-avx2.h"

/* The tile, K-pairs (s32-tile-avx2.h). */
#define TILE(rows, nv, ...) mxp_s32_tile_avx2(rows, nv, 0, 6, 0, __VA_ARGS__)

void mxp_u8s8_gemm_ukernel_6x16__avx2(size_t mr, size_t nr, size_t kc, const void *a, const void *b, int32_t *c,
                                      size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    mxp_s32_tile_prefetch_avx2(c, ldc, mr);
    MXP_S32_TILE_6X16_DISPATCH(TILE, mr, nr, kc, a, b, c, ldc, row_off, col_off);
}

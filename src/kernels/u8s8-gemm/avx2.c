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
#include <string.h>

#include "kernels/gemm-kernels.h"
#include "kernels/s32-tile-avx2.h"

#define MR 6
#define NV 2 /* 8-lane vectors across NR = 16 */

#define MXP_INLINE static inline __attribute__((always_inline))

/* The tile with the first rows of the MR rows of A~ and the first nv of the
 * NV vectors of B~ (constants in each instance): a panel of at most 8
 * columns multiplies only those, and so do the rows of a short tile (M = 16
 * is 6 + 6 + 4 rows: 18 rows' work otherwise). */
MXP_INLINE void tile(const int rows, const int nv, size_t mr, size_t nr, size_t kc, const int16_t *a, const int16_t *b, int32_t *c,
                     size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    __m256i acc[MR][NV];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            acc[i][v] = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (size_t p = 0; p < kc; p += 2) {
        __m256i bv[NV];
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++)
            bv[v] = _mm256_loadu_si256((const __m256i *)(const void *)(b + 16 * v));
#pragma GCC unroll 6
        for (int i = 0; i < rows; i++) {
            int32_t pair;
            memcpy(&pair, a + 2 * i, 4);
            const __m256i ai = _mm256_set1_epi32(pair);
#pragma GCC unroll 2
            for (int v = 0; v < nv; v++)
                acc[i][v] = _mm256_add_epi32(acc[i][v], _mm256_madd_epi16(ai, bv[v]));
        }
        a += 2 * MR;
        b += 2 * 8 * NV;
    }
    mxp_s32_tile_6x16_store_avx2(rows, nv, mr, nr, (const __m256i(*)[NV])acc, c, ldc, row_off, col_off);
}

void mxp_u8s8_gemm_ukernel_6x16__avx2(size_t mr, size_t nr, size_t kc, const void *a, const void *b, int32_t *c,
                                      size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    mxp_s32_tile_prefetch_avx2(c, ldc, mr);
    MXP_S32_TILE_6X16_DISPATCH(tile, mr, nr, kc, a, b, c, ldc, row_off, col_off);
}

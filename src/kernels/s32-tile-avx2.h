/* The AVX2 integer GEMM micro-kernels' tiles, 6 x 16 (u8s8-gemm/avx2.c)
 * and 4 x 16 (u8s8-gemm-a7/avx2.c): their loop, their store into C and the
 * choice of an instance for an edge tile. */
#ifndef MXP_KERNELS_S32_TILE_AVX2_H
#define MXP_KERNELS_S32_TILE_AVX2_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

/* A tile's int32 sums, 6 rows of 2 vectors of 8 lanes, added into C (ldc
 * apart) with the corrections row_off[i] + col_off[j] (NULL: C's own
 * values, the later KC steps), modulo 2^32; the first `rows` rows and `nv`
 * vectors were computed (constants in each instance), mr x nr of them are
 * stored. */
static inline __attribute__((always_inline)) void mxp_s32_tile_6x16_store_avx2(const int rows, const int nv, size_t mr,
                                                                              size_t nr, const __m256i acc[6][2],
                                                                              int32_t *c, size_t ldc,
                                                                              const int32_t *row_off,
                                                                              const int32_t *col_off)
{
    /* the sums leave the registers at once: with them live across the
     * stores below, GCC spilled accumulators inside the loop */
    uint32_t sums[6][16];
#pragma GCC unroll 6
    for (int i = 0; i < rows; i++)
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++)
            _mm256_storeu_si256((__m256i *)(void *)&sums[i][8 * v], acc[i][v]);
    for (size_t i = 0; i < mr; i++) {
        int32_t *row = c + i * ldc;
        if (nr == 8 * (size_t)nv) {
            const __m256i ri = row_off ? _mm256_set1_epi32(row_off[i]) : _mm256_setzero_si256();
            for (int v = 0; v < nv; v++) {
                const __m256i *src = (const __m256i *)(const void *)((row_off ? col_off : row) + 8 * v);
                const __m256i base = row_off ? _mm256_add_epi32(ri, _mm256_loadu_si256(src)) : _mm256_loadu_si256(src);
                const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)&sums[i][8 * v]);
                _mm256_storeu_si256((__m256i *)(void *)(row + 8 * v), _mm256_add_epi32(base, x));
            }
        } else { /* a partial row: no masked stores of any width in AVX2 */
            for (size_t j = 0; j < nr; j++) {
                const uint32_t base = row_off ? (uint32_t)row_off[i] + (uint32_t)col_off[j] : (uint32_t)row[j];
                const uint32_t x = base + sums[i][j];
                memcpy(row + j, &x, 4); /* the int32 with x's bits */
            }
        }
    }
}

/* The tile: the first `rows` of the panel's panel_rows rows of A~ and the
 * first nv of 2 vectors of B~ (constants in each instance), a 32-bit lane
 * of A~ broadcast per row and K-group -- quads = 0: an int16 K-pair,
 * vpmaddwd (u8s8-gemm/avx2.c, 6 rows: 12 accumulators, 2 vectors of B~,
 * the broadcast and a product fill the 16 registers); quads = 1: a K-quad
 * of bytes, vpmaddubsw, then vpmaddwd by a register of ones
 * (u8s8-gemm-a7/avx2.c, 4 rows: 8 accumulators) -- each group 4 bytes of
 * a row of A~ and 32 of a vector of B~; vpaddd accumulates modulo 2^32.
 * Then added into C.  A~ packed ([kc/4][panel_rows][4] or
 * [kc/2][panel_rows][2]), or with lda > 0 (quads only) uint8 A where it is
 * stored, rows lda bytes apart. */
static inline __attribute__((always_inline)) void mxp_s32_tile_avx2(const int rows, const int nv, const int quads,
                                                                   const int panel_rows, size_t lda, size_t mr,
                                                                   size_t nr, size_t kc, const void *pa,
                                                                   const void *pb, int32_t *c, size_t ldc,
                                                                   const int32_t *row_off, const int32_t *col_off)
{
    const unsigned char *a = pa, *b = pb;
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc[6][2];
#pragma GCC unroll 6
    for (int i = 0; i < 6; i++)
#pragma GCC unroll 2
        for (int v = 0; v < 2; v++)
            acc[i][v] = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (size_t p = 0; p < kc; p += quads ? 4 : 2) {
        __m256i bv[2];
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++)
            bv[v] = _mm256_loadu_si256((const __m256i *)(const void *)(b + 32 * v));
#pragma GCC unroll 6
        for (int i = 0; i < rows; i++) {
            int32_t group;
            memcpy(&group, lda ? a + (size_t)i * lda : a + 4 * i, 4);
            const __m256i ai = _mm256_set1_epi32(group);
#pragma GCC unroll 2
            for (int v = 0; v < nv; v++) {
                __m256i sum;
                if (quads) {
                    sum = _mm256_madd_epi16(_mm256_maddubs_epi16(ai, bv[v]), ones);
                } else {
                    sum = _mm256_madd_epi16(ai, bv[v]);
                }
                acc[i][v] = _mm256_add_epi32(acc[i][v], sum);
            }
        }
        a += lda ? 4 : 4 * (size_t)panel_rows;
        b += 32 * 2;
    }
    mxp_s32_tile_6x16_store_avx2(rows, nv, mr, nr, (const __m256i(*)[2])acc, c, ldc, row_off, col_off);
}

/* The tile instance for mr x nr (a constant row count of 2, 4 or 6 and 1
 * or 2 vectors in each): tile(rows, nv, mr, nr, the rest...) -- a panel of
 * at most 8 columns multiplies only those, and so do the rows of a short
 * tile (M = 16 is 6 + 6 + 4 rows: 18 rows' work otherwise).  The 4 x 16
 * tile's: 2 or 4 rows. */
#define MXP_S32_TILE_6X16_DISPATCH(tile, mr, nr, ...)                                                           \
    do {                                                                                                     \
        if ((mr) <= 2)                                                                                       \
            (nr) <= 8 ? tile(2, 1, mr, nr, __VA_ARGS__) : tile(2, 2, mr, nr, __VA_ARGS__);                   \
        else if ((mr) <= 4)                                                                                  \
            (nr) <= 8 ? tile(4, 1, mr, nr, __VA_ARGS__) : tile(4, 2, mr, nr, __VA_ARGS__);                   \
        else                                                                                                 \
            (nr) <= 8 ? tile(6, 1, mr, nr, __VA_ARGS__) : tile(6, 2, mr, nr, __VA_ARGS__);                   \
    } while (0)

#define MXP_S32_TILE_4X16_DISPATCH(tile, mr, nr, ...)                                                        \
    do {                                                                                                     \
        if ((mr) <= 2)                                                                                       \
            (nr) <= 8 ? tile(2, 1, mr, nr, __VA_ARGS__) : tile(2, 2, mr, nr, __VA_ARGS__);                   \
        else                                                                                                 \
            (nr) <= 8 ? tile(4, 1, mr, nr, __VA_ARGS__) : tile(4, 2, mr, nr, __VA_ARGS__);                   \
    } while (0)

/* C's tile, fetched while the sums are made (read or written only at the end). */
static inline __attribute__((always_inline)) void mxp_s32_tile_prefetch_avx2(const int32_t *c, size_t ldc, size_t mr)
{
    for (size_t i = 0; i < mr; i++) {
        const char *row = (const char *)(c + i * ldc); /* 64 bytes: 1 or 2 cache lines */
        _mm_prefetch(row, _MM_HINT_T0);
        _mm_prefetch(row + 63, _MM_HINT_T0);
    }
}

#endif

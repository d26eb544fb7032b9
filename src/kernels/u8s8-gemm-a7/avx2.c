/* uint8 x int8 GEMM micro-kernel for A below 128 (7-bit activations, as
 * torch's reduce_range quantizes them), MR x NR = 6 x 16, AVX2 (no VNNI).
 * With every A value in 0 .. 127, vpmaddubsw's int16 sum of two products
 * cannot saturate (2 * 127 * 128 = 32512 < 32767), so the panels hold the
 * bytes in K-quads as the VNNI kernel's do: A~ [kc/4][6][4] uint8, B~
 * [kc/4][16][4] int8.  vpmaddubsw makes the two pair sums of a quad in
 * each column's 32-bit lane, vpmaddwd by ones adds them into an int32,
 * vpaddd accumulates modulo 2^32: the scalar twin's sums, bit for bit.
 * Three instructions for 32 multiply-adds against the pair kernel's four
 * (avx2.c): docs/gemm.md, "Without VNNI".  The caller (src/gemm/int8.c)
 * takes this kernel only where it has seen that no byte of A reaches 128.
 * 12 accumulators, 2 vectors of B~, a broadcast quad of A~ and a product:
 * the ones come from memory (vpmaddwd's operand). */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/gemm-kernels.h"
#include "kernels/s32-tile-avx2.h"

#define MR 6
#define NV 2 /* 8-lane vectors across NR = 16 */

#define MXP_INLINE static inline __attribute__((always_inline))

/* The tile with the first rows of the MR rows of A~ and the first nv of the
 * NV vectors of B~ (constants in each instance), as avx2.c's tile. */
MXP_INLINE void tile(const int rows, const int nv, size_t mr, size_t nr, size_t kc, const uint8_t *a, const int8_t *b,
                     int32_t *c, size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    static const int16_t ones[16] __attribute__((aligned(32))) = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    __m256i acc[MR][NV];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++)
            acc[i][v] = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (size_t p = 0; p < kc; p += 4) {
        __m256i bv[NV];
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++)
            bv[v] = _mm256_loadu_si256((const __m256i *)(const void *)(b + 32 * v));
#pragma GCC unroll 6
        for (int i = 0; i < rows; i++) {
            int32_t quad;
            memcpy(&quad, a + 4 * i, 4);
            const __m256i ai = _mm256_set1_epi32(quad);
#pragma GCC unroll 2
            for (int v = 0; v < nv; v++) {
                __m256i sum = _mm256_maddubs_epi16(ai, bv[v]);
                /* the ones read from memory by vpmaddwd itself: the 16 registers hold the rest */
                __asm__("vpmaddwd %1, %0, %0" : "+x"(sum) : "m"(*(const __m256i *)(const void *)ones));
                acc[i][v] = _mm256_add_epi32(acc[i][v], sum);
            }
        }
        a += 4 * MR;
        b += 4 * 8 * NV;
    }
    mxp_s32_tile_6x16_store_avx2(rows, nv, mr, nr, (const __m256i(*)[NV])acc, c, ldc, row_off, col_off);
}

void mxp_u8s8_gemm_a7_ukernel_6x16__avx2(size_t mr, size_t nr, size_t kc, const void *a, const void *b, int32_t *c,
                                         size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    mxp_s32_tile_prefetch_avx2(c, ldc, mr);
    MXP_S32_TILE_6X16_DISPATCH(tile, mr, nr, kc, a, b, c, ldc, row_off, col_off);
}

/* uint8 x int8 GEMM micro-kernels for operands whose pair sums cannot
 * saturate vpmaddubsw's int16: A below 128 (7-bit activations, as torch's
 * reduce_range quantizes them; 2 * 127 * 128 = 32512 < 32767), or B whose
 * K-pairs all have |b0| + |b1| <= 128 (7-bit weights; 255 * 128 = 32640),
 * MR x NR = 4 x 16, AVX2 (no VNNI).  The panels hold the bytes in K-quads
 * as the VNNI kernel's do: A~ [kc/4][4][4] uint8 (or uint8 A read where it
 * is stored), B~ [kc/4][16][4] int8.  vpmaddubsw makes the two pair sums
 * of a quad in each column's 32-bit lane, vpmaddwd by ones adds them into
 * an int32, vpaddd accumulates modulo 2^32: the scalar twin's sums, bit
 * for bit.  Three instructions for 32 multiply-adds against the pair
 * kernel's four (avx2.c): docs/gemm.md, "Without VNNI".  The caller
 * (src/gemm/int8.c) takes these kernels only where it has seen that no
 * byte of A reaches 128 or that no K-pair of B is wider (B checked while
 * it is packed).  4 rows, not the pair kernel's 6: 8 accumulators, 2
 * vectors of B~, the broadcast quad, a product and the ones in registers
 * (6 rows left the ones to a memory operand of each vpmaddwd: Zen 4 at
 * MXP_ISA=avx2, alternating in one process, 1024^3 and 2048^3 +0.5-4%,
 * 256^3 and M = 128, N = K = 4096 +0-1%). */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/gemm-kernels.h"
#include "kernels/s32-tile-avx2.h"

/* The tile, K-quads (s32-tile-avx2.h): A~ packed, or A in place. */
#define TILE(rows, nv, ...) mxp_s32_tile_avx2(rows, nv, 1, 4, 0, __VA_ARGS__)
#define TILE_A(rows, nv, mr, nr, kc, a, lda, ...) mxp_s32_tile_avx2(rows, nv, 1, 4, lda, mr, nr, kc, a, __VA_ARGS__)

void mxp_u8s8_gemm_a7_ukernel_4x16__avx2(size_t mr, size_t nr, size_t kc, const void *a, const void *b, int32_t *c,
                                         size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    mxp_s32_tile_prefetch_avx2(c, ldc, mr);
    MXP_S32_TILE_4X16_DISPATCH(TILE, mr, nr, kc, a, b, c, ldc, row_off, col_off);
}

/* uint8 A where it is stored (rows lda bytes apart, k in whole quads): the
 * tile above without A's packing (u8s8-gemm-list.inc). */
void mxp_u8s8_gemm_a7_ukernel_4x16_a__avx2(size_t mr, size_t nr, size_t kc, const uint8_t *a, size_t lda,
                                           const int8_t *b, int32_t *c, size_t ldc, const int32_t *row_off,
                                           const int32_t *col_off)
{
    mxp_s32_tile_prefetch_avx2(c, ldc, mr);
    MXP_S32_TILE_4X16_DISPATCH(TILE_A, mr, nr, kc, a, lda, b, c, ldc, row_off, col_off);
}

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

#include "kernels/gemm-kernels.h"
#include "kernels/s32-tile-avx2.h"

/* The tile, K-quads (s32-tile-avx2.h). */
#define TILE(rows, nv, ...) mxp_s32_tile_6x16_avx2(rows, nv, 1, __VA_ARGS__)

void mxp_u8s8_gemm_a7_ukernel_6x16__avx2(size_t mr, size_t nr, size_t kc, const void *a, const void *b, int32_t *c,
                                         size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    mxp_s32_tile_prefetch_avx2(c, ldc, mr);
    MXP_S32_TILE_6X16_DISPATCH(TILE, mr, nr, kc, a, b, c, ldc, row_off, col_off);
}

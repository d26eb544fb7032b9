/* uint8 x int8 GEMM micro-kernel, MR x NR = 8 x 48, AVX512_VNNI (run at
 * the avx512bf16 level, which guarantees VNNI).
 * vpdpbusd adds to each int32 lane the four products of a quad of unsigned
 * bytes (a broadcast quad of A~, one row) with a quad of signed bytes (B~,
 * one column): panels [kc/4][8][4] and [kc/4][48][4].  24 accumulators, 3
 * vectors of B~ and one broadcast fill 28 of the 32 zmm registers.  The
 * sums wrap modulo 2^32 (vpdpbusd, not the saturating vpdpbusds), like the
 * scalar twin's. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/gemm-kernels.h"

#define MR 8
#define NV 3 /* 16-lane vectors across NR = 48 */

#define MXP_INLINE static inline __attribute__((always_inline))

/* The tile with the first nv of the NV vectors of B~ (nv a constant in each
 * instance): an edge panel of at most 16 or 32 columns does no multiply-adds
 * for columns it does not have (256 = 5 x 48 + 16: a sixth of the work). */
/* A's quads are read through MR row pointers: the quad (q .. q+3) of row i at
 * a + i * row_stride + q / 4 * quad_stride (A~: 4 and 4 * MR; A in place:
 * lda and 4); rows of a beyond `rows` repeat the last one (their sums are
 * never stored). */
MXP_INLINE void tile(const int nv, size_t mr, size_t nr, size_t kc, const uint8_t *a, size_t rows, size_t row_stride,
                     size_t quad_stride, const int8_t *b, int32_t *c, size_t ldc, const int32_t *row_off,
                     const int32_t *col_off)
{
    const uint8_t *ar[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++)
        ar[i] = a + ((size_t)i < rows ? (size_t)i : rows - 1) * row_stride;
    __m512i acc[MR][NV];
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 3
        for (int v = 0; v < NV; v++)
            acc[i][v] = _mm512_setzero_si512();
    for (size_t q = 0; q < kc; q += 4) {
        __m512i bv[NV];
#pragma GCC unroll 3
        for (int v = 0; v < nv; v++)
            bv[v] = _mm512_loadu_si512((const void *)(b + 64 * v));
#pragma GCC unroll 8
        for (int i = 0; i < MR; i++) {
            int32_t quad;
            memcpy(&quad, ar[i] + q / 4 * quad_stride, 4);
            const __m512i ai = _mm512_set1_epi32(quad);
#pragma GCC unroll 3
            for (int v = 0; v < nv; v++)
                acc[i][v] = _mm512_dpbusd_epi32(acc[i][v], ai, bv[v]);
        }
        b += 64 * NV;
    }
    __mmask16 mask[NV];
    for (int v = 0; v < NV; v++) {
        const size_t lo = 16 * (size_t)v;
        mask[v] = nr >= lo + 16 ? 0xffff : nr > lo ? (__mmask16)((1u << (nr - lo)) - 1) : 0;
    }
    /* constant indices (unrolled, mr checked inside) keep acc in registers */
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++) {
        if ((size_t)i >= mr)
            break;
        int32_t *row = c + (size_t)i * ldc;
        const __m512i ri = row_off ? _mm512_set1_epi32(row_off[i]) : _mm512_setzero_si512();
#pragma GCC unroll 3
        for (int v = 0; v < nv; v++) {
            const __m512i base = row_off ? _mm512_add_epi32(ri, _mm512_maskz_loadu_epi32(mask[v], col_off + 16 * v))
                                         : _mm512_maskz_loadu_epi32(mask[v], row + 16 * v);
            _mm512_mask_storeu_epi32(row + 16 * v, mask[v], _mm512_add_epi32(base, acc[i][v]));
        }
    }
}

MXP_INLINE void prefetch_c(size_t mr, const int32_t *c, size_t ldc)
{
    /* C's tile is read or written only at the end: fetch it meanwhile */
    for (size_t i = 0; i < mr; i++) {
        const char *row = (const char *)(c + i * ldc); /* 192 bytes: 3 or 4 cache lines */
        _mm_prefetch(row, _MM_HINT_T0);
        _mm_prefetch(row + 64, _MM_HINT_T0);
        _mm_prefetch(row + 128, _MM_HINT_T0);
        _mm_prefetch(row + 191, _MM_HINT_T0);
    }
}

void mxp_u8s8_gemm_ukernel_8x48__avx512vnni(size_t mr, size_t nr, size_t kc, const void *a, const void *b, int32_t *c,
                                            size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    prefetch_c(mr, c, ldc);
    if (nr <= 16)
        tile(1, mr, nr, kc, a, MR, 4, 4 * MR, b, c, ldc, row_off, col_off);
    else if (nr <= 32)
        tile(2, mr, nr, kc, a, MR, 4, 4 * MR, b, c, ldc, row_off, col_off);
    else
        tile(3, mr, nr, kc, a, MR, 4, 4 * MR, b, c, ldc, row_off, col_off);
}

/* uint8 A in place: rows lda bytes apart, k contiguous, kc % 4 == 0. */
void mxp_u8s8_gemm_ukernel_8x48_a__avx512vnni(size_t mr, size_t nr, size_t kc, const uint8_t *a, size_t lda,
                                              const int8_t *b, int32_t *c, size_t ldc, const int32_t *row_off,
                                              const int32_t *col_off)
{
    prefetch_c(mr, c, ldc);
    if (nr <= 16)
        tile(1, mr, nr, kc, a, mr, lda, 4, b, c, ldc, row_off, col_off);
    else if (nr <= 32)
        tile(2, mr, nr, kc, a, mr, lda, 4, b, c, ldc, row_off, col_off);
    else
        tile(3, mr, nr, kc, a, mr, lda, 4, b, c, ldc, row_off, col_off);
}

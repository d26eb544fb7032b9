/* bfloat16 GEMM micro-kernel, 6 x 32, AVX512_BF16: vdpbf16ps adds the dot
 * product of a pair of bf16 from A~ and a pair from B~ into float32 lanes.
 * Panels are [k/2][MR][2] and [k/2][32][2].  The instruction rounds to
 * nearest even and treats bf16 subnormal inputs as zero (documented in
 * docs/gemm.md); float8 inputs arrive as bf16, exactly. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/f32-tile-avx512.h"
#include "kernels/gemm-kernels.h"

#define MR 6

/* The 6 x 32 tile with A's k-pairs read through six row pointers: the pair
 * (p, p+1) of row i at a + i * row_stride + p / 2 * pair_stride elements
 * (A~: 2 and 2 * MR; A in place: lda and 2).  Rows of a beyond `rows`
 * repeat the last one: their sums are computed and never stored. */
static inline __attribute__((always_inline)) void tile_rows(int R, size_t mr, size_t nr, size_t kc,
                                                            const uint16_t *a, size_t rows, size_t row_stride,
                                                            size_t pair_stride, const uint16_t *pb, float *c,
                                                            size_t ldc, double alpha, double beta)
{
    const uint16_t *ar[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        ar[i] = a + ((size_t)i < rows ? (size_t)i : rows - 1) * row_stride;
    for (size_t i = 0; i < mr; i++) { /* C's lines arrive while the k loop runs */
        _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + i * ldc + 31), _MM_HINT_T0);
    }
    __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        acc0[i] = acc1[i] = _mm512_setzero_ps();
    for (size_t p = 0; p < kc; p += 2) {
        const __m512bh b0 = (__m512bh)_mm512_loadu_si512((const void *)pb);
        const __m512bh b1 = (__m512bh)_mm512_loadu_si512((const void *)(pb + 32));
        const size_t q = p / 2 * pair_stride;
#pragma GCC unroll 6
        for (int i = 0; i < R; i++) { /* R rows of sums (R >= mr); the others stay 0, unstored */
            int32_t pair;
            memcpy(&pair, ar[i] + q, 4);
            const __m512bh ai = (__m512bh)_mm512_set1_epi32(pair);
            acc0[i] = _mm512_dpbf16_ps(acc0[i], ai, b0);
            acc1[i] = _mm512_dpbf16_ps(acc1[i], ai, b1);
        }
        pb += 64;
    }
    mxp_f32_tile_store_6x32(c, ldc, mr, nr, acc0, acc1, alpha, beta);
}

/* An edge panel of mr < 6 rows without the dot products of the rows never
 * stored (M = 128 ends in a panel of 2 rows: 1/22 of the work); each
 * row's sums are the same bits either way. */
static inline __attribute__((always_inline)) void tile_6x32(size_t mr, size_t nr, size_t kc, const uint16_t *a,
                                                            size_t rows, size_t row_stride, size_t pair_stride,
                                                            const uint16_t *pb, float *c, size_t ldc, double alpha,
                                                            double beta)
{
    if (mr > 4)
        tile_rows(6, mr, nr, kc, a, rows, row_stride, pair_stride, pb, c, ldc, alpha, beta);
    else if (mr > 2)
        tile_rows(4, mr, nr, kc, a, rows, row_stride, pair_stride, pb, c, ldc, alpha, beta);
    else
        tile_rows(2, mr, nr, kc, a, rows, row_stride, pair_stride, pb, c, ldc, alpha, beta);
}

void mxp_bf16_gemm_ukernel_6x32__avx512bf16(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                            size_t ldc, double alpha, double beta)
{
    tile_6x32(mr, nr, kc, a, MR, 2, 2 * MR, b, c, ldc, alpha, beta);
}

/* A in place: rows lda elements apart, k contiguous, kc even. */
void mxp_bf16_gemm_ukernel_6x32_a__avx512bf16(size_t mr, size_t nr, size_t kc, const void *a, size_t lda,
                                              const void *b, void *c, size_t ldc, double alpha, double beta)
{
    tile_6x32(mr, nr, kc, a, mr, lda, 2, b, c, ldc, alpha, beta);
}

/* Small M: 8 x 32 with bfloat16 B read in place (rows ldb elements apart):
 * rows p and p+1 are interleaved into k-pairs in registers (vpunpck*wd
 * works within 128-bit lanes, so the accumulators hold the columns in the
 * order 0-3, 8-11, 16-19, 24-27 | 4-7, 12-15, 20-23, 28-31, put back in
 * order before C is touched).  A packed [k/2][8][2]; an odd kc's last pair
 * has a zero second row. */
void mxp_bf16_gemm_direct_8x32__avx512bf16(size_t mr, size_t nr, size_t kc, const void *a, const void *b,
                                           size_t ldb, void *c, size_t ldc, double alpha, double beta)
{
    const uint16_t *pa = a, *pb = b;
    const __mmask32 mb = nr >= 32 ? ~0u : (__mmask32)((1u << nr) - 1);
    __m512 lo[8], hi[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        lo[i] = hi[i] = _mm512_setzero_ps();
    for (size_t p = 0; p < kc; p += 2) {
        const __m512i r0 = _mm512_maskz_loadu_epi16(mb, pb);
        const __m512i r1 = p + 1 < kc ? _mm512_maskz_loadu_epi16(mb, pb + ldb) : _mm512_setzero_si512();
        const __m512bh b0 = (__m512bh)_mm512_unpacklo_epi16(r0, r1), b1 = (__m512bh)_mm512_unpackhi_epi16(r0, r1);
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            int32_t pair;
            memcpy(&pair, pa + 2 * i, 4);
            const __m512bh ai = (__m512bh)_mm512_set1_epi32(pair);
            lo[i] = _mm512_dpbf16_ps(lo[i], ai, b0);
            hi[i] = _mm512_dpbf16_ps(hi[i], ai, b1);
        }
        pa += 16;
        pb += 2 * ldb;
    }
    /* columns 0-15: lo chunk 0, hi chunk 0, lo chunk 1, hi chunk 1; 16-31 likewise from chunks 2, 3 */
    const __m512i first = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const __m512i second = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    const __mmask16 m0 = nr >= 16 ? 0xffff : (__mmask16)((1u << nr) - 1);
    const __mmask16 m1 = nr >= 32 ? 0xffff : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1) : 0;
    const __m512 va = _mm512_set1_ps((float)alpha), vb = _mm512_set1_ps((float)beta);
    float *pc = c;
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) { /* constant indices: the accumulators stay in registers */
        if ((size_t)i >= mr)
            break;
        float *row = pc + (size_t)i * ldc;
        mxp_f32_row_update(row, _mm512_permutex2var_ps(lo[i], first, hi[i]), m0, va, vb, beta != 0);
        mxp_f32_row_update(row + 16, _mm512_permutex2var_ps(lo[i], second, hi[i]), m1, va, vb, beta != 0);
    }
}

/* float32 GEMM micro-kernel, 6 x 32, AVX-512F: 12 accumulators of 16 lanes,
 * each k step loads one 32-wide row of B~ and broadcasts 6 values of A~. */
#include <immintrin.h>

#include "kernels/f32-tile-avx512.h"
#include "kernels/gemm-kernels.h"

#define MR 6

/* The 6 x 32 tile with A read through six row pointers at an element
 * stride along k (packed A~: rows 1 apart, k stride 6; A in place: rows
 * lda apart, k stride 1).  Rows of a beyond `rows` repeat the last one:
 * their sums are computed and never stored. */
static inline __attribute__((always_inline)) void tile_rows(int R, size_t mr, size_t nr, size_t kc, const float *a,
                                                            size_t rows, size_t row_stride, size_t k_stride,
                                                            const float *pb, float *c, size_t ldc, double alpha,
                                                            double beta)
{
    const float *ar[MR]; /* rows: how many rows of a may be read */
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
    for (size_t p = 0; p < kc; p++) {
        const __m512 b0 = _mm512_loadu_ps(pb), b1 = _mm512_loadu_ps(pb + 16);
        const size_t q = p * k_stride;
#pragma GCC unroll 6
        for (int i = 0; i < R; i++) { /* R rows of sums (R >= mr); the others stay 0, unstored */
            const __m512 ai = _mm512_set1_ps(ar[i][q]);
            acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);
            acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);
        }
        pb += 32;
    }
    mxp_f32_tile_store_6x32(c, ldc, mr, nr, acc0, acc1, alpha, beta);
}

/* An edge panel of mr < 6 rows without the multiply-adds of the rows
 * never stored (M = 128 ends in a panel of 2 rows: 1/22 of the work);
 * each row's sums are the same bits either way. */
static inline __attribute__((always_inline)) void tile_6x32(size_t mr, size_t nr, size_t kc, const float *a,
                                                            size_t rows, size_t row_stride, size_t k_stride,
                                                            const float *pb, float *c, size_t ldc, double alpha,
                                                            double beta)
{
    if (mr > 4)
        tile_rows(6, mr, nr, kc, a, rows, row_stride, k_stride, pb, c, ldc, alpha, beta);
    else if (mr > 2)
        tile_rows(4, mr, nr, kc, a, rows, row_stride, k_stride, pb, c, ldc, alpha, beta);
    else
        tile_rows(2, mr, nr, kc, a, rows, row_stride, k_stride, pb, c, ldc, alpha, beta);
}

void mxp_f32_gemm_ukernel_6x32__avx512f(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                        size_t ldc, double alpha, double beta)
{
    tile_6x32(mr, nr, kc, a, MR, 1, MR, b, c, ldc, alpha, beta);
}

/* A in place: rows lda elements apart, k contiguous. */
void mxp_f32_gemm_ukernel_6x32_a__avx512f(size_t mr, size_t nr, size_t kc, const void *a, size_t lda, const void *b,
                                          void *c, size_t ldc, double alpha, double beta)
{
    tile_6x32(mr, nr, kc, a, mr, lda, 1, b, c, ldc, alpha, beta);
}

/* Small M: 8 x 48 with B read in place (rows ldb apart, not packed: for a
 * few rows of C, packing B would cost more than the multiply) and A packed
 * [k][8].  24 accumulators; B's columns beyond nr are masked off, never
 * read. */
void mxp_f32_gemm_direct_8x48__avx512f(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                       void *c, size_t ldc, double alpha, double beta)
{
    const float *pa = a, *pb = b;
    const __mmask16 m0 = nr >= 16 ? 0xffff : (__mmask16)((1u << nr) - 1);
    const __mmask16 m1 = nr >= 32 ? 0xffff : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1) : 0;
    const __mmask16 m2 = nr >= 48 ? 0xffff : nr > 32 ? (__mmask16)((1u << (nr - 32)) - 1) : 0;
    __m512 acc0[8], acc1[8], acc2[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        acc0[i] = acc1[i] = acc2[i] = _mm512_setzero_ps();
    for (size_t p = 0; p < kc; p++) {
        const __m512 b0 = _mm512_maskz_loadu_ps(m0, pb), b1 = _mm512_maskz_loadu_ps(m1, pb + 16);
        const __m512 b2 = _mm512_maskz_loadu_ps(m2, pb + 32);
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            const __m512 ai = _mm512_set1_ps(pa[i]);
            acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);
            acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);
            acc2[i] = _mm512_fmadd_ps(ai, b2, acc2[i]);
        }
        pa += 8;
        pb += ldb;
    }
    const __m512 va = _mm512_set1_ps((float)alpha), vb = _mm512_set1_ps((float)beta);
    float *pc = c;
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) { /* constant indices: the accumulators stay in registers */
        if ((size_t)i >= mr)
            break;
        float *row = pc + (size_t)i * ldc;
        mxp_f32_row_update(row, acc0[i], m0, va, vb, beta != 0);
        mxp_f32_row_update(row + 16, acc1[i], m1, va, vb, beta != 0);
        mxp_f32_row_update(row + 32, acc2[i], m2, va, vb, beta != 0);
    }
}

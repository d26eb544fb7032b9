/* float64 GEMM micro-kernel, 6 x 16, AVX-512F: 12 accumulators of 8 lanes. */
#include <immintrin.h>

#include "kernels/gemm-kernels.h"

#define MR 6

/* The tile's sums for R rows (R >= mr; the others stay 0, never stored). */
static inline __attribute__((always_inline)) void tile_rows(int R, size_t mr, size_t nr, size_t kc, const double *pa,
                                                            const double *pb, void *c, size_t ldc, double alpha,
                                                            double beta)
{
    for (size_t i = 0; i < mr; i++) { /* C's lines arrive while the k loop runs */
        _mm_prefetch((const char *)((double *)c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)((double *)c + i * ldc + 15), _MM_HINT_T0);
    }
    __m512d acc0[MR], acc1[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        acc0[i] = acc1[i] = _mm512_setzero_pd();
    for (size_t p = 0; p < kc; p++) {
        const __m512d b0 = _mm512_loadu_pd(pb), b1 = _mm512_loadu_pd(pb + 8);
#pragma GCC unroll 6
        for (int i = 0; i < R; i++) {
            const __m512d ai = _mm512_set1_pd(pa[i]);
            acc0[i] = _mm512_fmadd_pd(ai, b0, acc0[i]);
            acc1[i] = _mm512_fmadd_pd(ai, b1, acc1[i]);
        }
        pa += MR;
        pb += 16;
    }
    const __mmask8 m0 = nr >= 8 ? 0xff : (__mmask8)((1u << nr) - 1);
    const __mmask8 m1 = nr >= 16 ? 0xff : nr > 8 ? (__mmask8)((1u << (nr - 8)) - 1) : 0;
    const __m512d va = _mm512_set1_pd(alpha), vb = _mm512_set1_pd(beta);
    double *pc = c;
    for (size_t i = 0; i < mr; i++) {
        double *row = pc + i * ldc;
        __m512d x0 = _mm512_mul_pd(va, acc0[i]), x1 = _mm512_mul_pd(va, acc1[i]);
        if (beta != 0) {
            x0 = _mm512_fmadd_pd(vb, _mm512_maskz_loadu_pd(m0, row), x0);
            x1 = _mm512_fmadd_pd(vb, _mm512_maskz_loadu_pd(m1, row + 8), x1);
        }
        _mm512_mask_storeu_pd(row, m0, x0);
        _mm512_mask_storeu_pd(row + 8, m1, x1);
    }
}

/* An edge panel of mr < 6 rows computes 2 or 4 rows of sums, not 6 (M =
 * 128 ends in a panel of 2 rows); each row's sums are the same bits. */
void mxp_f64_gemm_ukernel_6x16__avx512f(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                        size_t ldc, double alpha, double beta)
{
    if (mr > 4)
        tile_rows(6, mr, nr, kc, a, b, c, ldc, alpha, beta);
    else if (mr > 2)
        tile_rows(4, mr, nr, kc, a, b, c, ldc, alpha, beta);
    else
        tile_rows(2, mr, nr, kc, a, b, c, ldc, alpha, beta);
}

/* Small M: 8 x 24 with B read in place (see the float32 kernel). */
void mxp_f64_gemm_direct_8x24__avx512f(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                       void *c, size_t ldc, double alpha, double beta)
{
    const double *pa = a, *pb = b;
    const __mmask8 m0 = nr >= 8 ? 0xff : (__mmask8)((1u << nr) - 1);
    const __mmask8 m1 = nr >= 16 ? 0xff : nr > 8 ? (__mmask8)((1u << (nr - 8)) - 1) : 0;
    const __mmask8 m2 = nr >= 24 ? 0xff : nr > 16 ? (__mmask8)((1u << (nr - 16)) - 1) : 0;
    __m512d acc0[8], acc1[8], acc2[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        acc0[i] = acc1[i] = acc2[i] = _mm512_setzero_pd();
    for (size_t p = 0; p < kc; p++) {
        const __m512d b0 = _mm512_maskz_loadu_pd(m0, pb), b1 = _mm512_maskz_loadu_pd(m1, pb + 8);
        const __m512d b2 = _mm512_maskz_loadu_pd(m2, pb + 16);
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            const __m512d ai = _mm512_set1_pd(pa[i]);
            acc0[i] = _mm512_fmadd_pd(ai, b0, acc0[i]);
            acc1[i] = _mm512_fmadd_pd(ai, b1, acc1[i]);
            acc2[i] = _mm512_fmadd_pd(ai, b2, acc2[i]);
        }
        pa += 8;
        pb += ldb;
    }
    const __m512d va = _mm512_set1_pd(alpha), vb = _mm512_set1_pd(beta);
    double *pc = c;
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) { /* constant indices: the accumulators stay in registers */
        if ((size_t)i >= mr)
            break;
        double *row = pc + (size_t)i * ldc;
        __m512d x0 = _mm512_mul_pd(va, acc0[i]), x1 = _mm512_mul_pd(va, acc1[i]), x2 = _mm512_mul_pd(va, acc2[i]);
        if (beta != 0) {
            x0 = _mm512_fmadd_pd(vb, _mm512_maskz_loadu_pd(m0, row), x0);
            x1 = _mm512_fmadd_pd(vb, _mm512_maskz_loadu_pd(m1, row + 8), x1);
            x2 = _mm512_fmadd_pd(vb, _mm512_maskz_loadu_pd(m2, row + 16), x2);
        }
        _mm512_mask_storeu_pd(row, m0, x0);
        _mm512_mask_storeu_pd(row + 8, m1, x1);
        _mm512_mask_storeu_pd(row + 16, m2, x2);
    }
}

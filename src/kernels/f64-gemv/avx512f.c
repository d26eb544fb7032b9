/* float64 matrix-vector products for M = 1 GEMMs, 8 lanes: B streamed once
 * from the caller's memory, no packing.
 *   y[j] = sum_p x[p] * B[p][j]   (B rows contiguous: 4 rows per pass over y)
 *   y[j] = sum_p x[p] * B[j][p]   (B transposed: a dot product per column) */
#include <immintrin.h>

#include "kernels/gemv-kernels.h"

void mxp_f64_gemv__avx512f(int trans_b, size_t k, size_t n, const double *x, const double *b, size_t ldb, double *y)
{
    if (trans_b) { /* y[j] = dot(x, row j of B) */
        for (size_t j = 0; j < n; j++) {
            const double *row = b + j * ldb;
            __m512d acc0 = _mm512_setzero_pd(), acc1 = _mm512_setzero_pd();
            size_t p = 0;
            for (; p + 16 <= k; p += 16) {
                acc0 = _mm512_fmadd_pd(_mm512_loadu_pd(x + p), _mm512_loadu_pd(row + p), acc0);
                acc1 = _mm512_fmadd_pd(_mm512_loadu_pd(x + p + 8), _mm512_loadu_pd(row + p + 8), acc1);
            }
            for (; p < k; p += 8) {
                const __mmask8 m = k - p >= 8 ? 0xff : (__mmask8)((1u << (k - p)) - 1);
                acc0 = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, x + p), _mm512_maskz_loadu_pd(m, row + p), acc0);
            }
            y[j] = _mm512_reduce_add_pd(_mm512_add_pd(acc0, acc1));
        }
        return;
    }
    for (size_t j = 0; j < n; j++)
        y[j] = 0;
    size_t p = 0;
    for (; p + 4 <= k; p += 4) { /* four rows of B per pass over y */
        const double *r0 = b + p * ldb, *r1 = r0 + ldb, *r2 = r1 + ldb, *r3 = r2 + ldb;
        const __m512d x0 = _mm512_set1_pd(x[p]), x1 = _mm512_set1_pd(x[p + 1]);
        const __m512d x2 = _mm512_set1_pd(x[p + 2]), x3 = _mm512_set1_pd(x[p + 3]);
        for (size_t j = 0; j < n; j += 8) {
            const __mmask8 m = n - j >= 8 ? 0xff : (__mmask8)((1u << (n - j)) - 1);
            __m512d acc = _mm512_maskz_loadu_pd(m, y + j);
            acc = _mm512_fmadd_pd(x0, _mm512_maskz_loadu_pd(m, r0 + j), acc);
            acc = _mm512_fmadd_pd(x1, _mm512_maskz_loadu_pd(m, r1 + j), acc);
            acc = _mm512_fmadd_pd(x2, _mm512_maskz_loadu_pd(m, r2 + j), acc);
            acc = _mm512_fmadd_pd(x3, _mm512_maskz_loadu_pd(m, r3 + j), acc);
            _mm512_mask_storeu_pd(y + j, m, acc);
        }
    }
    for (; p < k; p++) {
        const __m512d xp = _mm512_set1_pd(x[p]);
        for (size_t j = 0; j < n; j += 8) {
            const __mmask8 m = n - j >= 8 ? 0xff : (__mmask8)((1u << (n - j)) - 1);
            _mm512_mask_storeu_pd(y + j, m,
                                  _mm512_fmadd_pd(xp, _mm512_maskz_loadu_pd(m, b + p * ldb + j),
                                                  _mm512_maskz_loadu_pd(m, y + j)));
        }
    }
}

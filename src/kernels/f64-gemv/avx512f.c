/* float64 matrix-vector products for M = 1 GEMMs, 8 lanes: B streamed once
 * from the caller's memory, no packing.
 *   y[j] = sum_p x[p] * B[p][j]   (B rows contiguous: 4 rows per pass over y)
 *   y[j] = sum_p x[p] * B[j][p]   (B transposed: a dot product per column) */
#include <immintrin.h>

#include "kernels/gemv-kernels.h"

#define MXP_DOTS_T double
#define MXP_DOTS_V __m512d
#define MXP_DOTS_V_(op) _mm512_##op##_pd
#define MXP_DOTS_ROW const double *
#define MXP_DOTS_LOAD(row, p) _mm512_loadu_pd((row) + (p))
#define MXP_DOTS_MASK __mmask8
#define MXP_DOTS_LOAD_MASKED(row, p, m) _mm512_maskz_loadu_pd(m, (row) + (p))
#include "kernels/gemv-dots-template.h"

void mxp_f64_gemv__avx512f(int trans_b, size_t k, size_t n, const double *x, const double *b, size_t ldb, double *y)
{
    if (trans_b) { /* y[j] = dot(x, row j of B) */
        mxp_gemv_dots(k, n, x, b, ldb, y, 0);
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

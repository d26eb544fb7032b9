/* float64 matrix-vector products for M = 1 GEMMs, AVX2 + FMA (the AVX-512
 * kernel of avx512f.c at 4 lanes): B streamed once from the caller's memory.
 * Each y[j] of the rows form is the same chain of fused multiply-adds in p
 * order as at AVX-512; the tails go element by element with fma. */
#include <immintrin.h>
#include <math.h>

#include "kernels/gemv-kernels.h"

static inline __attribute__((always_inline)) double hsum4(__m256d v)
{
    const __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s2, _mm_unpackhi_pd(s2, s2)));
}

#define MXP_DOTS_T double
#define MXP_DOTS_V __m256d
#define MXP_DOTS_V_(op) _mm256_##op##_pd
#define MXP_DOTS_ROW const double *
#define MXP_DOTS_LOAD(row, p) _mm256_loadu_pd((row) + (p))
#define MXP_DOTS_HSUM hsum4
#define MXP_DOTS_LOAD1(row, p) ((row)[p])
#define MXP_DOTS_FMA fma
#include "kernels/gemv-dots-template.h"

void mxp_f64_gemv__avx2(int trans_b, size_t k, size_t n, const double *x, const double *b, size_t ldb, double *y)
{
    if (trans_b) { /* y[j] = dot(x, row j of B) */
        mxp_gemv_dots(k, n, x, b, ldb, y, 0);
        return;
    }
    for (size_t j = 0; j < n; j++)
        y[j] = 0;
    const size_t n4 = n / 4 * 4;
    size_t p = 0;
    for (; p + 4 <= k; p += 4) { /* four rows of B per pass over y */
        const double *r0 = b + p * ldb, *r1 = r0 + ldb, *r2 = r1 + ldb, *r3 = r2 + ldb;
        const __m256d x0 = _mm256_set1_pd(x[p]), x1 = _mm256_set1_pd(x[p + 1]);
        const __m256d x2 = _mm256_set1_pd(x[p + 2]), x3 = _mm256_set1_pd(x[p + 3]);
        for (size_t j = 0; j < n4; j += 4) {
            __m256d acc = _mm256_loadu_pd(y + j);
            acc = _mm256_fmadd_pd(x0, _mm256_loadu_pd(r0 + j), acc);
            acc = _mm256_fmadd_pd(x1, _mm256_loadu_pd(r1 + j), acc);
            acc = _mm256_fmadd_pd(x2, _mm256_loadu_pd(r2 + j), acc);
            acc = _mm256_fmadd_pd(x3, _mm256_loadu_pd(r3 + j), acc);
            _mm256_storeu_pd(y + j, acc);
        }
        for (size_t j = n4; j < n; j++)
            y[j] = fma(x[p + 3], r3[j], fma(x[p + 2], r2[j], fma(x[p + 1], r1[j], fma(x[p], r0[j], y[j]))));
    }
    for (; p < k; p++) {
        const double *r = b + p * ldb;
        const __m256d xp = _mm256_set1_pd(x[p]);
        for (size_t j = 0; j < n4; j += 4)
            _mm256_storeu_pd(y + j, _mm256_fmadd_pd(xp, _mm256_loadu_pd(r + j), _mm256_loadu_pd(y + j)));
        for (size_t j = n4; j < n; j++)
            y[j] = fma(x[p], r[j], y[j]);
    }
}

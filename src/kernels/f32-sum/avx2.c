/* Pairwise float32 -> float64 sums, AVX2: the 8 running sums are two
 * registers.  See sum-kernels.h. */
#include <immintrin.h>

#include "kernels/f32-sum-pairwise.h"
#include "kernels/sum-kernels.h"

static double block(const float *x, size_t n) /* 8 <= n <= 128 */
{
    __m256d lo = _mm256_cvtps_pd(_mm_loadu_ps(x)), hi = _mm256_cvtps_pd(_mm_loadu_ps(x + 4));
    size_t i = 8;
    for (; i + 8 <= n; i += 8) {
        lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
        hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)));
    }
    double v[8];
    _mm256_storeu_pd(v, lo);
    _mm256_storeu_pd(v + 4, hi);
    return mxp_f32_sum_block_end(v, x, i, n);
}

double mxp_f32_sum_f64__avx2(const float *x, size_t n)
{
    return mxp_f32_sum_pairwise(x, n);
}

/* Pairwise float32 -> float64 sums, AVX2: the 8 running sums are two
 * registers.  See sum-kernels.h. */
#include <immintrin.h>

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
    double s = ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
    for (; i < n; i++)
        s += x[i];
    return s;
}

double mxp_f32_sum_f64__avx2(const float *x, size_t n)
{
    if (n < 8) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += x[i];
        return s;
    }
    if (n <= 128)
        return block(x, n);
    const size_t h = n / 2 / 8 * 8;
    return mxp_f32_sum_f64__avx2(x, h) + mxp_f32_sum_f64__avx2(x + h, n - h);
}

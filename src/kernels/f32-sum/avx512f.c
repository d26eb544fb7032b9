/* Pairwise float32 -> float64 sums, AVX-512: the 8 running sums are one
 * register.  See sum-kernels.h. */
#include <immintrin.h>

#include "kernels/f32-sum-pairwise.h"
#include "kernels/sum-kernels.h"

static double block(const float *x, size_t n) /* 8 <= n <= 128 */
{
    __m512d r = _mm512_cvtps_pd(_mm256_loadu_ps(x));
    size_t i = 8;
    for (; i + 8 <= n; i += 8)
        r = _mm512_add_pd(r, _mm512_cvtps_pd(_mm256_loadu_ps(x + i)));
    double v[8];
    _mm512_storeu_pd(v, r);
    return mxp_f32_sum_block_end(v, x, i, n);
}

double mxp_f32_sum_f64__avx512f(const float *x, size_t n)
{
    return mxp_f32_sum_pairwise(x, n);
}

/* Pairwise float32 -> float64 sums, AVX-512: the 8 running sums are one
 * register.  See sum-kernels.h. */
#include <immintrin.h>

#include "kernels/sum-kernels.h"

static double block(const float *x, size_t n) /* 8 <= n <= 128 */
{
    __m512d r = _mm512_cvtps_pd(_mm256_loadu_ps(x));
    size_t i = 8;
    for (; i + 8 <= n; i += 8)
        r = _mm512_add_pd(r, _mm512_cvtps_pd(_mm256_loadu_ps(x + i)));
    double v[8];
    _mm512_storeu_pd(v, r);
    double s = ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
    for (; i < n; i++)
        s += x[i];
    return s;
}

#define MXP_PW_T float
#define MXP_PW_S double
#define MXP_PW_FN pairwise
#define MXP_PW_BLOCK block
#include "kernels/pairwise-template.h"

double mxp_f32_sum_f64__avx512f(const float *x, size_t n)
{
    return pairwise(x, n);
}

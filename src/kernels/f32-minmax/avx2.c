/* The finite minimum and maximum of float32, 8 lanes with AVX2: the
 * finite lanes blended into running minimum and maximum vectors, the tail
 * by the reference.  See quant-kernels.h. */
#include <immintrin.h>

#include "kernels/quant-kernels.h"

void mxp_f32_minmax__avx2(const float *x, size_t n, float *lo, float *hi)
{
    const __m256 inf = _mm256_set1_ps(__builtin_inff());
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 a = _mm256_set1_ps(*lo), b = _mm256_set1_ps(*hi);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256 fin = _mm256_cmp_ps(_mm256_and_ps(v, absmask), inf, _CMP_LT_OQ);
        a = _mm256_blendv_ps(a, _mm256_min_ps(v, a), fin);
        b = _mm256_blendv_ps(b, _mm256_max_ps(v, b), fin);
    }
    float la[8], hb[8];
    _mm256_storeu_ps(la, a);
    _mm256_storeu_ps(hb, b);
    float l = *lo, h = *hi;
    for (int k = 0; k < 8; k++) {
        l = la[k] < l ? la[k] : l;
        h = hb[k] > h ? hb[k] : h;
    }
    *lo = l;
    *hi = h;
    mxp_f32_minmax__scalar(x + i, n - i, lo, hi);
}

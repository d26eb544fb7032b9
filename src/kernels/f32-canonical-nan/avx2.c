/* float32 NaNs as the positive quiet NaN with AVX2.  See
 * canonical-nan-kernels.h. */
#include <immintrin.h>

#include "kernels/canonical-nan-kernels.h"

void mxp_f32_canonical_nan__avx2(float *x, size_t n)
{
    const __m256 q = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        _mm256_storeu_ps(x + i, _mm256_blendv_ps(v, q, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    }
    for (; i < n; i++) /* as the reference (src/ops/strided.c) */
        if (x[i] != x[i])
            x[i] = _mm_cvtss_f32(_mm256_castps256_ps128(q));
}

/* float64 NaNs as the positive quiet NaN with AVX2.  See
 * canonical-nan-kernels.h. */
#include <immintrin.h>

#include "kernels/canonical-nan-kernels.h"

void mxp_f64_canonical_nan__avx2(double *x, size_t n)
{
    const __m256d q = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7ff8000000000000ll));
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const __m256d v = _mm256_loadu_pd(x + i);
        _mm256_storeu_pd(x + i, _mm256_blendv_pd(v, q, _mm256_cmp_pd(v, v, _CMP_UNORD_Q)));
    }
    for (; i < n; i++)
        if (x[i] != x[i])
            x[i] = _mm_cvtsd_f64(_mm256_castpd256_pd128(q));
}


/* float64 NaNs as the positive quiet NaN with AVX-512F.  See
 * canonical-nan-kernels.h. */
#include <immintrin.h>

#include "kernels/canonical-nan-kernels.h"

void mxp_f64_canonical_nan__avx512f(double *x, size_t n)
{
    const __m512d q = _mm512_castsi512_pd(_mm512_set1_epi64(0x7ff8000000000000ll));
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m512d v = _mm512_loadu_pd(x + i);
        _mm512_mask_storeu_pd(x + i, _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q), q);
    }
    if (i < n) {
        const __mmask8 m = (__mmask8)((1u << (n - i)) - 1);
        const __m512d v = _mm512_maskz_loadu_pd(m, x + i);
        _mm512_mask_storeu_pd(x + i, m & _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q), q);
    }
}


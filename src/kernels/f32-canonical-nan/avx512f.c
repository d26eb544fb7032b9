/* float32 NaNs as the positive quiet NaN with AVX-512F.  See
 * canonical-nan-kernels.h. */
#include <immintrin.h>

#include "kernels/canonical-nan-kernels.h"

void mxp_f32_canonical_nan__avx512f(float *x, size_t n)
{
    const __m512 q = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000));
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(x + i);
        _mm512_mask_storeu_ps(x + i, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), q);
    }
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        _mm512_mask_storeu_ps(x + i, m & _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), q);
    }
}

/* exp(x - m), AVX-512: eight lanes a step, the last ones masked.  See
 * expshift.h. */
#include "kernels/expshift-avx512.h"

void mxp_f64_expshift__avx512f(double *y, const double *x, size_t n, double m)
{
    const mxp_expshift_avx512 c = mxp_expshift_avx512_init();
    const __m512d vm = _mm512_set1_pd(m);
    for (size_t i = 0; i < n; i += 8) {
        const __mmask8 k = n - i >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (n - i)) - 1);
        const __m512d t = _mm512_sub_pd(_mm512_mask_loadu_pd(vm, k, x + i), vm);
        _mm512_mask_storeu_pd(y + i, k, mxp_expshift_pd_avx512(&c, t));
    }
}

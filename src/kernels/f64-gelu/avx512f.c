/* gelu's float64 approximation alone, AVX-512 (gelu-avx512f.h): the
 * premise of the float32 fast path's check, for the tests.  See
 * vmath-kernels.h. */
#include "kernels/vmath-kernels.h"

#ifdef MXP_HAVE_SLEEF
#include "kernels/gelu-avx512f.h"

void mxp_f64_gelu_approx__avx512f(double *y, const double *x, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm512_storeu_pd(y + i, mxp_gelu_approx(_mm512_loadu_pd(x + i)));
    if (i < n) {
        const __mmask8 m = (__mmask8)((1u << (n - i)) - 1);
        _mm512_mask_storeu_pd(y + i, m, mxp_gelu_approx(_mm512_maskz_loadu_pd(m, x + i)));
    }
}
#else
typedef int mxp_f64_gelu_avx512f_unused; /* built without SLEEF: nothing here */
#endif

/* float64 exp, log, tanh, sin, cos and the activations through SLEEF,
 * AVX-512: 8 lanes, the tail through masked loads and stores.  See
 * vmath-kernels.h. */
#include "kernels/vmath-kernels.h"

#ifdef MXP_HAVE_SLEEF
#include "kernels/vmath-avx512f.h"

void mxp_f64_vmath__avx512f(int fn, double *y, const double *x, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm512_storeu_pd(y + i, apply(fn, _mm512_loadu_pd(x + i)));
    if (i < n) {
        const __mmask8 m = (__mmask8)((1u << (n - i)) - 1);
        _mm512_mask_storeu_pd(y + i, m, apply(fn, _mm512_maskz_loadu_pd(m, x + i)));
    }
}
#else
typedef int mxp_f64_vmath_avx512f_unused; /* built without SLEEF: nothing here */
#endif

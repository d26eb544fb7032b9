/* float64 exp, log, tanh, sin, cos and the activations through SLEEF, AVX2:
 * 4 lanes, the tail through a padded copy.  See vmath-kernels.h. */
#include "kernels/vmath-kernels.h"

#ifdef MXP_HAVE_SLEEF
#include "kernels/vmath-avx2.h"

void mxp_f64_vmath__avx2(int fn, double *y, const double *x, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm256_storeu_pd(y + i, apply(fn, _mm256_loadu_pd(x + i)));
    if (i < n) {
        double t[4] = { 0 };
        memcpy(t, x + i, (n - i) * sizeof t[0]);
        _mm256_storeu_pd(t, apply(fn, _mm256_loadu_pd(t)));
        memcpy(y + i, t, (n - i) * sizeof t[0]);
    }
}
#else
typedef int mxp_f64_vmath_avx2_unused; /* built without SLEEF: nothing here */
#endif

/* gelu's float64 approximation alone, AVX2 (gelu-avx2.h): the premise of
 * the float32 fast path's check, for the tests.  See vmath-kernels.h. */
#include "kernels/vmath-kernels.h"

#ifdef MXP_HAVE_SLEEF
#include <string.h>

#include "kernels/gelu-avx2.h"

void mxp_f64_gelu_approx__avx2(double *y, const double *x, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm256_storeu_pd(y + i, mxp_gelu_approx(_mm256_loadu_pd(x + i)));
    if (i < n) {
        double buf[4] = { 0 };
        memcpy(buf, x + i, (n - i) * sizeof *x);
        _mm256_storeu_pd(buf, mxp_gelu_approx(_mm256_loadu_pd(buf)));
        memcpy(y + i, buf, (n - i) * sizeof *y);
    }
}
#else
typedef int mxp_f64_gelu_avx2_unused; /* built without SLEEF: nothing here */
#endif

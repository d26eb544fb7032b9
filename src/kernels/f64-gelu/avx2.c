/* gelu's float64 approximation alone, AVX2 (gelu-avx2.h): the premise of
 * the float32 fast path's check, for the tests.  See vmath-kernels.h. */
#include "kernels/vmath-kernels.h"

#ifdef MXP_HAVE_SLEEF
#include "kernels/gelu-avx2.h"
#include "kernels/simd-f64-avx2.h"

#define MXP_MAP_FN(v, count) mxp_gelu_approx(v)
#include "kernels/map-template.h"

void mxp_f64_gelu_approx__avx2(double *y, const double *x, size_t n)
{
    mxp_simd_map(y, x, n, NULL);
}
#else
typedef int mxp_f64_gelu_avx2_unused; /* built without SLEEF: nothing here */
#endif

/* gelu's float64 approximation alone, AVX-512 (gelu-avx512f.h): the
 * premise of the float32 fast path's check, for the tests.  See
 * vmath-kernels.h. */
#include "kernels/vmath-kernels.h"

#ifdef MXP_HAVE_SLEEF
#include "kernels/gelu-avx512f.h"
#include "kernels/simd-f64-avx512.h"

#define MXP_MAP_FN(v, count) mxp_gelu_approx(v)
#include "kernels/map-template.h"

void mxp_f64_gelu_approx__avx512f(double *y, const double *x, size_t n)
{
    mxp_simd_map(y, x, n, NULL);
}
#else
typedef int mxp_f64_gelu_avx512f_unused; /* built without SLEEF: nothing here */
#endif

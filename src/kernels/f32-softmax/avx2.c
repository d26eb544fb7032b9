/* Float32 softmax rows, AVX2: the body in softmax-avx2.h (built
 * with SLEEF only).  See softmax-kernels.h. */
#include "kernels/softmax-kernels.h"

#ifdef MXP_HAVE_SLEEF
#include "kernels/softmax-avx2.h"

void mxp_f32_softmax__avx2(float *y, const float *x, size_t n, double *e, int lg)
{
    mxp_softmax_avx2(y, x, n, e, lg, 0);
}
#else
typedef int mxp_f32_softmax_avx2_unused; /* built without SLEEF: nothing here */
#endif

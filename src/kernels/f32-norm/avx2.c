/* Float32 rows of layer norm, RMS norm and L2
 * normalization, AVX2: the body in
 * norm-avx2.h.  See norm-kernels.h. */
#include "kernels/norm-avx2.h"

void mxp_f32_norm__avx2(float *y, const float *x, size_t n, const double *w, const double *b, double eps, int mode)
{
    mxp_norm_avx2(y, x, n, w, b, eps, mode);
}

/* Float32 rows of layer norm, RMS norm and L2
 * normalization, AVX-512: the body in
 * norm-avx512.h.  See norm-kernels.h. */
#include "kernels/norm-avx512.h"

void mxp_f32_norm__avx512f(float *y, const float *x, size_t n, const double *w, const double *b, double eps, int mode)
{
    mxp_norm_avx512(y, x, n, w, b, eps, mode);
}

/* Float32 rows of layer norm, RMS norm and L2
 * normalization, AVX-512: the body in
 * norm-avx512.h.  See norm-kernels.h. */
#include "kernels/norm-avx512.h"

void mxp_f32_norm__avx512f(float *const *y, const float *const *x, size_t rows, size_t n, const double *w,
                           const double *b, double eps, int mode, double *wide)
{
    if (rows == MXP_NORM_ROWS) /* the count a constant */
        mxp_norm_rows_avx512(y, x, MXP_NORM_ROWS, n, w, b, eps, mode, wide);
    else
        mxp_norm_rows_avx512(y, x, rows, n, w, b, eps, mode, wide);
}

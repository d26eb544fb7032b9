/* Float32 rows of layer norm, RMS norm and L2
 * normalization: the reference twin, the
 * arithmetic of src/nn/norm.c's generic path on float32 rows.  See
 * norm-kernels.h. */
#include "kernels/norm-kernels.h"

void mxp_f32_norm__scalar(float *y, const float *x, size_t n, const double *w, const double *b, double eps, int mode)
{
    mxp_norm_portable(y, x, n, w, b, eps, mode);
}

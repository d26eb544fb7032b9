/* Float32 rows of layer norm and RMS norm: the reference twin, the
 * arithmetic of src/nn/norm.c's generic path on float32 rows.  See
 * norm-kernels.h. */
#include "kernels/norm-kernels.h"

void mxp_f32_norm__scalar(float *y, const float *x, size_t n, const double *w, const double *b, double eps, int rms)
{
    mxp_norm_portable(y, x, n, w, b, eps, rms, 0);
}

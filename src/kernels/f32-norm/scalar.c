/* Float32 rows of layer norm, RMS norm and L2
 * normalization: the reference twin, the
 * arithmetic of src/nn/norm.c's generic path on float32 rows.  See
 * norm-kernels.h. */
#include "kernels/norm-kernels.h"

void mxp_f32_norm__scalar(float *const *y, const float *const *x, size_t rows, size_t n, const double *w,
                          const double *b, double eps, int mode, double *wide)
{
    (void)wide; /* the twin widens as it goes */
    for (size_t r = 0; r < rows; r++)
        mxp_norm_portable(y[r], x[r], n, w, b, eps, mode);
}

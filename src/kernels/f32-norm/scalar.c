/* Float32 rows of layer norm and RMS norm: the reference twin, the
 * arithmetic of src/nn/norm.c's generic path on float32 rows.  See
 * norm-kernels.h. */
#include "kernels/norm-kernels.h"

/* sum of (x - c)^2 (sq) or of x, in mxp_sum8's order */
static double sum(const float *x, size_t n, double c, int sq)
{
    double s[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            s[k] += mxp_f32_norm_term(x, i + k, c, sq);
    return mxp_f32_norm_fold(s, x, i, n, c, sq);
}

void mxp_f32_norm__scalar(float *y, const float *x, size_t n, const double *w, const double *b, double eps, int rms)
{
    const double mean = rms ? 0 : sum(x, n, 0, 0) / (double)n;
    mxp_f32_norm_out(y, x, 0, n, w, b, mean, mxp_f32_norm_rstd(sum(x, n, mean, 1), n, eps));
}

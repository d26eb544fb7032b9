/* Bfloat16 rows of layer norm, RMS norm and L2 normalization in float32
 * arithmetic, AVX2 (the body in bf16-narrow-avx2.h).  See
 * bf16-narrow.h. */
#include "kernels/bf16-narrow-avx2.h"
#include "kernels/norm-kernels.h"

void mxp_bf16_norm__avx2(uint16_t *const *y, const mxp_narrow_src *x, size_t rows, size_t n, const float *w, const float *b,
                         double eps, int mode)
{
    mxp_norm_bf16_avx2(y, x, rows, n, w, b, eps, mode);
}

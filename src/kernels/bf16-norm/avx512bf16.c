/* Bfloat16 rows of layer norm, RMS norm and L2 normalization in float32
 * arithmetic, AVX-512 with AVX512_BF16: the body of bf16-narrow-avx512.h,
 * its results rounded by vcvtneps2bf16 (the same bits as
 * mxp_bf16_norm__avx512f).  See bf16-narrow.h. */
#include "kernels/bf16-narrow-avx512.h"
#include "kernels/norm-kernels.h"

void mxp_bf16_norm__avx512bf16(uint16_t *const *y, const mxp_narrow_src *x, size_t rows, size_t n, const float *w, const float *b,
                               double eps, int mode)
{
    mxp_norm_bf16_avx512(y, x, rows, n, w, b, eps, mode);
}

/* Bfloat16 softmax rows in float32 arithmetic, AVX-512 with AVX512_BF16:
 * the body of bf16-narrow-avx512.h, its results rounded by vcvtneps2bf16
 * (the same bits as mxp_bf16_softmax__avx512f).  See bf16-narrow.h. */
#include "kernels/bf16-narrow-avx512.h"
#include "kernels/softmax-kernels.h"

void mxp_bf16_softmax__avx512bf16(uint16_t *const *y, const mxp_narrow_src *x, size_t rows, size_t n, float *e, int lg)
{
    mxp_softmax_bf16_avx512(y, x, rows, n, e, lg);
}

/* float32 + - * / with AVX2: 16 lanes a step, the tail by the scalar
 * operation (the same IEEE operation): arith-template.h's loop.  See
 * arith-kernels.h. */
#include "kernels/simd-f32-avx2.h"
#include "kernels/arith-template.h"

void mxp_f32_arith__avx2(int op, float *y, const float *a, const float *b, size_t n)
{
    arith_run(op, y, a, b, n);
}

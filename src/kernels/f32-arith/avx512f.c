/* float32 + - * / with AVX-512F: 32 float32 lanes a step, the tail masked:
 * arith-template.h's loop.  See arith-kernels.h. */
#include "kernels/simd-f32-avx512.h"
#include "kernels/arith-template.h"

void mxp_f32_arith__avx512f(int op, float *y, const float *a, const float *b, size_t n)
{
    arith_run(op, y, a, b, n);
}

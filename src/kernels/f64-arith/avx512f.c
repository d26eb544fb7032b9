/* float64 + - * / with AVX-512F: 16 float64 lanes a step, the tail masked:
 * arith-template.h's loop.  See arith-kernels.h. */
#include "kernels/simd-f64-avx512.h"
#include "kernels/arith-template.h"

void mxp_f64_arith__avx512f(int op, double *y, const double *a, const double *b, size_t n)
{
    arith_run(op, y, a, b, n);
}

/* float64 + - * / with AVX2: 8 lanes a step, the tail by the scalar
 * operation (the same IEEE operation): arith-template.h's loop.  See
 * arith-kernels.h. */
#include "kernels/simd-f64-avx2.h"
#include "kernels/arith-template.h"

void mxp_f64_arith__avx2(int op, double *y, const double *a, const double *b, size_t n)
{
    arith_run(op, y, a, b, n);
}

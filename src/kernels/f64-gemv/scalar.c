/* The twin of the float64 GEMV kernels: each y[j] one chain of fused
 * multiply-adds in k order (the vector kernels' chain when B is not
 * transposed). */
#include <math.h>

#include "kernels/gemv-kernels.h"

#if MXP_HAVE_X86_KERNELS
void mxp_f64_gemv__scalar(int trans_b, size_t k, size_t n, const double *x, const double *b, size_t ldb, double *y)
{
    for (size_t j = 0; j < n; j++) {
        double s = 0;
        for (size_t p = 0; p < k; p++)
            s = fma(x[p], trans_b ? b[j * ldb + p] : b[p * ldb + j], s);
        y[j] = s;
    }
}
#endif

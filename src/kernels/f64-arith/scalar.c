/* float64 + - * /: the reference twin, a plain loop per operation (the
 * compiler vectorizes it for the baseline ISA).  See arith-kernels.h. */
#include "kernels/arith-kernels.h"

void mxp_f64_arith__scalar(int op, double *y, const double *a, const double *b, size_t n)
{
    switch (op) {
    case MXP_ARITH_ADD: for (size_t i = 0; i < n; i++) y[i] = a[i] + b[i]; break;
    case MXP_ARITH_SUB: for (size_t i = 0; i < n; i++) y[i] = a[i] - b[i]; break;
    case MXP_ARITH_MUL: for (size_t i = 0; i < n; i++) y[i] = a[i] * b[i]; break;
    default: for (size_t i = 0; i < n; i++) y[i] = a[i] / b[i]; break;
    }
}

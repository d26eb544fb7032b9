/* exp(x - m), portable: libm's exp, the twin of the others.  See
 * expshift.h. */
#include <math.h>

#include "kernels/expshift.h"

void mxp_f64_expshift__scalar(double *y, const double *x, size_t n, double m)
{
    for (size_t i = 0; i < n; i++)
        y[i] = exp(x[i] - m);
}

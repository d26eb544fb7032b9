/* exp(x - m), AVX2: four lanes a step, the last ones through a copy.  See
 * expshift.h. */
#include <string.h>

#include "kernels/expshift-avx2.h"

void mxp_f64_expshift__avx2(double *y, const double *x, size_t n, double m)
{
    const __m256d vm = _mm256_set1_pd(m);
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm256_storeu_pd(y + i, mxp_expshift_pd_avx2(_mm256_sub_pd(_mm256_loadu_pd(x + i), vm)));
    if (i < n) {
        double t[4] = { m, m, m, m };
        memcpy(t, x + i, (n - i) * sizeof(double));
        _mm256_storeu_pd(t, mxp_expshift_pd_avx2(_mm256_sub_pd(_mm256_loadu_pd(t), vm)));
        memcpy(y + i, t, (n - i) * sizeof(double));
    }
}

/* Float32 rows of layer norm and RMS norm, AVX2: the eight running sums
 * are two registers of four float64 lanes.  See norm-kernels.h. */
#include <immintrin.h>

#include "kernels/norm-kernels.h"

static inline __m256d load4(const float *x)
{
    return _mm256_cvtps_pd(_mm_loadu_ps(x));
}

static double sum(const float *x, size_t n, double c, int sq)
{
    const __m256d vc = _mm256_set1_pd(c);
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256d a = load4(x + i), b = load4(x + i + 4);
        const __m256d da = _mm256_sub_pd(a, vc), db = _mm256_sub_pd(b, vc);
        s0 = _mm256_add_pd(s0, sq ? _mm256_mul_pd(da, da) : a);
        s1 = _mm256_add_pd(s1, sq ? _mm256_mul_pd(db, db) : b);
    }
    double v[8];
    _mm256_storeu_pd(v, s0);
    _mm256_storeu_pd(v + 4, s1);
    return mxp_norm_fold(v, x, i, n, c, sq, 0);
}

void mxp_f32_norm__avx2(float *y, const float *x, size_t n, const double *w, const double *b, double eps, int rms)
{
    const double mean = rms ? 0 : sum(x, n, 0, 0) / (double)n;
    const double rstd = mxp_norm_rstd(sum(x, n, mean, 1), n, eps);
    const __m256d vm = _mm256_set1_pd(mean), vr = _mm256_set1_pd(rstd);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256d h = _mm256_mul_pd(_mm256_sub_pd(load4(x + i), vm), vr);
        if (w)
            h = _mm256_mul_pd(h, _mm256_loadu_pd(w + i));
        h = _mm256_add_pd(h, b ? _mm256_loadu_pd(b + i) : _mm256_setzero_pd());
        _mm_storeu_ps(y + i, _mm256_cvtpd_ps(h));
    }
    mxp_norm_out(y, x, i, n, w, b, mean, rstd, 0);
}

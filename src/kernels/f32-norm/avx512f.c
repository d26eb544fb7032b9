/* Float32 rows of layer norm and RMS norm, AVX-512: the eight running sums
 * are one register of float64 lanes.  See norm-kernels.h. */
#include <immintrin.h>

#include "kernels/norm-kernels.h"

static inline __m512d load8(const float *x)
{
    return _mm512_cvtps_pd(_mm256_loadu_ps(x));
}

static double sum(const float *x, size_t n, double c, int sq)
{
    const __m512d vc = _mm512_set1_pd(c);
    __m512d s = _mm512_setzero_pd();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m512d d = _mm512_sub_pd(load8(x + i), vc);
        s = _mm512_add_pd(s, sq ? _mm512_mul_pd(d, d) : load8(x + i));
    }
    double v[8];
    _mm512_storeu_pd(v, s);
    return mxp_norm_fold(v, x, i, n, c, sq, 0);
}

void mxp_f32_norm__avx512f(float *y, const float *x, size_t n, const double *w, const double *b, double eps, int rms)
{
    const double mean = rms ? 0 : sum(x, n, 0, 0) / (double)n;
    const double rstd = mxp_norm_rstd(sum(x, n, mean, 1), n, eps);
    const __m512d vm = _mm512_set1_pd(mean), vr = _mm512_set1_pd(rstd);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512d h = _mm512_mul_pd(_mm512_sub_pd(load8(x + i), vm), vr);
        if (w)
            h = _mm512_mul_pd(h, _mm512_loadu_pd(w + i));
        h = _mm512_add_pd(h, b ? _mm512_loadu_pd(b + i) : _mm512_setzero_pd());
        _mm256_storeu_ps(y + i, _mm512_cvtpd_ps(h));
    }
    mxp_norm_out(y, x, i, n, w, b, mean, rstd, 0);
}

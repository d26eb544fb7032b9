/* The AVX-512 body of the float32 layer / RMS norm and L2 row kernel
 * (f32-norm/avx512f.c; norm-kernels.h): eight float64 lanes, the eight
 * running sums one register, float32 rows widened by vcvtps2pd. */
#ifndef MXP_KERNELS_NORM_AVX512_H
#define MXP_KERNELS_NORM_AVX512_H

#include <immintrin.h>

#include "kernels/norm-kernels.h"

static inline __m512d mxp_norm_load8_avx512(const float *x, size_t i)
{
    return _mm512_cvtps_pd(_mm256_loadu_ps(x + i));
}

static inline void mxp_norm_store8_avx512(float *y, size_t i, __m512d v)
{
    _mm256_storeu_ps(y + i, _mm512_cvtpd_ps(v));
}

static inline double mxp_norm_sum_avx512(const float *x, size_t n, double c, int sq)
{
    const __m512d vc = _mm512_set1_pd(c);
    __m512d s = _mm512_setzero_pd();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m512d v = mxp_norm_load8_avx512(x, i), d = _mm512_sub_pd(v, vc);
        s = _mm512_add_pd(s, sq ? _mm512_mul_pd(d, d) : v);
    }
    double v[8];
    _mm512_storeu_pd(v, s);
    return mxp_norm_fold(v, x, i, n, c, sq);
}

static inline void mxp_norm_l2_avx512(float *y, const float *x, size_t n, double eps)
{
    const double s = mxp_norm_l2_div(mxp_norm_sum_avx512(x, n, 0, 1), eps);
    const __m512d vs = _mm512_set1_pd(s);
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        mxp_norm_store8_avx512(y, i, _mm512_div_pd(mxp_norm_load8_avx512(x, i), vs));
    mxp_norm_l2_out(y, x, i, n, s);
}

static inline void mxp_norm_avx512(float *y, const float *x, size_t n, const double *w, const double *b, double eps,
                                   int mode)
{
    if (mode == MXP_NORM_L2) {
        mxp_norm_l2_avx512(y, x, n, eps);
        return;
    }
    const double mean = mode == MXP_NORM_RMS ? 0 : mxp_norm_sum_avx512(x, n, 0, 0) / (double)n;
    const double rstd = mxp_norm_rstd(mxp_norm_sum_avx512(x, n, mean, 1), n, eps);
    const __m512d vm = _mm512_set1_pd(mean), vr = _mm512_set1_pd(rstd);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512d h = _mm512_mul_pd(_mm512_sub_pd(mxp_norm_load8_avx512(x, i), vm), vr);
        if (w)
            h = _mm512_mul_pd(h, _mm512_loadu_pd(w + i));
        mxp_norm_store8_avx512(y, i, _mm512_add_pd(h, b ? _mm512_loadu_pd(b + i) : _mm512_setzero_pd()));
    }
    mxp_norm_out(y, x, i, n, w, b, mean, rstd);
}

#endif

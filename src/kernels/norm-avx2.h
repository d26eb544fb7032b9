/* The AVX2 body of the float32 layer / RMS norm and L2 row kernel
 * (f32-norm/avx2.c; norm-kernels.h): groups of 8 as two registers of four
 * float64 lanes (the eight running sums). */
#ifndef MXP_KERNELS_NORM_AVX2_H
#define MXP_KERNELS_NORM_AVX2_H

#include <immintrin.h>

#include "kernels/norm-kernels.h"

static inline __m256d mxp_norm_load4_avx2(const float *x, size_t i)
{
    return _mm256_cvtps_pd(_mm_loadu_ps(x + i));
}

static inline void mxp_norm_store4_avx2(float *y, size_t i, __m256d v)
{
    _mm_storeu_ps(y + i, _mm256_cvtpd_ps(v));
}

static inline double mxp_norm_sum_avx2(const float *x, size_t n, double c, int sq)
{
    const __m256d vc = _mm256_set1_pd(c);
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256d a = mxp_norm_load4_avx2(x, i), b = mxp_norm_load4_avx2(x, i + 4);
        const __m256d da = _mm256_sub_pd(a, vc), db = _mm256_sub_pd(b, vc);
        s0 = _mm256_add_pd(s0, sq ? _mm256_mul_pd(da, da) : a);
        s1 = _mm256_add_pd(s1, sq ? _mm256_mul_pd(db, db) : b);
    }
    double v[8];
    _mm256_storeu_pd(v, s0);
    _mm256_storeu_pd(v + 4, s1);
    return mxp_norm_fold(v, x, i, n, c, sq);
}

static inline void mxp_norm_avx2(float *y, const float *x, size_t n, const double *w, const double *b, double eps,
                                 int mode)
{
    size_t i = 0;
    if (mode == MXP_NORM_L2) {
        const double s = mxp_norm_l2_div(mxp_norm_sum_avx2(x, n, 0, 1), eps);
        const __m256d vs = _mm256_set1_pd(s);
        for (; i + 4 <= n; i += 4)
            mxp_norm_store4_avx2(y, i, _mm256_div_pd(mxp_norm_load4_avx2(x, i), vs));
        mxp_norm_l2_out(y, x, i, n, s);
        return;
    }
    const double mean = mode == MXP_NORM_RMS ? 0 : mxp_norm_sum_avx2(x, n, 0, 0) / (double)n;
    const double rstd = mxp_norm_rstd(mxp_norm_sum_avx2(x, n, mean, 1), n, eps);
    const __m256d vm = _mm256_set1_pd(mean), vr = _mm256_set1_pd(rstd);
    for (; i + 4 <= n; i += 4) {
        __m256d h = _mm256_mul_pd(_mm256_sub_pd(mxp_norm_load4_avx2(x, i), vm), vr);
        if (w)
            h = _mm256_mul_pd(h, _mm256_loadu_pd(w + i));
        mxp_norm_store4_avx2(y, i, _mm256_add_pd(h, b ? _mm256_loadu_pd(b + i) : _mm256_setzero_pd()));
    }
    mxp_norm_out(y, x, i, n, w, b, mean, rstd);
}

#endif

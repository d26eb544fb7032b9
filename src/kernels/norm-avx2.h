/* The AVX2 body of the layer / RMS norm row kernels (f32-norm/,
 * bf16-norm/avx2.c; norm-kernels.h): groups of 8 as two registers of four
 * float64 lanes (the eight running sums).  bf16 (a constant in each
 * kernel) picks the element type, as norm-avx512.h. */
#ifndef MXP_KERNELS_NORM_AVX2_H
#define MXP_KERNELS_NORM_AVX2_H

#include <immintrin.h>

#include "kernels/norm-kernels.h"

static inline __m256d mxp_norm_load4_avx2(const void *x, size_t i, int bf16)
{
    if (!bf16)
        return _mm256_cvtps_pd(_mm_loadu_ps((const float *)x + i));
    const __m128i h = _mm_loadl_epi64((const __m128i *)(const void *)((const uint16_t *)x + i));
    return _mm256_cvtps_pd(_mm_castsi128_ps(_mm_slli_epi32(_mm_cvtepu16_epi32(h), 16)));
}

/* The low 32 bits of each 64-bit lane mask, as four 32-bit lanes. */
static inline __m128i mxp_norm_narrow_avx2(__m256d m)
{
    return _mm256_castsi256_si128(
        _mm256_permutevar8x32_epi32(_mm256_castpd_si256(m), _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
}

/* mxp_f64_to_bf16_rne on 4 lanes: the cast, round-to-odd, nearest even. */
static inline __m128i mxp_norm_bf16_avx2(__m256d d)
{
    const __m128 f = _mm256_cvtpd_ps(d);
    const __m256d back = _mm256_cvtps_pd(f), sign = _mm256_set1_pd(-0.0);
    const __m128i u = _mm_castps_si128(f), one = _mm_set1_epi32(1);
    const __m128i inexact = mxp_norm_narrow_avx2(_mm256_cmp_pd(back, d, _CMP_NEQ_UQ));
    const __m128i away =
        mxp_norm_narrow_avx2(_mm256_cmp_pd(_mm256_andnot_pd(sign, back), _mm256_andnot_pd(sign, d), _CMP_GT_OQ));
    const __m128i toward = _mm_add_epi32(u, away); /* away is -1 where set */
    const __m128i odd = _mm_blendv_epi8(u, _mm_or_si128(toward, one), inexact);
    const __m128i lsb = _mm_and_si128(_mm_srli_epi32(odd, 16), one);
    const __m128i r = _mm_srli_epi32(_mm_add_epi32(_mm_add_epi32(odd, _mm_set1_epi32(0x7fff)), lsb), 16);
    const __m128i nan = _mm_or_si128(_mm_srli_epi32(u, 16), _mm_set1_epi32(0x40));
    const __m128i out = _mm_blendv_epi8(r, nan, _mm_castps_si128(_mm_cmpunord_ps(f, f)));
    return _mm_packus_epi32(out, out);
}

static inline void mxp_norm_store4_avx2(void *y, size_t i, __m256d v, int bf16)
{
    if (bf16)
        _mm_storel_epi64((__m128i *)(void *)((uint16_t *)y + i), mxp_norm_bf16_avx2(v));
    else
        _mm_storeu_ps((float *)y + i, _mm256_cvtpd_ps(v));
}

static inline double mxp_norm_sum_avx2(const void *x, size_t n, double c, int sq, int bf16)
{
    const __m256d vc = _mm256_set1_pd(c);
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256d a = mxp_norm_load4_avx2(x, i, bf16), b = mxp_norm_load4_avx2(x, i + 4, bf16);
        const __m256d da = _mm256_sub_pd(a, vc), db = _mm256_sub_pd(b, vc);
        s0 = _mm256_add_pd(s0, sq ? _mm256_mul_pd(da, da) : a);
        s1 = _mm256_add_pd(s1, sq ? _mm256_mul_pd(db, db) : b);
    }
    double v[8];
    _mm256_storeu_pd(v, s0);
    _mm256_storeu_pd(v + 4, s1);
    return mxp_norm_fold(v, x, i, n, c, sq, bf16);
}

static inline void mxp_norm_avx2(void *y, const void *x, size_t n, const double *w, const double *b, double eps,
                                 int mode, int bf16)
{
    if (mode == MXP_NORM_L2) {
        const double s = mxp_norm_l2_div(mxp_norm_sum_avx2(x, n, 0, 1, bf16), eps);
        const __m256d vs = _mm256_set1_pd(s);
        size_t i = 0;
        for (; i + 4 <= n; i += 4)
            mxp_norm_store4_avx2(y, i, _mm256_div_pd(mxp_norm_load4_avx2(x, i, bf16), vs), bf16);
        mxp_norm_l2_out(y, x, i, n, s, bf16);
        return;
    }
    const double mean = mode == MXP_NORM_RMS ? 0 : mxp_norm_sum_avx2(x, n, 0, 0, bf16) / (double)n;
    const double rstd = mxp_norm_rstd(mxp_norm_sum_avx2(x, n, mean, 1, bf16), n, eps);
    const __m256d vm = _mm256_set1_pd(mean), vr = _mm256_set1_pd(rstd);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256d h = _mm256_mul_pd(_mm256_sub_pd(mxp_norm_load4_avx2(x, i, bf16), vm), vr);
        if (w)
            h = _mm256_mul_pd(h, _mm256_loadu_pd(w + i));
        mxp_norm_store4_avx2(y, i, _mm256_add_pd(h, b ? _mm256_loadu_pd(b + i) : _mm256_setzero_pd()), bf16);
    }
    mxp_norm_out(y, x, i, n, w, b, mean, rstd, bf16);
}

#endif

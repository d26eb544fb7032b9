/* The AVX-512 body of the layer / RMS norm row kernels (f32-norm/,
 * bf16-norm/avx512f.c; norm-kernels.h): eight float64 lanes, the eight
 * running sums one register.  bf16 (a constant in each kernel) picks the
 * element type: float32 rows widened by vcvtps2pd, bfloat16 rows by a
 * shift into float32 first and rounded back lane for lane as
 * mxp_f64_to_bf16_rne rounds one. */
#ifndef MXP_KERNELS_NORM_AVX512_H
#define MXP_KERNELS_NORM_AVX512_H

#include <immintrin.h>

#include "kernels/norm-kernels.h"

static inline __m512d mxp_norm_load8_avx512(const void *x, size_t i, int bf16)
{
    if (!bf16)
        return _mm512_cvtps_pd(_mm256_loadu_ps((const float *)x + i));
    const __m128i h = _mm_loadu_si128((const __m128i *)(const void *)((const uint16_t *)x + i));
    return _mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)));
}

/* mxp_f64_to_bf16_rne on 8 lanes: the cast, round-to-odd, nearest even. */
static inline __m128i mxp_norm_bf16_avx512(__m512d d)
{
    const __m256 f = _mm512_cvtpd_ps(d);
    const __m512d back = _mm512_cvtps_pd(f);
    const __m256i u = _mm256_castps_si256(f), one = _mm256_set1_epi32(1);
    const __mmask8 inexact = _mm512_cmp_pd_mask(back, d, _CMP_NEQ_UQ);
    const __mmask8 away = _mm512_cmp_pd_mask(_mm512_abs_pd(back), _mm512_abs_pd(d), _CMP_GT_OQ);
    const __m256i toward = _mm256_mask_sub_epi32(u, away, u, one);
    const __m256i odd = _mm256_mask_or_epi32(u, inexact, toward, one);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(odd, 16), one);
    const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff)), lsb), 16);
    const __m256i nan = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
    const __mmask8 isnan = _mm256_cmp_ps_mask(f, f, _CMP_UNORD_Q);
    return _mm256_cvtepi32_epi16(_mm256_mask_mov_epi32(r, isnan, nan));
}

static inline void mxp_norm_store8_avx512(void *y, size_t i, __m512d v, int bf16)
{
    if (bf16)
        _mm_storeu_si128((__m128i *)(void *)((uint16_t *)y + i), mxp_norm_bf16_avx512(v));
    else
        _mm256_storeu_ps((float *)y + i, _mm512_cvtpd_ps(v));
}

/* mxp_f64_to_bf16_rne on 16 lanes (lo: 0-7, hi: 8-15), the same bits:
 * each half cast toward zero with the inexact ones made odd (round to
 * odd), then nearest even from float32 in one register; NaNs quieted as
 * the scalar function quiets them. */
static inline __m256i mxp_norm_bf16x16_avx512(__m512d lo, __m512d hi)
{
    const __m256i one = _mm256_set1_epi32(1);
    const __m256 fl = _mm512_cvt_roundpd_ps(lo, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 fh = _mm512_cvt_roundpd_ps(hi, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask8 il = _mm512_cmp_pd_mask(_mm512_cvtps_pd(fl), lo, _CMP_NEQ_UQ);
    const __mmask8 ih = _mm512_cmp_pd_mask(_mm512_cvtps_pd(fh), hi, _CMP_NEQ_UQ);
    const __m256i ol = _mm256_mask_or_epi32(_mm256_castps_si256(fl), il, _mm256_castps_si256(fl), one);
    const __m256i oh = _mm256_mask_or_epi32(_mm256_castps_si256(fh), ih, _mm256_castps_si256(fh), one);
    const __m512i u = _mm512_inserti64x4(_mm512_castsi256_si512(ol), oh, 1);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(_mm512_castsi512_ps(u), _mm512_castsi512_ps(u), _CMP_UNORD_Q);
    r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
    return _mm512_cvtepi32_epi16(r);
}

/* Sixteen results from i: lo (i .. i + 7) and hi (i + 8 .. i + 15). */
static inline void mxp_norm_store16_avx512(void *y, size_t i, __m512d lo, __m512d hi, int bf16)
{
    if (bf16) {
        _mm256_storeu_si256((__m256i *)(void *)((uint16_t *)y + i), mxp_norm_bf16x16_avx512(lo, hi));
        return;
    }
    _mm256_storeu_ps((float *)y + i, _mm512_cvtpd_ps(lo));
    _mm256_storeu_ps((float *)y + i + 8, _mm512_cvtpd_ps(hi));
}

static inline double mxp_norm_sum_avx512(const void *x, size_t n, double c, int sq, int bf16)
{
    const __m512d vc = _mm512_set1_pd(c);
    __m512d s = _mm512_setzero_pd();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m512d v = mxp_norm_load8_avx512(x, i, bf16), d = _mm512_sub_pd(v, vc);
        s = _mm512_add_pd(s, sq ? _mm512_mul_pd(d, d) : v);
    }
    double v[8];
    _mm512_storeu_pd(v, s);
    return mxp_norm_fold(v, x, i, n, c, sq, bf16);
}

/* ((x - mean) * rstd) * w + b at i .. i + 7, as mxp_norm_out. */
static inline __m512d mxp_norm_y8_avx512(const void *x, size_t i, const double *w, const double *b, __m512d vm,
                                         __m512d vr, int bf16)
{
    __m512d h = _mm512_mul_pd(_mm512_sub_pd(mxp_norm_load8_avx512(x, i, bf16), vm), vr);
    if (w)
        h = _mm512_mul_pd(h, _mm512_loadu_pd(w + i));
    return _mm512_add_pd(h, b ? _mm512_loadu_pd(b + i) : _mm512_setzero_pd());
}

static inline void mxp_norm_l2_avx512(void *y, const void *x, size_t n, double eps, int bf16)
{
    const double s = mxp_norm_l2_div(mxp_norm_sum_avx512(x, n, 0, 1, bf16), eps);
    const __m512d vs = _mm512_set1_pd(s);
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        mxp_norm_store16_avx512(y, i, _mm512_div_pd(mxp_norm_load8_avx512(x, i, bf16), vs),
                                _mm512_div_pd(mxp_norm_load8_avx512(x, i + 8, bf16), vs), bf16);
    for (; i + 8 <= n; i += 8)
        mxp_norm_store8_avx512(y, i, _mm512_div_pd(mxp_norm_load8_avx512(x, i, bf16), vs), bf16);
    mxp_norm_l2_out(y, x, i, n, s, bf16);
}

static inline void mxp_norm_avx512(void *y, const void *x, size_t n, const double *w, const double *b, double eps,
                                   int mode, int bf16)
{
    if (mode == MXP_NORM_L2) {
        mxp_norm_l2_avx512(y, x, n, eps, bf16);
        return;
    }
    const double mean = mode == MXP_NORM_RMS ? 0 : mxp_norm_sum_avx512(x, n, 0, 0, bf16) / (double)n;
    const double rstd = mxp_norm_rstd(mxp_norm_sum_avx512(x, n, mean, 1, bf16), n, eps);
    const __m512d vm = _mm512_set1_pd(mean), vr = _mm512_set1_pd(rstd);
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        mxp_norm_store16_avx512(y, i, mxp_norm_y8_avx512(x, i, w, b, vm, vr, bf16),
                                mxp_norm_y8_avx512(x, i + 8, w, b, vm, vr, bf16), bf16);
    for (; i + 8 <= n; i += 8)
        mxp_norm_store8_avx512(y, i, mxp_norm_y8_avx512(x, i, w, b, vm, vr, bf16), bf16);
    mxp_norm_out(y, x, i, n, w, b, mean, rstd, bf16);
}

#endif

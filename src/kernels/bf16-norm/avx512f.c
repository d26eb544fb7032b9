/* Bfloat16 rows of layer norm and RMS norm, AVX-512: each group of 8
 * widened exactly (a shift into float32, then float64), the eight running
 * sums one register, the results rounded to bfloat16 as
 * mxp_f64_to_bf16_rne does, lane for lane.  See norm-kernels.h. */
#include <immintrin.h>

#include "kernels/norm-kernels.h"

static inline __m512d load8(const uint16_t *x)
{
    const __m256i w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)x)), 16);
    return _mm512_cvtps_pd(_mm256_castsi256_ps(w));
}

/* mxp_f64_to_bf16_rne on 8 lanes: the cast, round-to-odd, nearest even. */
static inline void store8(uint16_t *y, __m512d d)
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
    _mm_storeu_si128((__m128i *)(void *)y, _mm256_cvtepi32_epi16(_mm256_mask_mov_epi32(r, isnan, nan)));
}

static double sum(const uint16_t *x, size_t n, double c, int sq)
{
    const __m512d vc = _mm512_set1_pd(c);
    __m512d s = _mm512_setzero_pd();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m512d v = load8(x + i), d = _mm512_sub_pd(v, vc);
        s = _mm512_add_pd(s, sq ? _mm512_mul_pd(d, d) : v);
    }
    double v[8];
    _mm512_storeu_pd(v, s);
    return mxp_norm_fold(v, x, i, n, c, sq, 1);
}

void mxp_bf16_norm__avx512f(uint16_t *y, const uint16_t *x, size_t n, const double *w, const double *b, double eps,
                            int rms)
{
    const double mean = rms ? 0 : sum(x, n, 0, 0) / (double)n;
    const double rstd = mxp_norm_rstd(sum(x, n, mean, 1), n, eps);
    const __m512d vm = _mm512_set1_pd(mean), vr = _mm512_set1_pd(rstd);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512d h = _mm512_mul_pd(_mm512_sub_pd(load8(x + i), vm), vr);
        if (w)
            h = _mm512_mul_pd(h, _mm512_loadu_pd(w + i));
        store8(y + i, _mm512_add_pd(h, b ? _mm512_loadu_pd(b + i) : _mm512_setzero_pd()));
    }
    mxp_norm_out(y, x, i, n, w, b, mean, rstd, 1);
}

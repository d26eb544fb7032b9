/* Bfloat16 rows of layer norm and RMS norm, AVX2: groups of 8 widened
 * exactly as two registers of four float64 lanes (the eight running
 * sums), the results rounded to bfloat16 as mxp_f64_to_bf16_rne does,
 * lane for lane.  See norm-kernels.h. */
#include <immintrin.h>

#include "kernels/norm-kernels.h"

static inline __m256d load4(const uint16_t *x)
{
    const __m128i w = _mm_slli_epi32(_mm_cvtepu16_epi32(_mm_loadl_epi64((const __m128i *)(const void *)x)), 16);
    return _mm256_cvtps_pd(_mm_castsi128_ps(w));
}

/* The low 32 bits of each 64-bit lane mask, as four 32-bit lanes. */
static inline __m128i narrow(__m256d m)
{
    return _mm256_castsi256_si128(
        _mm256_permutevar8x32_epi32(_mm256_castpd_si256(m), _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
}

/* mxp_f64_to_bf16_rne on 4 lanes: the cast, round-to-odd, nearest even. */
static inline void store4(uint16_t *y, __m256d d)
{
    const __m128 f = _mm256_cvtpd_ps(d);
    const __m256d back = _mm256_cvtps_pd(f), sign = _mm256_set1_pd(-0.0);
    const __m128i u = _mm_castps_si128(f), one = _mm_set1_epi32(1);
    const __m128i inexact = narrow(_mm256_cmp_pd(back, d, _CMP_NEQ_UQ));
    const __m128i away = narrow(_mm256_cmp_pd(_mm256_andnot_pd(sign, back), _mm256_andnot_pd(sign, d), _CMP_GT_OQ));
    const __m128i toward = _mm_add_epi32(u, away); /* away is -1 where set */
    const __m128i odd = _mm_blendv_epi8(u, _mm_or_si128(toward, one), inexact);
    const __m128i lsb = _mm_and_si128(_mm_srli_epi32(odd, 16), one);
    const __m128i r = _mm_srli_epi32(_mm_add_epi32(_mm_add_epi32(odd, _mm_set1_epi32(0x7fff)), lsb), 16);
    const __m128i nan = _mm_or_si128(_mm_srli_epi32(u, 16), _mm_set1_epi32(0x40));
    const __m128i out = _mm_blendv_epi8(r, nan, _mm_castps_si128(_mm_cmpunord_ps(f, f)));
    _mm_storel_epi64((__m128i *)(void *)y, _mm_packus_epi32(out, out));
}

static double sum(const uint16_t *x, size_t n, double c, int sq)
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
    return mxp_norm_fold(v, x, i, n, c, sq, 1);
}

void mxp_bf16_norm__avx2(uint16_t *y, const uint16_t *x, size_t n, const double *w, const double *b, double eps,
                         int rms)
{
    const double mean = rms ? 0 : sum(x, n, 0, 0) / (double)n;
    const double rstd = mxp_norm_rstd(sum(x, n, mean, 1), n, eps);
    const __m256d vm = _mm256_set1_pd(mean), vr = _mm256_set1_pd(rstd);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256d h = _mm256_mul_pd(_mm256_sub_pd(load4(x + i), vm), vr);
        if (w)
            h = _mm256_mul_pd(h, _mm256_loadu_pd(w + i));
        store4(y + i, _mm256_add_pd(h, b ? _mm256_loadu_pd(b + i) : _mm256_setzero_pd()));
    }
    mxp_norm_out(y, x, i, n, w, b, mean, rstd, 1);
}

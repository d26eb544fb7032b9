/* float32 gelu through the checked fast path, AVX2: 8 float32 lanes, two
 * float64 halves of 4; the tail through a padded copy.  The approximation
 * and the check are avx512f.c's (see there and gelu-avx512f.h), with a
 * smaller exp table that one AVX2 permute reaches: 2^(j/4), j < 4, and
 * Taylor to degree 8 for |r| <= ln2/8 (truncation < 2^-50).  Fallback: the
 * SLEEF path, mxp_vmath_f32__avx2 with MXP_VMATH_GELU. */
#include "kernels/vmath-kernels.h"

#ifdef MXP_HAVE_SLEEF
#include <immintrin.h>
#include <string.h>

#include "kernels/f32-gelu/gelu-tables.h"

#define GELU_E 0x1p-42
#define GELU_FAR 14.5

/* e^(-w/2) 2^-k and k 2^52 for 0 <= w <= 210.25: n = round(-w/2 4/ln2) =
 * 4 k + j; r3 = w + 2 n ln2/4 = -2 r, |r| <= ln2/8; e^(-w/2) = 2^k 2^(j/4)
 * e^r, e^r = sum (-r3/2)^i / i! to degree 8. */
static inline __m256d exp_half_neg(__m256d w, __m256i *k52)
{
    const __m256d magic = _mm256_set1_pd(0x1.8p52);
    const __m256d tn = _mm256_fmadd_pd(w, _mm256_set1_pd(-0x1.71547652b82fep+1), magic);
    const __m256d n = _mm256_sub_pd(tn, magic);
    __m256d r3 = _mm256_fmadd_pd(n, _mm256_set1_pd(0x1.62e42fefa39efp-2), w); /* ln2/2, high and low */
    r3 = _mm256_fmadd_pd(n, _mm256_set1_pd(0x1.abc9e3b39803fp-57), r3);
    static const double c[9] = { 1.0, -0.5, 1.0 / 8, -1.0 / 48, 1.0 / 384, -1.0 / 3840, 1.0 / 46080,
                                 -1.0 / 645120, 1.0 / 10321920 }; /* (-1/2)^i / i! */
    __m256d p = _mm256_set1_pd(c[8]);
    for (int i = 7; i >= 0; i--)
        p = _mm256_fmadd_pd(p, r3, _mm256_set1_pd(c[i]));
    /* 2^(j/4) from a 4-double table: float32 halves 2j and 2j + 1 */
    const __m256i tb = _mm256_castpd_si256(tn);
    const __m256i j2 = _mm256_slli_epi64(_mm256_and_si256(tb, _mm256_set1_epi64x(3)), 1);
    const __m256i idx = _mm256_or_si256(j2, _mm256_slli_epi64(_mm256_add_epi64(j2, _mm256_set1_epi64x(1)), 32));
    const __m256 tab = _mm256_castpd_ps(_mm256_setr_pd(1.0, 0x1.306fe0a31b715p+0, 0x1.6a09e667f3bcdp+0,
                                                       0x1.ae89f995ad3adp+0));
    const __m256d t = _mm256_castps_pd(_mm256_permutevar8x32_ps(tab, idx));
    *k52 = _mm256_slli_epi64(_mm256_andnot_si256(_mm256_set1_epi64x(3), tb), 50); /* (n & ~3) << 50 */
    return _mm256_mul_pd(t, p);
}

static inline __m256d poly(const double *c, int degree, __m256d a)
{
    __m256d p = _mm256_set1_pd(c[degree]);
    for (int j = degree - 1; j >= 0; j--)
        p = _mm256_fmadd_pd(p, a, _mm256_set1_pd(c[j]));
    return p;
}

static inline __m256d approx(__m256d x)
{
    const __m256d a = _mm256_min_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), x), _mm256_set1_pd(GELU_FAR));
    const __m256d near = _mm256_cmp_pd(a, _mm256_set1_pd(GELU_FAR), _CMP_LT_OQ);
    __m256i k52;
    const __m256d e = exp_half_neg(_mm256_mul_pd(a, a), &k52);
    const __m256d r = _mm256_div_pd(poly(gelu_p, MXP_GELU_NP, a), poly(gelu_q, MXP_GELU_NQ, a));
    const __m256i qb = _mm256_add_epi64(_mm256_castpd_si256(_mm256_mul_pd(e, r)), k52);
    const __m256d q = _mm256_and_pd(near, _mm256_castsi256_pd(qb));
    const __m256d neg = _mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_LT_OQ);
    return _mm256_mul_pd(x, _mm256_blendv_pd(_mm256_sub_pd(_mm256_set1_pd(1.0), q), q, neg));
}

/* y (1 -+ GELU_E) rounded to float32; for y = -0, hi is -0 */
static inline void bounds(__m256d y, __m128 *lo, __m128 *hi)
{
    const __m256d e = _mm256_set1_pd(GELU_E);
    *lo = _mm256_cvtpd_ps(_mm256_fnmadd_pd(y, e, y));
    *hi = _mm256_cvtpd_ps(_mm256_fmadd_pd(y, e, y));
}

static __m256 gelu8(__m256 v, size_t *redo)
{
    __m128 lo0, hi0, lo1, hi1;
    bounds(approx(_mm256_cvtps_pd(_mm256_castps256_ps128(v))), &lo0, &hi0);
    bounds(approx(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))), &lo1, &hi1);
    const __m256 lo = _mm256_insertf128_ps(_mm256_castps128_ps256(lo0), lo1, 1);
    const __m256 hi = _mm256_insertf128_ps(_mm256_castps128_ps256(hi0), hi1, 1);
    const __m256 ok = _mm256_cmp_ps(lo, hi, _CMP_EQ_OQ);
    const int okm = _mm256_movemask_ps(ok);
    if (__builtin_expect(okm == 0xff, 1))
        return hi;
    *redo += (size_t)__builtin_popcount((unsigned)okm ^ 0xffu);
    float buf[8];
    _mm256_storeu_ps(buf, v);
    mxp_vmath_f32__avx2(MXP_VMATH_GELU, buf, buf, 8);
    return _mm256_blendv_ps(_mm256_loadu_ps(buf), hi, ok);
}

size_t mxp_vmath_f32_gelu__avx2(float *y, const float *x, size_t n)
{
    size_t i = 0, redo = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, gelu8(_mm256_loadu_ps(x + i), &redo));
    if (i < n) { /* the zeros beyond n are settled: gelu(0) = 0 */
        float buf[8] = { 0 };
        memcpy(buf, x + i, (n - i) * sizeof *x);
        _mm256_storeu_ps(buf, gelu8(_mm256_loadu_ps(buf), &redo));
        memcpy(y + i, buf, (n - i) * sizeof *y);
    }
    return redo;
}

void mxp_vmath_f64_gelu_approx__avx2(double *y, const double *x, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm256_storeu_pd(y + i, approx(_mm256_loadu_pd(x + i)));
    if (i < n) {
        double buf[4] = { 0 };
        memcpy(buf, x + i, (n - i) * sizeof *x);
        _mm256_storeu_pd(buf, approx(_mm256_loadu_pd(buf)));
        memcpy(y + i, buf, (n - i) * sizeof *y);
    }
}
#else
typedef int mxp_f32_gelu_avx2_unused; /* built without SLEEF: nothing here */
#endif

/* float32 gelu through the checked fast path, AVX2: 8 float32 lanes, two
 * float64 halves of 4; the tail through a padded copy.  The check is
 * avx512f.c's (see there), the approximation gelu-avx2.h's.  Fallback: the
 * SLEEF path, mxp_f32_vmath__avx2 with MXP_VMATH_GELU. */
#include "kernels/vmath-kernels.h"

#ifdef MXP_HAVE_SLEEF
#include "kernels/gelu-avx2.h"
#include "kernels/simd-f32-avx2.h"

#define GELU_E 0x1p-42

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
    bounds(mxp_gelu_approx(_mm256_cvtps_pd(_mm256_castps256_ps128(v))), &lo0, &hi0);
    bounds(mxp_gelu_approx(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))), &lo1, &hi1);
    const __m256 lo = _mm256_insertf128_ps(_mm256_castps128_ps256(lo0), lo1, 1);
    const __m256 hi = _mm256_insertf128_ps(_mm256_castps128_ps256(hi0), hi1, 1);
    const __m256 ok = _mm256_cmp_ps(lo, hi, _CMP_EQ_OQ);
    const int okm = _mm256_movemask_ps(ok);
    if (__builtin_expect(okm == 0xff, 1))
        return hi;
    *redo += (size_t)__builtin_popcount((unsigned)okm ^ 0xffu);
    float buf[8];
    _mm256_storeu_ps(buf, v);
    mxp_f32_vmath__avx2(MXP_VMATH_GELU, buf, buf, 8);
    return _mm256_blendv_ps(_mm256_loadu_ps(buf), hi, ok);
}

#define MXP_MAP_FN gelu8
#include "kernels/map-template.h"

size_t mxp_f32_gelu__avx2(float *y, const float *x, size_t n)
{
    size_t redo = 0;
    mxp_simd_map(y, x, n, &redo); /* the zeros beyond n are settled: gelu(0) = 0 */
    return redo;
}
#else
typedef int mxp_f32_gelu_avx2_unused; /* built without SLEEF: nothing here */
#endif

/* float32 gelu, x/2 erfc(-x/sqrt 2), correctly rounded, through a checked
 * fast path: 16 float32 lanes, two float64 halves, the approximation y of
 * gelu-avx512f.h.  See vmath-kernels.h.
 *
 * y is within 2^-44.9 |y| of the exact value; the SLEEF path's float64
 * value s is less accurate for x < -5, where erfc(-x/sqrt 2) magnifies the
 * rounding of its argument: over all float32 |x| < 14.5, |y - s| <
 * 2^-44.4 |s| (exhaustive_gelu_f32 measures it and fails above 2^-44).
 * With GELU_E = 2^-42 both the exact value and s lie within GELU_E |y| of
 * y.  When y (1 - GELU_E) and y (1 + GELU_E) round to the same float32, no
 * rounding boundary lies between them and that float32 is the correctly
 * rounded result and the SLEEF path's.  Lanes where they differ -- a
 * boundary near y, NaN or infinite x (a NaN interval), and the ties x/2 of
 * the tiny x that the SLEEF path nudges (tiny_nudge in
 * vmath-avx512f.h) -- take the SLEEF path
 * (mxp_f32_vmath__avx512f with MXP_VMATH_GELU). */
#include "kernels/vmath-kernels.h"

#ifdef MXP_HAVE_SLEEF
#include "kernels/gelu-avx512f.h"
#include "kernels/simd-f32-avx512.h"

#define GELU_E 0x1p-42

/* y (1 -+ GELU_E) rounded to float32; for y = -0, hi is -0 */
static inline void bounds(__m512d y, __m256 *lo, __m256 *hi)
{
    const __m512d e = _mm512_set1_pd(GELU_E);
    *lo = _mm512_cvtpd_ps(_mm512_fnmadd_pd(y, e, y));
    *hi = _mm512_cvtpd_ps(_mm512_fmadd_pd(y, e, y));
}

static __m512 gelu16(__m512 v, size_t *redo)
{
    __m256 lo0, hi0, lo1, hi1;
    bounds(mxp_gelu_approx(_mm512_cvtps_pd(_mm512_castps512_ps256(v))), &lo0, &hi0);
    bounds(mxp_gelu_approx(_mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1))), &lo1, &hi1);
    const __m512 lo = _mm512_insertf32x8(_mm512_castps256_ps512(lo0), lo1, 1);
    const __m512 hi = _mm512_insertf32x8(_mm512_castps256_ps512(hi0), hi1, 1);
    const __mmask16 ok = _mm512_cmp_ps_mask(lo, hi, _CMP_EQ_OQ); /* +0 == -0: hi has y's sign */
    if (__builtin_expect(ok == 0xffff, 1))
        return hi;
    *redo += (size_t)__builtin_popcount((unsigned)(__mmask16)~ok);
    float buf[16];
    _mm512_storeu_ps(buf, v);
    mxp_f32_vmath__avx512f(MXP_VMATH_GELU, buf, buf, 16);
    return _mm512_mask_blend_ps(ok, _mm512_loadu_ps(buf), hi);
}

#define MXP_MAP_FN gelu16
#include "kernels/map-template.h"

size_t mxp_f32_gelu__avx512f(float *y, const float *x, size_t n)
{
    size_t redo = 0;
    mxp_simd_map(y, x, n, &redo); /* the zeros beyond n are settled: gelu(0) = 0 */
    return redo;
}
#else
typedef int mxp_f32_gelu_avx512f_unused; /* built without SLEEF: nothing here */
#endif

/* float16 exp, log, tanh, sin, cos in one pass through SLEEF's float32
 * functions with the rounding check, AVX2 + F16C: 8 lanes.  See
 * vmath-kernels.h. */
#include "kernels/vmath-kernels.h"

#ifdef MXP_HAVE_SLEEF
#include "kernels/vmath-avx2.h"

/* widened (exactly), f32_h16, rounded to nearest even by the conversion
 * instruction (overflow to inf) */
size_t mxp_f16_vmath__avx2(int fn, uint16_t *y, const uint16_t *x, size_t n)
{
    size_t i = 0, redo = 0;
#define rne (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC) /* an immediate, also at -O0 */
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(x + i)));
        _mm_storeu_si128((__m128i *)(void *)(y + i), _mm256_cvtps_ph(canonical_nan(f32_h16(fn, v, &redo)), rne));
    }
    if (i < n) {
        uint16_t t[8] = { 0 };
        memcpy(t, x + i, (n - i) * sizeof t[0]);
        const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)t));
        _mm_storeu_si128((__m128i *)(void *)t, _mm256_cvtps_ph(canonical_nan(f32_h16(fn, v, &redo)), rne));
        memcpy(y + i, t, (n - i) * sizeof t[0]);
    }
    return redo;
}
#undef rne
#else
typedef int mxp_f16_vmath_avx2_unused; /* built without SLEEF: nothing here */
#endif

/* float16 exp, log, tanh, sin, cos (and gelu) in one pass through SLEEF's
 * float32 functions (gelu: its float64 approximation) with the rounding
 * check, AVX-512: 16 lanes.  See vmath-kernels.h. */
#include "kernels/vmath-kernels.h"

#ifdef MXP_HAVE_SLEEF
#include "kernels/vmath-avx512f.h"

/* widened (exactly), f32_h16, rounded to nearest even by the conversion
 * instruction (overflow to inf) */
size_t mxp_f16_vmath__avx512f(int fn, uint16_t *y, const uint16_t *x, size_t n)
{
    size_t i = 0, redo = 0;
#define rne (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC) /* an immediate, also at -O0 */
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(x + i)));
        _mm256_storeu_si256((__m256i *)(void *)(y + i), _mm512_cvtps_ph(canonical_nan(f32_h16(fn, v, &redo)), rne));
    }
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        const __m512 v = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, x + i));
        _mm256_mask_storeu_epi16(y + i, m, _mm512_cvtps_ph(canonical_nan(f32_h16(fn, v, &redo)), rne));
    }
    return redo;
}
#undef rne
#else
typedef int mxp_f16_vmath_avx512f_unused; /* built without SLEEF: nothing here */
#endif

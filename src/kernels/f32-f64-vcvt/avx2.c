/* float32 -> float64 with AVX2, exact: one kernel serves every rounding
 * mode.  Tails go through a small zero-padded buffer. */
#include <immintrin.h>
#include <string.h>

#include "kernels/cvt-kernels.h"

/* float32 -> float64, exact (as mxp_f32_f64_vcvt__avx512f): vcvtps2pd,
 * except that under MXCSR.DAZ it would read float32 subnormals as zero, so
 * vectors holding one convert those lanes from the integer mantissa: m *
 * 2^-149, a normal float64 product.  Saturation turns infinities into
 * float64's largest finite value. */
static inline __attribute__((always_inline)) __m256d f32x4_to_f64(__m128i x, int saturate)
{
    __m256d r = _mm256_cvtps_pd(_mm_castsi128_ps(x));
    const __m128i a = _mm_and_si128(x, _mm_set1_epi32(0x7fffffff));
    const __m128i sub = _mm_andnot_si128(_mm_cmpeq_epi32(a, _mm_setzero_si128()),
                                         _mm_cmpeq_epi32(_mm_and_si128(x, _mm_set1_epi32(0x7f800000)), _mm_setzero_si128()));
    if (!_mm_testz_si128(sub, sub)) {
        const __m256d m = _mm256_mul_pd(_mm256_cvtepi32_pd(a), _mm256_set1_pd(0x1p-149));
        const __m256i sign = _mm256_slli_epi64(_mm256_cvtepu32_epi64(_mm_srli_epi32(x, 31)), 63);
        const __m256d fixed = _mm256_castsi256_pd(_mm256_or_si256(_mm256_castpd_si256(m), sign));
        r = _mm256_blendv_pd(r, fixed, _mm256_castsi256_pd(_mm256_cvtepi32_epi64(sub)));
    }
    if (saturate) {
        const __m256i b = _mm256_castpd_si256(r);
        const __m256i inf = _mm256_cmpeq_epi64(_mm256_and_si256(b, _mm256_set1_epi64x(0x7fffffffffffffffll)),
                                               _mm256_set1_epi64x(0x7ff0000000000000ll));
        r = _mm256_castsi256_pd(_mm256_add_epi64(b, inf)); /* inf - 1: the largest finite, signed */
    }
    return r;
}

void mxp_f32_f64_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const unsigned char *s = src;
    unsigned char *d = dst;
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm256_storeu_pd((double *)(void *)(d + 8 * i),
                         f32x4_to_f64(_mm_loadu_si128((const __m128i *)(const void *)(s + 4 * i)), saturate));
    if (i < n) {
        unsigned char in[16] = { 0 };
        double out[4];
        memcpy(in, s + 4 * i, (n - i) * 4);
        _mm256_storeu_pd(out, f32x4_to_f64(_mm_loadu_si128((const __m128i *)(const void *)in), saturate));
        memcpy(d + 8 * i, out, (n - i) * 8);
    }
}

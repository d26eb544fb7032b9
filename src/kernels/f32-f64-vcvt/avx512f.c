/* float32 -> float64 with AVX-512F, exact: one kernel serves every
 * rounding mode.  No FP arithmetic whose result depends on MXCSR. */
#include <immintrin.h>

#include "kernels/cvt-kernels.h"

/* float32 -> float64, exact.  vcvtps2pd reads float32 subnormals as zero
 * under MXCSR.DAZ, so vectors holding one convert those lanes from the
 * integer mantissa: m * 2^-149, a normal float64 product of normal inputs. */
static inline __attribute__((always_inline)) __m512d f32x8_to_f64(__m256i x, int saturate)
{
    __m512d r = _mm512_cvtps_pd(_mm256_castsi256_ps(x));
    __m256i a = _mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff));
    __mmask8 sub = _mm256_testn_epi32_mask(x, _mm256_set1_epi32(0x7f800000)) & _mm256_test_epi32_mask(a, a);
    if (sub) {
        __m512d m = _mm512_mul_pd(_mm512_cvtepi64_pd(_mm512_cvtepu32_epi64(a)), _mm512_set1_pd(0x1p-149));
        __m512i sign = _mm512_slli_epi64(_mm512_cvtepu32_epi64(_mm256_srli_epi32(x, 31)), 63);
        r = _mm512_mask_mov_pd(r, sub, _mm512_castsi512_pd(_mm512_or_si512(_mm512_castpd_si512(m), sign)));
    }
    if (saturate) {
        __m512i b = _mm512_castpd_si512(r);
        __mmask8 inf = _mm512_cmpeq_epi64_mask(_mm512_and_si512(b, _mm512_set1_epi64(0x7fffffffffffffffll)),
                                               _mm512_set1_epi64(0x7ff0000000000000ll));
        r = _mm512_castsi512_pd(_mm512_mask_sub_epi64(b, inf, b, _mm512_set1_epi64(1)));
    }
    return r;
}

void mxp_f32_f64_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const uint32_t *s = src;
    double *d = dst;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm512_storeu_pd(d + i, f32x8_to_f64(_mm256_loadu_si256((const __m256i *)(s + i)), saturate));
    if (i < n) {
        __mmask8 mask = (__mmask8)((1u << (n - i)) - 1);
        _mm512_mask_storeu_pd(d + i, mask, f32x8_to_f64(_mm256_maskz_loadu_epi32(mask, s + i), saturate));
    }
}

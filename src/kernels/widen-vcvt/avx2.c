/* Widening conversions with AVX2 (+F16C): bf16, f16, s8, u8 -> float32, exact in every mode.
 * Tails go through a small zero-padded buffer. */
#include <immintrin.h>
#include <string.h>

#include "kernels/cvt-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

typedef enum { SRC_BF16, SRC_F16, SRC_S8, SRC_U8 } src_kind;

MXP_INLINE __m256 widen8(const void *p, src_kind k, int saturate)
{
    __m256 r;
    switch (k) {
    case SRC_F16:
        r = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
        break;
    case SRC_BF16: {
        __m256i x = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16);
        __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
        x = _mm256_or_si256(x, _mm256_and_si256(nan, _mm256_set1_epi32(0x00400000)));
        r = _mm256_castsi256_ps(x);
        break;
    }
    case SRC_S8:
        return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
    default:
        return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p)));
    }
    if (saturate) { /* no infinity in the output: +-inf -> +-max */
        __m256i b = _mm256_castps_si256(r);
        __m256i inf = _mm256_cmpeq_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
        r = _mm256_castsi256_ps(_mm256_add_epi32(b, inf));
    }
    return r;
}

MXP_INLINE void loop(float *d, const void *src, size_t n, src_kind k, int saturate)
{
    const size_t ss = k <= SRC_F16 ? 2 : 1;
    const unsigned char *s = src;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, widen8(s + i * ss, k, saturate));
    if (i < n) {
        unsigned char in[16] = { 0 };
        float out[8];
        memcpy(in, s + i * ss, (n - i) * ss);
        _mm256_storeu_ps(out, widen8(in, k, saturate));
        memcpy(d + i, out, (n - i) * 4);
    }
}

void mxp_bf16_f32_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    loop(dst, src, n, SRC_BF16, p->overflow == MXP_OVERFLOW_SATURATE);
}

void mxp_f16_f32_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    loop(dst, src, n, SRC_F16, p->overflow == MXP_OVERFLOW_SATURATE);
}

void mxp_s8_f32_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    (void)p;
    loop(dst, src, n, SRC_S8, 0);
}

void mxp_u8_f32_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    (void)p;
    loop(dst, src, n, SRC_U8, 0);
}

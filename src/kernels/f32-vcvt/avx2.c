/* float32 -> float16 (F16C, the four IEEE modes) and float32 -> bfloat16
 * (round to nearest even, integer method) with AVX2, 8 lanes per step.
 * Tails go through a small zero-padded buffer. */
#include <immintrin.h>
#include <string.h>

#include "kernels/cvt-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

/* vcvtps2ph reads float32 subnormals as zero under MXCSR.DAZ; that only
 * changes results rounding away from zero, so those lanes are fixed up. */
MXP_INLINE __m128i cvtps_ph(__m256 x, mxp_rounding mode)
{
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: return _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    case MXP_ROUND_TOWARD_ZERO: return _mm256_cvtps_ph(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    case MXP_ROUND_UP: return _mm256_cvtps_ph(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    default: return _mm256_cvtps_ph(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    }
}

MXP_INLINE __m128i f16x8(__m256i x, mxp_rounding mode, int saturate)
{
    __m128i r = cvtps_ph(_mm256_castsi256_ps(x), mode);
    if (mode == MXP_ROUND_UP || mode == MXP_ROUND_DOWN) {
        __m256i zero = _mm256_setzero_si256();
        __m256i exp0 = _mm256_cmpeq_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7f800000)), zero);
        __m256i nz = _mm256_xor_si256(_mm256_cmpeq_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)), zero),
                                      _mm256_set1_epi32(-1));
        __m256i neg = _mm256_srai_epi32(x, 31);
        __m256i tiny = _mm256_and_si256(_mm256_and_si256(exp0, nz), mode == MXP_ROUND_UP ? _mm256_xor_si256(neg, _mm256_set1_epi32(-1)) : neg);
        if (_mm256_movemask_ps(_mm256_castsi256_ps(tiny))) {
            __m128i mask = _mm_packs_epi32(_mm256_castsi256_si128(tiny), _mm256_extracti128_si256(tiny, 1));
            r = _mm_blendv_epi8(r, _mm_set1_epi16(mode == MXP_ROUND_UP ? 0x0001 : (short)0x8001), mask);
        }
    }
    if (saturate) { /* +-inf - 1 ulp = +-max */
        __m128i inf = _mm_cmpeq_epi16(_mm_and_si128(r, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x7c00));
        r = _mm_add_epi16(r, inf);
    }
    return r;
}

MXP_INLINE void f16_loop(uint16_t *d, const float *s, size_t n, int saturate, mxp_rounding mode)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(d + i), f16x8(_mm256_loadu_si256((const __m256i *)(s + i)), mode, saturate));
    if (i < n) {
        float in[8] = { 0 };
        uint16_t out[8];
        memcpy(in, s + i, (n - i) * 4);
        _mm_storeu_si128((__m128i *)out, f16x8(_mm256_loadu_si256((const __m256i *)in), mode, saturate));
        memcpy(d + i, out, (n - i) * 2);
    }
}

void mxp_f32_f16_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int sat = p->overflow == MXP_OVERFLOW_SATURATE;
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: f16_loop(dst, src, n, sat, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_TOWARD_ZERO: f16_loop(dst, src, n, sat, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: f16_loop(dst, src, n, sat, MXP_ROUND_UP); break;
    default: f16_loop(dst, src, n, sat, MXP_ROUND_DOWN); break;
    }
}

/* bfloat16, nearest even: (x + 0x7fff + lsb) >> 16 on the raw bits rounds
 * the magnitude correctly for every finite x, subnormals and overflow to
 * infinity included; NaN keeps its top payload bits and becomes quiet. */
MXP_INLINE __m128i bf16x8(__m256i x, int saturate)
{
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb), 16);
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
    __m256i qnan = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
    r = _mm256_blendv_epi8(r, qnan, nan);
    __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0xd8);
    __m128i h = _mm256_castsi256_si128(packed);
    if (saturate) {
        __m128i inf = _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x7f80));
        h = _mm_add_epi16(h, inf);
    }
    return h;
}

void mxp_f32_bf16_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int sat = p->overflow == MXP_OVERFLOW_SATURATE;
    const float *s = src;
    uint16_t *d = dst;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(d + i), bf16x8(_mm256_loadu_si256((const __m256i *)(s + i)), sat));
    if (i < n) {
        float in[8] = { 0 };
        uint16_t out[8];
        memcpy(in, s + i, (n - i) * 4);
        _mm_storeu_si128((__m128i *)out, bf16x8(_mm256_loadu_si256((const __m256i *)in), sat));
        memcpy(d + i, out, (n - i) * 2);
    }
}

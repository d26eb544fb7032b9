/* float64 and float32 -> e4m3 with AVX-512F, the deterministic modes,
 * through bfloat16 rounded to odd, then the 16-bit "shift, then round" of
 * h16-vcvt/narrow-avx512.h, 32 lanes at a time.  Rounding to odd keeps the
 * sign, every bit the final rounding looks at and the sticky bit, and
 * composes (odd-of-odd is odd of the source); bfloat16 has float32's
 * exponent range and 8 significand bits, 4 more than e4m3, so the result is
 * one rounding of the source.  float64: vcvtpd2ps toward zero with the
 * inexact lanes made odd first, in the library's MXCSR (no FTZ/DAZ), set
 * here; beyond float32's range that is FLT_MAX (odd), which overflows e4m3
 * as the float64 does.  NaNs stay NaN, infinities infinite (e4m3: NaN, or
 * max for an infinity under saturation).  In L1 on Zen 4, ns per element,
 * nearest even: float64 0.35 (mxp_f64_e4m3_vcvt__avx512f_odd, float32 odd
 * then the 32-bit integer step: 0.52); float32 0.17
 * (mxp_f32_e4m3_vcvt__avx512f_f16, through float16 rounded to odd: 0.23).
 * Into e5m2 float16 stays faster from float32 (0.155 against 0.176: e5m2
 * is float16's top byte, a constant shift). */
#include "core/fpenv.h"
#include "kernels/cvt-kernels.h"
#include "kernels/f32-vcvt/round-avx512.h"
#include "kernels/h16-vcvt/narrow-avx512.h"

/* 8 float64 lanes to float32 bits rounded to odd. */
MXP_INLINE __m256i f64_to_f32_odd8(__m512i x)
{
    const __m256 r = _mm512_cvt_roundpd_ps(_mm512_castsi512_pd(x), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask8 inexact = _mm512_cmpneq_epi64_mask(_mm512_castpd_si512(_mm512_cvtps_pd(r)), x);
    return _mm256_mask_or_epi32(_mm256_castps_si256(r), inexact, _mm256_castps_si256(r), _mm256_set1_epi32(1));
}

/* 32 float32 lanes (x0: low 16) to bfloat16 bits rounded to odd: the high
 * halves, the last bit set where the low half was nonzero (a NaN whose
 * payload is only there stays NaN).  No floating-point instruction. */
MXP_INLINE __m512i f32_to_bf16_odd32(__m512i x0, __m512i x1)
{
    const __m512i sticky = _mm512_set1_epi32(0x10000), low = _mm512_set1_epi32(0xffff);
    x0 = _mm512_mask_or_epi32(x0, _mm512_test_epi32_mask(x0, low), x0, sticky);
    x1 = _mm512_mask_or_epi32(x1, _mm512_test_epi32_mask(x1, low), x1, sticky);
    /* the high words: word 2i + 1 of x0 for lanes 0-15, of x1 for 16-31 */
    const __m512i idx = _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33,
                                         31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    return _mm512_permutex2var_epi16(x0, idx, x1);
}

/* 32 float64 lanes at p (count of them valid, the rest zero) to 32 bytes. */
MXP_INLINE __m256i convert32(const double *p, size_t count, mxp_rounding mode, int saturate)
{
    __m512i x[4];
    for (int j = 0; j < 4; j++) {
        const size_t left = count > 8u * j ? count - 8u * j : 0;
        x[j] = left >= 8 ? _mm512_loadu_si512((const void *)(p + 8 * j))
                         : _mm512_maskz_loadu_epi64((__mmask8)((1u << left) - 1), p + 8 * j);
    }
    const __m512i v0 = _mm512_inserti64x4(_mm512_castsi256_si512(f64_to_f32_odd8(x[0])), f64_to_f32_odd8(x[1]), 1);
    const __m512i v1 = _mm512_inserti64x4(_mm512_castsi256_si512(f64_to_f32_odd8(x[2])), f64_to_f32_odd8(x[3]), 1);
    const mxp_fmt16 bf16 = { 7, 127 };
    return mxp_h16_to_f8_avx512(f32_to_bf16_odd32(v0, v1), bf16, (mxp_narrow_fmt){ 8, 3, 7, 0 }, mode, saturate);
}

MXP_INLINE void loop(uint8_t *d, const double *s, size_t n, mxp_rounding mode, int saturate)
{
    size_t i = 0;
    /* Large outputs bypass the cache (as memcpy does); the head is
     * converted until dst is aligned. */
    const int stream = n * 9 >= MXP_STREAM_BYTES;
    if (stream) {
        size_t head = (32 - (uintptr_t)d % 32) % 32;
        head = head < n ? head : n;
        if (head) {
            _mm256_mask_storeu_epi8(d, (__mmask32)((1ull << head) - 1), convert32(s, head, mode, saturate));
            i = head;
        }
    }
    for (; i + 32 <= n; i += 32) {
        const __m256i r = convert32(s + i, 32, mode, saturate);
        if (stream)
            _mm256_stream_si256((__m256i *)(d + i), r);
        else
            _mm256_storeu_si256((__m256i *)(d + i), r);
    }
    if (i < n)
        _mm256_mask_storeu_epi8(d + i, (__mmask32)((1ull << (n - i)) - 1), convert32(s + i, n - i, mode, saturate));
    if (stream)
        _mm_sfence();
}

void mxp_f64_e4m3_vcvt__avx512f_bf16(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_fpenv env = mxp_fpenv_enter();
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: loop(dst, src, n, MXP_ROUND_NEAREST_EVEN, saturate); break;
    case MXP_ROUND_NEAREST_AWAY: loop(dst, src, n, MXP_ROUND_NEAREST_AWAY, saturate); break;
    case MXP_ROUND_TOWARD_ZERO: loop(dst, src, n, MXP_ROUND_TOWARD_ZERO, saturate); break;
    case MXP_ROUND_UP: loop(dst, src, n, MXP_ROUND_UP, saturate); break;
    default: loop(dst, src, n, MXP_ROUND_DOWN, saturate); break;
    }
    mxp_fpenv_leave(env);
}

MXP_INLINE __m256i f32_step(const float *s, size_t count, mxp_narrow_fmt t, mxp_rounding mode, int saturate)
{
    __m512i x0, x1;
    if (count >= 32) {
        x0 = _mm512_loadu_si512((const void *)s);
        x1 = _mm512_loadu_si512((const void *)(s + 16));
    } else {
        const __mmask32 mask = (__mmask32)((1u << count) - 1);
        x0 = _mm512_maskz_loadu_epi32((__mmask16)mask, s);
        x1 = _mm512_maskz_loadu_epi32((__mmask16)(mask >> 16), s + 16);
    }
    const mxp_fmt16 bf16 = { 7, 127 };
    return mxp_h16_to_f8_avx512(f32_to_bf16_odd32(x0, x1), bf16, t, mode, saturate);
}

MXP_INLINE void f32_loop(uint8_t *d, const float *s, size_t n, mxp_narrow_fmt t, mxp_rounding mode, int saturate)
{
    size_t i = 0;
    const int stream = n * 5 >= MXP_STREAM_BYTES;
    if (stream) {
        size_t head = (32 - (uintptr_t)d % 32) % 32;
        head = head < n ? head : n;
        if (head) {
            _mm256_mask_storeu_epi8(d, (__mmask32)((1ull << head) - 1), f32_step(s, head, t, mode, saturate));
            i = head;
        }
    }
    for (; i + 32 <= n; i += 32) {
        const __m256i r = f32_step(s + i, 32, t, mode, saturate);
        if (stream)
            _mm256_stream_si256((__m256i *)(d + i), r);
        else
            _mm256_storeu_si256((__m256i *)(d + i), r);
    }
    if (i < n)
        _mm256_mask_storeu_epi8(d + i, (__mmask32)((1ull << (n - i)) - 1), f32_step(s + i, n - i, t, mode, saturate));
    if (stream)
        _mm_sfence();
}

MXP_INLINE void f32_by_mode(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_narrow_fmt t)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: f32_loop(dst, src, n, t, MXP_ROUND_NEAREST_EVEN, saturate); break;
    case MXP_ROUND_NEAREST_AWAY: f32_loop(dst, src, n, t, MXP_ROUND_NEAREST_AWAY, saturate); break;
    case MXP_ROUND_TOWARD_ZERO: f32_loop(dst, src, n, t, MXP_ROUND_TOWARD_ZERO, saturate); break;
    case MXP_ROUND_UP: f32_loop(dst, src, n, t, MXP_ROUND_UP, saturate); break;
    default: f32_loop(dst, src, n, t, MXP_ROUND_DOWN, saturate); break;
    }
}

void mxp_f32_e4m3_vcvt__avx512f_bf16(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    f32_by_mode(dst, src, n, p, (mxp_narrow_fmt){ 8, 3, 7, 0 });
}

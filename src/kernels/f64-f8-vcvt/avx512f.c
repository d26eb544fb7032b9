/* float64 -> e4m3 with AVX-512F, the deterministic modes, through float16
 * rounded to odd: vcvtpd2ps toward zero with the inexact lanes made odd,
 * then vcvtps2ph toward zero with the inexact lanes made odd once more
 * (rounding to odd composes: odd-of-odd is odd of the float64), then the
 * 16-bit "shift, then round" of h16-vcvt/narrow-avx512.h, 32 lanes at a
 * time.  float16 keeps 7 more bits than e4m3 everywhere e4m3 has values
 * (down to 2^-9; float16 reaches 2^-24) and the sticky bit, so this is one
 * rounding of the float64.  Beyond float16's range the float16 is max
 * (odd), which overflows e4m3 as the float64 does; NaNs and infinities stay
 * NaN and infinity (e4m3: NaN, or max for an infinity under saturation).
 * It replaces mxp_f64_e4m3_vcvt__avx512f_odd (float32 odd, then the 32-bit
 * integer step) for these modes: 0.43-0.45 against 0.52 ns per element in
 * L1 on Zen 4.  Runs in the library's MXCSR (no FTZ/DAZ), set here. */
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
    const mxp_fmt16 f16 = { 10, 15 };
    return mxp_h16_to_f8_avx512(mxp_f32_to_f16_odd_avx512(v0, v1), f16, (mxp_narrow_fmt){ 8, 3, 7, 0 }, mode,
                                saturate);
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

void mxp_f64_e4m3_vcvt__avx512f_f16(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
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

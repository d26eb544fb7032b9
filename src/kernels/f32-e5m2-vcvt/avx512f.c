/* float32 -> e5m2 with AVX-512F: every mode by the integer method
 * (cvt-f32-avx512.h); stochastic rounding by add-and-shift (_sr,
 * cvt-sr-avx512.h); the deterministic modes faster through float16
 * rounded to odd (_f16).  Forward, reading a vector before writing it:
 * safe in place. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx512.h"
#include "kernels/cvt-sr-avx512.h"

void mxp_f32_e5m2_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_by_mode_avx512(dst, src, n, p, (mxp_f32_target){ { 8, 2, 15, 1 }, 0, 0 });
}

void mxp_f32_e5m2_vcvt__avx512f_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f32_avx512(dst, src, n, p, SR_E5M2, SRC_F32);
}

/* ---- float32 -> e5m2 through float16 rounded to odd ------------------------
 * float8_e5m2 is the top byte of a float16 (same exponent field and bias,
 * subnormals included).  vcvtps2ph toward zero, with the last bit set where
 * that was inexact ("round to odd"), keeps 8 more bits than e5m2 and the
 * sticky bit, so rounding that float16 by "add, then shift by 8" in any
 * deterministic mode gives the rounding of the float32.  Beyond float16's
 * range the float16 is max (odd), which overflows e5m2 as the float32 does.
 * NaNs: the float16 NaN's top byte (quiet bit and top payload bit).
 * Runs in the library's MXCSR (no DAZ), set here. */
MXP_INLINE void e5m2_f16_loop(uint8_t *d, const float *s, size_t n, mxp_rounding mode, int saturate)
{
    size_t i = 0;
    int stream = n * 5 >= MXP_STREAM_BYTES;
    if (stream) {
        size_t head = (16 - (uintptr_t)d % 16) % 16;
        head = head < n ? head : n;
        if (head) {
            __mmask16 mask = (__mmask16)((1u << head) - 1);
            _mm_mask_storeu_epi8(d, mask, mxp_f32_to_e5m2_via_f16_avx512(_mm512_maskz_loadu_epi32(mask, s), mode, saturate));
            i = head;
        }
    }
    for (; i + 16 <= n; i += 16) {
        __m128i r = mxp_f32_to_e5m2_via_f16_avx512(_mm512_loadu_si512((const void *)(s + i)), mode, saturate);
        if (stream)
            _mm_stream_si128((__m128i *)(d + i), r);
        else
            _mm_storeu_si128((__m128i *)(d + i), r);
    }
    if (i < n) {
        __mmask16 mask = (__mmask16)((1u << (n - i)) - 1);
        _mm_mask_storeu_epi8(d + i, mask, mxp_f32_to_e5m2_via_f16_avx512(_mm512_maskz_loadu_epi32(mask, s + i), mode, saturate));
    }
    if (stream)
        _mm_sfence();
}

void mxp_f32_e5m2_vcvt__avx512f_f16(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_fpenv env = mxp_fpenv_enter();
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: e5m2_f16_loop(dst, src, n, MXP_ROUND_NEAREST_EVEN, saturate); break;
    case MXP_ROUND_NEAREST_AWAY: e5m2_f16_loop(dst, src, n, MXP_ROUND_NEAREST_AWAY, saturate); break;
    case MXP_ROUND_TOWARD_ZERO: e5m2_f16_loop(dst, src, n, MXP_ROUND_TOWARD_ZERO, saturate); break;
    case MXP_ROUND_UP: e5m2_f16_loop(dst, src, n, MXP_ROUND_UP, saturate); break;
    default: e5m2_f16_loop(dst, src, n, MXP_ROUND_DOWN, saturate); break;
    }
    mxp_fpenv_leave(env);
}

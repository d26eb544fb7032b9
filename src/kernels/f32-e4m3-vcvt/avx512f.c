/* float32 -> e4m3 with AVX-512F: every mode by the integer method
 * (cvt-f32-avx512.h); stochastic rounding by add-and-shift (_sr,
 * cvt-sr-avx512.h); the deterministic modes faster through float16 (_f16)
 * or bfloat16 (_bf16) rounded to odd.  In L1 on Zen 4, ns per element,
 * nearest even: 0.17 through bfloat16, 0.23 through float16.  Forward,
 * reading a vector before writing it: safe in place. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx512.h"
#include "kernels/cvt-h16-f8-avx512.h"
#include "kernels/cvt-sr-avx512.h"

void mxp_f32_e4m3_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_by_mode_avx512(dst, src, n, p, (mxp_f32_target){ { 8, 3, 7, 0, 0 }, 0, 0 });
}

void mxp_f32_e4m3_vcvt__avx512f_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f32_avx512(dst, src, n, p, SR_E4M3, SRC_F32);
}

/* ---- float32 -> e4m3 through float16 rounded to odd ------------------------
 * As for e5m2 (f32-e5m2-vcvt): vcvtps2ph toward zero with the inexact lanes made odd keeps
 * 7 more bits than e4m3 and the sticky bit, and float16's exponent range
 * holds e4m3's, so the integer "add, then shift" of cvt-round-avx512.h on the
 * float16 bits, 32 lanes of 16 bits at a time, rounds once.  The shift is
 * 7 in e4m3's normal range and up to 15 below it (subnormals).  Overflow is
 * a clamp to max or to the NaN pattern after it; inf and NaN give NaN, or
 * max for an infinity under saturation. */
MXP_INLINE void e4m3_f16_full(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    const mxp_mode_ctx *c = ctx;
    const float *s = (const float *)src + i;
    const __m256i r = mxp_f32_to_e4m3_via_f16_avx512(_mm512_loadu_si512((const void *)s),
                                                     _mm512_loadu_si512((const void *)(s + 16)), c->mode, c->saturate);
    mxp_store_bytes_avx512((uint8_t *)dst + i, r, 32, stream);
}

/* count < 32 elements */
MXP_INLINE void e4m3_f16_part(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    const mxp_mode_ctx *c = ctx;
    const float *s = (const float *)src + i;
    const __mmask32 mask = (__mmask32)((1ull << count) - 1);
    __m256i r = mxp_f32_to_e4m3_via_f16_avx512(_mm512_maskz_loadu_epi32((__mmask16)mask, s),
                                               _mm512_maskz_loadu_epi32((__mmask16)(mask >> 16), s + 16), c->mode,
                                               c->saturate);
    _mm256_mask_storeu_epi8((uint8_t *)dst + i, mask, r);
}

MXP_INLINE void e4m3_f16_loop(void *d, const void *s, size_t n, mxp_rounding mode, int saturate)
{
    mxp_stream_loop(d, s, n, (mxp_stream_shape){ 4, 1, 32, 32 }, e4m3_f16_full, e4m3_f16_part,
                    &(mxp_mode_ctx){ mode, saturate });
}

void mxp_f32_e4m3_vcvt__avx512f_f16(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_fpenv env = mxp_fpenv_enter();
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: e4m3_f16_loop(dst, src, n, MXP_ROUND_NEAREST_EVEN, saturate); break;
    case MXP_ROUND_NEAREST_AWAY: e4m3_f16_loop(dst, src, n, MXP_ROUND_NEAREST_AWAY, saturate); break;
    case MXP_ROUND_TOWARD_ZERO: e4m3_f16_loop(dst, src, n, MXP_ROUND_TOWARD_ZERO, saturate); break;
    case MXP_ROUND_UP: e4m3_f16_loop(dst, src, n, MXP_ROUND_UP, saturate); break;
    default: e4m3_f16_loop(dst, src, n, MXP_ROUND_DOWN, saturate); break;
    }
    mxp_fpenv_leave(env);
}

void mxp_f32_e4m3_vcvt__avx512f_bf16(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f32_bf16_odd_by_mode_avx512(dst, src, n, p, (mxp_narrow_fmt){ 8, 3, 7, 0, 0 });
}

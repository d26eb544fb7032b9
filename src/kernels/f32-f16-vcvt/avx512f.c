/* float32 -> float16 with AVX-512F: nearest even, toward zero, up and down
 * by vcvtps2ph, nearest away too (nearest even of x with its last bit set:
 * mxp_f32_to_f16_away_avx512);
 * stochastic rounding by add-and-shift (_sr, cvt-sr-avx512.h).  Forward,
 * reading a vector before writing it: safe in place. */
#include "core/fpenv.h"
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx512.h"
#include "kernels/cvt-sr-avx512.h"

/* float16 in the four IEEE directed/nearest modes: vcvtps2ph.  It reads
 * float32 subnormals as zero under MXCSR.DAZ (its output ignores FTZ), which
 * would matter when rounding away from zero (up, down): the kernel runs in
 * the library's MXCSR (core/fpenv.h, no DAZ), set at its entry, instead of
 * fixing those lanes up (eight operations a vector). */
MXP_INLINE __m256i cvtps_ph(__m512 x, mxp_rounding mode)
{
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    case MXP_ROUND_TOWARD_ZERO: return _mm512_cvtps_ph(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    case MXP_ROUND_UP: return _mm512_cvtps_ph(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    default: return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    }
}

MXP_INLINE __m256i f16_hw16(__m512i x, mxp_rounding mode, int saturate)
{
    if (mode == MXP_ROUND_NEAREST_AWAY)
        return mxp_f32_to_f16_away_avx512(x, saturate);
    __m256i r = cvtps_ph(_mm512_castsi512_ps(x), mode);
    return saturate ? mxp_f16_saturate_avx512(r) : r;
}

MXP_INLINE void f16_hw_loop(void *dst, const float *src, size_t n, const mxp_cvt_params *p, mxp_rounding mode)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    uint16_t *d = dst;
    size_t i = 0;
    int stream = mxp_streams(n * 6) && (uintptr_t)dst % 2 == 0;
    if (stream) {
        size_t head = ((32 - (uintptr_t)dst % 32) % 32) / 2;
        if (head) {
            __mmask16 mask = (__mmask16)((1u << head) - 1);
            __m256i r = f16_hw16(_mm512_maskz_loadu_epi32(mask, src), mode, saturate);
            _mm256_mask_storeu_epi16(d, mask, r);
            i = head;
        }
    }
    for (; i + 16 <= n; i += 16) {
        if (stream)
            mxp_stream_prefetch(src + i, 64);
        __m256i r = f16_hw16(_mm512_loadu_si512((const void *)(src + i)), mode, saturate);
        if (stream)
            _mm256_stream_si256((__m256i *)(d + i), r);
        else
            _mm256_storeu_si256((__m256i *)(d + i), r);
    }
    if (i < n) {
        __mmask16 mask = (__mmask16)((1u << (n - i)) - 1);
        _mm256_mask_storeu_epi16(d + i, mask, f16_hw16(_mm512_maskz_loadu_epi32(mask, src + i), mode, saturate));
    }
    if (stream)
        _mm_sfence();
}

void mxp_f32_f16_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const float *s = src;
    const mxp_fpenv env = mxp_fpenv_enter(); /* no DAZ: vcvtps2ph sees float32 subnormals */
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: f16_hw_loop(dst, s, n, p, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_TOWARD_ZERO: f16_hw_loop(dst, s, n, p, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: f16_hw_loop(dst, s, n, p, MXP_ROUND_UP); break;
    case MXP_ROUND_DOWN: f16_hw_loop(dst, s, n, p, MXP_ROUND_DOWN); break;
    case MXP_ROUND_NEAREST_AWAY: f16_hw_loop(dst, s, n, p, MXP_ROUND_NEAREST_AWAY); break;
    default: mxp_f32_by_mode_avx512(dst, src, n, p, (mxp_f32_target){ { 16, 10, 15, 1, 0 }, 0, 0 }); break;
    }
    mxp_fpenv_leave(env);
}

void mxp_f32_f16_vcvt__avx512f_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f32_avx512(dst, src, n, p, SR_F16, SRC_F32);
}

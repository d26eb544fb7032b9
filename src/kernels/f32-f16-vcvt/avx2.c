/* float32 -> float16 with AVX2: nearest even, toward zero, up and down by
 * F16C's vcvtps2ph, 8 lanes per step, nearest away too (on x with its last
 * bit set); stochastic rounding by add-and-shift (_sr,
 * cvt-sr-avx2.h).  Tails (and the head before an aligned streaming store)
 * go through a small zero-padded buffer.  Forward, reading a step's input
 * before writing its results: in-place narrowing (dst == src) works. */
#include <immintrin.h>
#include <string.h>

#include "core/fpenv.h"
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx2.h"
#include "kernels/cvt-sr-avx2.h"

MXP_INLINE void f16_loop(uint16_t *d, const float *s, size_t n, int saturate, mxp_rounding mode)
{
    size_t i = 0;
    /* Large outputs bypass the cache (as memcpy does); the head is
     * converted until dst is aligned. */
    const int stream = mxp_streams(n * 6) && (uintptr_t)d % 2 == 0;
    if (stream) {
        size_t head = ((32 - (uintptr_t)d % 32) % 32) / 2;
        head = head < n ? head : n;
        if (head) {
            float in[16] = { 0 };
            uint16_t out[16];
            memcpy(in, s, head * 4);
            _mm_storeu_si128((__m128i *)out, mxp_f16x8_avx2(_mm256_loadu_si256((const __m256i *)in), mode, saturate));
            _mm_storeu_si128((__m128i *)(out + 8),
                             mxp_f16x8_avx2(_mm256_loadu_si256((const __m256i *)(in + 8)), mode, saturate));
            memcpy(d, out, head * 2);
            i = head;
        }
        for (; i + 16 <= n; i += 16) {
            _mm_prefetch((const char *)(s + i + 256), _MM_HINT_T0);
            __m128i r0 = mxp_f16x8_avx2(_mm256_loadu_si256((const __m256i *)(s + i)), mode, saturate);
            __m128i r1 = mxp_f16x8_avx2(_mm256_loadu_si256((const __m256i *)(s + i + 8)), mode, saturate);
            _mm256_stream_si256((__m256i *)(d + i), _mm256_set_m128i(r1, r0));
        }
    }
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(d + i),
                         mxp_f16x8_avx2(_mm256_loadu_si256((const __m256i *)(s + i)), mode, saturate));
    if (i < n) {
        float in[8] = { 0 };
        uint16_t out[8];
        memcpy(in, s + i, (n - i) * 4);
        _mm_storeu_si128((__m128i *)out, mxp_f16x8_avx2(_mm256_loadu_si256((const __m256i *)in), mode, saturate));
        memcpy(d + i, out, (n - i) * 2);
    }
    if (stream)
        _mm_sfence();
}

/* float16: the four IEEE modes by vcvtps2ph (above), nearest away by its
 * nearest even on x with the last bit set (cvt-round-avx512.h's
 * mxp_f32_to_f16_away_avx512 says why); stochastic rounding by the
 * variable-shift method (the _sr kernel below is the faster
 * add-and-shift). */
void mxp_f32_f16_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int sat = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_fpenv env = mxp_fpenv_enter(); /* no DAZ: vcvtps2ph sees float32 subnormals */
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: f16_loop(dst, src, n, sat, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_TOWARD_ZERO: f16_loop(dst, src, n, sat, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: f16_loop(dst, src, n, sat, MXP_ROUND_UP); break;
    case MXP_ROUND_DOWN: f16_loop(dst, src, n, sat, MXP_ROUND_DOWN); break;
    case MXP_ROUND_NEAREST_AWAY: f16_loop(dst, src, n, sat, MXP_ROUND_NEAREST_AWAY); break;
    default: mxp_f32_by_mode_avx2(dst, src, n, p, (mxp_f32_target2){ { 16, 10, 15, 1, 0 }, 0, 0, 1 }); break;
    }
    mxp_fpenv_leave(env);
}

void mxp_f32_f16_vcvt__avx2_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_f32_avx2(dst, src, n, p, SR_F16);
}

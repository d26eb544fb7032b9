/* bfloat16 -> float16 with AVX2.  The deterministic modes in one pass:
 * sixteen elements a step widened to float32 in registers (a bfloat16 is
 * the top half of a float32: exact, one unpack with zeros for eight), then
 * F16C's vcvtps2ph in the mode (mxp_f16x8_avx2: nearest away by its nearest
 * even on the value with its last bit set, saturation by a compare), in the
 * library's MXCSR (no DAZ: bfloat16's subnormals, float32 subnormals, reach
 * vcvtps2ph as they are).  Stochastic rounding: the float32 add-and-shift
 * core on the same widened lanes (_sr, cvt-sr-avx2.h).  Forward, each
 * step's input read before its result is written: safe in place.  Twin:
 * the reference converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-sr-avx2.h"
#include "kernels/stream-loop.h"

typedef struct bf16_f16_ctx {
    mxp_rounding mode;
    int saturate;
} bf16_f16_ctx;

/* 16 elements from s: the unpacks widen elements 0-3, 8-11 and 4-7,
 * 12-15; the 64-bit unpacks put the float16 results back in order. */
MXP_INLINE __m256i bf16_f16_x16(const uint16_t *s, mxp_rounding mode, int saturate)
{
    const __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)s), z = _mm256_setzero_si256();
    const __m128i lo = mxp_f16x8_avx2(_mm256_unpacklo_epi16(z, h), mode, saturate);
    const __m128i hi = mxp_f16x8_avx2(_mm256_unpackhi_epi16(z, h), mode, saturate);
    return _mm256_set_m128i(_mm_unpackhi_epi64(lo, hi), _mm_unpacklo_epi64(lo, hi));
}

MXP_INLINE void bf16_f16_full(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    const bf16_f16_ctx *c = ctx;
    const uint16_t *s = (const uint16_t *)src + i;
    uint16_t *d = (uint16_t *)dst + i;
    mxp_store256_avx2(d, bf16_f16_x16(s, c->mode, c->saturate), stream);
    mxp_store256_avx2(d + 16, bf16_f16_x16(s + 16, c->mode, c->saturate), stream);
}

/* count < 32 elements through a zero-padded buffer */
MXP_INLINE void bf16_f16_part(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    uint16_t in[32] = { 0 }, out[32];
    memcpy(in, (const uint16_t *)src + i, count * sizeof in[0]);
    bf16_f16_full(out, in, 0, 0, ctx);
    memcpy((uint16_t *)dst + i, out, count * sizeof out[0]);
}

MXP_INLINE void bf16_f16_loop(void *dst, const void *src, size_t n, mxp_rounding mode, int saturate)
{
    const bf16_f16_ctx c = { mode, saturate };
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ 2, 2, 32, 32 }, bf16_f16_full, bf16_f16_part, &c);
}

void mxp_bf16_f16_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int sat = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_fpenv env = mxp_fpenv_enter(); /* no DAZ: vcvtps2ph sees float32 subnormals */
    switch (p->rounding) {
    case MXP_ROUND_TOWARD_ZERO: bf16_f16_loop(dst, src, n, MXP_ROUND_TOWARD_ZERO, sat); break;
    case MXP_ROUND_UP: bf16_f16_loop(dst, src, n, MXP_ROUND_UP, sat); break;
    case MXP_ROUND_DOWN: bf16_f16_loop(dst, src, n, MXP_ROUND_DOWN, sat); break;
    case MXP_ROUND_NEAREST_AWAY: bf16_f16_loop(dst, src, n, MXP_ROUND_NEAREST_AWAY, sat); break;
    default: bf16_f16_loop(dst, src, n, MXP_ROUND_NEAREST_EVEN, sat); break;
    }
    mxp_fpenv_leave(env);
}

void mxp_bf16_f16_vcvt__avx2_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_sr_src_avx2(dst, src, n, p, SR_F16, SRC32_BF16);
}

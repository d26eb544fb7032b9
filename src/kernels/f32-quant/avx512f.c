/* float32 -> int8/uint8 codes, 32 values per iteration: y = x * (1/scale),
 * q = round_even(y), lanes near a rounding boundary (or not finite) sent to
 * the reference (see quant-kernels.h for why the others are exact); the
 * zero point is added and the clamp done in float32 (exact: small integers).
 * Per column (one scale and zero point per element), 16 lanes a step. */
#include <immintrin.h>

#include "kernels/quant-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))
#define RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* Codes of 16 values as int32 lanes (x masked by m); *bad gathers the lanes
 * that need the reference. */
MXP_INLINE __m512i quant16(const float *x, __mmask16 m, __m512 r, __m512 zp, __m512 lo, __m512 hi, __m512 edge,
                           __mmask16 *bad)
{
    const __m512 v = m == 0xffff ? _mm512_loadu_ps(x) : _mm512_maskz_loadu_ps(m, x);
    const __m512 y = _mm512_mul_round_ps(v, r, RNE);
    __m512 q = _mm512_roundscale_ps(y, RNE);
    const __m512 d = _mm512_abs_ps(_mm512_sub_ps(y, q));
    *bad |= _mm512_cmp_ps_mask(d, edge, _CMP_NLE_UQ); /* near x.5, NaN, inf */
    q = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(q, zp), lo), hi);
    return _mm512_cvtps_epi32(q);
}

void mxp_f32_quant__avx512f(uint8_t *dst, const float *x, size_t n, float scale, int32_t zp, int32_t qmin,
                            int32_t qmax)
{
    if (!(scale >= MXP_QUANT_SCALE_MIN && scale <= MXP_QUANT_SCALE_MAX)) {
        mxp_f32_quant__scalar(dst, x, n, scale, zp, qmin, qmax);
        return;
    }
    const __m512 r = _mm512_set1_ps(1.0f / scale), z = _mm512_set1_ps((float)zp);
    const __m512 lo = _mm512_set1_ps((float)qmin), hi = _mm512_set1_ps((float)qmax);
    const __m512 edge = _mm512_set1_ps(0.5f - MXP_QUANT_TIE_MARGIN);
    size_t i = 0;
    /* two vectors per iteration and 16-byte stores: measured faster out of
     * cache on Zen 4 than four vectors with packs and one 64-byte store */
    for (; i + 32 <= n; i += 32) {
        __mmask16 bad0 = 0, bad1 = 0;
        const __m512i q0 = quant16(x + i, 0xffff, r, z, lo, hi, edge, &bad0);
        const __m512i q1 = quant16(x + i + 16, 0xffff, r, z, lo, hi, edge, &bad1);
        _mm_storeu_si128((__m128i *)(dst + i), _mm512_cvtepi32_epi8(q0));
        _mm_storeu_si128((__m128i *)(dst + i + 16), _mm512_cvtepi32_epi8(q1));
        for (uint32_t bad = (uint32_t)bad0 | (uint32_t)bad1 << 16; bad; bad &= bad - 1) { /* lane by lane */
            const size_t j = i + (size_t)__builtin_ctz(bad);
            mxp_f32_quant__scalar(dst + j, x + j, 1, scale, zp, qmin, qmax);
        }
    }
    for (; i < n; i += 16) {
        const size_t len = n - i < 16 ? n - i : 16;
        const __mmask16 m = (__mmask16)((1u << len) - 1);
        __mmask16 bad = 0;
        const __m512i q = quant16(x + i, m, r, z, lo, hi, edge, &bad);
        _mm_mask_storeu_epi8(dst + i, m, _mm512_cvtepi32_epi8(q));
        if (bad & m)
            mxp_f32_quant__scalar(dst + i, x + i, len, scale, zp, qmin, qmax);
    }
}

/* ---- one (scale, zero point) per element: per channel on the last axis --- */

void mxp_f32_quant_cols__avx512f(uint8_t *dst, const float *x, size_t n, const float *rinv, const float *scale,
                                 const int32_t *zp, int32_t qmin, int32_t qmax)
{
    const __m512 lo = _mm512_set1_ps((float)qmin), hi = _mm512_set1_ps((float)qmax);
    const __m512 edge = _mm512_set1_ps(0.5f - MXP_QUANT_TIE_MARGIN);
    for (size_t i = 0; i < n; i += 16) {
        const size_t len = n - i < 16 ? n - i : 16;
        const __mmask16 m = (__mmask16)((1u << len) - 1);
        const __m512 r = _mm512_maskz_loadu_ps(m, rinv + i);
        const __m512 z = _mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(m, zp + i));
        __mmask16 bad = 0;
        const __m512i q = quant16(x + i, m, r, z, lo, hi, edge, &bad);
        _mm_mask_storeu_epi8(dst + i, m, _mm512_cvtepi32_epi8(q));
        for (uint32_t b = bad & m; b; b &= b - 1) { /* lane by lane */
            const size_t j = i + (size_t)__builtin_ctz(b);
            mxp_f32_quant__scalar(dst + j, x + j, 1, scale[j], zp[j], qmin, qmax);
        }
    }
}

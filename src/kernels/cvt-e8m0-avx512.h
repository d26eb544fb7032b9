/* float32, bfloat16 and float16 -> float8_e8m0fnu with AVX-512, every
 * rounding mode, 32 elements a step (masked parts): the loop shared by
 * src/kernels/<src>-e8m0-vcvt/avx512f.c.  The method is cvt-e8m0.h's, on
 * 16 lanes with mask registers.  Twin: the
 * reference converter. */
#ifndef MXP_KERNELS_CVT_E8M0_AVX512_H
#define MXP_KERNELS_CVT_E8M0_AVX512_H

#include <immintrin.h>

#include "kernels/cvt-e8m0.h"
#include "kernels/cvt-round-avx512.h"

MXP_INLINE __m128i mxp_f32_to_e8m0_avx512(__m512i b, mxp_rounding mode, int saturate, __m512i r)
{
    const __mmask16 valid = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(b, _mm512_set1_epi32(1)),
                                                    _mm512_set1_epi32(0x7f800000));
    const __mmask16 sub = _mm512_cmplt_epu32_mask(b, _mm512_set1_epi32(0x800000));
    __m512i e;
    if (mode == MXP_ROUND_STOCHASTIC) {
        const __m512i frac = _mm512_mask_slli_epi32(_mm512_slli_epi32(b, 9), sub, b, 10);
        const __mmask16 tiny = _mm512_cmplt_epu32_mask(b, _mm512_set1_epi32(0x400000));
        const __mmask16 up = _mm512_mask_cmplt_epu32_mask((__mmask16)~tiny, r, frac);
        e = _mm512_srli_epi32(b, 23);
        e = _mm512_mask_add_epi32(e, up, e, _mm512_set1_epi32(1));
    } else {
        const int c = mxp_e8m0_add(mode);
        const __m512i add = _mm512_mask_mov_epi32(_mm512_set1_epi32(c), sub, _mm512_set1_epi32(c >> 1));
        e = _mm512_srli_epi32(_mm512_add_epi32(b, add), 23);
    }
    if (saturate)
        e = _mm512_min_epu32(e, _mm512_set1_epi32(254));
    return _mm512_cvtepi32_epi8(_mm512_mask_mov_epi32(_mm512_set1_epi32(255), valid, e));
}

/* 16 source elements (fewer under mask) from element i, as float32 bits */
MXP_INLINE __m512i mxp_e8m0_load16_avx512(const void *src, size_t i, mxp_e8m0_src sk, __mmask16 m)
{
    if (sk == E8M0_FROM_F32)
        return _mm512_maskz_loadu_epi32(m, (const float *)src + i);
    const __m256i h = _mm256_maskz_loadu_epi16(m, (const uint16_t *)src + i);
    return sk == E8M0_FROM_BF16 ? _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)
                                : _mm512_castps_si512(_mm512_cvtph_ps(h));
}

MXP_INLINE __m128i mxp_e8m0_step16_avx512(const void *src, size_t i, const mxp_e8m0_ctx *c, __mmask16 m)
{
    __m512i rnd = _mm512_setzero_si512();
    if (c->mode == MXP_ROUND_STOCHASTIC)
        rnd = mxp_sr_mix_avx512(mxp_sr_index_avx512(c->index0 + i), c->key);
    return mxp_f32_to_e8m0_avx512(mxp_e8m0_load16_avx512(src, i, c->src, m), c->mode, c->saturate, rnd);
}

/* 32 bfloat16 or float16 patterns to e8m0 codes, each in its 16-bit lane, the
 * deterministic modes: bfloat16 as float32 above (shift 7, not 23);
 * float16 from its normal range, E + 112 (no overflow: its largest value
 * rounds to 2^16 at most), infinity apart -- not for float16 subnormals. */
MXP_INLINE __m512i mxp_h16_to_e8m0_avx512(__m512i h, const mxp_e8m0_ctx *c)
{
    const int near = c->mode == MXP_ROUND_NEAREST_EVEN || c->mode == MXP_ROUND_NEAREST_AWAY, up = c->mode == MXP_ROUND_UP;
    __m512i e;
    __mmask32 valid;
    if (c->src == E8M0_FROM_BF16) {
        const int a = near ? 0x40 : up ? 0x7f : 0;
        valid = _mm512_cmplt_epu16_mask(_mm512_sub_epi16(h, _mm512_set1_epi16(1)), _mm512_set1_epi16(0x7f80));
        const __mmask32 sub = _mm512_cmplt_epu16_mask(h, _mm512_set1_epi16(0x80));
        const __m512i add = _mm512_mask_mov_epi16(_mm512_set1_epi16((short)a), sub, _mm512_set1_epi16((short)(a >> 1)));
        e = _mm512_srli_epi16(_mm512_add_epi16(h, add), 7);
        if (c->saturate)
            e = _mm512_min_epu16(e, _mm512_set1_epi16(254));
    } else {
        const int a = near ? 0x200 : up ? 0x3ff : 0;
        valid = _mm512_cmplt_epu16_mask(_mm512_sub_epi16(h, _mm512_set1_epi16(0x400)), _mm512_set1_epi16(0x7800));
        e = _mm512_add_epi16(_mm512_srli_epi16(_mm512_add_epi16(h, _mm512_set1_epi16((short)a)), 10),
                             _mm512_set1_epi16(112));
        if (c->saturate) { /* infinity: max, not NaN */
            const __mmask32 inf = _mm512_cmpeq_epi16_mask(h, _mm512_set1_epi16(0x7c00));
            e = _mm512_mask_mov_epi16(e, inf, _mm512_set1_epi16(254));
            valid |= inf;
        }
    }
    return _mm512_mask_mov_epi16(_mm512_set1_epi16(255), valid, e);
}

/* Elements per full step: 64 for float16's 16-bit lanes, else 32. */
MXP_INLINE size_t mxp_e8m0_step_avx512(const mxp_e8m0_ctx *c)
{
    return c->src == E8M0_FROM_F16 && c->mode != MXP_ROUND_STOCHASTIC ? 64 : 32;
}

MXP_INLINE void mxp_e8m0_f32_lanes32_avx512(void *dst, const void *src, size_t i, int stream, const mxp_e8m0_ctx *c)
{
    const __m128i lo = mxp_e8m0_step16_avx512(src, i, c, 0xffff);
    const __m128i hi = mxp_e8m0_step16_avx512(src, i + 16, c, 0xffff);
    mxp_store_bytes_avx512((uint8_t *)dst + i, _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1), 32, stream);
}

/* A step: bfloat16's 32 elements in 16-bit lanes (narrowed by vpmovwb);
 * float16's 64, the two vectors of codes narrowed by vpackuswb and vpermq
 * (two vpmovwb were slower on a Zen 4), the 64 through float32 lanes where
 * one is subnormal (h - 1 below 0x3ff: the 16-bit lanes do not take them;
 * a first pass over 512 elements looking for one had cost 2.20 ns per 32
 * against 1.81 in L2). */
MXP_INLINE void mxp_e8m0_full_avx512(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    const mxp_e8m0_ctx *c = ctx;
    const uint16_t *h = (const uint16_t *)src + i;
    if (c->src == E8M0_FROM_F32 || c->mode == MXP_ROUND_STOCHASTIC) {
        mxp_e8m0_f32_lanes32_avx512(dst, src, i, stream, c);
        return;
    }
    const __m512i h0 = _mm512_loadu_si512((const void *)h);
    if (c->src == E8M0_FROM_BF16) {
        mxp_store_bytes_avx512((uint8_t *)dst + i, _mm512_cvtepi16_epi8(mxp_h16_to_e8m0_avx512(h0, c)), 32, stream);
        return;
    }
    const __m512i h1 = _mm512_loadu_si512((const void *)(h + 32)), one = _mm512_set1_epi16(1);
    const __m512i least = _mm512_min_epu16(_mm512_sub_epi16(h0, one), _mm512_sub_epi16(h1, one));
    if (_mm512_cmplt_epu16_mask(least, _mm512_set1_epi16(0x3ff))) {
        mxp_e8m0_f32_lanes32_avx512(dst, src, i, stream, c);
        mxp_e8m0_f32_lanes32_avx512(dst, src, i + 32, stream, c);
        return;
    }
    const __m512i e = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7),
                                               _mm512_packus_epi16(mxp_h16_to_e8m0_avx512(h0, c),
                                                                   mxp_h16_to_e8m0_avx512(h1, c)));
    if (stream)
        _mm512_stream_si512((__m512i *)((uint8_t *)dst + i), e);
    else
        _mm512_storeu_si512((void *)((uint8_t *)dst + i), e);
}

MXP_INLINE void mxp_e8m0_part_avx512(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    for (size_t j = 0; j < count; j += 16) {
        const size_t k = count - j < 16 ? count - j : 16;
        const __mmask16 m = (__mmask16)((1u << k) - 1);
        _mm_mask_storeu_epi8((uint8_t *)dst + i + j, m, mxp_e8m0_step16_avx512(src, i + j, ctx, m));
    }
}

MXP_INLINE void mxp_e8m0_loop_avx512(void *dst, const void *src, size_t n, mxp_e8m0_ctx c)
{
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ c.src == E8M0_FROM_F32 ? 4 : 2, 1, mxp_e8m0_step_avx512(&c),
                                                  mxp_e8m0_step_avx512(&c) },
                    mxp_e8m0_full_avx512, mxp_e8m0_part_avx512, &c);
}

MXP_E8M0_BY_MODE(mxp_e8m0_by_mode_avx512, mxp_e8m0_loop_avx512)

#endif

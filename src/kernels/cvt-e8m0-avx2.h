/* float32, bfloat16 and float16 -> float8_e8m0fnu with AVX2, every rounding
 * mode, 32 elements a step: the loop shared by
 * src/kernels/<src>-e8m0-vcvt/avx2.c; the method in cvt-e8m0.h.  Twin: the
 * reference converter. */
#ifndef MXP_KERNELS_CVT_E8M0_AVX2_H
#define MXP_KERNELS_CVT_E8M0_AVX2_H

#include <immintrin.h>
#include <string.h>

#include "kernels/cvt-e8m0.h"
#include "kernels/cvt-round-avx2.h"

/* 8 float32 patterns to 8 e8m0 codes in 32-bit lanes; r: random bits (stochastic) */
MXP_INLINE __m256i mxp_f32_to_e8m0_avx2(__m256i b, mxp_rounding mode, int saturate, __m256i r)
{
    const __m256i valid = _mm256_and_si256(_mm256_cmpgt_epi32(b, _mm256_setzero_si256()),
                                           _mm256_cmpgt_epi32(MXP_V8(0x7f800001), b));
    const __m256i sub = _mm256_cmpgt_epi32(MXP_V8(0x800000), b);
    __m256i e;
    if (mode == MXP_ROUND_STOCHASTIC) {
        const __m256i frac = _mm256_blendv_epi8(_mm256_slli_epi32(b, 9), _mm256_slli_epi32(b, 10), sub);
        const __m256i tiny = _mm256_cmpgt_epi32(MXP_V8(0x400000), b);
        const __m256i up = _mm256_andnot_si256(tiny, mxp_cmplt_epu32_avx2(r, frac));
        e = _mm256_sub_epi32(_mm256_srli_epi32(b, 23), up);
    } else {
        const int c = mxp_e8m0_add(mode);
        const __m256i add = _mm256_blendv_epi8(MXP_V8(c), MXP_V8(c >> 1), sub);
        e = _mm256_srli_epi32(_mm256_add_epi32(b, add), 23);
    }
    if (saturate)
        e = _mm256_min_epu32(e, MXP_V8(254));
    return _mm256_blendv_epi8(MXP_V8(255), e, valid);
}

/* 8 source elements from element i, as float32 bits */
MXP_INLINE __m256i mxp_e8m0_load8_avx2(const void *src, size_t i, mxp_e8m0_src sk)
{
    if (sk == E8M0_FROM_F32)
        return _mm256_loadu_si256((const __m256i *)(const void *)((const float *)src + i));
    const __m128i h = _mm_loadu_si128((const __m128i *)(const void *)((const uint16_t *)src + i));
    return sk == E8M0_FROM_BF16 ? _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)
                                : _mm256_castps_si256(_mm256_cvtph_ps(h));
}

MXP_INLINE __m256i mxp_e8m0_step32_avx2(const void *src, size_t i, const mxp_e8m0_ctx *c)
{
    __m256i r[4];
    for (int k = 0; k < 4; k++) {
        __m256i rnd = _mm256_setzero_si256();
        if (c->mode == MXP_ROUND_STOCHASTIC)
            rnd = mxp_sr_mix_avx2(mxp_sr_index_avx2(c->index0 + i + 8 * (size_t)k), c->key);
        r[k] = mxp_f32_to_e8m0_avx2(mxp_e8m0_load8_avx2(src, i + 8 * (size_t)k, c->src), c->mode, c->saturate, rnd);
    }
    return mxp_pack8_avx2(r[0], r[1], r[2], r[3]);
}

/* 16 bfloat16 or float16 patterns to e8m0 codes in 16-bit lanes, the
 * deterministic modes: bfloat16 as float32 (shift 7, not 23); float16
 * from its normal range, E + 112 (no overflow: its largest value rounds to
 * 2^16 at most), infinity apart -- not for float16 subnormals.  bfloat16
 * by signed compares (every valid pattern is positive as an int16), float16
 * by an unsigned one made of min and equality. */
MXP_INLINE __m256i mxp_h16_to_e8m0_avx2(__m256i h, const mxp_e8m0_ctx *c)
{
    const int near = c->mode == MXP_ROUND_NEAREST_EVEN || c->mode == MXP_ROUND_NEAREST_AWAY, up = c->mode == MXP_ROUND_UP;
    __m256i e, valid;
    if (c->src == E8M0_FROM_BF16) {
        const int a = near ? 0x40 : up ? 0x7f : 0;
        valid = _mm256_and_si256(_mm256_cmpgt_epi16(h, _mm256_setzero_si256()),
                                 _mm256_cmpgt_epi16(_mm256_set1_epi16(0x7f81), h));
        const __m256i sub = _mm256_cmpgt_epi16(_mm256_set1_epi16(0x80), h);
        const __m256i add = _mm256_blendv_epi8(_mm256_set1_epi16((short)a), _mm256_set1_epi16((short)(a >> 1)), sub);
        e = _mm256_srli_epi16(_mm256_add_epi16(h, add), 7);
        if (c->saturate)
            e = _mm256_min_epu16(e, _mm256_set1_epi16(254));
    } else {
        const int a = near ? 0x200 : up ? 0x3ff : 0;
        const __m256i t = _mm256_sub_epi16(h, _mm256_set1_epi16(0x400)); /* valid: t < 0x7800 unsigned */
        valid = _mm256_cmpeq_epi16(_mm256_min_epu16(t, _mm256_set1_epi16(0x77ff)), t);
        e = _mm256_add_epi16(_mm256_srli_epi16(_mm256_add_epi16(h, _mm256_set1_epi16((short)a)), 10),
                             _mm256_set1_epi16(112));
        if (c->saturate) { /* infinity: max, not NaN */
            const __m256i inf = _mm256_cmpeq_epi16(h, _mm256_set1_epi16(0x7c00));
            e = _mm256_blendv_epi8(e, _mm256_set1_epi16(254), inf);
            valid = _mm256_or_si256(valid, inf);
        }
    }
    return _mm256_blendv_epi8(_mm256_set1_epi16(255), e, valid);
}

/* Elements per full step: 32, and 512 for float16 in the deterministic
 * modes, whose steps look for subnormals first (one well-predicted
 * branch per 512 elements) and take the 16-bit lanes where there are none. */
MXP_INLINE size_t mxp_e8m0_step_avx2(const mxp_e8m0_ctx *c)
{
    return c->src == E8M0_FROM_F16 && c->mode != MXP_ROUND_STOCHASTIC ? 512 : 32;
}

MXP_INLINE void mxp_e8m0_full_avx2(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    const mxp_e8m0_ctx *c = ctx;
    const uint16_t *h = (const uint16_t *)src + i;
    uint8_t *d = (uint8_t *)dst + i;
    if (c->src == E8M0_FROM_F32 || c->mode == MXP_ROUND_STOCHASTIC) {
        mxp_store256_avx2(d, mxp_e8m0_step32_avx2(src, i, c), stream);
        return;
    }
    const size_t step = mxp_e8m0_step_avx2(c);
    if (c->src == E8M0_FROM_F16) {
        /* the smallest h - 1 (unsigned): below 0x3ff where some h is subnormal */
        __m256i least = _mm256_set1_epi16(-1);
        for (size_t j = 0; j < step; j += 16)
            least = _mm256_min_epu16(least, _mm256_sub_epi16(_mm256_loadu_si256((const __m256i *)(const void *)(h + j)),
                                                             _mm256_set1_epi16(1)));
        if (_mm256_movemask_epi8(_mm256_cmpeq_epi16(_mm256_min_epu16(least, _mm256_set1_epi16(0x3fe)), least))) {
            for (size_t j = 0; j < step; j += 32)
                mxp_store256_avx2(d + j, mxp_e8m0_step32_avx2(src, i + j, c), stream);
            return;
        }
    }
    for (size_t j = 0; j < step; j += 32) {
        const __m256i r0 = mxp_h16_to_e8m0_avx2(_mm256_loadu_si256((const __m256i *)(const void *)(h + j)), c);
        const __m256i r1 = mxp_h16_to_e8m0_avx2(_mm256_loadu_si256((const __m256i *)(const void *)(h + j + 16)), c);
        mxp_store256_avx2(d + j, _mm256_permute4x64_epi64(_mm256_packus_epi16(r0, r1), _MM_SHUFFLE(3, 1, 2, 0)), stream);
    }
}

/* count < 32 elements through a zero-padded buffer */
MXP_INLINE void mxp_e8m0_tail_avx2(void *dst, const void *src, size_t i, size_t count, const mxp_e8m0_ctx *c)
{
    const size_t is = c->src == E8M0_FROM_F32 ? 4 : 2;
    float in[32] = { 0 };
    uint8_t out[32];
    memcpy(in, (const unsigned char *)src + i * is, count * is);
    mxp_e8m0_ctx shifted = *c;
    shifted.index0 = c->index0 + i;
    _mm256_storeu_si256((__m256i *)(void *)out, mxp_e8m0_step32_avx2(in, 0, &shifted));
    memcpy((uint8_t *)dst + i, out, count);
}

/* count < a full step's elements: 32 at a time, the rest through the buffer */
MXP_INLINE void mxp_e8m0_part_avx2(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    const mxp_e8m0_ctx *c = ctx;
    size_t j = 0;
    for (; j + 32 <= count; j += 32)
        _mm256_storeu_si256((__m256i *)(void *)((uint8_t *)dst + i + j), mxp_e8m0_step32_avx2(src, i + j, c));
    if (j < count)
        mxp_e8m0_tail_avx2(dst, src, i + j, count - j, c);
}

MXP_INLINE void mxp_e8m0_loop_avx2(void *dst, const void *src, size_t n, mxp_e8m0_ctx c)
{
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ c.src == E8M0_FROM_F32 ? 4 : 2, 1, mxp_e8m0_step_avx2(&c), 32 }, mxp_e8m0_full_avx2,
                    mxp_e8m0_part_avx2, &c);
}

MXP_E8M0_BY_MODE(mxp_e8m0_by_mode_avx2, mxp_e8m0_loop_avx2)

#endif

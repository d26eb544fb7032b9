/* float32 -> bf16, f16, e4m3, e5m2, s8, u8 with AVX-512F in every rounding
 * mode by the integer methods of cvt-round-avx512.h, 16 lanes per step,
 * masked tails: the loop shared by the src/kernels/f32-<dst>-vcvt/avx512f.c
 * kernels; and int8/uint8 by vcvtps2dq in the deterministic modes.
 * Forward, reading a vector before writing it: safe for in-place narrowing
 * (dst == src). */
#ifndef MXP_KERNELS_CVT_F32_AVX512_H
#define MXP_KERNELS_CVT_F32_AVX512_H

#include "core/fpenv.h"
#include "kernels/cvt-round-avx512.h"

typedef enum { OUT_U16, OUT_U8 } mxp_f32_out_kind;

MXP_INLINE void mxp_f32_store_lanes_avx512(void *dst, size_t i, __m512i r, mxp_f32_out_kind out, __mmask16 mask,
                                           int stream)
{
    if (out == OUT_U16) {
        uint16_t *d = (uint16_t *)dst + i;
        if (mask != 0xffff)
            _mm512_mask_cvtepi32_storeu_epi16(d, mask, r);
        else if (stream)
            _mm256_stream_si256((__m256i *)d, _mm512_cvtepi32_epi16(r));
        else
            _mm256_storeu_si256((__m256i *)d, _mm512_cvtepi32_epi16(r));
    } else {
        uint8_t *d = (uint8_t *)dst + i;
        if (mask != 0xffff)
            _mm512_mask_cvtepi32_storeu_epi8(d, mask, r);
        else if (stream)
            _mm_stream_si128((__m128i *)d, _mm512_cvtepi32_epi8(r));
        else
            _mm_storeu_si128((__m128i *)d, _mm512_cvtepi32_epi8(r));
    }
}

/* fmt.bits == 0 selects an integer target with range [lo, hi]. */
typedef struct mxp_f32_target {
    mxp_narrow_fmt fmt;
    int lo, hi;
} mxp_f32_target;

MXP_INLINE __m512i mxp_f32_convert16_avx512(__m512i x, mxp_f32_target t, mxp_rounding mode, int saturate, __m512i rnd)
{
    if (t.fmt.bits == 16 && t.fmt.mbits == 7)
        return mxp_f32_to_bf16_avx512(x, mode, saturate, rnd);
    if (t.fmt.bits)
        return mxp_f32_to_narrow_fast_avx512(x, t.fmt, mode, saturate, rnd);
    return mxp_f32_to_small_int_avx512(x, t.lo, t.hi, mode, rnd);
}

/* Converts elements [i, i + count), count <= 16, with masked loads and stores. */
MXP_INLINE void mxp_f32_partial_avx512(void *dst, const float *src, size_t i, size_t count, mxp_f32_target t,
                                       mxp_rounding mode, int saturate, __m512i rnd)
{
    const mxp_f32_out_kind out = t.fmt.bits == 16 ? OUT_U16 : OUT_U8;
    __mmask16 mask = (__mmask16)((1u << count) - 1);
    __m512i x = _mm512_maskz_loadu_epi32(mask, src + i);
    mxp_f32_store_lanes_avx512(dst, i, mxp_f32_convert16_avx512(x, t, mode, saturate, rnd), out, mask, 0);
}

MXP_INLINE void mxp_f32_loop_avx512(void *dst, const float *src, size_t n, const mxp_cvt_params *p, mxp_f32_target t,
                                    mxp_rounding mode)
{
    const mxp_f32_out_kind out = t.fmt.bits == 16 ? OUT_U16 : OUT_U8;
    const size_t out_size = out == OUT_U16 ? 2 : 1, vec_bytes = 16 * out_size;
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_sr_key key = mxp_sr_key_for(p->seed, p->index0);
    __m512i idx = mxp_sr_index_avx512(p->index0);
    __m512i rnd = _mm512_setzero_si512();
    size_t i = 0;
    /* Large outputs bypass the cache (as memcpy does): no read-for-ownership
     * of the destination.  The head is converted until dst is aligned. */
    int stream = n * (4 + out_size) >= MXP_STREAM_BYTES && (uintptr_t)dst % out_size == 0;
    if (stream) {
        size_t head = ((vec_bytes - (uintptr_t)dst % vec_bytes) % vec_bytes) / out_size;
        if (head) {
            if (mode == MXP_ROUND_STOCHASTIC)
                rnd = mxp_sr_mix_avx512(idx, key);
            mxp_f32_partial_avx512(dst, src, 0, head, t, mode, saturate, rnd);
            idx = _mm512_add_epi32(idx, _mm512_set1_epi32((int)head));
            i = head;
        }
    }
    /* Two vectors a step: independent work for the out-of-order core. */
    for (; i + 32 <= n; i += 32) {
        __m512i x0 = _mm512_loadu_si512((const void *)(src + i));
        __m512i x1 = _mm512_loadu_si512((const void *)(src + i + 16));
        __m512i rnd1 = rnd;
        if (mode == MXP_ROUND_STOCHASTIC) {
            rnd = mxp_sr_mix_avx512(idx, key);
            rnd1 = mxp_sr_mix_avx512(_mm512_add_epi32(idx, _mm512_set1_epi32(16)), key);
            idx = _mm512_add_epi32(idx, _mm512_set1_epi32(32));
        }
        __m512i r0 = mxp_f32_convert16_avx512(x0, t, mode, saturate, rnd);
        __m512i r1 = mxp_f32_convert16_avx512(x1, t, mode, saturate, rnd1);
        mxp_f32_store_lanes_avx512(dst, i, r0, out, 0xffff, stream);
        mxp_f32_store_lanes_avx512(dst, i + 16, r1, out, 0xffff, stream);
    }
    for (; i + 16 <= n; i += 16) {
        __m512i x = _mm512_loadu_si512((const void *)(src + i));
        if (mode == MXP_ROUND_STOCHASTIC) {
            rnd = mxp_sr_mix_avx512(idx, key);
            idx = _mm512_add_epi32(idx, _mm512_set1_epi32(16));
        }
        mxp_f32_store_lanes_avx512(dst, i, mxp_f32_convert16_avx512(x, t, mode, saturate, rnd), out, 0xffff, stream);
    }
    if (i < n) {
        if (mode == MXP_ROUND_STOCHASTIC)
            rnd = mxp_sr_mix_avx512(idx, key);
        mxp_f32_partial_avx512(dst, src, i, n - i, t, mode, saturate, rnd);
    }
    if (stream)
        _mm_sfence();
}

/* One instantiation of the loop per rounding mode, so the mode is a constant. */
MXP_INLINE void mxp_f32_by_mode_avx512(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_f32_target t)
{
    const float *s = (const float *)src;
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: mxp_f32_loop_avx512(dst, s, n, p, t, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_NEAREST_AWAY: mxp_f32_loop_avx512(dst, s, n, p, t, MXP_ROUND_NEAREST_AWAY); break;
    case MXP_ROUND_TOWARD_ZERO: mxp_f32_loop_avx512(dst, s, n, p, t, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: mxp_f32_loop_avx512(dst, s, n, p, t, MXP_ROUND_UP); break;
    case MXP_ROUND_DOWN: mxp_f32_loop_avx512(dst, s, n, p, t, MXP_ROUND_DOWN); break;
    default: mxp_f32_loop_avx512(dst, s, n, p, t, MXP_ROUND_STOCHASTIC); break;
    }
}

/* ---- float32 -> int8/uint8 by vcvtps2dq ------------------------------------
 * The deterministic modes by hardware (mxp_f32_to_small_int_hw_avx512), in the
 * library's MXCSR, set here. */
MXP_INLINE void mxp_f32_int8_hw_loop_avx512(uint8_t *d, const float *s, size_t n, mxp_rounding mode, int is_unsigned)
{
    size_t i = 0;
    int stream = n * 5 >= MXP_STREAM_BYTES;
    if (stream) {
        size_t head = (16 - (uintptr_t)d % 16) % 16;
        head = head < n ? head : n;
        if (head) {
            __mmask16 mask = (__mmask16)((1u << head) - 1);
            _mm_mask_storeu_epi8(d, mask, mxp_f32_to_small_int_hw_avx512(_mm512_maskz_loadu_epi32(mask, s), mode, is_unsigned));
            i = head;
        }
    }
    for (; i + 16 <= n; i += 16) {
        __m128i r = mxp_f32_to_small_int_hw_avx512(_mm512_loadu_si512((const void *)(s + i)), mode, is_unsigned);
        if (stream)
            _mm_stream_si128((__m128i *)(d + i), r);
        else
            _mm_storeu_si128((__m128i *)(d + i), r);
    }
    if (i < n) {
        __mmask16 mask = (__mmask16)((1u << (n - i)) - 1);
        _mm_mask_storeu_epi8(d + i, mask, mxp_f32_to_small_int_hw_avx512(_mm512_maskz_loadu_epi32(mask, s + i), mode, is_unsigned));
    }
    if (stream)
        _mm_sfence();
}

MXP_INLINE void mxp_f32_int8_hw_avx512(void *dst, const void *src, size_t n, const mxp_cvt_params *p, int is_unsigned)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: mxp_f32_int8_hw_loop_avx512(dst, src, n, MXP_ROUND_NEAREST_EVEN, is_unsigned); break;
    case MXP_ROUND_TOWARD_ZERO: mxp_f32_int8_hw_loop_avx512(dst, src, n, MXP_ROUND_TOWARD_ZERO, is_unsigned); break;
    case MXP_ROUND_UP: mxp_f32_int8_hw_loop_avx512(dst, src, n, MXP_ROUND_UP, is_unsigned); break;
    case MXP_ROUND_DOWN: mxp_f32_int8_hw_loop_avx512(dst, src, n, MXP_ROUND_DOWN, is_unsigned); break;
    default: mxp_f32_int8_hw_loop_avx512(dst, src, n, MXP_ROUND_NEAREST_AWAY, is_unsigned); break;
    }
    mxp_fpenv_leave(env);
}

#endif

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
#include "kernels/stream-loop.h"

typedef enum { OUT_U16, OUT_U8 } mxp_f32_out_kind;

MXP_INLINE void mxp_f32_store_lanes_avx512(void *dst, size_t i, __m512i r, mxp_f32_out_kind out, __mmask16 mask,
                                           int stream)
{
    void *d = (uint8_t *)dst + i * (out == OUT_U16 ? 2 : 1);
    if (mask == 0xffff)
        mxp_store_bytes_avx512(d, out == OUT_U16 ? _mm512_cvtepi32_epi16(r) : _mm256_castsi128_si256(_mm512_cvtepi32_epi8(r)),
                               out == OUT_U16 ? 32 : 16, stream);
    else if (out == OUT_U16)
        _mm512_mask_cvtepi32_storeu_epi16(d, mask, r);
    else
        _mm512_mask_cvtepi32_storeu_epi8(d, mask, r);
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
    const __m512i v = mxp_f32_to_small_int_avx512(x, t.lo, t.hi, mode, rnd);
    if (t.lo < 0 && t.hi < 127) /* int4/int2/int1: the low bits, the bits above zero */
        return _mm512_and_si512(v, _mm512_set1_epi32(2 * t.hi + 1));
    return v;
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
    int stream = mxp_streams(n * (4 + out_size)) && (uintptr_t)dst % out_size == 0;
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
        if (stream)
            mxp_stream_prefetch(src + i, 128);
        __m512i x0 = _mm512_loadu_si512((const void *)(src + i));
        __m512i x1 = _mm512_loadu_si512((const void *)(src + i + 16));
        __m512i rnd1 = rnd;
        if (mode == MXP_ROUND_STOCHASTIC) {
            rnd = mxp_sr_mix_avx512(idx, key);
            rnd1 = mxp_sr_mix_avx512(_mm512_add_epi32(idx, _mm512_set1_epi32(16)), key);
            idx = _mm512_add_epi32(idx, _mm512_set1_epi32(32));
        }
        if (t.fmt.bits == 16 && t.fmt.mbits == 7) { /* bfloat16: the two vectors packed by one permute */
            const __m512i r = mxp_bf16_pack_hi_avx512(mxp_f32_to_bf16_hi_avx512(x0, mode, saturate, rnd),
                                                      mxp_f32_to_bf16_hi_avx512(x1, mode, saturate, rnd1));
            mxp_store_bytes_avx512((uint16_t *)dst + i, _mm512_castsi512_si256(r), 32, stream);
            mxp_store_bytes_avx512((uint16_t *)dst + i + 16, _mm512_extracti64x4_epi64(r, 1), 32, stream);
            continue;
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

/* ---- 16 float32 lanes to 16 bytes by hardware --------------------------------
 * The deterministic modes of float32 -> int8/uint8 and the sub-byte
 * integers by vcvtps2dq (mxp_f32_to_small_int_hw_avx512,
 * mxp_f32_to_int_clamped_avx512) and of float32 -> e5m2 through float16
 * rounded to odd (mxp_f32_to_e5m2_via_f16_avx512, f32-e5m2-vcvt/avx512f.c),
 * one loop, in the library's MXCSR, set here. */
typedef enum { BYTES_INT8_HW, BYTES_UINT8_HW, BYTES_SMALL_INT_HW, BYTES_E5M2_VIA_F16 } mxp_f32_bytes_op;

typedef struct mxp_f32_bytes_ctx {
    mxp_f32_bytes_op op;
    mxp_rounding mode;
    int saturate;
    int lo, hi; /* BYTES_SMALL_INT_HW: the sub-byte integer's range */
} mxp_f32_bytes_ctx;

MXP_INLINE __m128i mxp_f32_bytes16_avx512(__m512i x, const mxp_f32_bytes_ctx *c)
{
    if (c->op == BYTES_E5M2_VIA_F16)
        return mxp_f32_to_e5m2_via_f16_avx512(x, c->mode, c->saturate);
    if (c->op == BYTES_SMALL_INT_HW) { /* clamped to its range, so no saturation after; signed: the low bits */
        const __m512i i = mxp_f32_to_int_clamped_avx512(x, c->mode, (float)c->lo, (float)c->hi);
        return _mm512_cvtepi32_epi8(c->lo < 0 ? _mm512_and_si512(i, _mm512_set1_epi32(2 * c->hi + 1)) : i);
    }
    return mxp_f32_to_small_int_hw_avx512(x, c->mode, c->op == BYTES_UINT8_HW);
}

MXP_INLINE void mxp_f32_bytes16_full_avx512(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    const __m128i r = mxp_f32_bytes16_avx512(_mm512_loadu_si512((const void *)((const float *)src + i)), ctx);
    mxp_store_bytes_avx512((uint8_t *)dst + i, _mm256_castsi128_si256(r), 16, stream);
}

MXP_INLINE void mxp_f32_bytes16_part_avx512(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    const __mmask16 mask = (__mmask16)((1u << count) - 1);
    _mm_mask_storeu_epi8((uint8_t *)dst + i, mask,
                         mxp_f32_bytes16_avx512(_mm512_maskz_loadu_epi32(mask, (const float *)src + i), ctx));
}

MXP_INLINE void mxp_f32_bytes16_loop_avx512(void *dst, const void *src, size_t n, mxp_f32_bytes_ctx c)
{
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ 4, 1, 16, 16 }, mxp_f32_bytes16_full_avx512,
                    mxp_f32_bytes16_part_avx512, &c);
}

/* saturate: only for e5m2; lo, hi: only for BYTES_SMALL_INT_HW */
MXP_INLINE void mxp_f32_bytes16_avx512_by_mode(void *dst, const void *src, size_t n, const mxp_cvt_params *p,
                                               mxp_f32_bytes_op op, int lo, int hi)
{
    const int sat = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_fpenv env = mxp_fpenv_enter();
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN:
        mxp_f32_bytes16_loop_avx512(dst, src, n, (mxp_f32_bytes_ctx){ op, MXP_ROUND_NEAREST_EVEN, sat, lo, hi });
        break;
    case MXP_ROUND_TOWARD_ZERO:
        mxp_f32_bytes16_loop_avx512(dst, src, n, (mxp_f32_bytes_ctx){ op, MXP_ROUND_TOWARD_ZERO, sat, lo, hi });
        break;
    case MXP_ROUND_UP:
        mxp_f32_bytes16_loop_avx512(dst, src, n, (mxp_f32_bytes_ctx){ op, MXP_ROUND_UP, sat, lo, hi });
        break;
    case MXP_ROUND_DOWN:
        mxp_f32_bytes16_loop_avx512(dst, src, n, (mxp_f32_bytes_ctx){ op, MXP_ROUND_DOWN, sat, lo, hi });
        break;
    default:
        mxp_f32_bytes16_loop_avx512(dst, src, n, (mxp_f32_bytes_ctx){ op, MXP_ROUND_NEAREST_AWAY, sat, lo, hi });
        break;
    }
    mxp_fpenv_leave(env);
}

#endif

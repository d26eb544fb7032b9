/* float16 and bfloat16 patterns to float8 in 16-bit lanes, every
 * deterministic mode (AVX-512BW).  Shared by the one-pass kernels from
 * bf16 and f16 (cvt-h16-avx512.h) and by float32 and float64 -> e4m3
 * through bfloat16 rounded to odd (src/kernels/f32-e4m3-vcvt,
 * f64-e4m3-vcvt). */
#ifndef MXP_KERNELS_CVT_H16_F8_AVX512_H
#define MXP_KERNELS_CVT_H16_F8_AVX512_H

#include "kernels/cvt-round-avx512.h"

/* A 16-bit binary format, as the "add, then shift" below sees it. */
typedef struct mxp_fmt16 {
    int mbits, bias;
} mxp_fmt16;

/* 32 float16 or bfloat16 lanes to float8 bits (low byte of each lane) by
 * "add, then shift" on the 16-bit patterns, as cvt-round-avx512.h does for
 * float32 (mxp_f32_to_narrow_fast_avx512), in 16-bit lanes: the value's
 * bits v (rebiased in the target's normal range, the significand below
 * it) plus a mode-dependent c, shifted right by d, is the target pattern;
 * carries ripple into the exponent, overflow is a clamp.
 *
 *   f16   s eeeee mmmmmmmmmm     d = 10 - M, + (emin - max(E, 1)) below
 *   bf16  s eeeeeeee mmmmmmm     d =  7 - M, + (emin - max(E, 1)) below
 *
 * emin = the source's biased exponent of the target's smallest normal,
 * at least 1 (the target's normal range within the source's) or 0:
 * float16 -> e5m2fnuz, whose smallest normal 2^-15 lies a binade below
 * float16's.  There v is the pattern of 2x (m << 1 for subnormals, the
 * exponent plus one for normals; exact, and 2x's pattern for finite x
 * below 2^15, above which it only reaches the clamp), which is x's target
 * pattern one exponent up: d = d0 throughout.
 * Where d passes 15 (bfloat16 only) the significand has at most 8 bits,
 * far below half an ulp: the nearest modes and truncation give 0 from
 * shifts of 16 or more (vpsrlvw's 0), up and down clamp d at 15 to give
 * the smallest subnormal for any nonzero v.  Infinities and NaNs by mask:
 * e4m3 has only NaN (S.1111.111), e5m2 keeps the top payload bits, quiet;
 * the fnuz styles' NaN is the sign bit alone, float6/float4 (finite) have
 * none: NaN gives the zero of the other sign.  t.bits: 8, 6 or 4. */
MXP_INLINE __m256i mxp_h16_to_f8_avx512(__m512i h, mxp_fmt16 s, mxp_narrow_fmt t, mxp_rounding mode, int saturate)
{
    const int d0 = s.mbits - t.mbits;
    const int emin = s.bias - t.bias + 1;
    const unsigned eall = (1u << (t.bits - 1 - t.mbits)) - 1, mmask = (1u << t.mbits) - 1;
    /* fnuz, finite: every exponent finite (the pattern after max is the
     * fnuz NaN, the sign bit alone); float6/float4 always saturate */
    const unsigned max_enc = t.style     ? (eall << t.mbits) | mmask
                             : t.has_inf ? ((eall - 1) << t.mbits) | mmask
                                         : (eall << t.mbits) | (mmask - 1);
    const unsigned inf_enc = eall << t.mbits, sign_bit = 1u << (t.bits - 1);
    saturate |= t.style == MXP_NARROW_FINITE_512;
    const int inf_s = (s.mbits == 10 ? 0x1f : 0xff) << s.mbits;
    const __m512i one = _mm512_set1_epi16(1);
    const __m512i m = _mm512_and_si512(h, _mm512_set1_epi16(0x7fff));
    const __m512i sign = _mm512_srai_epi16(h, 15);
    /* k = emin - max(E, 1) below the target's normal range, else 0:
     * ((emin << Ms) + 2^Ms - 1 - m) >> Ms, saturated at 0, at most emin - 1;
     * then v = m - ((emin - 1 - k) << Ms) and d = d0 + k. */
    __m512i v = m, k = _mm512_setzero_si512();
    if (emin == 0) /* the pattern of 2x */
        v = _mm512_mask_slli_epi16(_mm512_add_epi16(m, _mm512_set1_epi16((short)(1 << s.mbits))),
                                   _mm512_cmplt_epu16_mask(m, _mm512_set1_epi16((short)(1 << s.mbits))), m, 1);
    if (emin > 1) {
        const int top = (emin << s.mbits) + (1 << s.mbits) - 1;
        k = _mm512_min_epu16(_mm512_srli_epi16(_mm512_subs_epu16(_mm512_set1_epi16((short)top), m), s.mbits),
                             _mm512_set1_epi16((short)(emin - 1)));
        v = _mm512_sub_epi16(_mm512_add_epi16(m, _mm512_slli_epi16(k, s.mbits)),
                             _mm512_set1_epi16((short)((emin - 1) << s.mbits)));
        /* Shifts of 16 or more give 0, which the nearest modes and
         * truncation want there; up and down need d <= 15. */
        if (emin - 1 > 15 - d0 && (mode == MXP_ROUND_UP || mode == MXP_ROUND_DOWN))
            k = _mm512_min_epu16(k, _mm512_set1_epi16((short)(15 - d0)));
    }
    const __m512i d = _mm512_add_epi16(k, _mm512_set1_epi16((short)d0));
    __m512i c;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: { /* 2^(d-1) - 1 + the kept lsb */
        const __m512i half = _mm512_sllv_epi16(_mm512_set1_epi16((short)(1 << (d0 - 1))), k);
        c = _mm512_add_epi16(_mm512_add_epi16(half, _mm512_set1_epi16(-1)), _mm512_and_si512(_mm512_srlv_epi16(v, d), one));
        break;
    }
    case MXP_ROUND_NEAREST_AWAY: c = _mm512_sllv_epi16(_mm512_set1_epi16((short)(1 << (d0 - 1))), k); break;
    case MXP_ROUND_TOWARD_ZERO: c = _mm512_setzero_si512(); break;
    case MXP_ROUND_UP:
        c = _mm512_andnot_si512(sign, _mm512_sub_epi16(_mm512_sllv_epi16(_mm512_set1_epi16((short)(1 << d0)), k), one));
        break;
    default:
        c = _mm512_and_si512(sign, _mm512_sub_epi16(_mm512_sllv_epi16(_mm512_set1_epi16((short)(1 << d0)), k), one));
        break;
    }
    __m512i r = _mm512_srlv_epi16(_mm512_add_epi16(v, c), d);
    r = mxp_clamp_overflow_avx512(r, sign, max_enc, mode, saturate, 1);
    const __mmask32 special = _mm512_cmpge_epu16_mask(m, _mm512_set1_epi16((short)inf_s));
    __mmask32 is_nan = 0;
    if (special) {
        const __mmask32 inf = _mm512_cmpeq_epi16_mask(m, _mm512_set1_epi16((short)inf_s));
        is_nan = special & (__mmask32)~inf;
        const unsigned nan_enc = t.style == MXP_NARROW_FNUZ_512 ? sign_bit
                                 : t.style                      ? 0 /* finite: the sign flipped below */
                                                                : inf_enc | mmask; /* e4m3 */
        const unsigned inf_out = saturate ? max_enc : t.has_inf ? inf_enc : nan_enc;
        __m512i nan = _mm512_set1_epi16((short)nan_enc);
        if (t.has_inf) /* quiet, the top payload bits kept */
            nan = _mm512_ternarylogic_epi32(_mm512_srli_epi16(m, d0), _mm512_set1_epi16((short)mmask),
                                            _mm512_set1_epi16((short)(inf_enc | 1u << (t.mbits - 1))), 0xea);
        r = _mm512_mask_mov_epi16(r, special, nan);
        r = _mm512_mask_mov_epi16(r, inf, _mm512_set1_epi16((short)inf_out));
    }
    /* r | (sign & sign_bit) in one vpternlog */
    __m512i out = _mm512_ternarylogic_epi32(r, sign, _mm512_set1_epi16((short)sign_bit), 0xf8);
    if (t.style == MXP_NARROW_FNUZ_512) /* no -0: a zero result is +0 */
        out = _mm512_maskz_mov_epi16(_mm512_test_epi16_mask(r, r), out);
    else if (t.style == MXP_NARROW_FINITE_512 && is_nan) /* NaN: the zero of the other sign (ml_dtypes) */
        out = _mm512_mask_mov_epi16(out, is_nan, _mm512_andnot_si512(sign, _mm512_set1_epi16((short)sign_bit)));
    return _mm512_cvtepi16_epi8(out);
}

/* 32 float32 lanes (x0: low 16) to bfloat16 bits rounded to odd: the high
 * halves, the last bit set where the low half was nonzero (a NaN whose
 * payload is only there stays NaN).  No floating-point instruction. */
MXP_INLINE __m512i mxp_f32_to_bf16_odd32_avx512(__m512i x0, __m512i x1)
{
    const __m512i sticky = _mm512_set1_epi32(0x10000), low = _mm512_set1_epi32(0xffff);
    x0 = _mm512_mask_or_epi32(x0, _mm512_test_epi32_mask(x0, low), x0, sticky);
    x1 = _mm512_mask_or_epi32(x1, _mm512_test_epi32_mask(x1, low), x1, sticky);
    return mxp_bf16_pack_hi_avx512(x0, x1); /* the high words */
}

/* ---- float32 -> float8/float6/float4 through bfloat16 rounded to odd ------
 * mxp_f32_to_bf16_odd32_avx512, then the 16-bit "shift, then round" of
 * cvt-h16-f8-avx512.h, 32 lanes at a time.  Rounding to odd keeps the sign,
 * every bit the final rounding looks at and the sticky bit; bfloat16 has
 * float32's exponent range and 8 significand bits, at least 2 more than any
 * target's (e3m4: 5), so the result is one rounding of the source.  NaNs
 * and infinities as each style says (mxp_h16_to_f8_avx512).  Used for
 * float32 -> e4m3 (f32-e4m3-vcvt) and the 0.2 formats' _bf16 kernels. */
MXP_INLINE __m256i mxp_f32_bf16_odd_step_avx512(const float *s, size_t count, mxp_narrow_fmt t, mxp_rounding mode,
                                                int saturate)
{
    __m512i x0, x1;
    if (count >= 32) {
        x0 = _mm512_loadu_si512((const void *)s);
        x1 = _mm512_loadu_si512((const void *)(s + 16));
    } else {
        const __mmask32 mask = (__mmask32)((1u << count) - 1);
        x0 = _mm512_maskz_loadu_epi32((__mmask16)mask, s);
        x1 = _mm512_maskz_loadu_epi32((__mmask16)(mask >> 16), s + 16);
    }
    const mxp_fmt16 bf16 = { 7, 127 };
    return mxp_h16_to_f8_avx512(mxp_f32_to_bf16_odd32_avx512(x0, x1), bf16, t, mode, saturate);
}

typedef struct mxp_bf16_odd_ctx {
    mxp_narrow_fmt t;
    mxp_mode_ctx m;
} mxp_bf16_odd_ctx;

MXP_INLINE void mxp_f32_bf16_odd_full_avx512(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    const mxp_bf16_odd_ctx *c = ctx;
    mxp_store_bytes_avx512((uint8_t *)dst + i,
                           mxp_f32_bf16_odd_step_avx512((const float *)src + i, 32, c->t, c->m.mode, c->m.saturate), 32,
                           stream);
}

MXP_INLINE void mxp_f32_bf16_odd_part_avx512(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    const mxp_bf16_odd_ctx *c = ctx;
    _mm256_mask_storeu_epi8((uint8_t *)dst + i, (__mmask32)((1ull << count) - 1),
                            mxp_f32_bf16_odd_step_avx512((const float *)src + i, count, c->t, c->m.mode, c->m.saturate));
}

MXP_INLINE void mxp_f32_bf16_odd_loop_avx512(void *d, const void *s, size_t n, mxp_narrow_fmt t, mxp_rounding mode,
                                             int saturate)
{
    mxp_stream_loop(d, s, n, (mxp_stream_shape){ 4, 1, 32, 32 }, mxp_f32_bf16_odd_full_avx512,
                    mxp_f32_bf16_odd_part_avx512, &(mxp_bf16_odd_ctx){ t, { mode, saturate } });
}

MXP_INLINE void mxp_f32_bf16_odd_by_mode_avx512(void *dst, const void *src, size_t n, const mxp_cvt_params *p,
                                                mxp_narrow_fmt t)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: mxp_f32_bf16_odd_loop_avx512(dst, src, n, t, MXP_ROUND_NEAREST_EVEN, saturate); break;
    case MXP_ROUND_NEAREST_AWAY: mxp_f32_bf16_odd_loop_avx512(dst, src, n, t, MXP_ROUND_NEAREST_AWAY, saturate); break;
    case MXP_ROUND_TOWARD_ZERO: mxp_f32_bf16_odd_loop_avx512(dst, src, n, t, MXP_ROUND_TOWARD_ZERO, saturate); break;
    case MXP_ROUND_UP: mxp_f32_bf16_odd_loop_avx512(dst, src, n, t, MXP_ROUND_UP, saturate); break;
    default: mxp_f32_bf16_odd_loop_avx512(dst, src, n, t, MXP_ROUND_DOWN, saturate); break;
    }
}


#endif

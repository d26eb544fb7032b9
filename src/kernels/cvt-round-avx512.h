/* AVX-512 rounding of float32 lanes to a narrower binary format or to an
 * integer, in integer arithmetic, every rounding mode.  Shared by the
 * AVX-512 conversion kernels (cvt-f32-avx512.h and the others) and by the
 * subnormal fix-up of src/kernels/f32-bf16-vcvt/avx512bf16.c.  The result
 * equals the reference converter's bit for bit, whatever the MXCSR FTZ/DAZ
 * state (no FP ops).
 *
 *   f32:  s eeeeeeee mmmmmmmmmmmmmmmmmmmmmmm   value = sig * 2^(E' - 150),
 *         sig = 1.m (E > 0) or 0.m (E == 0), E' = max(E, 1)
 *
 * For a target with M mantissa bits and smallest normal exponent emin, the
 * d low bits of sig are dropped: d = 23 - M in the target's normal range and
 * more below it.  frac32 = the dropped bits as a 32-bit fraction of one
 * target ulp (exact for d <= 32, and < 2^-8 ulp otherwise), which decides
 * every mode:  RNE  frac32 > 1/2, or == 1/2 and the kept part is odd
 *              RNA  frac32 >= 1/2          RU/RD  anything dropped, by sign
 *              SR   random32 < frac32                                       */
#ifndef MXP_KERNELS_CVT_ROUND_AVX512_H
#define MXP_KERNELS_CVT_ROUND_AVX512_H

#include <immintrin.h>

#include "kernels/cvt-kernel.h"

#include "kernels/stream-loop.h"

typedef struct mxp_narrow_fmt {
    int bits;    /* 16, 8, or 6 and 4 (float6/float4: the low bits of a byte) */
    int mbits;   /* mantissa bits */
    int bias;
    int has_inf; /* 0: OCP E4M3 style, S.1111.111 is the only NaN */
    int style;   /* MXP_NARROW_FNUZ, MXP_NARROW_FINITE (cvt-round-avx2.h's); 0: as has_inf says */
} mxp_narrow_fmt;

#ifndef MXP_NARROW_STYLES
#define MXP_NARROW_STYLES
/* fnuz: no infinity, no -0, the -0 pattern is the one NaN; finite
 * (float6/float4): no infinity, no NaN, NaN gives the zero of the other sign. */
enum { MXP_NARROW_FNUZ_512 = 1, MXP_NARROW_FINITE_512 = 2 };
#endif

/* The stochastic-rounding stream of cvt-kernel.h, 16 lanes at a time:
 * lanes hold lo32(index) for consecutive indices. */
MXP_INLINE __m512i mxp_sr_mix_rounds_avx512(__m512i x, mxp_sr_key k)
{
    x = _mm512_add_epi32(x, _mm512_set1_epi32((int)k.k1));
    x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 16));
    x = _mm512_mullo_epi32(x, _mm512_set1_epi32(0x7feb352d));
    x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 15));
    x = _mm512_xor_si512(x, _mm512_set1_epi32((int)k.k2));
    return _mm512_mullo_epi32(x, _mm512_set1_epi32((int)0x846ca68bu));
}

MXP_INLINE __m512i mxp_sr_mix_avx512(__m512i x, mxp_sr_key k)
{
    x = mxp_sr_mix_rounds_avx512(x, k);
    return _mm512_xor_si512(x, _mm512_srli_epi32(x, 16));
}

/* ~random, with the last xor: what "add, then shift" kernels add. */
MXP_INLINE __m512i mxp_sr_mix_not_avx512(__m512i x, mxp_sr_key k)
{
    x = mxp_sr_mix_rounds_avx512(x, k);
    return _mm512_ternarylogic_epi32(x, _mm512_srli_epi32(x, 16), x, 0xc3); /* ~(a ^ b) */
}

/* Whether to add one ulp to the kept magnitude `base`. */
MXP_INLINE __mmask16 mxp_round_up_avx512(mxp_rounding mode, __m512i base, __m512i frac32, __mmask16 neg,
                                         __mmask16 far, __m512i rnd)
{
    const __m512i half = _mm512_set1_epi32((int)0x80000000u);
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: {
        __mmask16 gt = _mm512_cmpgt_epu32_mask(frac32, half);
        __mmask16 tie = _mm512_cmpeq_epi32_mask(frac32, half);
        __mmask16 odd = _mm512_test_epi32_mask(base, _mm512_set1_epi32(1));
        return gt | (tie & odd);
    }
    case MXP_ROUND_NEAREST_AWAY:
        return _mm512_cmpge_epu32_mask(frac32, half);
    case MXP_ROUND_TOWARD_ZERO:
        return 0;
    case MXP_ROUND_UP:
        return (_mm512_test_epi32_mask(frac32, frac32) | far) & (__mmask16)~neg;
    case MXP_ROUND_DOWN:
        return (_mm512_test_epi32_mask(frac32, frac32) | far) & neg;
    default:
        return _mm512_cmplt_epu32_mask(rnd, frac32);
    }
}

/* Target bits (in the low 8/16 bits of each lane) of 16 float32 lanes. */
MXP_INLINE __m512i mxp_f32_to_narrow_avx512(__m512i x, mxp_narrow_fmt f, mxp_rounding mode, int saturate,
                                            __m512i rnd)
{
    const int d0 = 23 - f.mbits;
    const int emin_biased = 127 + 1 - f.bias; /* f32 biased exponent of the target's min normal */
    const unsigned eall = (1u << (f.bits - 1 - f.mbits)) - 1;
    const unsigned mmask = (1u << f.mbits) - 1;
    const unsigned max_enc = f.style     ? (eall << f.mbits) | mmask /* fnuz, finite: every exponent finite */
                             : f.has_inf ? ((eall - 1) << f.mbits) | mmask
                                         : (eall << f.mbits) | (mmask - 1);
    const unsigned inf_enc = eall << f.mbits;
    const unsigned nan_enc = f.style == MXP_NARROW_FNUZ_512 ? 1u << (f.bits - 1)
                             : f.style                      ? 0 /* finite: the sign is flipped below */
                             : f.has_inf                    ? inf_enc | (1u << (f.mbits - 1))
                                                            : (eall << f.mbits) | mmask;
    saturate |= f.style == MXP_NARROW_FINITE_512; /* no infinity, no NaN: overflow is max */

    const __m512i a = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
    const __mmask16 neg = _mm512_movepi32_mask(x);
    const __m512i e = _mm512_srli_epi32(a, 23);
    const __mmask16 special = _mm512_cmpeq_epi32_mask(e, _mm512_set1_epi32(255));
    const __m512i c32 = _mm512_set1_epi32(32);

    /* Lanes in the target's normal range (the common case): the exponent
     * field rebiases by a subtraction and d = d0 is a constant. */
    const __m512i rebias = _mm512_set1_epi32((127 - f.bias) << f.mbits);
    __m512i base = _mm512_sub_epi32(_mm512_srli_epi32(a, d0), rebias);
    __m512i frac32 = _mm512_slli_epi32(a, 32 - d0);
    __mmask16 far = 0;
    const __mmask16 nonzero = _mm512_test_epi32_mask(a, a);
    const __mmask16 sub = _mm512_cmplt_epi32_mask(e, _mm512_set1_epi32(emin_biased)) & nonzero;
    if (sub) {
        /* Below the target's normal range: d = d0 + emin_biased - max(E, 1). */
        const __m512i m = _mm512_and_si512(a, _mm512_set1_epi32(0x7fffff));
        const __m512i sig = _mm512_mask_or_epi32(m, _mm512_test_epi32_mask(e, e), m, _mm512_set1_epi32(0x800000));
        const __m512i d = _mm512_sub_epi32(_mm512_set1_epi32(emin_biased + d0), _mm512_max_epi32(e, _mm512_set1_epi32(1)));
        base = _mm512_mask_srlv_epi32(base, sub, sig, d);
        frac32 = _mm512_mask_mov_epi32(frac32, sub,
                                       _mm512_or_si512(_mm512_sllv_epi32(sig, _mm512_sub_epi32(c32, d)),
                                                       _mm512_srlv_epi32(sig, _mm512_sub_epi32(d, c32))));
        far = _mm512_cmpgt_epi32_mask(d, c32) & sub;
    }
    const __mmask16 up = mxp_round_up_avx512(mode, base, frac32, neg, far, rnd);
    __m512i r = _mm512_mask_add_epi32(base, up, base, _mm512_set1_epi32(1));
    if (f.bias != 127) /* zeros: the rebias above made them negative */
        r = _mm512_maskz_mov_epi32(nonzero, r);

    /* Overflow of finite values: IEEE by mode, or saturation. */
    const __mmask16 ovf = _mm512_cmpgt_epu32_mask(r, _mm512_set1_epi32((int)max_enc)) & (__mmask16)~special;
    if (ovf) {
        __mmask16 to_inf;
        switch (mode) {
        case MXP_ROUND_TOWARD_ZERO: to_inf = 0; break;
        case MXP_ROUND_UP: to_inf = (__mmask16)~neg; break;
        case MXP_ROUND_DOWN: to_inf = neg; break;
        default: to_inf = 0xffff; break;
        }
        if (saturate)
            to_inf = 0;
        r = _mm512_mask_mov_epi32(r, ovf, _mm512_set1_epi32((int)max_enc));
        r = _mm512_mask_mov_epi32(r, ovf & to_inf, _mm512_set1_epi32((int)(f.has_inf ? inf_enc : nan_enc)));
    }
    __mmask16 is_nan = 0;
    if (special) {
        const __m512i m = _mm512_and_si512(a, _mm512_set1_epi32(0x7fffff));
        is_nan = _mm512_test_epi32_mask(m, m) & special;
        const __mmask16 is_inf = special & (__mmask16)~is_nan;
        unsigned inf_out = saturate ? max_enc : f.has_inf ? inf_enc : nan_enc;
        r = _mm512_mask_mov_epi32(r, is_inf, _mm512_set1_epi32((int)inf_out));
        __m512i nan = _mm512_set1_epi32((int)nan_enc);
        if (f.has_inf) /* quiet NaN keeping the top payload bits */
            nan = _mm512_or_si512(nan, _mm512_srli_epi32(m, d0));
        r = _mm512_mask_mov_epi32(r, is_nan, nan);
    }
    const __m512i sign = _mm512_srli_epi32(_mm512_and_si512(x, _mm512_set1_epi32((int)0x80000000u)), 32 - f.bits);
    __m512i out = _mm512_or_si512(r, sign);
    if (f.style == MXP_NARROW_FNUZ_512) /* no -0: a zero result is +0 */
        out = _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(r, r), out);
    else if (f.style == MXP_NARROW_FINITE_512) /* NaN: the zero of the other sign (ml_dtypes) */
        out = _mm512_mask_xor_epi32(out, is_nan, out, _mm512_set1_epi32((int)(1u << (f.bits - 1))));
    return out;
}

/* The overflow clamp of the "add, then shift" methods (below and
 * cvt-h16-f8-avx512.h) on 16-bit (w16) or 32-bit lanes: r is at most
 * max_enc, or the pattern after it (infinity; float8_e4m3fn: NaN) where the
 * mode rounds past max; sign: all ones in the negative lanes. */
MXP_INLINE __m512i mxp_add_lanes_avx512(__m512i a, __m512i b, int w16)
{
    return w16 ? _mm512_add_epi16(a, b) : _mm512_add_epi32(a, b);
}

MXP_INLINE __m512i mxp_clamp_overflow_avx512(__m512i r, __m512i sign, unsigned max_enc, mxp_rounding mode, int saturate,
                                             int w16)
{
    const __m512i one = w16 ? _mm512_set1_epi16(1) : _mm512_set1_epi32(1);
    __m512i limit = w16 ? _mm512_set1_epi16((short)max_enc) : _mm512_set1_epi32((int)max_enc);
    if (!saturate) {
        switch (mode) {
        case MXP_ROUND_TOWARD_ZERO: break;
        case MXP_ROUND_UP: limit = mxp_add_lanes_avx512(limit, mxp_add_lanes_avx512(one, sign, w16), w16); break;
        case MXP_ROUND_DOWN: limit = w16 ? _mm512_sub_epi16(limit, sign) : _mm512_sub_epi32(limit, sign); break;
        default: limit = mxp_add_lanes_avx512(limit, one, w16); break;
        }
    }
    return w16 ? _mm512_min_epu16(r, limit) : _mm512_min_epu32(r, limit);
}

/* The same result by "add, then shift": the value's bits v (float32 bits
 * rebiased, or the significand below the target's normal range) plus a
 * mode-dependent c, shifted right by d, is the target's bit pattern
 * (carries ripple into the exponent field); overflow is a clamp.  Lanes
 * dropping more than 31 bits (|x| below ~2^-17 for float8: float32
 * subnormals, say) round to 0 or the smallest subnormal, by a fix-up;
 * vectors holding inf or NaN take the general path.  Every style: fnuz
 * (no -0; overflow to the NaN 0x80) and finite (float6/float4). */
MXP_INLINE __m512i mxp_f32_to_narrow_fast_avx512(__m512i x, mxp_narrow_fmt f, mxp_rounding mode, int saturate,
                                                 __m512i rnd)
{
    const int d0 = 23 - f.mbits;
    const int emin_biased = 127 + 1 - f.bias;
    const unsigned eall = (1u << (f.bits - 1 - f.mbits)) - 1;
    const unsigned mmask = (1u << f.mbits) - 1;
    /* fnuz, finite: every exponent finite.  The pattern after max is then
     * the fnuz NaN (the sign bit alone: 0x80), which is what an IEEE-mode
     * overflow gives there; float6/float4 saturate (no infinity, no NaN). */
    const unsigned max_enc = f.style     ? (eall << f.mbits) | mmask
                             : f.has_inf ? ((eall - 1) << f.mbits) | mmask
                                         : (eall << f.mbits) | (mmask - 1);
    saturate |= f.style == MXP_NARROW_FINITE_512;
    const __m512i one = _mm512_set1_epi32(1);

    const __m512i a = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
    const __m512i e1 = _mm512_max_epi32(_mm512_srli_epi32(a, 23), one); /* max(E, 1) */
    __m512i d = _mm512_add_epi32(_mm512_max_epi32(_mm512_sub_epi32(_mm512_set1_epi32(emin_biased), e1),
                                                  _mm512_setzero_si512()),
                                 _mm512_set1_epi32(d0));
    if (_mm512_cmpge_epi32_mask(a, _mm512_set1_epi32(0x7f800000))) /* inf, NaN */
        return mxp_f32_to_narrow_avx512(x, f, mode, saturate, rnd);
    /* Lanes dropping more than 31 bits (|x| far below the smallest
     * subnormal; float32 subnormals among them) are fixed up below. */
    const __mmask16 tiny = _mm512_cmpgt_epi32_mask(d, _mm512_set1_epi32(31)) & _mm512_test_epi32_mask(a, a);
    const __m512i dfull = d;
    d = _mm512_min_epi32(d, _mm512_set1_epi32(31)); /* zeros too */
    /* v = a - (min(max(E,1), emin_biased) - 1) << 23: rebiased bits in the
     * normal range, the significand below it. */
    const __m512i ek = _mm512_min_epi32(e1, _mm512_set1_epi32(emin_biased));
    const __m512i v = _mm512_sub_epi32(a, _mm512_slli_epi32(_mm512_sub_epi32(ek, one), 23));
    const __m512i sign = _mm512_srai_epi32(x, 31);
    __m512i c;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: {
        __m512i half = _mm512_sllv_epi32(one, _mm512_sub_epi32(d, one));
        c = _mm512_add_epi32(_mm512_sub_epi32(half, one), _mm512_and_si512(_mm512_srlv_epi32(v, d), one));
        break;
    }
    case MXP_ROUND_NEAREST_AWAY:
        c = _mm512_sllv_epi32(one, _mm512_sub_epi32(d, one));
        break;
    case MXP_ROUND_TOWARD_ZERO:
        c = _mm512_setzero_si512();
        break;
    case MXP_ROUND_UP:
        c = _mm512_andnot_si512(sign, _mm512_sub_epi32(_mm512_sllv_epi32(one, d), one));
        break;
    case MXP_ROUND_DOWN:
        c = _mm512_and_si512(sign, _mm512_sub_epi32(_mm512_sllv_epi32(one, d), one));
        break;
    default: /* up iff rnd < frac32  <=>  frac + (~rnd >> (32 - d)) carries */
        c = _mm512_srlv_epi32(_mm512_ternarylogic_epi32(rnd, rnd, rnd, 0x55), _mm512_sub_epi32(_mm512_set1_epi32(32), d));
        break;
    }
    __m512i r = _mm512_srlv_epi32(_mm512_add_epi32(v, c), d);
    if (tiny) {
        /* 0 or the smallest subnormal: away from zero only when rounding
         * up a positive, down a negative, or stochastically with
         * probability frac32 = v >> (d - 32) (0 for d >= 64). */
        const __mmask16 neg = _mm512_movepi32_mask(x);
        __mmask16 up;
        switch (mode) {
        case MXP_ROUND_UP: up = (__mmask16)~neg; break;
        case MXP_ROUND_DOWN: up = neg; break;
        case MXP_ROUND_STOCHASTIC:
            up = _mm512_cmplt_epu32_mask(rnd, _mm512_srlv_epi32(v, _mm512_sub_epi32(dfull, _mm512_set1_epi32(32))));
            break;
        default: up = 0; break;
        }
        r = _mm512_mask_mov_epi32(r, tiny, _mm512_maskz_mov_epi32(up, one));
    }
    r = mxp_clamp_overflow_avx512(r, sign, max_enc, mode, saturate, 0);
    const __m512i out = _mm512_or_si512(r, _mm512_slli_epi32(_mm512_srli_epi32(x, 31), f.bits - 1));
    if (f.style == MXP_NARROW_FNUZ_512) /* no -0: a zero result is +0 */
        return _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(r, r), out);
    return out;
}

/* bfloat16 is the top half of float32 (same exponent field, subnormals
 * included), so every mode is "add, then keep the top 16 bits" on the
 * bits: c = 0x7fff + the kept lsb (nearest even), 0x8000 (away), 0
 * (toward zero), 0xffff on the side being rounded away from zero (up/down:
 * an add under the sign's mask), or (~random) >> 16 (stochastic: carries
 * iff random < the dropped 16 bits << 16).  Carries ripple into the
 * exponent; overflow lands on infinity or stays at max exactly as IEEE
 * says for the mode.  NaN lanes (vfpclassps; where the add could carry
 * into the sign) are quieted instead.  Result in the high 16 bits of each
 * lane (the low 16 are not defined): two vectors pack by one vpermt2w. */
MXP_INLINE __m512i mxp_f32_to_bf16_hi_avx512(__m512i x, mxp_rounding mode, int saturate, __m512i rnd)
{
    const __m512i ones = _mm512_set1_epi32(0xffff);
    __m512i r;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN:
        r = _mm512_add_epi32(x, _mm512_add_epi32(_mm512_set1_epi32(0x7fff),
                                                 _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1))));
        break;
    case MXP_ROUND_NEAREST_AWAY: r = _mm512_add_epi32(x, _mm512_set1_epi32(0x8000)); break;
    case MXP_ROUND_TOWARD_ZERO: r = x; break;
    case MXP_ROUND_UP: r = _mm512_mask_add_epi32(x, _mm512_cmpgt_epi32_mask(x, _mm512_set1_epi32(-1)), x, ones); break;
    case MXP_ROUND_DOWN: r = _mm512_mask_add_epi32(x, _mm512_movepi32_mask(x), x, ones); break;
    default: r = _mm512_add_epi32(x, _mm512_srli_epi32(_mm512_ternarylogic_epi32(rnd, rnd, rnd, 0x55), 16)); break;
    }
    r = _mm512_mask_or_epi32(r, _mm512_fpclass_ps_mask(_mm512_castsi512_ps(x), 0x81), x, /* QNaN, SNaN */
                             _mm512_set1_epi32(0x00400000));
    if (saturate) { /* +-inf - 1 ulp = +-max */
        const __mmask16 inf = _mm512_cmpeq_epi32_mask(_mm512_and_si512(r, _mm512_set1_epi32(0x7fff0000)),
                                                      _mm512_set1_epi32(0x7f800000));
        r = _mm512_mask_sub_epi32(r, inf, r, _mm512_set1_epi32(0x10000));
    }
    return r;
}

/* The same in the low 16 bits of each lane (the high 16 zero). */
MXP_INLINE __m512i mxp_f32_to_bf16_avx512(__m512i x, mxp_rounding mode, int saturate, __m512i rnd)
{
    return _mm512_srli_epi32(mxp_f32_to_bf16_hi_avx512(x, mode, saturate, rnd), 16);
}

/* The high halves of a's lanes, then b's: 32 bfloat16 in order. */
MXP_INLINE __m512i mxp_bf16_pack_hi_avx512(__m512i a, __m512i b)
{
    const __m512i odd = _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31, 29, 27,
                                         25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    return _mm512_permutex2var_epi16(a, odd, b);
}

/* Sixteen float16 results saturated: +-inf - 1 ulp = +-max (every
 * infinity, from overflow or an infinite input, as the saturating modes
 * want). */
MXP_INLINE __m256i mxp_f16_saturate_avx512(__m256i r)
{
    const __mmask16 inf = _mm256_cmpeq_epi16_mask(_mm256_and_si256(r, _mm256_set1_epi16(0x7fff)),
                                                  _mm256_set1_epi16(0x7c00));
    return _mm256_mask_sub_epi16(r, inf, r, _mm256_set1_epi16(1));
}

/* Nearest, ties away, by vcvtps2ph's nearest even on x with its last bit
 * set: float32 -> float16 drops at least 13 bits, so a tie (the dropped
 * bits 100...0) becomes just above half and rounds away, while a dropped
 * part below half stays below (its last bit set reaches at most half
 * minus one) and one above stays above.  Infinities keep their pattern
 * (with the bit set they would be NaNs); a NaN's last bit is not among
 * those vcvtps2ph keeps; zero and float32 subnormals round to zero either
 * way.  float64 -> float16 applies it to the float32 rounded to odd
 * (cvt-f64-avx512.h): the two roundings compose (a float64 tie is a
 * float32, odd rounding leaves it even).  Saturating: infinities to the
 * largest finite value, as the other modes. */
MXP_INLINE __m256i mxp_f32_to_f16_away_avx512(__m512i x, int saturate)
{
    const __mmask16 inf = _mm512_fpclass_ps_mask(_mm512_castsi512_ps(x), 0x18); /* +inf, -inf */
    const __m512i xo = _mm512_mask_or_epi32(x, (__mmask16)~inf, x, _mm512_set1_epi32(1));
    const __m256i r = _mm512_cvtps_ph(_mm512_castsi512_ps(xo), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return saturate ? mxp_f16_saturate_avx512(r) : r;
}

/* 16 float32 lanes to int32 lanes holding an integer in [lo, hi], rounded by
 * the mode then saturated; NaN -> 0.  For targets of at most 16 bits. */
MXP_INLINE __m512i mxp_f32_to_small_int_avx512(__m512i x, int lo, int hi, mxp_rounding mode, __m512i rnd)
{
    const __m512i a = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
    const __mmask16 neg = _mm512_movepi32_mask(x);
    const __m512i e = _mm512_srli_epi32(a, 23);
    const __m512i m = _mm512_and_si512(a, _mm512_set1_epi32(0x7fffff));
    const __m512i sig = _mm512_mask_or_epi32(m, _mm512_test_epi32_mask(e, e), m, _mm512_set1_epi32(0x800000));
    /* value = sig * 2^(max(E,1) - 150): d = 150 - max(E, 1) bits are fraction. */
    const __m512i d = _mm512_sub_epi32(_mm512_set1_epi32(150), _mm512_max_epi32(e, _mm512_set1_epi32(1)));
    const __mmask16 big = _mm512_cmple_epi32_mask(d, _mm512_set1_epi32(8)); /* |x| >= 2^15: saturates */
    const __m512i c32 = _mm512_set1_epi32(32);
    const __m512i base = _mm512_srlv_epi32(sig, d);
    const __m512i frac32 = _mm512_or_si512(_mm512_sllv_epi32(sig, _mm512_sub_epi32(c32, d)),
                                           _mm512_srlv_epi32(sig, _mm512_sub_epi32(d, c32)));
    const __mmask16 far = _mm512_cmpgt_epi32_mask(d, c32) & _mm512_test_epi32_mask(sig, sig);
    const __mmask16 up = mxp_round_up_avx512(mode, base, frac32, neg, far, rnd);
    __m512i mag = _mm512_mask_add_epi32(base, up, base, _mm512_set1_epi32(1));
    mag = _mm512_mask_mov_epi32(mag, big, _mm512_set1_epi32(1 << 16));
    __m512i v = _mm512_mask_sub_epi32(mag, neg, _mm512_setzero_si512(), mag);
    v = _mm512_min_epi32(_mm512_max_epi32(v, _mm512_set1_epi32(lo)), _mm512_set1_epi32(hi));
    const __mmask16 nan = _mm512_cmpgt_epi32_mask(a, _mm512_set1_epi32(0x7f800000));
    return _mm512_mask_mov_epi32(v, nan, _mm512_setzero_si512());
}

/* 16 float32 lanes to int32 by vcvtps2dq in a deterministic mode, for
 * |x| <= 2^24 (no NaN).  Nearest away: x + copysign(1/2, x) rounded toward
 * zero, then truncated, is floor(|x| + 1/2) with x's sign (the sum never
 * crosses an integer when rounded toward zero). */
MXP_INLINE __m512i mxp_f32_cvt_int_avx512(__m512i x, mxp_rounding mode)
{
    const __m512 f = _mm512_castsi512_ps(x);
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: return _mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    case MXP_ROUND_TOWARD_ZERO: return _mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    case MXP_ROUND_UP: return _mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    case MXP_ROUND_DOWN: return _mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    default: {
        const __m512 h = _mm512_castsi512_ps(
            _mm512_ternarylogic_epi32(x, _mm512_set1_epi32((int)0x80000000u), _mm512_set1_epi32(0x3f000000), 0xea));
        return _mm512_cvt_roundps_epi32(_mm512_add_round_ps(f, h, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC),
                                        _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    }
    }
}

/* The same with x clamped to [lo, hi] first by vmaxps/vminps: with integer
 * bounds, clamping then rounding gives rounding then clamping (both
 * monotonic, the bounds fixed points), infinities included.  NaN lanes
 * give 0.  Needs the library's MXCSR (DAZ would read float32 subnormals as
 * zero, which matters rounding up or down): callers set it. */
MXP_INLINE __m512i mxp_f32_to_int_clamped_avx512(__m512i x, mxp_rounding mode, float lo, float hi)
{
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
                                                  _mm512_set1_epi32(0x7f800000));
    const __m512 f = _mm512_min_ps(_mm512_max_ps(_mm512_castsi512_ps(x), _mm512_set1_ps(lo)), _mm512_set1_ps(hi));
    return _mm512_maskz_mov_epi32((__mmask16)~nan, mxp_f32_cvt_int_avx512(_mm512_castps_si512(f), mode));
}

/* 16 float32 lanes to int8 (or uint8) bytes in the deterministic modes:
 * clamped to [-256, 256] ([0, 256] for uint8), which every mode keeps,
 * converted, then narrowed with saturation (vpmovsdb, vpmovusdb); NaN
 * lanes give 0.
 * In the library's MXCSR, as above. */
MXP_INLINE __m128i mxp_f32_to_small_int_hw_avx512(__m512i x, mxp_rounding mode, int is_unsigned)
{
    if (is_unsigned)
        return _mm512_cvtusepi32_epi8(mxp_f32_to_int_clamped_avx512(x, mode, 0.0f, 256.0f));
    return _mm512_cvtsepi32_epi8(mxp_f32_to_int_clamped_avx512(x, mode, -256.0f, 256.0f));
}

/* float32 -> float8 through float16 rounded to odd (the kernels'
 * comments in src/kernels/f32-e5m2-vcvt/avx512f.c, f32-e4m3-vcvt/avx512f.c):
 * vcvtps2ph toward zero with inexact lanes made
 * odd, then "add, then shift" on the float16 bits.  Deterministic modes
 * only; callers set the library's MXCSR (no DAZ).  e5m2: 16 lanes to 16
 * bytes; e4m3: 32 lanes (x0 the low 16) to 32 bytes. */
MXP_INLINE __m128i mxp_f32_to_e5m2_via_f16_avx512(__m512i x, mxp_rounding mode, int saturate)
{
    __m256i h = _mm512_cvtps_ph(_mm512_castsi512_ps(x), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __mmask16 inexact = _mm512_cmpneq_epi32_mask(_mm512_castps_si512(_mm512_cvtph_ps(h)), x);
    h = _mm256_or_si256(h, _mm256_maskz_mov_epi16(inexact, _mm256_set1_epi16(1)));
    const __m256i m = _mm256_and_si256(h, _mm256_set1_epi16(0x7fff));
    const __m256i sign = _mm256_srai_epi16(h, 15);
    __m256i c;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN:
        c = _mm256_add_epi16(_mm256_set1_epi16(0x7f), _mm256_and_si256(_mm256_srli_epi16(m, 8), _mm256_set1_epi16(1)));
        break;
    case MXP_ROUND_NEAREST_AWAY: c = _mm256_set1_epi16(0x80); break;
    case MXP_ROUND_TOWARD_ZERO: c = _mm256_setzero_si256(); break;
    case MXP_ROUND_UP: c = _mm256_andnot_si256(sign, _mm256_set1_epi16(0xff)); break;
    default: c = _mm256_and_si256(sign, _mm256_set1_epi16(0xff)); break;
    }
    const __mmask16 nan = _mm256_cmpgt_epu16_mask(m, _mm256_set1_epi16(0x7c00));
    c = _mm256_maskz_mov_epi16((__mmask16)~nan, c);
    __m256i r = _mm256_srli_epi16(_mm256_add_epi16(m, c), 8);
    if (saturate) {
        __mmask16 inf = _mm256_cmpeq_epi16_mask(r, _mm256_set1_epi16(0x7c));
        r = _mm256_mask_sub_epi16(r, inf, r, _mm256_set1_epi16(1));
    }
    r = _mm256_or_si256(r, _mm256_and_si256(sign, _mm256_set1_epi16(0x80)));
    return _mm256_cvtepi16_epi8(r);
}

MXP_INLINE __m512i mxp_f32_to_f16_odd_avx512(__m512i x0, __m512i x1)
{
    __m256i h0 = _mm512_cvtps_ph(_mm512_castsi512_ps(x0), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m256i h1 = _mm512_cvtps_ph(_mm512_castsi512_ps(x1), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __mmask16 in0 = _mm512_cmpneq_epi32_mask(_mm512_castps_si512(_mm512_cvtph_ps(h0)), x0);
    __mmask16 in1 = _mm512_cmpneq_epi32_mask(_mm512_castps_si512(_mm512_cvtph_ps(h1)), x1);
    __m512i h = _mm512_inserti64x4(_mm512_castsi256_si512(h0), h1, 1);
    __mmask32 inexact = (__mmask32)in0 | (__mmask32)in1 << 16;
    return _mm512_or_si512(h, _mm512_maskz_mov_epi16(inexact, _mm512_set1_epi16(1)));
}

MXP_INLINE __m256i mxp_f32_to_e4m3_via_f16_avx512(__m512i x0, __m512i x1, mxp_rounding mode, int saturate)
{
    const __m512i one = _mm512_set1_epi16(1);
    const __m512i h = mxp_f32_to_f16_odd_avx512(x0, x1);
    const __m512i m = _mm512_and_si512(h, _mm512_set1_epi16(0x7fff));
    const __m512i sign = _mm512_srai_epi16(h, 15);
    const __m512i e1 = _mm512_max_epu16(_mm512_srli_epi16(m, 10), one);             /* max(E, 1) */
    const __m512i ek = _mm512_min_epu16(e1, _mm512_set1_epi16(9));                  /* 9: e4m3's min normal */
    const __m512i v = _mm512_sub_epi16(m, _mm512_slli_epi16(_mm512_sub_epi16(ek, one), 10));
    const __m512i d = _mm512_add_epi16(_mm512_set1_epi16(7), _mm512_subs_epu16(_mm512_set1_epi16(9), e1));
    __m512i c;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: {
        __m512i half = _mm512_sllv_epi16(one, _mm512_sub_epi16(d, one));
        c = _mm512_add_epi16(_mm512_sub_epi16(half, one), _mm512_and_si512(_mm512_srlv_epi16(v, d), one));
        break;
    }
    case MXP_ROUND_NEAREST_AWAY: c = _mm512_sllv_epi16(one, _mm512_sub_epi16(d, one)); break;
    case MXP_ROUND_TOWARD_ZERO: c = _mm512_setzero_si512(); break;
    case MXP_ROUND_UP: c = _mm512_andnot_si512(sign, _mm512_sub_epi16(_mm512_sllv_epi16(one, d), one)); break;
    default: c = _mm512_and_si512(sign, _mm512_sub_epi16(_mm512_sllv_epi16(one, d), one)); break;
    }
    __m512i r = _mm512_srlv_epi16(_mm512_add_epi16(v, c), d);
    r = mxp_clamp_overflow_avx512(r, sign, 0x7e, mode, saturate, 1); /* max; 0x7f is NaN */
    const __mmask32 special = _mm512_cmpge_epu16_mask(m, _mm512_set1_epi16(0x7c00));
    if (special) {
        __mmask32 inf = saturate ? _mm512_cmpeq_epi16_mask(m, _mm512_set1_epi16(0x7c00)) : 0;
        r = _mm512_mask_mov_epi16(r, special, _mm512_set1_epi16(0x7f));
        r = _mm512_mask_mov_epi16(r, inf, _mm512_set1_epi16(0x7e));
    }
    r = _mm512_or_si512(r, _mm512_and_si512(sign, _mm512_set1_epi16(0x80)));
    return _mm512_cvtepi16_epi8(r);
}

/* What the steps of a deterministic loop (mxp_stream_loop) are given. */
typedef struct mxp_mode_ctx {
    mxp_rounding mode;
    int saturate;
} mxp_mode_ctx;

/* The low `bytes` (8, 16 or 32) bytes of r to d, streaming when asked. */
MXP_INLINE void mxp_store_bytes_avx512(void *d, __m256i r, size_t bytes, int stream)
{
    const __m128i h = _mm256_castsi256_si128(r);
    if (bytes == 32) {
        if (stream)
            _mm256_stream_si256((__m256i *)d, r);
        else
            _mm256_storeu_si256((__m256i *)d, r);
    } else if (bytes == 16) {
        if (stream)
            _mm_stream_si128((__m128i *)d, h);
        else
            _mm_storeu_si128((__m128i *)d, h);
    } else if (stream) {
        _mm_stream_si64((long long *)d, _mm_cvtsi128_si64(h));
    } else {
        _mm_storel_epi64((__m128i *)d, h);
    }
}

/* 16 results of `size` bytes (1 or 2: the low 16 or 32 bytes of r) to d,
 * masked unless mask is all ones. */
MXP_INLINE void mxp_store16_avx512(void *d, __m256i r, size_t size, __mmask16 mask, int stream)
{
    if (mask == 0xffff)
        mxp_store_bytes_avx512(d, r, 16 * size, stream);
    else if (size == 2)
        _mm256_mask_storeu_epi16(d, mask, r);
    else
        _mm_mask_storeu_epi8(d, mask, _mm256_castsi256_si128(r));
}

/* Lanes of lo32(index0 + i + lane) for the stochastic stream. */
MXP_INLINE __m512i mxp_sr_index_avx512(uint64_t index)
{
    return _mm512_add_epi32(_mm512_set1_epi32((int)(uint32_t)index),
                            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

#endif

/* AVX2 rounding of float32 lanes to a narrower binary format or to a small
 * integer, in integer arithmetic, every rounding mode: the AVX2 twins of
 * cvt-round-avx512.h's mxp_f32_to_bf16_avx512, mxp_f32_to_narrow_fast_avx512
 * and mxp_f32_to_small_int_avx512 (same method, same bits), 8 lanes at a
 * time, and the stochastic stream of cvt-kernel.h.  Shared by the AVX2
 * conversion kernels (cvt-f32-avx2.h, cvt-sr-avx2.h, cvt-f64-avx2.h).  No
 * floating-point arithmetic but in the float-unit steps (_fp), whose
 * operations are exact or take their rounding from an immediate or, where
 * the caller says so, from MXCSR.  AVX2's
 * variable shifts (vpsrlvd, vpsllvd) give 0 for counts above 31, as
 * AVX-512's do, which the methods rely on. */
#ifndef MXP_KERNELS_CVT_ROUND_AVX2_H
#define MXP_KERNELS_CVT_ROUND_AVX2_H

#include <immintrin.h>
#include <string.h>

#include "kernels/cvt-kernel.h"

#include "kernels/stream-loop.h"

typedef struct mxp_narrow_fmt2 {
    int bits;    /* 16, 8, or 6 and 4 (float6/float4: the low bits of a byte) */
    int mbits;   /* mantissa bits */
    int bias;
    int has_inf; /* 0: OCP E4M3 style, S.1111.111 is the only NaN */
    int style;   /* MXP_NARROW_FNUZ, MXP_NARROW_FINITE; 0: as has_inf says */
} mxp_narrow_fmt2;

/* Formats whose special encodings are not IEEE's or E4M3's (core/dtype-internal.h):
 * fnuz (no infinity, no -0, the -0 pattern is the one NaN) and finite
 * (float6/float4: no infinity, no NaN; NaN gives the zero of the other sign). */
enum { MXP_NARROW_FNUZ = 1, MXP_NARROW_FINITE = 2 };

#define MXP_V8(c) _mm256_set1_epi32((int)(c))

/* float32 lanes made ready for float16 nearest away by vcvtps2ph's nearest
 * even: the last bit set, infinities excepted (cvt-round-avx512.h's
 * mxp_f32_to_f16_away_avx512 says why that rounds ties away). */
MXP_INLINE __m256i mxp_f16_away_input_avx2(__m256i x)
{
    const __m256i inf = _mm256_cmpeq_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)),
                                           _mm256_set1_epi32(0x7f800000));
    return _mm256_or_si256(x, _mm256_andnot_si256(inf, _mm256_set1_epi32(1)));
}

/* Eight float16 results saturated: +-inf - 1 ulp = +-max. */
MXP_INLINE __m128i mxp_f16_saturate_avx2(__m128i r)
{
    return _mm_add_epi16(r, _mm_cmpeq_epi16(_mm_and_si128(r, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x7c00)));
}

/* Eight float32 lanes to float16 in a deterministic mode by F16C's
 * vcvtps2ph (nearest away: its nearest even on mxp_f16_away_input_avx2(x)),
 * saturated where asked.  vcvtps2ph reads float32 subnormals as zero under
 * MXCSR.DAZ, which would change the directed modes: callers run without it. */
MXP_INLINE __m128i mxp_f16x8_avx2(__m256i x, mxp_rounding mode, int saturate)
{
    const __m256 f = _mm256_castsi256_ps(x);
    __m128i r;
    switch (mode) {
    case MXP_ROUND_TOWARD_ZERO: r = _mm256_cvtps_ph(f, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); break;
    case MXP_ROUND_UP: r = _mm256_cvtps_ph(f, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); break;
    case MXP_ROUND_DOWN: r = _mm256_cvtps_ph(f, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); break;
    case MXP_ROUND_NEAREST_AWAY:
        r = _mm256_cvtps_ph(_mm256_castsi256_ps(mxp_f16_away_input_avx2(x)),
                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        break;
    default: r = _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); break;
    }
    return saturate ? mxp_f16_saturate_avx2(r) : r;
}

/* a < b as unsigned 32-bit lanes (all ones where true) */
MXP_INLINE __m256i mxp_cmplt_epu32_avx2(__m256i a, __m256i b)
{
    const __m256i s = MXP_V8(0x80000000u);
    return _mm256_cmpgt_epi32(_mm256_xor_si256(b, s), _mm256_xor_si256(a, s));
}

MXP_INLINE __m256i mxp_not_avx2(__m256i a)
{
    return _mm256_xor_si256(a, _mm256_set1_epi32(-1));
}

/* The stochastic-rounding stream, 8 lanes holding lo32(index) for
 * consecutive indices: r (mxp_sr_mix), or ~r (what add-and-shift adds).
 * The rounds (mxp_sr_mix_rounds_avx2) give h, r = h ^ (h >> 16): the top
 * 16 bits of r are h's.  _k1: x already holds lo32(index) + k1. */
MXP_INLINE __m256i mxp_sr_mix_rounds_k1_avx2(__m256i x, mxp_sr_key k)
{
    x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
    x = _mm256_mullo_epi32(x, MXP_V8(0x7feb352du));
    x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
    x = _mm256_xor_si256(x, MXP_V8(k.k2));
    return _mm256_mullo_epi32(x, MXP_V8(0x846ca68bu));
}

MXP_INLINE __m256i mxp_sr_mix_rounds_avx2(__m256i x, mxp_sr_key k)
{
    return mxp_sr_mix_rounds_k1_avx2(_mm256_add_epi32(x, MXP_V8(k.k1)), k);
}

MXP_INLINE __m256i mxp_sr_mix_avx2(__m256i x, mxp_sr_key k)
{
    x = mxp_sr_mix_rounds_avx2(x, k);
    return _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
}

MXP_INLINE __m256i mxp_sr_mix_not_avx2(__m256i x, mxp_sr_key k)
{
    x = mxp_sr_mix_rounds_avx2(x, k);
    return mxp_not_avx2(_mm256_xor_si256(x, _mm256_srli_epi32(x, 16)));
}

/* Lanes of lo32(index + lane). */
MXP_INLINE __m256i mxp_sr_index_avx2(uint64_t index)
{
    return _mm256_add_epi32(MXP_V8((uint32_t)index), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* bfloat16, every mode, "add, then shift by 16" on the bits (cvt-round-avx512.h
 * mxp_f32_to_bf16_avx512): rnd is ~r for stochastic rounding.  Result in
 * the low 16 bits of each lane. */
MXP_INLINE __m256i mxp_f32_to_bf16_avx2(__m256i x, mxp_rounding mode, int saturate, __m256i nrnd)
{
    const __m256i sign = _mm256_srai_epi32(x, 31);
    __m256i c;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN:
        c = _mm256_add_epi32(MXP_V8(0x7fff), _mm256_and_si256(_mm256_srli_epi32(x, 16), MXP_V8(1)));
        break;
    case MXP_ROUND_NEAREST_AWAY: c = MXP_V8(0x8000); break;
    case MXP_ROUND_TOWARD_ZERO: c = _mm256_setzero_si256(); break;
    case MXP_ROUND_UP: c = _mm256_andnot_si256(sign, MXP_V8(0xffff)); break;
    case MXP_ROUND_DOWN: c = _mm256_and_si256(sign, MXP_V8(0xffff)); break;
    default: c = _mm256_srli_epi32(nrnd, 16); break;
    }
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(x, c), 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, MXP_V8(0x7fffffff)), MXP_V8(0x7f800000));
    r = _mm256_blendv_epi8(r, _mm256_or_si256(_mm256_srli_epi32(x, 16), MXP_V8(0x40)), nan);
    if (saturate) { /* +-inf - 1 ulp = +-max */
        const __m256i inf = _mm256_cmpeq_epi32(_mm256_and_si256(r, MXP_V8(0x7fff)), MXP_V8(0x7f80));
        r = _mm256_add_epi32(r, inf);
    }
    return r;
}

/* The target's largest finite, infinity and NaN patterns (magnitudes). */
typedef struct mxp_narrow_encs2 {
    unsigned max_enc, inf_enc, nan_enc, inf_out;
    int saturate;
} mxp_narrow_encs2;

MXP_INLINE mxp_narrow_encs2 mxp_narrow_encs_avx2(mxp_narrow_fmt2 f, int saturate)
{
    const unsigned eall = (1u << (f.bits - 1 - f.mbits)) - 1;
    const unsigned mmask = (1u << f.mbits) - 1;
    mxp_narrow_encs2 e;
    /* fnuz and finite: every exponent finite; fnuz's pattern after max is its NaN, 1 << (bits - 1) */
    e.max_enc = f.style     ? (eall << f.mbits) | mmask
                : f.has_inf ? ((eall - 1) << f.mbits) | mmask
                            : (eall << f.mbits) | (mmask - 1);
    e.inf_enc = eall << f.mbits;
    e.nan_enc = f.style == MXP_NARROW_FNUZ ? 1u << (f.bits - 1)
                : f.style                  ? 0 /* finite: the sign is flipped below */
                : f.has_inf                ? e.inf_enc | (1u << (f.mbits - 1))
                                           : (eall << f.mbits) | mmask;
    e.saturate = saturate | (f.style == MXP_NARROW_FINITE); /* no infinity, no NaN: overflow is max */
    e.inf_out = e.saturate ? e.max_enc : f.has_inf ? e.inf_enc : e.nan_enc;
    return e;
}

/* The clamp of the magnitude pattern r of x: overflow as the mode has it. */
MXP_INLINE __m256i mxp_narrow_clamp_avx2(__m256i r, __m256i x, mxp_narrow_encs2 e, mxp_rounding mode)
{
    __m256i limit = MXP_V8(e.max_enc);
    if (!e.saturate) { /* vblendvps: by the sign */
        const __m256 xf = _mm256_castsi256_ps(x);
        const __m256 lim = _mm256_castsi256_ps(limit), lim1 = _mm256_castsi256_ps(MXP_V8(e.max_enc + 1));
        switch (mode) {
        case MXP_ROUND_TOWARD_ZERO: break;
        case MXP_ROUND_UP: limit = _mm256_castps_si256(_mm256_blendv_ps(lim1, lim, xf)); break;
        case MXP_ROUND_DOWN: limit = _mm256_castps_si256(_mm256_blendv_ps(lim, lim1, xf)); break;
        default: limit = MXP_V8(e.max_enc + 1); break;
        }
    }
    return _mm256_min_epu32(r, limit);
}

/* r with x's infinity and NaN lanes set (is_nan: x's NaN lanes). */
MXP_INLINE __m256i mxp_narrow_special_avx2(__m256i r, __m256i x, mxp_narrow_fmt2 f, mxp_narrow_encs2 e,
                                           __m256i *is_nan)
{
    const __m256i a = _mm256_and_si256(x, MXP_V8(0x7fffffff));
    const __m256i special = _mm256_cmpgt_epi32(a, MXP_V8(0x7f7fffff)); /* inf, NaN */
    *is_nan = _mm256_cmpgt_epi32(a, MXP_V8(0x7f800000));
    __m256i nan = MXP_V8(e.nan_enc);
    if (f.has_inf)
        nan = _mm256_or_si256(nan, _mm256_srli_epi32(_mm256_and_si256(a, MXP_V8(0x7fffff)), 23 - f.mbits));
    return _mm256_blendv_epi8(r, _mm256_blendv_epi8(MXP_V8(e.inf_out), nan, *is_nan), special);
}

/* The end of both narrowings below: overflow is a clamp (the pattern after
 * max is infinity; float8_e4m3fn: NaN), inf and NaN lanes are set, the sign
 * is or-ed in. */
MXP_INLINE __m256i mxp_narrow_finish_avx2(__m256i r, __m256i x, mxp_narrow_fmt2 f, mxp_rounding mode, int saturate)
{
    const mxp_narrow_encs2 e = mxp_narrow_encs_avx2(f, saturate);
    const __m256i a = _mm256_and_si256(x, MXP_V8(0x7fffffff));
    r = mxp_narrow_clamp_avx2(r, x, e, mode);
    const __m256i special = _mm256_cmpgt_epi32(a, MXP_V8(0x7f7fffff)); /* inf, NaN */
    __m256i is_nan = _mm256_setzero_si256();
    if (!_mm256_testz_si256(special, special))
        r = mxp_narrow_special_avx2(r, x, f, e, &is_nan);
    __m256i out = _mm256_or_si256(r, _mm256_slli_epi32(_mm256_srli_epi32(x, 31), f.bits - 1));
    if (f.style == MXP_NARROW_FNUZ) /* no -0: a zero result is +0 */
        out = _mm256_andnot_si256(_mm256_cmpeq_epi32(r, _mm256_setzero_si256()), out);
    else if (f.style == MXP_NARROW_FINITE) /* NaN: the zero of the other sign (ml_dtypes) */
        out = _mm256_xor_si256(out, _mm256_and_si256(is_nan, MXP_V8(1u << (f.bits - 1))));
    return out;
}

/* Target bits (low 8/16 bits of each lane) of 8 float32 lanes, every mode
 * (cvt-round-avx512.h mxp_f32_to_narrow_fast_avx512): v (the rebiased bits in
 * the target's normal range, the significand below it) plus a
 * mode-dependent c, shifted right by d; overflow a clamp; lanes dropping
 * more than 31 bits by a fix-up; inf and NaN lanes set at the end.  rnd is
 * r itself for stochastic rounding. */
MXP_INLINE __m256i mxp_f32_to_narrow_avx2(__m256i x, mxp_narrow_fmt2 f, mxp_rounding mode, int saturate,
                                          __m256i rnd)
{
    const int d0 = 23 - f.mbits;
    const int emin_biased = 127 + 1 - f.bias;
    const __m256i one = MXP_V8(1);

    const __m256i a = _mm256_and_si256(x, MXP_V8(0x7fffffff));
    const __m256i e1 = _mm256_max_epi32(_mm256_srli_epi32(a, 23), one); /* max(E, 1) */
    __m256i d = _mm256_add_epi32(_mm256_max_epi32(_mm256_sub_epi32(MXP_V8(emin_biased), e1), _mm256_setzero_si256()),
                                 MXP_V8(d0));
    const __m256i nonzero = mxp_not_avx2(_mm256_cmpeq_epi32(a, _mm256_setzero_si256()));
    const __m256i tiny = _mm256_and_si256(_mm256_cmpgt_epi32(d, MXP_V8(31)), nonzero);
    const __m256i dfull = d;
    d = _mm256_min_epi32(d, MXP_V8(31));
    const __m256i ek = _mm256_min_epi32(e1, MXP_V8(emin_biased));
    const __m256i v = _mm256_sub_epi32(a, _mm256_slli_epi32(_mm256_sub_epi32(ek, one), 23));
    const __m256i sign = _mm256_srai_epi32(x, 31);
    __m256i c;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: {
        __m256i half = _mm256_sllv_epi32(one, _mm256_sub_epi32(d, one));
        c = _mm256_add_epi32(_mm256_sub_epi32(half, one), _mm256_and_si256(_mm256_srlv_epi32(v, d), one));
        break;
    }
    case MXP_ROUND_NEAREST_AWAY:
        c = _mm256_sllv_epi32(one, _mm256_sub_epi32(d, one));
        break;
    case MXP_ROUND_TOWARD_ZERO:
        c = _mm256_setzero_si256();
        break;
    case MXP_ROUND_UP:
        c = _mm256_andnot_si256(sign, _mm256_sub_epi32(_mm256_sllv_epi32(one, d), one));
        break;
    case MXP_ROUND_DOWN:
        c = _mm256_and_si256(sign, _mm256_sub_epi32(_mm256_sllv_epi32(one, d), one));
        break;
    default: /* up iff rnd < frac32  <=>  frac + (~rnd >> (32 - d)) carries */
        c = _mm256_srlv_epi32(mxp_not_avx2(rnd), _mm256_sub_epi32(MXP_V8(32), d));
        break;
    }
    __m256i r = _mm256_srlv_epi32(_mm256_add_epi32(v, c), d);
    if (!_mm256_testz_si256(tiny, tiny)) {
        /* 0 or the smallest subnormal: away from zero only when rounding
         * up a positive, down a negative, or stochastically with
         * probability frac32 = v >> (d - 32) (0 for d >= 64). */
        __m256i up;
        switch (mode) {
        case MXP_ROUND_UP: up = mxp_not_avx2(sign); break;
        case MXP_ROUND_DOWN: up = sign; break;
        case MXP_ROUND_STOCHASTIC:
            up = mxp_cmplt_epu32_avx2(rnd, _mm256_srlv_epi32(v, _mm256_sub_epi32(dfull, MXP_V8(32))));
            break;
        default: up = _mm256_setzero_si256(); break;
        }
        r = _mm256_blendv_epi8(r, _mm256_and_si256(up, one), tiny);
    }
    return mxp_narrow_finish_avx2(r, x, f, mode, saturate);
}

/* The same in the deterministic modes by the float unit, cheaper than the
 * variable shifts: q = x * 2^(M - max(e, emin)) (an add to the exponent
 * field: exact, q in [2^M, 2^(M+1)) in the target's normal range, below
 * 2^M under it) is rounded to an integer k by vroundps with
 * the mode as its immediate (nearest away: truncated, plus one where the
 * exact remainder is at least 1/2), and the pattern is
 * ((max(e, emin) - emin) << M) + |k|: k = 2^(M+1) carries into the next
 * binade.  Overflow is a clamp, inf and NaN lanes are set at the end.
 * No operand is subnormal (below); callers enter the library's MXCSR
 * anyway.  mxcsr: MXCSR's rounding is the mode's (nearest away: toward
 * zero), so the conversion rounds by itself (vcvtps2dq; nearest away:
 * q + 1/2 toward zero, truncated), one to four operations fewer. */
MXP_INLINE __m256i mxp_f32_narrow_fp_mag_avx2(__m256i x, mxp_narrow_fmt2 f, mxp_rounding mode, int mxcsr)
{
    const int emin_biased = 127 + 1 - f.bias;
    const __m256i a = _mm256_and_si256(x, MXP_V8(0x7fffffff));
    const __m256i es = _mm256_max_epi32(_mm256_srli_epi32(a, 23), MXP_V8(emin_biased));
    /* q = x * 2^(M - (es - 127)) by an add to the exponent field: exact,
     * the field becomes 127 + M (or less below the normal range); a float32
     * subnormal x (es = emin) becomes 2^(M - emin - 126) * (1 + its bits),
     * tiny and nonzero: the same result as x in every mode, and no
     * subnormal operand for vroundps. */
    const __m256i scale = _mm256_slli_epi32(_mm256_sub_epi32(MXP_V8(127 + f.mbits), es), 23);
    __m256i ki;
    if (mode == MXP_ROUND_UP || mode == MXP_ROUND_DOWN) {
        /* zeros stay zero here (the nearest modes and toward zero take them as tiny) */
        const __m256i zero = _mm256_cmpeq_epi32(a, _mm256_setzero_si256());
        const __m256 q = _mm256_castsi256_ps(_mm256_add_epi32(x, _mm256_andnot_si256(zero, scale)));
        if (mxcsr) {
            ki = _mm256_abs_epi32(_mm256_cvtps_epi32(q));
        } else {
            __m256 k = mode == MXP_ROUND_UP ? _mm256_round_ps(q, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)
                                            : _mm256_round_ps(q, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
            ki = _mm256_cvttps_epi32(_mm256_and_ps(k, _mm256_castsi256_ps(MXP_V8(0x7fffffff))));
        }
    } else {
        const __m256 q = _mm256_castsi256_ps(_mm256_add_epi32(a, scale));
        switch (mode) {
        case MXP_ROUND_NEAREST_EVEN:
            ki = mxcsr ? _mm256_cvtps_epi32(q)
                       : _mm256_cvttps_epi32(_mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
            break;
        case MXP_ROUND_TOWARD_ZERO: ki = _mm256_cvttps_epi32(q); break;
        default:
            if (mxcsr) {
                ki = _mm256_cvttps_epi32(_mm256_add_ps(q, _mm256_set1_ps(0.5f)));
            } else {
                const __m256 t = _mm256_round_ps(q, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
                const __m256 half = _mm256_cmp_ps(_mm256_sub_ps(q, t), _mm256_set1_ps(0.5f), _CMP_GE_OQ);
                ki = _mm256_cvttps_epi32(_mm256_add_ps(t, _mm256_and_ps(half, _mm256_set1_ps(1.0f))));
            }
            break;
        }
    }
    return _mm256_add_epi32(_mm256_slli_epi32(_mm256_sub_epi32(es, MXP_V8(emin_biased)), f.mbits), ki);
}

MXP_INLINE __m256i mxp_f32_to_narrow_fp_avx2(__m256i x, mxp_narrow_fmt2 f, mxp_rounding mode, int saturate, int mxcsr)
{
    return mxp_narrow_finish_avx2(mxp_f32_narrow_fp_mag_avx2(x, f, mode, mxcsr), x, f, mode, saturate);
}

/* Whether to add one to the kept magnitude `base` (all-ones lanes). */
MXP_INLINE __m256i mxp_round_up_avx2(mxp_rounding mode, __m256i base, __m256i frac32, __m256i neg, __m256i far,
                                     __m256i rnd)
{
    const __m256i half = MXP_V8(0x80000000u);
    const __m256i zero = _mm256_setzero_si256();
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: {
        __m256i gt = mxp_cmplt_epu32_avx2(half, frac32);
        __m256i tie = _mm256_cmpeq_epi32(frac32, half);
        __m256i odd = _mm256_cmpeq_epi32(_mm256_and_si256(base, MXP_V8(1)), MXP_V8(1));
        return _mm256_or_si256(gt, _mm256_and_si256(tie, odd));
    }
    case MXP_ROUND_NEAREST_AWAY:
        return mxp_not_avx2(mxp_cmplt_epu32_avx2(frac32, half));
    case MXP_ROUND_TOWARD_ZERO:
        return zero;
    case MXP_ROUND_UP:
        return _mm256_andnot_si256(neg, _mm256_or_si256(mxp_not_avx2(_mm256_cmpeq_epi32(frac32, zero)), far));
    case MXP_ROUND_DOWN:
        return _mm256_and_si256(neg, _mm256_or_si256(mxp_not_avx2(_mm256_cmpeq_epi32(frac32, zero)), far));
    default:
        return mxp_cmplt_epu32_avx2(rnd, frac32);
    }
}

/* 8 float32 lanes to int32 lanes holding an integer in [lo, hi], rounded by
 * the mode then saturated; NaN -> 0 (cvt-round-avx512.h
 * mxp_f32_to_small_int_avx512).  rnd is r for stochastic rounding. */
MXP_INLINE __m256i mxp_f32_to_small_int_avx2(__m256i x, int lo, int hi, mxp_rounding mode, __m256i rnd)
{
    const __m256i a = _mm256_and_si256(x, MXP_V8(0x7fffffff));
    const __m256i neg = _mm256_srai_epi32(x, 31);
    const __m256i e = _mm256_srli_epi32(a, 23);
    const __m256i m = _mm256_and_si256(a, MXP_V8(0x7fffff));
    const __m256i sig = _mm256_or_si256(m, _mm256_andnot_si256(_mm256_cmpeq_epi32(e, _mm256_setzero_si256()),
                                                               MXP_V8(0x800000)));
    const __m256i d = _mm256_sub_epi32(MXP_V8(150), _mm256_max_epi32(e, MXP_V8(1)));
    const __m256i big = _mm256_cmpgt_epi32(MXP_V8(9), d); /* d <= 8: |x| >= 2^15, saturates */
    const __m256i c32 = MXP_V8(32);
    const __m256i base = _mm256_srlv_epi32(sig, d);
    const __m256i frac32 = _mm256_or_si256(_mm256_sllv_epi32(sig, _mm256_sub_epi32(c32, d)),
                                           _mm256_srlv_epi32(sig, _mm256_sub_epi32(d, c32)));
    const __m256i far = _mm256_andnot_si256(_mm256_cmpeq_epi32(sig, _mm256_setzero_si256()), _mm256_cmpgt_epi32(d, c32));
    const __m256i up = mxp_round_up_avx2(mode, base, frac32, neg, far, rnd);
    __m256i mag = _mm256_sub_epi32(base, up);
    mag = _mm256_blendv_epi8(mag, MXP_V8(1 << 16), big);
    __m256i v = _mm256_sub_epi32(_mm256_xor_si256(mag, neg), neg);
    v = _mm256_min_epi32(_mm256_max_epi32(v, MXP_V8(lo)), MXP_V8(hi));
    const __m256i nan = _mm256_cmpgt_epi32(a, MXP_V8(0x7f800000));
    return _mm256_andnot_si256(nan, v);
}

/* The same in the deterministic modes by the float unit: |x| above 256
 * (inf too) is clamped to 256 first, which every mode keeps and the clamp
 * to [lo, hi] then clips; float32 subnormals become 2^-126 + their bits
 * (the same result in every mode, no microcode assist); vroundps with the
 * mode (nearest away: truncated, plus one where the exact remainder is at
 * least 1/2), then a truncating conversion, exact.  NaN -> 0. */
MXP_INLINE __m256i mxp_f32_to_small_int_fp_avx2(__m256i x, int lo, int hi, mxp_rounding mode)
{
    const __m256i a = _mm256_and_si256(x, MXP_V8(0x7fffffff));
    const __m256i signbit = _mm256_and_si256(x, MXP_V8(0x80000000u));
    const __m256i big = _mm256_cmpgt_epi32(a, MXP_V8(0x43800000)); /* 256.0f, inf, NaN */
    const __m256i nan = _mm256_cmpgt_epi32(a, MXP_V8(0x7f800000));
    const __m256i sub = _mm256_cmpgt_epi32(MXP_V8(0x800000), a);
    __m256i c = _mm256_blendv_epi8(x, _mm256_or_si256(signbit, MXP_V8(0x43800000)), big);
    c = _mm256_or_si256(c, _mm256_andnot_si256(_mm256_cmpeq_epi32(a, _mm256_setzero_si256()),
                                               _mm256_and_si256(sub, MXP_V8(0x800000))));
    const __m256 f = _mm256_castsi256_ps(c);
    __m256 k;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: k = _mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); break;
    case MXP_ROUND_TOWARD_ZERO: k = _mm256_round_ps(f, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); break;
    case MXP_ROUND_UP: k = _mm256_round_ps(f, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); break;
    case MXP_ROUND_DOWN: k = _mm256_round_ps(f, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); break;
    default: {
        const __m256 t = _mm256_round_ps(f, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256 absmask = _mm256_castsi256_ps(MXP_V8(0x7fffffff));
        const __m256 half = _mm256_cmp_ps(_mm256_and_ps(_mm256_sub_ps(f, t), absmask), _mm256_set1_ps(0.5f), _CMP_GE_OQ);
        const __m256 one = _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_castsi256_ps(signbit));
        k = _mm256_add_ps(t, _mm256_and_ps(half, one));
        break;
    }
    }
    __m256i v = _mm256_cvttps_epi32(k);
    v = _mm256_min_epi32(_mm256_max_epi32(v, MXP_V8(lo)), MXP_V8(hi));
    return _mm256_andnot_si256(nan, v);
}

/* The same in int32 lanes, x clamped to [lo, hi] first by vminps/vmaxps
 * (NaN -> 0 after), rounded by the conversion itself where it can
 * (nearest even: vcvtps2dq where the caller runs in the library's MXCSR,
 * mxcsr_is_rne; toward zero: vcvttps2dq), else by vroundps.  For int8 and
 * uint8 [-256, 256] and the saturating packs after (mxp_f32_to_int_sat_avx2,
 * mxp_pack_s8_avx2, mxp_pack_u8_avx2); for the sub-byte integers their own
 * range, so no clamp after: with integer bounds, clamping then rounding
 * gives rounding then clamping (both monotonic, the bounds fixed points).
 * No subnormal fix-up: these instructions take no microcode assist for one
 * and flushing is not in effect (the library's MXCSR). */
MXP_INLINE __m256i mxp_f32_to_int_clamped_avx2(__m256i x, mxp_rounding mode, int mxcsr_is_rne, float lo, float hi)
{
    const __m256 f = _mm256_castsi256_ps(x);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, MXP_V8(0x7fffffff)), MXP_V8(0x7f800000));
    const __m256 c = _mm256_min_ps(_mm256_max_ps(f, _mm256_set1_ps(lo)), _mm256_set1_ps(hi));
    __m256i v;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN:
        v = mxcsr_is_rne ? _mm256_cvtps_epi32(c)
                         : _mm256_cvttps_epi32(_mm256_round_ps(c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        break;
    case MXP_ROUND_TOWARD_ZERO: v = _mm256_cvttps_epi32(c); break;
    case MXP_ROUND_UP: v = _mm256_cvttps_epi32(_mm256_round_ps(c, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)); break;
    case MXP_ROUND_DOWN: v = _mm256_cvttps_epi32(_mm256_round_ps(c, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)); break;
    default: {
        const __m256 t = _mm256_round_ps(c, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256 signbit = _mm256_castsi256_ps(MXP_V8(0x80000000u));
        const __m256 half = _mm256_cmp_ps(_mm256_andnot_ps(signbit, _mm256_sub_ps(c, t)), _mm256_set1_ps(0.5f), _CMP_GE_OQ);
        const __m256 one = _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_and_ps(c, signbit));
        v = _mm256_cvttps_epi32(_mm256_add_ps(t, _mm256_and_ps(half, one)));
        break;
    }
    }
    return _mm256_andnot_si256(nan, v);
}

MXP_INLINE __m256i mxp_f32_to_int_sat_avx2(__m256i x, mxp_rounding mode, int mxcsr_is_rne)
{
    return mxp_f32_to_int_clamped_avx2(x, mode, mxcsr_is_rne, -256.0f, 256.0f);
}

MXP_INLINE __m256i mxp_pack_s8_avx2(__m256i r0, __m256i r1, __m256i r2, __m256i r3)
{
    __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(r0, r1), _mm256_packs_epi32(r2, r3));
    return _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

MXP_INLINE __m256i mxp_pack_u8_avx2(__m256i r0, __m256i r1, __m256i r2, __m256i r3)
{
    __m256i b = _mm256_packus_epi16(_mm256_packs_epi32(r0, r1), _mm256_packs_epi32(r2, r3));
    return _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* Packing 32-bit lanes holding 16-bit (8-bit) values, in order. */
MXP_INLINE __m256i mxp_pack16_avx2(__m256i r0, __m256i r1)
{
    return _mm256_permute4x64_epi64(_mm256_packus_epi32(r0, r1), 0xd8);
}

MXP_INLINE __m256i mxp_pack8_avx2(__m256i r0, __m256i r1, __m256i r2, __m256i r3)
{
    __m256i b = _mm256_packus_epi16(_mm256_packus_epi32(r0, r1), _mm256_packus_epi32(r2, r3));
    return _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* 32 result bytes b with their signs: sg's bytes have the sign in their
 * top bit (a saturating pack of the source patterns keeps a negative one
 * negative), moved to the target's sign bit (float6/float4: a lower one);
 * fnuz: no -0, a zero result stays +0.  In the packs' lane order. */
MXP_INLINE __m256i mxp_narrow_signs32_avx2(__m256i b, __m256i sg, mxp_narrow_fmt2 f)
{
    if (f.bits < 8)
        sg = _mm256_srli_epi16(sg, 8 - f.bits);
    sg = _mm256_and_si256(sg, _mm256_set1_epi8((char)(1u << (f.bits - 1))));
    if (f.style == MXP_NARROW_FNUZ)
        sg = _mm256_andnot_si256(_mm256_cmpeq_epi8(b, _mm256_setzero_si256()), sg);
    return _mm256_or_si256(b, sg);
}

/* mxp_narrow_finish_avx2 for 32 lanes at once, into 32 bytes in order:
 * one test for infinities and NaNs (the largest magnitude), the signs
 * packed with the magnitudes' packs (vpacksswb keeps a negative pattern
 * negative: a byte with its top bit set) and one permute for both; a
 * float6/float4 sign shifted to its bit. */
MXP_INLINE __m256i mxp_narrow_finish32_avx2(__m256i r[4], const __m256i x[4], mxp_narrow_fmt2 f, mxp_rounding mode,
                                            int saturate)
{
    const mxp_narrow_encs2 e = mxp_narrow_encs_avx2(f, saturate);
    for (int k = 0; k < 4; k++)
        r[k] = mxp_narrow_clamp_avx2(r[k], x[k], e, mode);
    const __m256i amax = _mm256_max_epu32(_mm256_max_epu32(_mm256_and_si256(x[0], MXP_V8(0x7fffffff)),
                                                           _mm256_and_si256(x[1], MXP_V8(0x7fffffff))),
                                          _mm256_max_epu32(_mm256_and_si256(x[2], MXP_V8(0x7fffffff)),
                                                           _mm256_and_si256(x[3], MXP_V8(0x7fffffff))));
    const __m256i any = _mm256_cmpgt_epi32(amax, MXP_V8(0x7f7fffff));
    __m256i flip = _mm256_setzero_si256(); /* finite: NaN lanes' sign bytes flipped */
    if (!_mm256_testz_si256(any, any)) {
        __m256i nan[4];
        for (int k = 0; k < 4; k++)
            r[k] = mxp_narrow_special_avx2(r[k], x[k], f, e, &nan[k]);
        if (f.style == MXP_NARROW_FINITE)
            flip = _mm256_packs_epi16(_mm256_packs_epi32(nan[0], nan[1]), _mm256_packs_epi32(nan[2], nan[3]));
    }
    const __m256i b = _mm256_packus_epi16(_mm256_packus_epi32(r[0], r[1]), _mm256_packus_epi32(r[2], r[3]));
    const __m256i sg =
        _mm256_xor_si256(_mm256_packs_epi16(_mm256_packs_epi32(x[0], x[1]), _mm256_packs_epi32(x[2], x[3])), flip);
    return _mm256_permutevar8x32_epi32(mxp_narrow_signs32_avx2(b, sg, f), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

MXP_INLINE void mxp_store256_avx2(void *d, __m256i r, int stream)
{
    if (stream)
        _mm256_stream_si256((__m256i *)d, r);
    else
        _mm256_storeu_si256((__m256i *)d, r);
}

#endif

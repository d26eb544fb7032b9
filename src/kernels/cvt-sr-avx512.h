/* Stochastic rounding with AVX-512F: float32, bf16, f16, e4m3, e5m2, s8, u8
 * -> f16, e4m3, e5m2, s8, u8 (narrowing pairs), f16 -> bf16 and float64 ->
 * bf16, f16, e4m3, e5m2, s8, 16 lanes a vector (mxp_stream_loop): the loops
 * of the src/kernels/<src>-<dst>-vcvt/avx512f.c kernels named _sr.  The general
 * kernels (cvt-f32-avx512.h, cvt-f64-avx512.h) shift each lane by its own
 * count; these use one fixed shift for every lane.  Same bits
 * as the reference: the magnitude rounds up iff r < floor(frac * 2^32),
 * frac the discarded part of one target ulp.
 *
 * Target normal range (|x| >= 2^emin, the smallest normal): d low bits of
 * the significand are dropped (d = 23 - M from float32, 52 - M from float64)
 *
 *     |x| bits:  [ exponent | M kept bits | d dropped bits ]
 *
 * and r < floor(frac * 2^32) exactly when the top min(d, 32) dropped bits
 * plus as many top bits of ~r carry out, so adding (~r) >> (32 - d) to the
 * bits of |x| ((~r) << (d - 32) for float64) and keeping the top field
 * rounds; a carry out of the mantissa lands on the next binade's first
 * value.  The kept field minus the exponent rebias is the target's pattern.
 *
 * Below it (target subnormals, zeros, source subnormals) the ulp is the
 * fixed 2^(emin - M): y = |x| + 2^emin, rounded toward zero, has the fixed
 * exponent emin, its kept field is the subnormal result, and its d dropped
 * bits are the top d bits of frac, so the same add and shift applies.  y
 * loses the bits of |x| below 2^(emin - 23) (float32): when r's top d bits
 * equal y's dropped bits (a chance of 2^-d) those decide, and the vector is
 * redone exactly: q = |x| * 2^(M - emin) (a power of two), floor(q) and
 * floor((q - floor(q)) * 2^32), every step exact.  From float64, d >= 32:
 * y always holds frac's top 32 bits.  int8 is the same with the ulp 1:
 * y = min(|x|, 256) + 256 keeps 15 bits of fraction.
 *
 * Overflow, inf and NaN (rare: a compare on the way) are fixed up in the
 * lanes.  No result depends on MXCSR (the float operations have explicit
 * rounding and flushing a subnormal input gives the same y), so the kernels
 * run in the library's MXCSR with DAZ set: on Intel cores a subnormal
 * operand of vfmadd costs a microcode assist (the benchmark's sources, one
 * value in 61 subnormal: float32 -> float16 3.0 -> 1.0 ns an element, one
 * thread, Xeon).  Forward, reading a vector before writing it: in-place
 * narrowing works. */
#ifndef MXP_KERNELS_CVT_SR_AVX512_H
#define MXP_KERNELS_CVT_SR_AVX512_H

#include "core/fpenv.h"
#include "kernels/cvt-round-avx512.h"
#include "kernels/cvt-sr-targets.h"
#include "kernels/cvt-widen-avx512.h"

_Static_assert((int)MXP_SR_FNUZ == (int)MXP_NARROW_FNUZ_512 && (int)MXP_SR_FINITE == (int)MXP_NARROW_FINITE_512,
               "the styles' values");

MXP_INLINE unsigned mxp_sr_max_enc(mxp_sr_fmt f)
{
    unsigned eall = (1u << (f.bits - 1 - f.mbits)) - 1, mmask = (1u << f.mbits) - 1;
    return f.has_inf ? ((eall - 1) << f.mbits) | mmask : (eall << f.mbits) | (mmask - 1);
}

/* The encoding of an overflowing finite value or an infinity (stochastic
 * rounding overflows to infinity, float8_e4m3fn's NaN, unless saturating);
 * NaN keeps its quiet bit and top payload bits (float8_e4m3fn: 0x7f). */
MXP_INLINE __m512i mxp_sr_edge_lanes_avx512(__m512i r, __mmask16 edge, __mmask16 nan, __m512i payload, mxp_sr_fmt f,
                                            int saturate)
{
    const unsigned eall = (1u << (f.bits - 1 - f.mbits)) - 1, mmask = (1u << f.mbits) - 1;
    const unsigned max_enc = f.style ? (eall << f.mbits) | mmask : mxp_sr_max_enc(f); /* fnuz, finite: all finite */
    const unsigned nan_enc = f.style == MXP_NARROW_FNUZ_512 ? 1u << (f.bits - 1) /* the -0 pattern */
                             : f.style                      ? 0 /* finite: the zero of the other sign (the caller's) */
                             : f.has_inf                    ? (eall << f.mbits) | (1u << (f.mbits - 1))
                                                            : (eall << f.mbits) | mmask;
    const unsigned big = saturate || f.style == MXP_NARROW_FINITE_512 ? max_enc : f.has_inf ? eall << f.mbits : nan_enc;
    r = _mm512_mask_mov_epi32(r, edge, _mm512_set1_epi32((int)big));
    __m512i nan_bits = _mm512_set1_epi32((int)nan_enc);
    if (f.has_inf)
        nan_bits = _mm512_or_si512(nan_bits, payload);
    return _mm512_mask_mov_epi32(r, nan, nan_bits);
}

/* Lanes below the target's normal range: floor(q) + (r < floor(frac(q) * 2^32)),
 * q = |x| / the target's smallest subnormal. */
MXP_INLINE __m512i mxp_sr_f32_tiny_avx512(__m512i r, __mmask16 tiny, __m512i a, __m512i rnd, mxp_sr_fmt f)
{
    const int emin = 1 - f.bias;
    const __m512 q = _mm512_mul_ps(_mm512_castsi512_ps(a), _mm512_set1_ps((float)(1u << (f.mbits - emin))));
    const __m512 frac = _mm512_reduce_ps(q, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m512i frac32 = _mm512_cvttps_epu32(_mm512_mul_ps(frac, _mm512_set1_ps(4294967296.0f)));
    r = _mm512_mask_mov_epi32(r, tiny, _mm512_cvttps_epi32(q));
    return _mm512_mask_add_epi32(r, tiny & _mm512_cmplt_epu32_mask(rnd, frac32), r, _mm512_set1_epi32(1));
}

/* Target bits of 16 float32 lanes in the low 8/16 bits of each lane.
 *
 * Lanes below the target's normal range take the same arithmetic on the
 * bits of y = |x| + 2^emin rounded toward zero (2^emin: the smallest
 * normal): y's exponent is fixed, its kept field is the subnormal result
 * and its d dropped bits the top d bits of frac * 2^32.  The carry then
 * decides as for a normal lane unless r's top d bits equal those d bits
 * (a chance of 2^-d), when the rest of frac, lost in y, decides: such
 * vectors, and those with overflow, inf or NaN, go the slow way. */
MXP_INLINE __m512i mxp_sr_f32_float16_avx512(__m512i x, __m512i nr, mxp_sr_fmt f, int saturate)
{
    const int d = 23 - f.mbits;
    const int emin = 1 - f.bias;
    const __m512i min_normal = _mm512_set1_epi32((127 + emin) << 23);
    const __m512i low = _mm512_set1_epi32((1 << d) - 1);
    const __m512i a = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
    const __m512i c = _mm512_srli_epi32(nr, 32 - d);
    /* y/2 = (|x| + 2^emin) / 2 toward zero: y's bits one binade down, so
     * that the normal lanes' rebias removes y's exponent.  It is above |x|
     * exactly when |x| < 2^emin. */
    const __m512 half_min_normal = _mm512_set1_ps((float)__builtin_ldexp(1.0, emin - 1));
    const __m512 y2 = _mm512_fmadd_round_ps(_mm512_castsi512_ps(a), _mm512_set1_ps(0.5f), half_min_normal,
                                            _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m512i s = _mm512_add_epi32(_mm512_max_epu32(a, _mm512_castps_si512(y2)), c);
    __m512i r = _mm512_sub_epi32(_mm512_srli_epi32(s, d), _mm512_set1_epi32((127 - f.bias) << f.mbits));
    /* ties of the top d bits (normal lanes too: they cost time only) */
    const __mmask16 tie = _mm512_cmpeq_epi32_mask(_mm512_and_si512(s, low), low);
    const __mmask16 edge = _mm512_cmpge_epu32_mask(s, _mm512_set1_epi32((int)f.ovf_bits)); /* inf, NaN too */
    if (!_kortestz_mask16_u8(tie, edge)) {
        if (f.style) /* fnuz, float6/float4: their own special values; the vector the exact way */
            return mxp_f32_to_narrow_avx512(x, (mxp_narrow_fmt){ f.bits, f.mbits, f.bias, f.has_inf, f.style },
                                            MXP_ROUND_STOCHASTIC, saturate,
                                            _mm512_ternarylogic_epi32(nr, nr, nr, 0x55)); /* r */
        r = mxp_sr_f32_tiny_avx512(r, _mm512_cmplt_epu32_mask(a, min_normal), a,
                                   _mm512_ternarylogic_epi32(nr, nr, nr, 0x55), f);
        const __mmask16 nan = _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(0x7f800000));
        r = mxp_sr_edge_lanes_avx512(r, edge, nan,
                                     _mm512_srli_epi32(_mm512_and_si512(a, _mm512_set1_epi32(0x7fffff)), d), f,
                                     saturate);
    }
    /* r | the sign, moved to the target's top bit (fnuz: not on a zero, whose -0 pattern is the NaN) */
    const __m512i out =
        _mm512_ternarylogic_epi32(r, _mm512_srli_epi32(x, 32 - f.bits), _mm512_set1_epi32(1 << (f.bits - 1)), 0xf8);
    return f.style == MXP_NARROW_FNUZ_512 ? _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(r, r), out) : out;
}

/* 16 float32 lanes to int8 (uint8) bytes: floor(|x|) plus the random
 * carry, with x's sign, saturated by the narrowing; NaN -> 0.  |x| is
 * clamped to 256 first (NaN too, then zeroed), which every result keeps. */
MXP_INLINE __m128i mxp_sr_f32_int8_exact_avx512(__m512i x, __m512i rnd, int is_unsigned)
{
    const __m512i a = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(0x7f800000));
    const __mmask16 neg = _mm512_movepi32_mask(x);
    const __m512 q = _mm512_castsi512_ps(_mm512_maskz_min_epu32((__mmask16)~nan, a, _mm512_set1_epi32(0x43800000)));
    const __m512 frac = _mm512_reduce_ps(q, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m512i frac32 = _mm512_cvttps_epu32(_mm512_mul_ps(frac, _mm512_set1_ps(4294967296.0f)));
    __m512i mag = _mm512_cvttps_epi32(q);
    mag = _mm512_mask_add_epi32(mag, _mm512_cmplt_epu32_mask(rnd, frac32), mag, _mm512_set1_epi32(1));
    if (is_unsigned)
        return _mm512_cvtusepi32_epi8(_mm512_maskz_mov_epi32((__mmask16)~neg, mag));
    return _mm512_cvtsepi32_epi8(_mm512_mask_sub_epi32(mag, neg, _mm512_setzero_si512(), mag));
}

/* The same by the carry: y = min(|x|, 256) + 256 toward zero holds
 * floor(|x|) above 15 bits of fraction, which decide unless r's top 15 bits
 * equal them (a chance of 2^-15: then the vector is done exactly). */
MXP_INLINE __m128i mxp_sr_f32_int8_avx512(__m512i x, __m512i nr, int is_unsigned)
{
    const __m512i a = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(0x7f800000));
    const __m512 q = _mm512_castsi512_ps(_mm512_maskz_min_epu32((__mmask16)~nan, a, _mm512_set1_epi32(0x43800000)));
    const __m512i y = _mm512_castps_si512(_mm512_add_round_ps(q, _mm512_set1_ps(256.0f), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
    const __m512i s = _mm512_add_epi32(y, _mm512_srli_epi32(nr, 17));
    const __m512i low = _mm512_set1_epi32(0x7fff);
    if (_mm512_cmpeq_epi32_mask(_mm512_and_si512(s, low), low))
        return mxp_sr_f32_int8_exact_avx512(x, _mm512_ternarylogic_epi32(nr, nr, nr, 0x55), is_unsigned);
    const __m512i mag = _mm512_sub_epi32(_mm512_srli_epi32(s, 15), _mm512_set1_epi32(0x43800000 >> 15)); /* 256.0f */
    const __mmask16 neg = _mm512_movepi32_mask(x);
    if (is_unsigned)
        return _mm512_cvtusepi32_epi8(_mm512_maskz_mov_epi32((__mmask16)~neg, mag));
    return _mm512_cvtsepi32_epi8(_mm512_mask_sub_epi32(mag, neg, _mm512_setzero_si512(), mag));
}

/* The targets and formats: cvt-sr-targets.h */

/* int8's (uint8's) bytes b clamped to a sub-byte integer target (signed: its low bits) */
MXP_INLINE __m128i mxp_sr_sub_byte_avx512(__m128i b, mxp_sr_target t)
{
    const int hi = mxp_sr_hi(t);
    if (!mxp_sr_signed(t))
        return _mm_min_epu8(b, _mm_set1_epi8((char)hi));
    return _mm_and_si128(_mm_max_epi8(_mm_min_epi8(b, _mm_set1_epi8((char)hi)), _mm_set1_epi8((char)(-hi - 1))),
                         _mm_set1_epi8((char)(2 * hi + 1)));
}

/* What the loops' steps are given; idx: lo32 of element 0's index in every
 * lane's place. */
typedef struct mxp_sr_ctx {
    mxp_sr_target t;
    mxp_src_kind sk; /* the float32 path's source */
    int saturate;
    __m512i idx;
    mxp_sr_key key;
} mxp_sr_ctx;

/* ~r of the 16 elements from i */
MXP_INLINE __m512i mxp_sr_nr_avx512(const mxp_sr_ctx *c, size_t i)
{
    return mxp_sr_mix_not_avx512(_mm512_add_epi32(c->idx, _mm512_set1_epi32((int)i)), c->key);
}

/* The loop (mxp_stream_loop: large outputs bypass the cache, as memcpy
 * does; the head is converted until dst is aligned) in the library's MXCSR
 * with DAZ (above). */
MXP_INLINE void mxp_sr_loop_avx512(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_sr_target t,
                                   mxp_src_kind sk, mxp_stream_shape sh, mxp_stream_full_fn *full,
                                   mxp_stream_part_fn *part)
{
    const mxp_sr_ctx c = { t, sk, p->overflow == MXP_OVERFLOW_SATURATE, mxp_sr_index_avx512(p->index0),
                           mxp_sr_key_for(p->seed, p->index0) };
    const mxp_fpenv env = mxp_fpenv_enter();
    const unsigned csr = _mm_getcsr();
    _mm_setcsr(csr | 0x40u); /* DAZ */
    mxp_stream_loop(dst, src, n, sh, full, part, &c);
    _mm_setcsr((csr & ~(unsigned)MXP_MXCSR_FLAGS) | (_mm_getcsr() & MXP_MXCSR_FLAGS));
    mxp_fpenv_leave(env);
}

/* The source of the float32 path: float32 itself, or a narrow type widened
 * exactly in registers (one pass: the float32 core rounds; float32 holds
 * every bf16, f16, float8 and 8-bit integer value). */
MXP_INLINE __m512i mxp_sr_load_f32_bits_avx512(const void *src, size_t i, __mmask16 mask, mxp_src_kind sk)
{
    if (sk == SRC_F32) {
        const float *s = (const float *)src + i;
        return mask == 0xffff ? _mm512_loadu_si512((const void *)s) : _mm512_maskz_loadu_epi32(mask, s);
    }
    return _mm512_castps_si512(mxp_widen16_avx512(src, i, sk, mask));
}

/* Elements [i, i + 16) under mask (all ones but at the head and tail). */
MXP_INLINE void mxp_sr_f32_step_avx512(void *dst, const void *src, size_t i, __mmask16 mask, mxp_sr_target t,
                                       __m512i nr, int saturate, int stream, mxp_src_kind sk)
{
    const __m512i x = mxp_sr_load_f32_bits_avx512(src, i, mask, sk);
    if (t == SR_S8 || t == SR_U8)
        mxp_store16_avx512((uint8_t *)dst + i, _mm256_castsi128_si256(mxp_sr_f32_int8_avx512(x, nr, t == SR_U8)), 1, mask,
                           stream);
    else if (t >= SR_S4)
        mxp_store16_avx512((uint8_t *)dst + i,
                           _mm256_castsi128_si256(mxp_sr_sub_byte_avx512(
                               mxp_sr_f32_int8_avx512(x, nr, !mxp_sr_signed(t)), t)),
                           1, mask, stream);
    else if (t == SR_BF16) /* the float32 -> bf16 add-and-shift, which takes r itself */
        mxp_store16_avx512((uint16_t *)dst + i,
                           _mm512_cvtepi32_epi16(mxp_f32_to_bf16_avx512(x, MXP_ROUND_STOCHASTIC, saturate,
                                                                        _mm512_ternarylogic_epi32(nr, nr, nr, 0x55))),
                           2, mask, stream);
    else if (t == SR_F16)
        mxp_store16_avx512((uint16_t *)dst + i,
                           _mm512_cvtepi32_epi16(mxp_sr_f32_float16_avx512(x, nr, mxp_sr_fmts[t], saturate)), 2, mask,
                           stream);
    else
        mxp_store16_avx512((uint8_t *)dst + i,
                           _mm256_castsi128_si256(_mm512_cvtepi32_epi8(mxp_sr_f32_float16_avx512(x, nr, mxp_sr_fmts[t],
                                                                                                saturate))),
                           1, mask, stream);
}

/* Two vectors a full step: independent work for the out-of-order core. */
MXP_INLINE void mxp_sr_f32_full_avx512(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    const mxp_sr_ctx *c = ctx;
    const __m512i nr0 = mxp_sr_nr_avx512(c, i), nr1 = mxp_sr_nr_avx512(c, i + 16);
    mxp_sr_f32_step_avx512(dst, src, i, 0xffff, c->t, nr0, c->saturate, stream, c->sk);
    mxp_sr_f32_step_avx512(dst, src, i + 16, 0xffff, c->t, nr1, c->saturate, stream, c->sk);
}

/* count < 32: the head (fewer than 16, up to dst's alignment) or the tail */
MXP_INLINE void mxp_sr_f32_part_avx512(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    const mxp_sr_ctx *c = ctx;
    if (count >= 16) {
        mxp_sr_f32_step_avx512(dst, src, i, 0xffff, c->t, mxp_sr_nr_avx512(c, i), c->saturate, 0, c->sk);
        i += 16;
        count -= 16;
    }
    if (count)
        mxp_sr_f32_step_avx512(dst, src, i, (__mmask16)((1u << count) - 1), c->t, mxp_sr_nr_avx512(c, i), c->saturate,
                               0, c->sk);
}

MXP_INLINE void mxp_sr_f32_avx512(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_sr_target t,
                                  mxp_src_kind sk)
{
    const size_t in_size = sk == SRC_F32 ? 4 : sk == SRC_BF16 || sk == SRC_F16 ? 2 : 1, os = mxp_sr_out_size(t);
    mxp_sr_loop_avx512(dst, src, n, p, t, sk, (mxp_stream_shape){ in_size, os, 32, 16 * os }, mxp_sr_f32_full_avx512,
                       mxp_sr_f32_part_avx512);
}

/* ---- float64 -> bf16, f16, e4m3, e5m2, s8 ---------------------------------
 * The same on 64-bit lanes, two vectors of 8 a step: the random bits go in
 * at (~r) << (d - 32) (bits of frac below its top 32 cannot carry past
 * them), and each half's kept field is narrowed to 32-bit lanes.  Below the
 * normal range y = |x| + 2^emin keeps d >= 32 dropped bits (int8: 44), so
 * the carry always decides: no slow way but for overflow, inf and NaN. */
MXP_INLINE __m512i mxp_sr_cat256_avx512(__m256i lo, __m256i hi)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

MXP_INLINE __m512i mxp_sr_narrow_pair_avx512(__m512i lo, __m512i hi)
{
    return mxp_sr_cat256_avx512(_mm512_cvtepi64_epi32(lo), _mm512_cvtepi64_epi32(hi));
}

MXP_INLINE __m512i mxp_sr_widen_nr_avx512(__m512i nr, int half, int shift)
{
    const __m256i h = half ? _mm512_extracti64x4_epi64(nr, 1) : _mm512_castsi512_si256(nr);
    return _mm512_slli_epi64(_mm512_cvtepu32_epi64(h), shift);
}

/* |x| + the random bits c, below the normal range on y's bits one binade
 * down (as for float32). */
MXP_INLINE __m512i mxp_sr_f64_sum8_avx512(__m512i a, __m512i c, double half_min_normal)
{
    const __m512d y2 = _mm512_fmadd_round_pd(_mm512_castsi512_pd(a), _mm512_set1_pd(0.5), _mm512_set1_pd(half_min_normal),
                                             _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    return _mm512_add_epi64(_mm512_max_epu64(a, _mm512_castpd_si512(y2)), c);
}

/* Target bits of 16 float64 lanes (x0: the low 8) in the low 8/16 bits of
 * 32-bit lanes. */
MXP_INLINE __m512i mxp_sr_f64_float_avx512(__m512i x0, __m512i x1, __m512i nr, mxp_sr_fmt f, int saturate)
{
    const int d = 52 - f.mbits;
    const int emin = 1 - f.bias;
    const double half_min_normal = __builtin_ldexp(1.0, emin - 1);
    const __m512i abs = _mm512_set1_epi64(0x7fffffffffffffffll);
    const __m512i a0 = _mm512_and_si512(x0, abs), a1 = _mm512_and_si512(x1, abs);
    const __m512i s0 = mxp_sr_f64_sum8_avx512(a0, mxp_sr_widen_nr_avx512(nr, 0, d - 32), half_min_normal);
    const __m512i s1 = mxp_sr_f64_sum8_avx512(a1, mxp_sr_widen_nr_avx512(nr, 1, d - 32), half_min_normal);
    const __m512i k = mxp_sr_narrow_pair_avx512(_mm512_srli_epi64(s0, d), _mm512_srli_epi64(s1, d)); /* < 2^(64 - d) */
    __m512i r = _mm512_sub_epi32(k, _mm512_set1_epi32((1023 - f.bias) << f.mbits));
    /* at or past the first overflowing magnitude (its float32 field, rebiased): inf, NaN too */
    const unsigned ovf_k = (f.ovf_bits >> (23 - f.mbits)) + ((1023u - 127u) << f.mbits);
    const __mmask16 edge = _mm512_cmpge_epu32_mask(k, _mm512_set1_epi32((int)ovf_k));
    __mmask16 flip = 0;
    if (edge) {
        const __m512i inf = _mm512_set1_epi64(0x7ff0000000000000ll), mmask = _mm512_set1_epi64(0xfffffffffffffll);
        const __mmask16 nan = (__mmask16)(_mm512_cmpgt_epu64_mask(a0, inf) | (unsigned)_mm512_cmpgt_epu64_mask(a1, inf) << 8);
        const __m512i payload = mxp_sr_narrow_pair_avx512(_mm512_srli_epi64(_mm512_and_si512(a0, mmask), d),
                                                          _mm512_srli_epi64(_mm512_and_si512(a1, mmask), d));
        r = mxp_sr_edge_lanes_avx512(r, edge, nan, payload, f, saturate);
        if (f.style == MXP_NARROW_FINITE_512) /* NaN: the zero of the other sign */
            flip = nan;
    }
    __mmask16 neg = (__mmask16)(_mm512_movepi64_mask(x0) | (unsigned)_mm512_movepi64_mask(x1) << 8) ^ flip;
    if (f.style == MXP_NARROW_FNUZ_512) /* no -0: a zero result is +0 */
        neg &= _mm512_test_epi32_mask(r, r);
    return _mm512_mask_or_epi32(r, neg, r, _mm512_set1_epi32(1 << (f.bits - 1)));
}

/* 16 float64 lanes to int8 (uint8) bytes, as sr_f32_int8: y = min(|x|, 256)
 * + 256 toward zero keeps 44 bits of fraction, more than the 32 that
 * decide. */
MXP_INLINE __m512i mxp_sr_f64_mag8_avx512(__m512i x, __m512i c)
{
    const __m512i a = _mm512_and_si512(x, _mm512_set1_epi64(0x7fffffffffffffffll));
    const __mmask8 nan = _mm512_cmpgt_epu64_mask(a, _mm512_set1_epi64(0x7ff0000000000000ll));
    const __m512d q = _mm512_castsi512_pd(_mm512_maskz_min_epu64((__mmask8)~nan, a, _mm512_set1_epi64(0x4070000000000000ll)));
    const __m512i y = _mm512_castpd_si512(_mm512_add_round_pd(q, _mm512_set1_pd(256.0), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
    return _mm512_srli_epi64(_mm512_add_epi64(y, c), 44);
}

MXP_INLINE __m128i mxp_sr_f64_int8_avx512(__m512i x0, __m512i x1, __m512i nr, int is_unsigned)
{
    const __m512i k = mxp_sr_narrow_pair_avx512(mxp_sr_f64_mag8_avx512(x0, mxp_sr_widen_nr_avx512(nr, 0, 12)),
                                                mxp_sr_f64_mag8_avx512(x1, mxp_sr_widen_nr_avx512(nr, 1, 12)));
    const __m512i mag = _mm512_sub_epi32(k, _mm512_set1_epi32(0x4070000000000000ll >> 44)); /* 256.0 */
    const __mmask16 neg = (__mmask16)(_mm512_movepi64_mask(x0) | (unsigned)_mm512_movepi64_mask(x1) << 8);
    if (is_unsigned)
        return _mm512_cvtusepi32_epi8(_mm512_maskz_mov_epi32((__mmask16)~neg, mag));
    return _mm512_cvtsepi32_epi8(_mm512_mask_sub_epi32(mag, neg, _mm512_setzero_si512(), mag));
}

MXP_INLINE void mxp_sr_f64_step_avx512(void *dst, const double *src, size_t i, __mmask16 mask, mxp_sr_target t,
                                       __m512i nr, int saturate, int stream)
{
    __m512i x0, x1;
    if (mask == 0xffff) {
        x0 = _mm512_loadu_si512((const void *)(src + i));
        x1 = _mm512_loadu_si512((const void *)(src + i + 8));
    } else {
        x0 = _mm512_maskz_loadu_epi64((__mmask8)mask, src + i);
        x1 = _mm512_maskz_loadu_epi64((__mmask8)(mask >> 8), src + i + 8);
    }
    if (t == SR_S8 || t == SR_U8)
        mxp_store16_avx512((uint8_t *)dst + i, _mm256_castsi128_si256(mxp_sr_f64_int8_avx512(x0, x1, nr, t == SR_U8)), 1,
                           mask, stream);
    else if (t >= SR_S4)
        mxp_store16_avx512((uint8_t *)dst + i,
                           _mm256_castsi128_si256(mxp_sr_sub_byte_avx512(
                               mxp_sr_f64_int8_avx512(x0, x1, nr, !mxp_sr_signed(t)), t)),
                           1, mask, stream);
    else if (mxp_sr_fmts[t].bits == 16)
        mxp_store16_avx512((uint16_t *)dst + i,
                           _mm512_cvtepi32_epi16(mxp_sr_f64_float_avx512(x0, x1, nr, mxp_sr_fmts[t], saturate)), 2,
                           mask, stream);
    else
        mxp_store16_avx512((uint8_t *)dst + i,
                           _mm256_castsi128_si256(_mm512_cvtepi32_epi8(mxp_sr_f64_float_avx512(x0, x1, nr,
                                                                                               mxp_sr_fmts[t], saturate))),
                           1, mask, stream);
}

MXP_INLINE void mxp_sr_f64_full_avx512(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    const mxp_sr_ctx *c = ctx;
    mxp_sr_f64_step_avx512(dst, src, i, 0xffff, c->t, mxp_sr_nr_avx512(c, i), c->saturate, stream);
}

MXP_INLINE void mxp_sr_f64_part_avx512(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    const mxp_sr_ctx *c = ctx;
    mxp_sr_f64_step_avx512(dst, src, i, (__mmask16)((1u << count) - 1), c->t, mxp_sr_nr_avx512(c, i), c->saturate, 0);
}

MXP_INLINE void mxp_sr_f64_avx512(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_sr_target t)
{
    const size_t os = mxp_sr_out_size(t);
    mxp_sr_loop_avx512(dst, src, n, p, t, SRC_F32, (mxp_stream_shape){ 8, os, 16, 16 * os }, mxp_sr_f64_full_avx512,
                       mxp_sr_f64_part_avx512);
}

#endif

/* bfloat16 and float16 -> float8/float6/float4 with AVX2 in 16-bit lanes,
 * the deterministic modes: the loop of the src/kernels/{bf16,f16}-<f8>-vcvt/
 * avx2.c kernels (stochastic rounding: the float32 core of cvt-f32-avx2.h,
 * elements widened on the stack).  The AVX2 twin of cvt-h16-f8-avx512.h's
 * method without its variable 16-bit shifts (vpsrlvw is AVX-512BW): sixteen
 * elements a vector, not eight float32 lanes, about half the operations.
 *
 *   f16   s eeeee mmmmmmmmmm     d = 10 - M
 *   bf16  s eeeeeeee mmmmmmm     d =  7 - M
 *
 * Two candidates, the smaller wins:
 *
 * - p, the target's normal range by "add, then shift" on the pattern m
 *   (sign cleared): (m - R + c) >> d, R the rebias, c the mode's carry
 *   (nearest even: 2^(d-1) - 1 + the kept lsb), carries rippling into the
 *   exponent.  m is first saturated at T, the source pattern of the
 *   target's smallest normal: below it p is the target pattern of T's
 *   value.
 *
 * - k, the value in units of the target's smallest subnormal, rounded to
 *   an integer by the float unit: |x| 2^(B-1+M) + 2^23 (one vfmadd, MXCSR
 *   set to the mode; nearest away: + 1/2 toward zero first; up and down:
 *   x signed, + 1.5 2^23) and the float's low bits.  Below T the target
 *   pattern is k (subnormals, and the first normal binade, where the
 *   quantum is the same); at and above T, k >= p (k counts in a quantum
 *   2^(e-1) times finer), and huge or special values saturate in the packs.
 *   bfloat16 widens to float32 by an unpack (its top half), under DAZ:
 *   its subnormals, far below every target's, read as 0 (no microcode
 *   assist: with them as operands, 4 GB/s instead of 20), which rounds
 *   the same but in up and down (the last bit set after); float16 by its
 *   bits shifted into a float32's (|x| 2^-112, also under DAZ, below) or
 *   by vcvtph2ps (exact: every float16 is a normal float32).
 *
 * float16 -> e5m2 and e5m2fnuz need no k: e5m2 has float16's exponent
 * range, subnormals included, so p on the pattern itself is the result;
 * e5m2fnuz's smallest normal 2^-15 lies a binade below float16's, and p
 * on the pattern of 2x (m << 1 for subnormals, the exponent plus one for
 * normals: m + min(m, 2^10), exact, its value one target exponent up;
 * above 2^15 it only reaches the clamp) is.
 *
 * Overflow is a clamp of min(p, k) at the mode's limit; infinities and
 * NaNs by mask, as each style says (cvt-round-avx2.h mxp_narrow_finish_avx2):
 * e4m3fn's only NaN S.1111.111, the IEEE-style formats' quiet NaN with
 * the top payload bits, fnuz's sign bit alone (no -0), float6/float4
 * (finite) the zero of the other sign.  Same bits as the reference
 * converter, one rounding of the exact value.  Forward, each step's input
 * read before its result is written: safe in place. */
#ifndef MXP_KERNELS_CVT_H16_F8_AVX2_H
#define MXP_KERNELS_CVT_H16_F8_AVX2_H

#include "kernels/cvt-f32-avx2.h"

#define MXP_V16(c) _mm256_set1_epi16((short)(c))

/* Whether k reads float16 as its bits shifted into a float32 (|x| 2^-112,
 * float16's subnormals float32 subnormals, read as 0 under DAZ): where
 * every float16 subnormal is below half the target's smallest subnormal
 * (bias <= 11: all but e5m2 and e5m2fnuz, which need no k), so that 0
 * rounds the same in the nearest modes and toward zero; not in up and
 * down, where a fix-up would cost more than vcvtph2ps saves. */
MXP_INLINE int mxp_h16_f8_daz_avx2(mxp_src32_avx2 sk, mxp_narrow_fmt2 t, mxp_rounding mode)
{
    return sk == SRC32_F16 && t.bias <= 11 && mode != MXP_ROUND_UP && mode != MXP_ROUND_DOWN;
}

/* k (see above) for 16 lanes: the value in units of the target's smallest
 * subnormal, rounded by MXCSR (the mode's), saturated in the packs;
 * float32 lanes in the order the packs undo (bfloat16: unpacked halves;
 * float16: the 128-bit halves of [0-3, 8-11 | 4-7, 12-15]). */
MXP_INLINE __m256i mxp_h16_k_avx2(__m256i h, __m256i m, mxp_src32_avx2 sk, mxp_narrow_fmt2 t, mxp_rounding mode)
{
    const int f16 = sk == SRC32_F16;
    const int directed = mode == MXP_ROUND_UP || mode == MXP_ROUND_DOWN;
    const int daz16 = mxp_h16_f8_daz_avx2(sk, t, mode);
    const __m256i zero = _mm256_setzero_si256(), v = directed ? h : m;
    __m256 x0, x1;
    if (f16 && !daz16) {
        const __m256i q = _mm256_permute4x64_epi64(v, _MM_SHUFFLE(3, 1, 2, 0));
        x0 = _mm256_cvtph_ps(_mm256_castsi256_si128(q));
        x1 = _mm256_cvtph_ps(_mm256_extracti128_si256(q, 1));
    } else if (f16) { /* m << 13: |x| 2^-112 */
        const __m256i lo = _mm256_slli_epi16(m, 13), hi = _mm256_srli_epi16(m, 3);
        x0 = _mm256_castsi256_ps(_mm256_unpacklo_epi16(lo, hi));
        x1 = _mm256_castsi256_ps(_mm256_unpackhi_epi16(lo, hi));
    } else {
        x0 = _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, v));
        x1 = _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, v));
    }
    const __m256 s = _mm256_castsi256_ps(_mm256_set1_epi32((127 + t.bias - 1 + t.mbits + (daz16 ? 112 : 0)) << 23));
    const int magic = directed ? 0x4b400000 : 0x4b000000; /* 1.5 * 2^23, 2^23 */
    const __m256 mg = _mm256_castsi256_ps(_mm256_set1_epi32(magic));
    if (mode == MXP_ROUND_NEAREST_AWAY) { /* toward zero: floor(q + 1/2) */
        x0 = _mm256_add_ps(_mm256_fmadd_ps(x0, s, _mm256_set1_ps(0.5f)), mg);
        x1 = _mm256_add_ps(_mm256_fmadd_ps(x1, s, _mm256_set1_ps(0.5f)), mg);
    } else {
        x0 = _mm256_fmadd_ps(x0, s, mg);
        x1 = _mm256_fmadd_ps(x1, s, mg);
    }
    const __m256i k0 = _mm256_sub_epi32(_mm256_castps_si256(x0), _mm256_set1_epi32(magic));
    const __m256i k1 = _mm256_sub_epi32(_mm256_castps_si256(x1), _mm256_set1_epi32(magic));
    /* directed: |k| of a signed k, out-of-range values to 32767 or 0x8000 */
    __m256i k = directed ? _mm256_abs_epi16(_mm256_packs_epi32(k0, k1)) : _mm256_packus_epi32(k0, k1);
    if (!f16 && directed) { /* DAZ read bfloat16 subnormals as 0: up and down round them away from it */
        const __m256i sign = _mm256_srai_epi16(h, 15);
        const __m256i tiny = _mm256_andnot_si256(_mm256_cmpeq_epi16(m, zero), _mm256_cmpgt_epi16(MXP_V16(0x80), m));
        const __m256i away = mode == MXP_ROUND_UP ? _mm256_andnot_si256(sign, tiny) : _mm256_and_si256(sign, tiny);
        k = _mm256_or_si256(k, _mm256_and_si256(away, MXP_V16(1)));
    }
    return k;
}

/* The source pattern of +infinity (NaNs above it). */
MXP_INLINE int mxp_h16_inf_avx2(mxp_src32_avx2 sk)
{
    return sk == SRC32_F16 ? 0x7c00 : 0x7f80;
}

/* 16 source lanes h (16-bit patterns, m = h without its sign) to the
 * target's magnitude bits in each lane's low byte, the sign left to the
 * caller (mxp_h16_f8_step32_avx2); special: whether some lane of the
 * step is an infinity or NaN, and then *hs (h's sign, from which the
 * caller takes the result's) flipped where float6/float4 want it. */
MXP_INLINE __m256i mxp_h16_to_f8_avx2(__m256i h, __m256i m, mxp_src32_avx2 sk, mxp_narrow_fmt2 t, mxp_rounding mode,
                                      int saturate, int special_step, __m256i *hs)
{
    const int f16 = sk == SRC32_F16;
    const int sm = f16 ? 10 : 7, sb = f16 ? 15 : 127;
    const int d = sm - t.mbits;
    const int eb = sb + 1 - t.bias, te = eb > 1 ? eb : 1;
    const int T = te << sm, TR = (te - sb + t.bias) << sm; /* T - R */
    const unsigned eall = (1u << (t.bits - 1 - t.mbits)) - 1, mmask = (1u << t.mbits) - 1;
    const unsigned max_enc = t.style     ? (eall << t.mbits) | mmask
                             : t.has_inf ? ((eall - 1) << t.mbits) | mmask
                                         : (eall << t.mbits) | (mmask - 1);
    const unsigned inf_enc = eall << t.mbits, sign_bit = 1u << (t.bits - 1);
    saturate |= t.style == MXP_NARROW_FINITE;
    const int directed = mode == MXP_ROUND_UP || mode == MXP_ROUND_DOWN;
    const __m256i zero = _mm256_setzero_si256();
    const __m256i sign = directed ? _mm256_srai_epi16(h, 15) : zero; /* the carries of up and down */

    /* p; float16 -> e5m2, e5m2fnuz (direct): no k, the pattern itself
     * (e5m2: float16's exponent range; e5m2fnuz: the pattern of 2x, m << 1
     * for subnormals, the exponent plus one for normals, exact, its value
     * one target exponent up; above 2^15 it only reaches the clamp) */
    const int direct = f16 && t.bias >= 15;
    const __m256i v = !direct ? _mm256_subs_epu16(m, MXP_V16(T))
                      : t.bias == 16 ? _mm256_add_epi16(m, _mm256_min_epu16(m, MXP_V16(0x400)))
                                     : m;
    const int o = direct ? 0 : TR; /* bit d of v + o is bit d of m, but for e5m2fnuz */
    __m256i c;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN:
        c = _mm256_add_epi16(MXP_V16(o + (1 << (d - 1)) - 1),
                             _mm256_and_si256(_mm256_srli_epi16(direct ? v : m, d), MXP_V16(1)));
        break;
    case MXP_ROUND_NEAREST_AWAY: c = MXP_V16(o + (1 << (d - 1))); break;
    case MXP_ROUND_TOWARD_ZERO: c = MXP_V16(o); break;
    case MXP_ROUND_UP: c = _mm256_add_epi16(MXP_V16(o), _mm256_andnot_si256(sign, MXP_V16((1 << d) - 1))); break;
    default: c = _mm256_add_epi16(MXP_V16(o), _mm256_and_si256(sign, MXP_V16((1 << d) - 1))); break;
    }
    const __m256i p = _mm256_srli_epi16(_mm256_add_epi16(v, c), d);

    __m256i limit = MXP_V16(max_enc);
    if (!saturate) {
        switch (mode) {
        case MXP_ROUND_TOWARD_ZERO: break;
        case MXP_ROUND_UP: limit = _mm256_add_epi16(MXP_V16(max_enc + 1), sign); break;
        case MXP_ROUND_DOWN: limit = _mm256_sub_epi16(limit, sign); break;
        default: limit = MXP_V16(max_enc + 1); break;
        }
    }
    const __m256i pk = direct ? p : _mm256_min_epu16(p, mxp_h16_k_avx2(h, m, sk, t, mode));
    __m256i r = _mm256_min_epu16(pk, limit);
    if (special_step) {
        const int inf_s = mxp_h16_inf_avx2(sk);
        const __m256i special = _mm256_cmpgt_epi16(m, MXP_V16(inf_s - 1));
        const __m256i inf = _mm256_cmpeq_epi16(m, MXP_V16(inf_s));
        const __m256i is_nan = _mm256_andnot_si256(inf, special);
        const unsigned nan_enc = t.style == MXP_NARROW_FNUZ ? sign_bit
                                 : t.style                  ? 0 /* finite: the sign flipped */
                                                            : inf_enc | mmask; /* e4m3 */
        const unsigned inf_out = saturate ? max_enc : t.has_inf ? inf_enc : nan_enc;
        __m256i nan = MXP_V16(nan_enc);
        if (t.has_inf) /* quiet, the top payload bits kept */
            nan = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(m, d), MXP_V16(mmask)),
                                  MXP_V16(inf_enc | 1u << (t.mbits - 1)));
        r = _mm256_blendv_epi8(r, nan, special);
        r = _mm256_blendv_epi8(r, MXP_V16(inf_out), inf);
        if (t.style == MXP_NARROW_FINITE) /* NaN: the zero of the other sign (ml_dtypes) */
            *hs = _mm256_xor_si256(*hs, _mm256_and_si256(is_nan, MXP_V16(0x8000)));
    }
    return r;
}

typedef struct mxp_h16_f8_ctx2 {
    mxp_src32_avx2 sk;
    mxp_narrow_fmt2 t;
    mxp_rounding mode;
    int saturate;
} mxp_h16_f8_ctx2;

/* 32 elements from s: the 32 target bytes.  The signs go in as bytes:
 * vpacksswb saturates a negative pattern to a byte with its top bit set,
 * a positive one to a byte without (fnuz: not on a zero result); one test
 * for infinities and NaNs. */
MXP_INLINE __m256i mxp_h16_f8_step32_avx2(const uint16_t *s, const mxp_h16_f8_ctx2 *c)
{
    __m256i h0 = _mm256_loadu_si256((const __m256i *)(const void *)s);
    __m256i h1 = _mm256_loadu_si256((const __m256i *)(const void *)(s + 16));
    const __m256i m0 = _mm256_and_si256(h0, MXP_V16(0x7fff)), m1 = _mm256_and_si256(h1, MXP_V16(0x7fff));
    const int special = _mm256_movemask_epi8(
        _mm256_cmpgt_epi16(_mm256_max_epu16(m0, m1), MXP_V16(mxp_h16_inf_avx2(c->sk) - 1)));
    const __m256i r0 = mxp_h16_to_f8_avx2(h0, m0, c->sk, c->t, c->mode, c->saturate, special, &h0);
    const __m256i r1 = mxp_h16_to_f8_avx2(h1, m1, c->sk, c->t, c->mode, c->saturate, special, &h1);
    const __m256i b = _mm256_packus_epi16(r0, r1);
    return _mm256_permute4x64_epi64(mxp_narrow_signs32_avx2(b, _mm256_packs_epi16(h0, h1), c->t),
                                    _MM_SHUFFLE(3, 1, 2, 0));
}

MXP_INLINE void mxp_h16_f8_full_avx2(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    mxp_store256_avx2((uint8_t *)dst + i, mxp_h16_f8_step32_avx2((const uint16_t *)src + i, ctx), stream);
}

/* count < 32 elements through a zero-padded buffer */
MXP_INLINE void mxp_h16_f8_part_avx2(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    uint16_t in[32] = { 0 };
    uint8_t out[32];
    memcpy(in, (const uint16_t *)src + i, count * sizeof in[0]);
    _mm256_storeu_si256((__m256i *)(void *)out, mxp_h16_f8_step32_avx2(in, ctx));
    memcpy((uint8_t *)dst + i, out, count);
}

MXP_INLINE void mxp_h16_f8_loop_avx2(void *dst, const void *src, size_t n, mxp_h16_f8_ctx2 c)
{
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ 2, 1, 32, 32 }, mxp_h16_f8_full_avx2, mxp_h16_f8_part_avx2, &c);
}

/* The kernels' entry: one instantiation of the loop per deterministic
 * mode, MXCSR's rounding the mode's (nearest away: toward zero) for k;
 * stochastic rounding by the float32 core. */
MXP_INLINE void mxp_h16_f8_by_mode_avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p,
                                        mxp_narrow_fmt2 t, mxp_src32_avx2 sk)
{
    if (p->rounding == MXP_ROUND_STOCHASTIC) {
        mxp_src_by_mode_avx2(dst, src, n, p, (mxp_f32_target2){ t, 0, 0, 0 }, sk);
        return;
    }
    const mxp_fpenv env = mxp_fpenv_enter();
    const unsigned csr = _mm_getcsr();
    const mxp_rounding m = p->rounding;
    const unsigned rc = mxp_mxcsr_rc_avx2(m);
    /* DAZ for bfloat16: its subnormals, float32 subnormals in k's vfmadd,
     * cost a microcode assist each on Intel (4 GB/s instead of 20 at 1%);
     * as 0 they round the same but in up and down (fixed above) */
    _mm_setcsr((csr & ~0x6000u) | rc | (sk == SRC32_BF16 || mxp_h16_f8_daz_avx2(sk, t, m) ? 0x40u : 0));
    const int sat = p->overflow == MXP_OVERFLOW_SATURATE;
    switch (m) {
    case MXP_ROUND_NEAREST_EVEN: mxp_h16_f8_loop_avx2(dst, src, n, (mxp_h16_f8_ctx2){ sk, t, MXP_ROUND_NEAREST_EVEN, sat }); break;
    case MXP_ROUND_NEAREST_AWAY: mxp_h16_f8_loop_avx2(dst, src, n, (mxp_h16_f8_ctx2){ sk, t, MXP_ROUND_NEAREST_AWAY, sat }); break;
    case MXP_ROUND_TOWARD_ZERO: mxp_h16_f8_loop_avx2(dst, src, n, (mxp_h16_f8_ctx2){ sk, t, MXP_ROUND_TOWARD_ZERO, sat }); break;
    case MXP_ROUND_UP: mxp_h16_f8_loop_avx2(dst, src, n, (mxp_h16_f8_ctx2){ sk, t, MXP_ROUND_UP, sat }); break;
    default: mxp_h16_f8_loop_avx2(dst, src, n, (mxp_h16_f8_ctx2){ sk, t, MXP_ROUND_DOWN, sat }); break;
    }
    _mm_setcsr((csr & ~(unsigned)MXP_MXCSR_FLAGS) | (_mm_getcsr() & MXP_MXCSR_FLAGS));
    mxp_fpenv_leave(env);
}

#endif

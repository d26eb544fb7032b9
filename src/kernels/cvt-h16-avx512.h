/* bfloat16 and float16 -> e4m3, e5m2 (and the 0.2 float8/float6/float4
 * formats), s8, u8 and each other with AVX-512F,
 * the deterministic modes, in one pass over 32 elements at a time: the loop
 * of the src/kernels/{bf16,f16}-<dst>-vcvt/avx512f.c kernels.
 *
 * - into float8: "shift, then round" on the 16-bit patterns themselves
 *   (cvt-h16-f8-avx512.h), no float32 at all;
 * - into int8, uint8 and the sub-byte integers: the magnitude clamped on
 *   the 16-bit patterns, widened to float32 in registers, vcvtps2dq
 *   (mxp_h16_to_int_avx512);
 * - into bfloat16, float16: widened to float32 in registers, rounded by
 *   the float32 kernels' cores (cvt-round-avx512.h, called unchanged) or
 *   vcvtps2ph.
 *
 * Both 16-bit formats widen to float32 exactly, so this is one rounding
 * from the exact value, the same bits as the two-kernel path it replaces
 * (widen a block into float32, then narrow it; src/convert/convert.c),
 * with no float32 block written and read back.  The widening is the
 * widening kernels':
 *
 *   bf16  s eeeeeeee mmmmmmm           -> the top half of a float32 (NaNs
 *                                         made quiet where it matters)
 *   f16   s eeeee mmmmmmmmmm           -> vcvtph2ps (exact, DAZ-proof)
 *
 * Runs in the library's MXCSR (set here): vcvtps2dq and vcvtps2ph read
 * float32 subnormals (from bfloat16) as zero under DAZ.  Stochastic
 * rounding: cvt-sr-avx512.h.  Forward, each 64-byte source block
 * read before its result is written: safe in place. */
#ifndef MXP_KERNELS_CVT_H16_AVX512_H
#define MXP_KERNELS_CVT_H16_AVX512_H

#include "core/fpenv.h"
#include "kernels/cvt-h16-f8-avx512.h"
#include "kernels/cvt-round-avx512.h"
#include "kernels/stream-loop.h"

typedef enum { H16_BF16, H16_F16 } mxp_h16_src;
typedef enum {
    H16_TO_E4M3, H16_TO_E5M2, H16_TO_S8, H16_TO_U8, H16_TO_BF16, H16_TO_F16,
    /* the 0.2 formats */
    H16_TO_E3M4, H16_TO_E4M3IEEE, H16_TO_E4M3B11, H16_TO_E4M3FNUZ, H16_TO_E5M2FNUZ, H16_TO_E2M3, H16_TO_E3M2,
    H16_TO_E2M1,
    /* the sub-byte integers, a byte each */
    H16_TO_S4, H16_TO_U4, H16_TO_S2, H16_TO_U2, H16_TO_S1, H16_TO_U1
} mxp_h16_dst;

/* The sub-byte integer targets' ranges; 0 for the others.  A constant
 * after inlining. */
MXP_INLINE int mxp_h16_small_int(mxp_h16_dst d, int *lo, int *hi)
{
    switch (d) {
    case H16_TO_S4: *lo = -8, *hi = 7; return 1;
    case H16_TO_U4: *lo = 0, *hi = 15; return 1;
    case H16_TO_S2: *lo = -2, *hi = 1; return 1;
    case H16_TO_U2: *lo = 0, *hi = 3; return 1;
    case H16_TO_S1: *lo = -1, *hi = 0; return 1;
    case H16_TO_U1: *lo = 0, *hi = 1; return 1;
    default: return 0;
    }
}

/* The float8/float6/float4 targets' formats (mxp_h16_to_f8_avx512); 0 for
 * the others.  A constant after inlining. */
MXP_INLINE int mxp_h16_narrow_fmt(mxp_h16_dst d, mxp_narrow_fmt *t)
{
    switch (d) {
    case H16_TO_E4M3: *t = (mxp_narrow_fmt){ 8, 3, 7, 0, 0 }; return 1;
    case H16_TO_E5M2: *t = (mxp_narrow_fmt){ 8, 2, 15, 1, 0 }; return 1;
    case H16_TO_E3M4: *t = (mxp_narrow_fmt){ 8, 4, 3, 1, 0 }; return 1;
    case H16_TO_E4M3IEEE: *t = (mxp_narrow_fmt){ 8, 3, 7, 1, 0 }; return 1;
    case H16_TO_E4M3B11: *t = (mxp_narrow_fmt){ 8, 3, 11, 0, MXP_NARROW_FNUZ_512 }; return 1;
    case H16_TO_E4M3FNUZ: *t = (mxp_narrow_fmt){ 8, 3, 8, 0, MXP_NARROW_FNUZ_512 }; return 1;
    case H16_TO_E5M2FNUZ: *t = (mxp_narrow_fmt){ 8, 2, 16, 0, MXP_NARROW_FNUZ_512 }; return 1;
    case H16_TO_E2M3: *t = (mxp_narrow_fmt){ 6, 3, 1, 0, MXP_NARROW_FINITE_512 }; return 1;
    case H16_TO_E3M2: *t = (mxp_narrow_fmt){ 6, 2, 3, 0, MXP_NARROW_FINITE_512 }; return 1;
    case H16_TO_E2M1: *t = (mxp_narrow_fmt){ 4, 1, 1, 0, MXP_NARROW_FINITE_512 }; return 1;
    default: return 0;
    }
}

/* 16 source elements (16-bit) to float32 bits.  bfloat16 NaNs are made
 * quiet only where the target keeps payload bits (bfloat16's own NaN
 * handling does it for float16 results: vcvtps2ph quiets them the same
 * way; int8 results map every NaN to 0). */
MXP_INLINE __m512i mxp_h16_widen16_avx512(__m256i h, mxp_h16_src s, int quiet)
{
    if (s == H16_F16)
        return _mm512_castps_si512(_mm512_cvtph_ps(h));
    const __m512i r = _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16);
    if (!quiet)
        return r;
    const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(r, _mm512_set1_epi32(0x7fffffff)),
                                                  _mm512_set1_epi32(0x7f800000));
    return _mm512_mask_or_epi32(r, nan, r, _mm512_set1_epi32(0x00400000));
}

/* bfloat16 (widened: x) -> float16 by vcvtps2ph, in the library's MXCSR
 * (no DAZ: float32 subnormals round as values).  bfloat16's 8 significand
 * bits fit float16's 11, so only float16's subnormal range and overflow
 * round; nearest away is float32's (mxp_f32_to_f16_away_avx512: nearest
 * even of x with its last bit set).  Saturation: an infinite result
 * (overflow or an infinite input) becomes max, +-inf - 1 ulp. */
MXP_INLINE __m256i mxp_h16_to_f16_avx512(__m512i x, mxp_rounding mode, int saturate)
{
    const __m512 f = _mm512_castsi512_ps(x);
    __m256i r;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: r = _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); break;
    case MXP_ROUND_TOWARD_ZERO: r = _mm512_cvtps_ph(f, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); break;
    case MXP_ROUND_UP: r = _mm512_cvtps_ph(f, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); break;
    case MXP_ROUND_DOWN: r = _mm512_cvtps_ph(f, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); break;
    default: return mxp_f32_to_f16_away_avx512(x, saturate); /* cvt-round-avx512.h */
    }
    return saturate ? mxp_f16_saturate_avx512(r) : r;
}

/* 32 float16 or bfloat16 lanes to integers in [lo, hi], a byte each (a
 * signed sub-byte target in its low bits, as the reference converter
 * stores it), in the deterministic modes, by vcvtps2dq.  Before widening,
 * the values are clamped on the 16-bit patterns to [lo, hi] (integers,
 * which rounding keeps; both monotonic, so the clamped exact value's
 * rounding is the rounding's clamp) by two vpmin (negative patterns as
 * unsigned, positive ones as signed); NaN lanes become 0 there.
 * bfloat16's even and odd lanes are float32 numbers by a shift and a mask,
 * no permute, and their results meet in 16-bit lanes by one vpternlog;
 * float16 widens by vcvtph2ps, its halves meet by vpackssdw (within
 * 128-bit lanes) and one vpermd puts the groups of four back in order.
 * Needs the library's MXCSR (bfloat16 subnormals are float32 ones). */
MXP_INLINE __m256i mxp_h16_to_int_avx512(__m512i h, mxp_h16_src s, int lo, int hi, mxp_rounding mode)
{
    const int bf16 = s == H16_BF16;
    const unsigned inf = bf16 ? 0x7f80u : 0x7c00u;
    /* -lo and hi as the source's patterns: integers below 2^8, exact in both */
    union {
        float f;
        uint32_t u;
    } neg = { (float)-lo }, pos = { (float)hi };
    const unsigned neg16 = bf16 ? neg.u >> 16 : (unsigned)_cvtss_sh(neg.f, 0);
    const unsigned pos16 = bf16 ? pos.u >> 16 : (unsigned)_cvtss_sh(pos.f, 0);
    const __m512i m = _mm512_and_si512(h, _mm512_set1_epi16(0x7fff));
    const __mmask32 nan = _mm512_cmpgt_epu16_mask(m, _mm512_set1_epi16((short)inf));
    /* the negative patterns' magnitudes capped at -lo (unsigned: the
     * positive ones lie below 0x8000), the positive ones at hi (signed:
     * the negative ones lie below 0), NaN lanes zeroed */
    const __m512i c = _mm512_maskz_min_epi16(~nan, _mm512_min_epu16(h, _mm512_set1_epi16((short)(0x8000u | neg16))),
                                             _mm512_set1_epi16((short)pos16));
    __m512i w;
    if (bf16) {
        const __m512i q0 = mxp_f32_cvt_int_avx512(_mm512_slli_epi32(c, 16), mode);
        const __m512i q1 = mxp_f32_cvt_int_avx512(_mm512_and_si512(c, _mm512_set1_epi32((int)0xffff0000u)), mode);
        /* the low word from q0, the high word from q1: mask ? q0 : q1 << 16 */
        w = _mm512_ternarylogic_epi32(q0, _mm512_slli_epi32(q1, 16), _mm512_set1_epi32(0xffff), 0xe4);
    } else {
        const __m512i q0 =
            mxp_f32_cvt_int_avx512(_mm512_castps_si512(_mm512_cvtph_ps(_mm512_castsi512_si256(c))), mode);
        const __m512i q1 =
            mxp_f32_cvt_int_avx512(_mm512_castps_si512(_mm512_cvtph_ps(_mm512_extracti64x4_epi64(c, 1))), mode);
        w = _mm512_packs_epi32(q0, q1);
    }
    __m256i b = _mm512_cvtepi16_epi8(w); /* in [lo, hi] already */
    if (lo < 0 && hi < 127) /* int4/int2/int1: the low bits */
        b = _mm256_and_si256(b, _mm256_set1_epi8((char)(2 * hi + 1)));
    if (!bf16)
        b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
    return b;
}

/* 32 elements: 16-bit results fill the vector, 8-bit ones its low half. */
MXP_INLINE __m512i mxp_h16_convert32_avx512(__m512i h, mxp_h16_src s, mxp_h16_dst d, mxp_rounding mode, int saturate)
{
    const mxp_fmt16 sf = s == H16_F16 ? (mxp_fmt16){ 10, 15 } : (mxp_fmt16){ 7, 127 };
    mxp_narrow_fmt t;
    if (mxp_h16_narrow_fmt(d, &t))
        return _mm512_castsi256_si512(mxp_h16_to_f8_avx512(h, sf, t, mode, saturate));
    int smin, smax;
    if (mxp_h16_small_int(d, &smin, &smax))
        return _mm512_castsi256_si512(mxp_h16_to_int_avx512(h, s, smin, smax, mode));
    if (d == H16_TO_S8 || d == H16_TO_U8)
        return _mm512_castsi256_si512(
            mxp_h16_to_int_avx512(h, s, d == H16_TO_S8 ? -128 : 0, d == H16_TO_S8 ? 127 : 255, mode));
    const int quiet = d == H16_TO_BF16;
    const __m512i x0 = mxp_h16_widen16_avx512(_mm512_castsi512_si256(h), s, quiet);
    const __m512i x1 = mxp_h16_widen16_avx512(_mm512_extracti64x4_epi64(h, 1), s, quiet);
    __m256i lo, hi;
    switch (d) {
    case H16_TO_BF16:
        lo = _mm512_cvtepi32_epi16(mxp_f32_to_bf16_avx512(x0, mode, saturate, _mm512_setzero_si512()));
        hi = _mm512_cvtepi32_epi16(mxp_f32_to_bf16_avx512(x1, mode, saturate, _mm512_setzero_si512()));
        break;
    default:
        lo = mxp_h16_to_f16_avx512(x0, mode, saturate);
        hi = mxp_h16_to_f16_avx512(x1, mode, saturate);
        break;
    }
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

MXP_INLINE __mmask32 mxp_h16_low_bits32(size_t k) { return (__mmask32)(k >= 32 ? ~0u : ~(~0u << k)); }

/* Elements [i, i + count), count <= 32, masked. */
MXP_INLINE void mxp_h16_part_avx512(void *dst, const uint16_t *src, size_t count, mxp_h16_src s, mxp_h16_dst d,
                                    mxp_rounding mode, int saturate)
{
    const __mmask32 mask = mxp_h16_low_bits32(count);
    const __m512i r = mxp_h16_convert32_avx512(_mm512_maskz_loadu_epi16(mask, src), s, d, mode, saturate);
    if (d == H16_TO_BF16 || d == H16_TO_F16)
        _mm512_mask_storeu_epi16(dst, mask, r);
    else
        _mm256_mask_storeu_epi8(dst, mask, _mm512_castsi512_si256(r));
}

MXP_INLINE void mxp_h16_loop_avx512(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_h16_src s,
                                    mxp_h16_dst d, mxp_rounding mode)
{
    const size_t out_size = d == H16_TO_BF16 || d == H16_TO_F16 ? 2 : 1, vec_bytes = 32 * out_size;
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const uint16_t *in = src;
    unsigned char *out = dst;
    size_t i = 0;
    /* Large outputs bypass the cache (as memcpy does); the head is
     * converted until dst is aligned. */
    const int stream = mxp_streams(n * (2 + out_size)) && (uintptr_t)dst % out_size == 0;
    if (stream) {
        size_t head = ((vec_bytes - (uintptr_t)dst % vec_bytes) % vec_bytes) / out_size;
        head = head < n ? head : n;
        if (head) {
            mxp_h16_part_avx512(out, in, head, s, d, mode, saturate);
            i = head;
        }
    }
    /* Integer targets, light arithmetic, wait on memory: their source is
     * prefetched a line a step, 2 KiB ahead (stream-loop.h), when it
     * streams (Intel Xeon 6/0xa7, bfloat16 -> int8 0.95 -> 1.09-1.17x
     * memcpy, -> int4 0.75 -> 1.0-1.06x).  The float8/float6/float4 targets'
     * heavier steps ran 10% slower with it (0.9 against 1.0x). */
    int lo_, hi_;
    const int prefetch = stream && (d == H16_TO_S8 || d == H16_TO_U8 || mxp_h16_small_int(d, &lo_, &hi_));
    for (; i + 32 <= n; i += 32) {
        if (prefetch)
            _mm_prefetch((const char *)(in + i) + MXP_STREAM_PREFETCH, _MM_HINT_T0);
        const __m512i r = mxp_h16_convert32_avx512(_mm512_loadu_si512((const void *)(in + i)), s, d, mode, saturate);
        void *o = out + i * out_size;
        if (out_size == 2 && stream)
            _mm512_stream_si512((__m512i *)o, r);
        else if (out_size == 2)
            _mm512_storeu_si512(o, r);
        else if (stream)
            _mm256_stream_si256((__m256i *)o, _mm512_castsi512_si256(r));
        else
            _mm256_storeu_si256((__m256i *)o, _mm512_castsi512_si256(r));
    }
    if (i < n)
        mxp_h16_part_avx512(out + i * out_size, in + i, n - i, s, d, mode, saturate);
    if (stream)
        _mm_sfence();
}

/* One instantiation per mode, so that the mode is a constant. */
MXP_INLINE void mxp_h16_by_mode_avx512(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_h16_src s,
                                       mxp_h16_dst d)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: mxp_h16_loop_avx512(dst, src, n, p, s, d, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_NEAREST_AWAY: mxp_h16_loop_avx512(dst, src, n, p, s, d, MXP_ROUND_NEAREST_AWAY); break;
    case MXP_ROUND_TOWARD_ZERO: mxp_h16_loop_avx512(dst, src, n, p, s, d, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: mxp_h16_loop_avx512(dst, src, n, p, s, d, MXP_ROUND_UP); break;
    default: mxp_h16_loop_avx512(dst, src, n, p, s, d, MXP_ROUND_DOWN); break;
    }
    mxp_fpenv_leave(env);
}

#endif

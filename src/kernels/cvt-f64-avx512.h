/* float64 -> f32, bf16, f16, e4m3, e5m2 with AVX-512F, every rounding mode,
 * rounded once from the float64 value (never through float32); and the
 * deterministic modes through float32 rounded to odd (below): the loops
 * shared by the src/kernels/f64-<dst>-vcvt/avx512f.c kernels.  The integer
 * method of cvt-round-avx512.h on 64-bit lanes:
 *
 *   f64:  s eeeeeeeeeee m(52)   value = sig * 2^(max(E,1) - 1075)
 *
 * d low bits of sig are dropped (d = 52 - M in the target's normal range);
 * frac64 = those bits as a 64-bit fraction of one target ulp, exact for
 * d <= 64.  Stochastic rounding compares its 32 random bits with the top 32
 * bits of frac64, as the reference does. */
#ifndef MXP_KERNELS_CVT_F64_AVX512_H
#define MXP_KERNELS_CVT_F64_AVX512_H

#include "core/fpenv.h"
#include "kernels/cvt-round-avx512.h"

typedef struct mxp_f64_fmt {
    int bits; /* 8, 16 or 32 */
    int mbits, bias, has_inf;
} mxp_f64_fmt;

MXP_INLINE __m256i mxp_sr_mix8_avx512(__m256i x, mxp_sr_key k)
{
    x = _mm256_add_epi32(x, _mm256_set1_epi32((int)k.k1));
    x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
    x = _mm256_mullo_epi32(x, _mm256_set1_epi32(0x7feb352d));
    x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
    x = _mm256_xor_si256(x, _mm256_set1_epi32((int)k.k2));
    x = _mm256_mullo_epi32(x, _mm256_set1_epi32((int)0x846ca68bu));
    return _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
}

MXP_INLINE __mmask8 mxp_f64_round_up8_avx512(mxp_rounding mode, __m512i base, __m512i frac64, __mmask8 neg,
                                             __mmask8 far, __m512i rnd)
{
    const __m512i half = _mm512_set1_epi64((long long)0x8000000000000000ull);
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN:
        return _mm512_cmpgt_epu64_mask(frac64, half) |
               (_mm512_cmpeq_epi64_mask(frac64, half) & _mm512_test_epi64_mask(base, _mm512_set1_epi64(1)));
    case MXP_ROUND_NEAREST_AWAY:
        return _mm512_cmpge_epu64_mask(frac64, half);
    case MXP_ROUND_TOWARD_ZERO:
        return 0;
    case MXP_ROUND_UP:
        return (_mm512_test_epi64_mask(frac64, frac64) | far) & (__mmask8)~neg;
    case MXP_ROUND_DOWN:
        return (_mm512_test_epi64_mask(frac64, frac64) | far) & neg;
    default:
        return _mm512_cmplt_epu64_mask(rnd, _mm512_srli_epi64(frac64, 32));
    }
}

MXP_INLINE __m512i mxp_f64_to_narrow8_avx512(__m512i x, mxp_f64_fmt f, mxp_rounding mode, int saturate, __m512i rnd)
{
    const int d0 = 52 - f.mbits;
    const long long emin_biased = 1023 + 1 - f.bias;
    const unsigned long long eall = (1ull << (f.bits - 1 - f.mbits)) - 1, mmask = (1ull << f.mbits) - 1;
    const unsigned long long max_enc = f.has_inf ? ((eall - 1) << f.mbits) | mmask : (eall << f.mbits) | (mmask - 1);
    const unsigned long long inf_enc = eall << f.mbits;
    const unsigned long long nan_enc = f.has_inf ? inf_enc | (1ull << (f.mbits - 1)) : (eall << f.mbits) | mmask;
    const __m512i c64 = _mm512_set1_epi64(64);

    const __m512i a = _mm512_and_si512(x, _mm512_set1_epi64(0x7fffffffffffffffll));
    const __mmask8 neg = _mm512_movepi64_mask(x);
    const __m512i e = _mm512_srli_epi64(a, 52);
    const __mmask8 special = _mm512_cmpeq_epi64_mask(e, _mm512_set1_epi64(2047));
    const __m512i m = _mm512_and_si512(a, _mm512_set1_epi64(0xfffffffffffffll));

    __m512i base = _mm512_sub_epi64(_mm512_srli_epi64(a, d0), _mm512_set1_epi64((long long)(1023 - f.bias) << f.mbits));
    __m512i frac64 = _mm512_slli_epi64(a, 64 - d0);
    __mmask8 far = 0;
    const __mmask8 nonzero = _mm512_test_epi64_mask(a, a);
    const __mmask8 sub = _mm512_cmplt_epi64_mask(e, _mm512_set1_epi64(emin_biased)) & nonzero;
    if (sub) {
        const __m512i sig = _mm512_mask_or_epi64(m, _mm512_test_epi64_mask(e, e), m, _mm512_set1_epi64(1ll << 52));
        const __m512i d = _mm512_sub_epi64(_mm512_set1_epi64(emin_biased + d0), _mm512_max_epi64(e, _mm512_set1_epi64(1)));
        base = _mm512_mask_srlv_epi64(base, sub, sig, d);
        frac64 = _mm512_mask_mov_epi64(frac64, sub,
                                       _mm512_or_si512(_mm512_sllv_epi64(sig, _mm512_sub_epi64(c64, d)),
                                                       _mm512_srlv_epi64(sig, _mm512_sub_epi64(d, c64))));
        far = _mm512_cmpgt_epi64_mask(d, c64) & sub;
    }
    const __mmask8 up = mxp_f64_round_up8_avx512(mode, base, frac64, neg, far, rnd);
    __m512i r = _mm512_mask_add_epi64(base, up, base, _mm512_set1_epi64(1));
    r = _mm512_maskz_mov_epi64(nonzero, r); /* zeros: the rebias made them negative */

    const __mmask8 ovf = _mm512_cmpgt_epu64_mask(r, _mm512_set1_epi64((long long)max_enc)) & (__mmask8)~special;
    if (ovf) {
        __mmask8 to_inf;
        switch (mode) {
        case MXP_ROUND_TOWARD_ZERO: to_inf = 0; break;
        case MXP_ROUND_UP: to_inf = (__mmask8)~neg; break;
        case MXP_ROUND_DOWN: to_inf = neg; break;
        default: to_inf = 0xff; break;
        }
        if (saturate)
            to_inf = 0;
        r = _mm512_mask_mov_epi64(r, ovf, _mm512_set1_epi64((long long)max_enc));
        r = _mm512_mask_mov_epi64(r, ovf & to_inf, _mm512_set1_epi64((long long)(f.has_inf ? inf_enc : nan_enc)));
    }
    if (special) {
        const __mmask8 is_nan = _mm512_test_epi64_mask(m, m) & special;
        const unsigned long long inf_out = saturate ? max_enc : f.has_inf ? inf_enc : nan_enc;
        r = _mm512_mask_mov_epi64(r, special & (__mmask8)~is_nan, _mm512_set1_epi64((long long)inf_out));
        __m512i nan = _mm512_set1_epi64((long long)nan_enc);
        if (f.has_inf)
            nan = _mm512_or_si512(nan, _mm512_srli_epi64(m, d0));
        r = _mm512_mask_mov_epi64(r, is_nan, nan);
    }
    const __m512i sign = _mm512_slli_epi64(_mm512_srli_epi64(x, 63), f.bits - 1);
    return _mm512_or_si512(r, sign);
}

MXP_INLINE void mxp_f64_store8_avx512(void *dst, size_t i, __m512i r, int bits, __mmask8 mask, int stream)
{
    void *d = (uint8_t *)dst + i * (size_t)(bits / 8);
    if (mask == 0xff)
        mxp_store_bytes_avx512(d, bits == 32   ? _mm512_cvtepi64_epi32(r)
                                  : bits == 16 ? _mm256_castsi128_si256(_mm512_cvtepi64_epi16(r))
                                               : _mm256_castsi128_si256(_mm512_cvtepi64_epi8(r)),
                               (size_t)bits, stream);
    else if (bits == 32)
        _mm512_mask_cvtepi64_storeu_epi32(d, mask, r);
    else if (bits == 16)
        _mm512_mask_cvtepi64_storeu_epi16(d, mask, r);
    else
        _mm512_mask_cvtepi64_storeu_epi8(d, mask, r);
}

/* Elements [i, i + count), count <= 8, with masked loads and stores. */
MXP_INLINE void mxp_f64_partial_avx512(void *dst, const double *src, size_t i, size_t count, mxp_f64_fmt f,
                                       mxp_rounding mode, int saturate, __m256i idx, mxp_sr_key key)
{
    __mmask8 mask = (__mmask8)((1u << count) - 1);
    __m512i x = _mm512_maskz_loadu_epi64(mask, src + i);
    __m512i rnd = mode == MXP_ROUND_STOCHASTIC ? _mm512_cvtepu32_epi64(mxp_sr_mix8_avx512(idx, key))
                                               : _mm512_setzero_si512();
    mxp_f64_store8_avx512(dst, i, mxp_f64_to_narrow8_avx512(x, f, mode, saturate, rnd), f.bits, mask, 0);
}

MXP_INLINE void mxp_f64_loop_avx512(void *dst, const double *src, size_t n, const mxp_cvt_params *p, mxp_f64_fmt f,
                                    mxp_rounding mode)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const size_t out_size = (size_t)f.bits / 8, vec_bytes = 8 * out_size;
    const mxp_sr_key key = mxp_sr_key_for(p->seed, p->index0);
    __m256i idx = _mm256_add_epi32(_mm256_set1_epi32((int)(uint32_t)p->index0), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m512i rnd = _mm512_setzero_si512();
    size_t i = 0;
    /* Large outputs bypass the cache, as memcpy does; the head is converted
     * until dst is aligned. */
    int stream = mxp_streams(n * (8 + out_size)) && (uintptr_t)dst % out_size == 0;
    if (stream) {
        size_t head = ((vec_bytes - (uintptr_t)dst % vec_bytes) % vec_bytes) / out_size;
        if (head) {
            mxp_f64_partial_avx512(dst, src, 0, head < n ? head : n, f, mode, saturate, idx, key);
            idx = _mm256_add_epi32(idx, _mm256_set1_epi32((int)head));
            i = head;
        }
    }
    for (; i + 8 <= n; i += 8) {
        if (stream)
            mxp_stream_prefetch(src + i, 64);
        __m512i x = _mm512_loadu_si512((const void *)(src + i));
        if (mode == MXP_ROUND_STOCHASTIC) {
            rnd = _mm512_cvtepu32_epi64(mxp_sr_mix8_avx512(idx, key));
            idx = _mm256_add_epi32(idx, _mm256_set1_epi32(8));
        }
        mxp_f64_store8_avx512(dst, i, mxp_f64_to_narrow8_avx512(x, f, mode, saturate, rnd), f.bits, 0xff, stream);
    }
    if (i < n)
        mxp_f64_partial_avx512(dst, src, i, n - i, f, mode, saturate, idx, key);
    if (stream)
        _mm_sfence();
}

MXP_INLINE void mxp_f64_by_mode_avx512(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_f64_fmt f)
{
    const double *s = src;
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: mxp_f64_loop_avx512(dst, s, n, p, f, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_NEAREST_AWAY: mxp_f64_loop_avx512(dst, s, n, p, f, MXP_ROUND_NEAREST_AWAY); break;
    case MXP_ROUND_TOWARD_ZERO: mxp_f64_loop_avx512(dst, s, n, p, f, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: mxp_f64_loop_avx512(dst, s, n, p, f, MXP_ROUND_UP); break;
    case MXP_ROUND_DOWN: mxp_f64_loop_avx512(dst, s, n, p, f, MXP_ROUND_DOWN); break;
    default: mxp_f64_loop_avx512(dst, s, n, p, f, MXP_ROUND_STOCHASTIC); break;
    }
}

/* ---- through float32 rounded to odd ---------------------------------------
 * The deterministic modes by hardware: vcvtpd2ps rounds toward zero and a
 * lane that was inexact gets its last bit set ("round to odd").  float32 then
 * holds the value's sign, its bits down to 2^-149 and whether anything below
 * was dropped, which is all that one rounding to a format at least two bits
 * narrower needs (bf16, f16, e4m3, e5m2 have 8, 11, 4, 3 bits and exponent
 * ranges inside float32's; int8 needs 8): rounding that float32 in any
 * deterministic mode gives the rounding of the float64.  Beyond float32's
 * range the result is FLT_MAX (odd), which overflows every target as the
 * float64 does.  NaNs keep sign and top payload bits, as both roundings do.
 * Into e5m2 the odd float32 is rounded to odd once more, to float16
 * (rounding to odd composes: odd-of-odd is odd of the float64), and the
 * float16 bits are rounded as in f32-e5m2-vcvt's _f16 kernel (for e4m3, 16
 * lanes at a time, that measured slower than the float32 integer step).
 * The directed modes (toward zero, up, down) round to float32 in their own
 * direction instead, by vcvtpd2ps alone: directed roundings compose (every
 * target value is a float32, so the float32 rounding never crosses one),
 * which spares the widening and compare that find the inexact lanes.
 * Stochastic rounding needs the whole discarded fraction: the kernels above.
 * The kernel computes in the library's MXCSR (no FTZ/DAZ), set here too. */

typedef enum { ODD_BF16, ODD_F16, ODD_E4M3, ODD_E5M2, ODD_S8 } mxp_f64_odd_target;

/* 16 float64 lanes (x0: low 8) to float32 bits rounded to odd.  Where
 * the float32 is normal, truncation drops exactly the float64's low 29
 * fraction bits, so one test of them finds the inexact lanes (vptestmq;
 * the widening back and compare cost a third of the f64 -> bf16 kernel
 * in cache); beyond float32's range the result is FLT_MAX, odd either
 * way; a zero result (|x| < 2^-149) may stay zero instead of the
 * smallest subnormal, which every target rounds to zero alike in the
 * modes that come here (nearest even, nearest away); NaNs differ at most
 * in the last bit, which no target keeps.  A subnormal float32 drops more
 * bits than the test sees (and bfloat16 rounds there): such a vector is
 * done by widening back and comparing. */
MXP_INLINE __m512i mxp_f64_to_f32_odd16_avx512(__m512i x0, __m512i x1)
{
    __m256 lo = _mm512_cvt_roundpd_ps(_mm512_castsi512_pd(x0), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m256 hi = _mm512_cvt_roundpd_ps(_mm512_castsi512_pd(x1), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_castps_si256(lo)), _mm256_castps_si256(hi), 1);
    __mmask8 in_lo, in_hi;
    if (_mm512_fpclass_ps_mask(_mm512_castsi512_ps(v), 0x20)) { /* a subnormal float32 */
        in_lo = _mm512_cmpneq_epi64_mask(_mm512_castpd_si512(_mm512_cvtps_pd(lo)), x0);
        in_hi = _mm512_cmpneq_epi64_mask(_mm512_castpd_si512(_mm512_cvtps_pd(hi)), x1);
    } else {
        const __m512i low29 = _mm512_set1_epi64(0x1fffffff);
        in_lo = _mm512_test_epi64_mask(x0, low29);
        in_hi = _mm512_test_epi64_mask(x1, low29);
    }
    return _mm512_mask_or_epi32(v, (__mmask16)(in_lo | (unsigned)in_hi << 8), v, _mm512_set1_epi32(1));
}

/* bf16, e4m3, e5m2, int8 from the odd float32 (float16 by vcvtps2ph: below). */
/* 16 float64 lanes to float32 bits rounded in a directed mode. */
MXP_INLINE __m512i mxp_f64_to_f32_directed16_avx512(__m512i x0, __m512i x1, mxp_rounding mode)
{
    __m256 lo, hi;
    if (mode == MXP_ROUND_UP) {
        lo = _mm512_cvt_roundpd_ps(_mm512_castsi512_pd(x0), _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
        hi = _mm512_cvt_roundpd_ps(_mm512_castsi512_pd(x1), _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    } else if (mode == MXP_ROUND_DOWN) {
        lo = _mm512_cvt_roundpd_ps(_mm512_castsi512_pd(x0), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        hi = _mm512_cvt_roundpd_ps(_mm512_castsi512_pd(x1), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    } else {
        lo = _mm512_cvt_roundpd_ps(_mm512_castsi512_pd(x0), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        hi = _mm512_cvt_roundpd_ps(_mm512_castsi512_pd(x1), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    }
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_castps_si256(lo)), _mm256_castps_si256(hi), 1);
}

MXP_INLINE __m512i mxp_f64_odd_narrow16_avx512(__m512i v, mxp_f64_odd_target t, mxp_rounding mode, int saturate)
{
    const __m512i zero = _mm512_setzero_si512();
    switch (t) {
    case ODD_BF16: return mxp_f32_to_bf16_avx512(v, mode, saturate, zero);
    case ODD_E4M3: return mxp_f32_to_narrow_fast_avx512(v, (mxp_narrow_fmt){ 8, 3, 7, 0, 0 }, mode, saturate, zero);
    case ODD_E5M2: return mxp_f32_to_narrow_fast_avx512(v, (mxp_narrow_fmt){ 8, 2, 15, 1, 0 }, mode, saturate, zero);
    default: return mxp_f32_to_small_int_avx512(v, -128, 127, mode, zero);
    }
}

/* float16 in the IEEE modes: vcvtps2ph rounds the odd float32 itself. */
MXP_INLINE __m256i mxp_f64_odd_f16_hw_avx512(__m512i v, mxp_rounding mode, int saturate)
{
    __m256i r;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: r = _mm512_cvtps_ph(_mm512_castsi512_ps(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); break;
    case MXP_ROUND_TOWARD_ZERO: r = _mm512_cvtps_ph(_mm512_castsi512_ps(v), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); break;
    case MXP_ROUND_UP: r = _mm512_cvtps_ph(_mm512_castsi512_ps(v), _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); break;
    default: r = _mm512_cvtps_ph(_mm512_castsi512_ps(v), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); break;
    }
    return saturate ? mxp_f16_saturate_avx512(r) : r;
}

/* Elements [i, i + count), count <= 16; full vectors when count == 16. */
MXP_INLINE void mxp_f64_odd_step_avx512(void *dst, const double *src, size_t i, size_t count, mxp_f64_odd_target t,
                                        mxp_rounding mode, int saturate, int stream)
{
    const __mmask16 mask = (__mmask16)((1u << count) - 1);
    __m512i x0, x1;
    if (count == 16) {
        x0 = _mm512_loadu_si512((const void *)(src + i));
        x1 = _mm512_loadu_si512((const void *)(src + i + 8));
    } else {
        x0 = _mm512_maskz_loadu_epi64((__mmask8)mask, src + i);
        x1 = _mm512_maskz_loadu_epi64((__mmask8)(mask >> 8), src + i + 8);
    }
    const __m512i v = mode == MXP_ROUND_TOWARD_ZERO || mode == MXP_ROUND_UP || mode == MXP_ROUND_DOWN
                          ? mxp_f64_to_f32_directed16_avx512(x0, x1, mode)
                          : mxp_f64_to_f32_odd16_avx512(x0, x1);
    __m256i r;
    size_t size = 1;
    if (t == ODD_S8) { /* vcvtps2dq rounds the odd float32 itself */
        r = _mm256_castsi128_si256(mxp_f32_to_small_int_hw_avx512(v, mode, 0));
    } else if (t == ODD_E5M2) { /* round to odd again, to float16 (it composes) */
        r = _mm256_castsi128_si256(mxp_f32_to_e5m2_via_f16_avx512(v, mode, saturate));
    } else if (t == ODD_BF16 || t == ODD_F16) {
        r = t == ODD_BF16 ? _mm512_cvtepi32_epi16(mxp_f64_odd_narrow16_avx512(v, t, mode, saturate))
            : mode == MXP_ROUND_NEAREST_AWAY ? mxp_f32_to_f16_away_avx512(v, saturate)
                                             : mxp_f64_odd_f16_hw_avx512(v, mode, saturate);
        size = 2;
    } else {
        r = _mm256_castsi128_si256(_mm512_cvtepi32_epi8(mxp_f64_odd_narrow16_avx512(v, t, mode, saturate)));
    }
    mxp_store16_avx512((uint8_t *)dst + i * size, r, size, count == 16 ? 0xffff : mask, stream);
}

/* bfloat16: 32 elements [i, i + 32), the two vectors' results packed by
 * one vpermt2w (two vpmovdw of 16 cost two uops each on the shuffle port;
 * 62-75 -> GB/s in cache for the directed modes). */
MXP_INLINE void mxp_f64_odd_bf16_step32_avx512(void *dst, const double *src, size_t i, mxp_rounding mode,
                                               int saturate, int stream)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i h[2];
#pragma GCC unroll 2
    for (int v = 0; v < 2; v++) {
        const __m512i x0 = _mm512_loadu_si512((const void *)(src + i + 16 * (size_t)v));
        const __m512i x1 = _mm512_loadu_si512((const void *)(src + i + 16 * (size_t)v + 8));
        const __m512i f = mode == MXP_ROUND_TOWARD_ZERO || mode == MXP_ROUND_UP || mode == MXP_ROUND_DOWN
                              ? mxp_f64_to_f32_directed16_avx512(x0, x1, mode)
                              : mxp_f64_to_f32_odd16_avx512(x0, x1);
        h[v] = mxp_f32_to_bf16_hi_avx512(f, mode, saturate, zero);
    }
    const __m512i r = mxp_bf16_pack_hi_avx512(h[0], h[1]);
    if (stream) /* dst 64-byte aligned: the loop's head */
        _mm512_stream_si512((void *)((uint16_t *)dst + i), r);
    else
        _mm512_storeu_si512((void *)((uint16_t *)dst + i), r);
}

MXP_INLINE void mxp_f64_odd_loop_avx512(void *dst, const double *src, size_t n, const mxp_cvt_params *p,
                                        mxp_f64_odd_target t, mxp_rounding mode)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const size_t out_size = t == ODD_BF16 || t == ODD_F16 ? 2 : 1;
    const size_t vec_bytes = t == ODD_BF16 ? 64 : 16 * out_size; /* a step's output */
    size_t i = 0;
    int stream = mxp_streams(n * (8 + out_size)) && (uintptr_t)dst % out_size == 0;
    if (stream) {
        size_t head = ((vec_bytes - (uintptr_t)dst % vec_bytes) % vec_bytes) / out_size;
        head = head < n ? head : n;
        for (; i + 16 <= head; i += 16) /* bfloat16: up to 31 elements, in steps of 16 */
            mxp_f64_odd_step_avx512(dst, src, i, 16, t, mode, saturate, 0);
        if (i < head) {
            mxp_f64_odd_step_avx512(dst, src, i, head - i, t, mode, saturate, 0);
            i = head;
        }
    }
    if (t == ODD_BF16)
        for (; i + 32 <= n; i += 32) {
            if (stream)
                mxp_stream_prefetch((const double *)src + i, 256);
            mxp_f64_odd_bf16_step32_avx512(dst, src, i, mode, saturate, stream);
        }
    for (; i + 16 <= n; i += 16) {
        if (stream)
            mxp_stream_prefetch((const double *)src + i, 128);
        mxp_f64_odd_step_avx512(dst, src, i, 16, t, mode, saturate, stream);
    }
    if (i < n)
        mxp_f64_odd_step_avx512(dst, src, i, n - i, t, mode, saturate, 0);
    if (stream)
        _mm_sfence();
}

MXP_INLINE void mxp_f64_odd_by_mode_avx512(void *dst, const void *src, size_t n, const mxp_cvt_params *p,
                                           mxp_f64_odd_target t)
{
    const double *s = src;
    const mxp_fpenv env = mxp_fpenv_enter(); /* vcvtpd2ps must not flush float32 subnormals */
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: mxp_f64_odd_loop_avx512(dst, s, n, p, t, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_NEAREST_AWAY: mxp_f64_odd_loop_avx512(dst, s, n, p, t, MXP_ROUND_NEAREST_AWAY); break;
    case MXP_ROUND_TOWARD_ZERO: mxp_f64_odd_loop_avx512(dst, s, n, p, t, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: mxp_f64_odd_loop_avx512(dst, s, n, p, t, MXP_ROUND_UP); break;
    default: mxp_f64_odd_loop_avx512(dst, s, n, p, t, MXP_ROUND_DOWN); break;
    }
    mxp_fpenv_leave(env);
}

#endif

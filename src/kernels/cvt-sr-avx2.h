/* Stochastic rounding with AVX2 from float32 -> f16, e4m3, e5m2, s8, u8
 * (bfloat16 and float16 too, widened in registers: mxp_sr_src_avx2) and
 * from float64 -> bf16, f16, e4m3, e5m2, s8: the add-and-shift method of
 * cvt-sr-avx512.h (float32: below; float64 on 64-bit lanes), 8 elements
 * a unit, 32 a step; the loops of the src/kernels/<src>-<dst>-vcvt/avx2.c
 * kernels named _sr.  Same bits as the reference: the magnitude rounds up
 * iff r < floor(frac * 2^32), frac the discarded part of one target ulp.
 *
 * With d = 52 - M bits dropped (d >= 32), adding (~r) << (d - 32) to the
 * bits of |x| carries into the kept field exactly then (bits of frac below
 * its top 32 cannot carry past them).  Below the target's normal range the
 * same add applies to y/2 = (|x| + 2^emin) / 2 rounded toward zero, whose
 * exponent is fixed: its kept field is the subnormal result and it keeps
 * d >= 32 bits of frac, so the carry always decides.  int8: y = min(|x|,
 * 256) + 256 toward zero keeps 44 bits of fraction.  The kernels run in the
 * library's MXCSR with rounding toward zero and DAZ (set here) for those
 * two float operations: float64 subnormal inputs (far below every target's
 * smallest subnormal: they never round up) are read as zero, and no
 * operand is subnormal (a microcode assist on Intel).  Overflow, inf and
 * NaN are fixed up in the lanes where a compare finds them.  Tails through
 * a zero-padded buffer; forward, so in-place narrowing works.
 *
 * In the registers (both sources): with t the top bits of the draw r that
 * the sum uses and b the bits they are added to, w = t - b (float64: r
 * less b >> (d - 32), on 64-bit lanes) gives the result without ~r: the
 * sum is 2^d - 1 - w (float64: its part above d is -floor(w / 2^32), w's
 * high dword), so the kept field is -(w >> d) (arithmetic).  The sign goes
 * in with the rebias, one subtract of a constant vblendvps picks by it. */
#ifndef MXP_KERNELS_CVT_SR_AVX2_H
#define MXP_KERNELS_CVT_SR_AVX2_H

#include <immintrin.h>
#include <string.h>

#include "core/fpenv.h"
#include "kernels/cvt-f32-avx2.h"
#include "kernels/cvt-round-avx2.h"
#include "kernels/cvt-sr-targets.h"

/* The targets (cvt-sr-targets.h): the float32 core below takes every one,
 * the float64 core all but bfloat16 from float32. */
_Static_assert((int)MXP_SR_FNUZ == (int)MXP_NARROW_FNUZ && (int)MXP_SR_FINITE == (int)MXP_NARROW_FINITE,
               "the styles' values");

/* fnuz: the pattern of -0 is the NaN, a zero result is +0 */
MXP_INLINE int mxp_sr_fnuz_avx2(mxp_sr_target t)
{
    return mxp_sr_fmts[t].style == MXP_SR_FNUZ;
}

/* int8's (uint8's) saturated bytes b clamped to a sub-byte integer target
 * (signed: its low bits); other targets as they are */
MXP_INLINE __m256i mxp_sr_sub_byte_avx2(__m256i b, mxp_sr_target t)
{
    if (t < SR_S4)
        return b;
    const int hi = mxp_sr_hi(t);
    if (!mxp_sr_signed(t))
        return _mm256_min_epu8(b, _mm256_set1_epi8((char)hi));
    return _mm256_and_si256(
        _mm256_max_epi8(_mm256_min_epi8(b, _mm256_set1_epi8((char)hi)), _mm256_set1_epi8((char)(-hi - 1))),
        _mm256_set1_epi8((char)(2 * hi + 1)));
}

/* 32 results, one per 32-bit lane of r[0..4), packed to the target's width
 * and stored (streaming when asked). */
MXP_INLINE void mxp_sr_store32_avx2(void *d, const __m256i r[4], mxp_sr_target t, int stream)
{
    if (mxp_sr_out_size(t) == 2) {
        mxp_store256_avx2(d, mxp_pack16_avx2(r[0], r[1]), stream);
        mxp_store256_avx2((uint16_t *)d + 16, mxp_pack16_avx2(r[2], r[3]), stream);
    } else {
        mxp_store256_avx2(d, mxp_pack8_avx2(r[0], r[1], r[2], r[3]), stream);
    }
}

/* ---- float64 -> bf16, f16, e4m3, e5m2, s8 -----------------------------------
 * The draws of 8 elements are made in the lane order (0, 1, 4, 5, 2, 3, 6,
 * 7): vpunpck{l,h}dq with zero then gives those of elements 0..3 and 4..7
 * zero-extended to 64 bits, and vshufps of the two vectors of 4 qwords
 * gathers their dwords in that order again; the 16-bit pack's vpermd puts
 * them back in place, the 8-bit targets a vpermq each. */
MXP_INLINE __m256i mxp_sr_f64_order_avx2(void)
{
    return _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
}

/* The high (sel 1) or low (sel 0) dwords of two vectors of 4 qwords, in the order above. */
MXP_INLINE __m256i mxp_sr_dwords_avx2(__m256i lo, __m256i hi, int sel)
{
    const __m256 a = _mm256_castsi256_ps(lo), b = _mm256_castsi256_ps(hi);
    return _mm256_castps_si256(sel ? _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))
                                   : _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
}

/* w = r - (b >> sh) on 64-bit lanes, b the bits of max(|x|, y/2) (r: 4 draws zero-extended) */
MXP_INLINE __m256i mxp_sr_f64_w_avx2(__m256i x, __m256i r, int sh, double half_min_normal)
{
    const __m256d a = _mm256_and_pd(_mm256_castsi256_pd(x), _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll)));
    const __m256d y2 = _mm256_fmadd_pd(a, _mm256_set1_pd(0.5), _mm256_set1_pd(half_min_normal));
    return _mm256_sub_epi64(r, _mm256_srli_epi64(_mm256_castpd_si256(_mm256_max_pd(y2, a)), sh)); /* NaN: a */
}

/* Overflow, inf and NaN lanes (edge) of mxp_sr_f64_float8_avx2's result r; xs: x's high dwords.  Out of line. */
__attribute__((noinline, unused)) static __m256i mxp_sr_f64_edge_avx2(__m256i r, __m256i x0, __m256i x1, __m256i xs,
                                                                      __m256i edge, mxp_sr_target t, int saturate)
{
    const mxp_sr_fmt f = mxp_sr_fmts[t];
    const int d = 52 - f.mbits, style = mxp_sr_fmts[t].style;
    const unsigned eall = (1u << (f.bits - 1 - f.mbits)) - 1, mmask = (1u << f.mbits) - 1;
    const unsigned max_enc = style       ? (eall << f.mbits) | mmask /* every exponent finite */
                             : f.has_inf ? ((eall - 1) << f.mbits) | mmask
                                         : (eall << f.mbits) | (mmask - 1);
    const unsigned nan_enc = style == MXP_NARROW_FNUZ ? 1u << (f.bits - 1) /* the -0 pattern */
                             : style                  ? 0                  /* finite: the zero of the other sign */
                             : f.has_inf              ? (eall << f.mbits) | (1u << (f.mbits - 1))
                                                      : (eall << f.mbits) | mmask;
    const unsigned big = saturate || style == MXP_NARROW_FINITE ? max_enc : f.has_inf ? eall << f.mbits : nan_enc;
    const __m256i inf = _mm256_set1_epi64x(0x7ff0000000000000ll), fm = _mm256_set1_epi64x(0xfffffffffffffll);
    const __m256i b0 = _mm256_and_si256(x0, _mm256_set1_epi64x(0x7fffffffffffffffll));
    const __m256i b1 = _mm256_and_si256(x1, _mm256_set1_epi64x(0x7fffffffffffffffll));
    const __m256i nan = mxp_sr_dwords_avx2(_mm256_cmpgt_epi64(b0, inf), _mm256_cmpgt_epi64(b1, inf), 0);
    const __m256i sign = _mm256_and_si256(_mm256_srai_epi32(xs, 31), MXP_V8(1u << (f.bits - 1)));
    __m256i nan_bits = MXP_V8(nan_enc);
    if (f.has_inf)
        nan_bits = _mm256_or_si256(nan_bits, mxp_sr_dwords_avx2(_mm256_srli_epi64(_mm256_and_si256(b0, fm), d),
                                                                _mm256_srli_epi64(_mm256_and_si256(b1, fm), d), 0));
    r = _mm256_blendv_epi8(r, _mm256_or_si256(MXP_V8(big), sign), edge);
    const __m256i nan_sign = style == MXP_NARROW_FINITE ? _mm256_xor_si256(sign, MXP_V8(1u << (f.bits - 1))) : sign;
    return _mm256_blendv_epi8(r, _mm256_or_si256(nan_bits, nan_sign), nan);
}

/* Target bits of 8 float64 lanes (x0: elements 0..3) in the low 8/16 bits
 * of 32-bit lanes, in the order above; r: the draws in that order. */
MXP_INLINE __m256i mxp_sr_f64_float8_avx2(__m256i x0, __m256i x1, __m256i r, mxp_sr_target t, int saturate)
{
    const mxp_sr_fmt f = mxp_sr_fmts[t];
    const int d = 52 - f.mbits;
    const double half_min_normal = __builtin_ldexp(1.0, -f.bias); /* 2^(emin - 1) */
    const unsigned rebias = (1023u - f.bias) << f.mbits;
    const __m256i z = _mm256_setzero_si256();
    const __m256i w0 = mxp_sr_f64_w_avx2(x0, _mm256_unpacklo_epi32(r, z), d - 32, half_min_normal);
    const __m256i w1 = mxp_sr_f64_w_avx2(x1, _mm256_unpackhi_epi32(r, z), d - 32, half_min_normal);
    const __m256i hi = mxp_sr_dwords_avx2(w0, w1, 1); /* -(the sum >> d) */
    const __m256i xs = mxp_sr_dwords_avx2(x0, x1, 1);
    const __m256 sc = _mm256_blendv_ps(_mm256_castsi256_ps(MXP_V8(0u - rebias)),
                                       _mm256_castsi256_ps(MXP_V8((1u << (f.bits - 1)) - rebias)),
                                       _mm256_castsi256_ps(xs));
    __m256i res = _mm256_sub_epi32(_mm256_castps_si256(sc), hi);
    if (mxp_sr_fnuz_avx2(t)) /* -0: +0 (the edge lanes below set their own) */
        res = _mm256_andnot_si256(_mm256_cmpeq_epi32(res, MXP_V8(0x80)), res);
    const unsigned ovf_k = (f.ovf_bits >> (23 - f.mbits)) + ((1023u - 127u) << f.mbits);
    const __m256i edge = _mm256_cmpgt_epi32(MXP_V8(1u - ovf_k), hi); /* inf, NaN too */
    if (__builtin_expect(!_mm256_testz_si256(edge, edge), 0))
        return mxp_sr_f64_edge_avx2(res, x0, x1, xs, edge, t, saturate);
    return res;
}

/* int8, int32 lanes for the saturating packs: y = min(|x|, 256) + 256
 * toward zero (NaN stays NaN: a result far above 257, set to 0). */
MXP_INLINE __m256i mxp_sr_f64_int8_avx2(__m256i x0, __m256i x1, __m256i r)
{
    const __m256d absm = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
    const __m256d c256 = _mm256_set1_pd(256.0), z = _mm256_setzero_pd();
    const __m256d y0 = _mm256_add_pd(_mm256_min_pd(c256, _mm256_and_pd(_mm256_castsi256_pd(x0), absm)), c256);
    const __m256d y1 = _mm256_add_pd(_mm256_min_pd(c256, _mm256_and_pd(_mm256_castsi256_pd(x1), absm)), c256);
    const __m256i w0 = _mm256_sub_epi64(_mm256_unpacklo_epi32(r, _mm256_castpd_si256(z)),
                                        _mm256_srli_epi64(_mm256_castpd_si256(y0), 12));
    const __m256i w1 = _mm256_sub_epi64(_mm256_unpackhi_epi32(r, _mm256_castpd_si256(z)),
                                        _mm256_srli_epi64(_mm256_castpd_si256(y1), 12));
    const __m256i mag = _mm256_sub_epi32(MXP_V8(-(0x4070000000000000ll >> 44)), mxp_sr_dwords_avx2(w0, w1, 1));
    const __m256i v = _mm256_sign_epi32(mag, mxp_sr_dwords_avx2(x0, x1, 1));
    return _mm256_andnot_si256(_mm256_cmpgt_epi32(mag, MXP_V8(257)), v);
}

/* 32 results in the order above, packed in place and stored */
MXP_INLINE void mxp_sr_f64_store32_avx2(void *d, __m256i r[4], mxp_sr_target t, int stream)
{
    if (mxp_sr_out_size(t) == 2) {
        const __m256i p = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        mxp_store256_avx2(d, _mm256_permutevar8x32_epi32(_mm256_packus_epi32(r[0], r[1]), p), stream);
        mxp_store256_avx2((uint16_t *)d + 16, _mm256_permutevar8x32_epi32(_mm256_packus_epi32(r[2], r[3]), p), stream);
        return;
    }
    for (int k = 0; k < 4; k++)
        r[k] = _mm256_permute4x64_epi64(r[k], _MM_SHUFFLE(3, 1, 2, 0));
    const __m256i b = mxp_sr_int(t) && mxp_sr_signed(t) ? mxp_pack_s8_avx2(r[0], r[1], r[2], r[3])
                                                                  : mxp_pack8_avx2(r[0], r[1], r[2], r[3]);
    mxp_store256_avx2(d, mxp_sr_sub_byte_avx2(b, t), stream);
}

/* 32 elements; v: lo32(index) + k1 of the first 8 in the order above */
MXP_INLINE void mxp_sr_f64_step32_avx2(void *d, const double *s, mxp_sr_target t, int saturate, __m256i v,
                                       mxp_sr_key key, int stream)
{
    __m256i r[4];
    for (int k = 0; k < 4; k++) {
        const __m256i x0 = _mm256_loadu_si256((const __m256i *)(s + 8 * k));
        const __m256i x1 = _mm256_loadu_si256((const __m256i *)(s + 8 * k + 4));
        __m256i h = mxp_sr_mix_rounds_k1_avx2(_mm256_add_epi32(v, MXP_V8(8 * k)), key);
        h = _mm256_xor_si256(h, _mm256_srli_epi32(h, 16));
        r[k] = mxp_sr_int(t) ? mxp_sr_f64_int8_avx2(x0, x1, h) : mxp_sr_f64_float8_avx2(x0, x1, h, t, saturate);
    }
    mxp_sr_f64_store32_avx2(d, r, t, stream);
}

MXP_INLINE void mxp_sr_f64_part32_avx2(void *d, const double *s, size_t count, mxp_sr_target t, int saturate,
                                       __m256i v, mxp_sr_key key)
{
    double in[32] = { 0 };
    uint16_t out[32];
    memcpy(in, s, count * 8);
    mxp_sr_f64_step32_avx2(out, in, t, saturate, v, key, 0);
    memcpy(d, out, count * mxp_sr_out_size(t));
}

MXP_INLINE void mxp_sr_f64_avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_sr_target t)
{
    const double *s = src;
    const size_t os = mxp_sr_out_size(t);
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_sr_key key = mxp_sr_key_for(p->seed, p->index0);
    const __m256i idx = _mm256_add_epi32(MXP_V8((uint32_t)p->index0 + key.k1), mxp_sr_f64_order_avx2());
    const mxp_fpenv env = mxp_fpenv_enter();
    const unsigned csr = _mm_getcsr();
    _mm_setcsr(csr | 0x6040u); /* toward zero, DAZ */
    unsigned char *d = dst;
    size_t i = 0;
    const int stream = mxp_streams(n * (8 + os)) && (uintptr_t)dst % os == 0;
    if (stream) {
        size_t head = ((32 - (uintptr_t)dst % 32) % 32) / os;
        head = head < n ? head : n;
        if (head) {
            mxp_sr_f64_part32_avx2(d, s, head, t, saturate, idx, key);
            i = head;
        }
    }
    for (; i + 32 <= n; i += 32) {
        _mm_prefetch((const char *)(s + i + 128), _MM_HINT_T0);
        _mm_prefetch((const char *)(s + i + 136), _MM_HINT_T0);
        _mm_prefetch((const char *)(s + i + 144), _MM_HINT_T0);
        _mm_prefetch((const char *)(s + i + 152), _MM_HINT_T0);
        mxp_sr_f64_step32_avx2(d + i * os, s + i, t, saturate, _mm256_add_epi32(idx, MXP_V8(i)), key, stream);
    }
    if (i < n)
        mxp_sr_f64_part32_avx2(d + i * os, s + i, n - i, t, saturate, _mm256_add_epi32(idx, MXP_V8(i)), key);
    if (stream)
        _mm_sfence();
    _mm_setcsr((csr & ~(unsigned)MXP_MXCSR_FLAGS) | (_mm_getcsr() & MXP_MXCSR_FLAGS));
    mxp_fpenv_leave(env);
}

/* ---- float32 -> f16, e4m3, e5m2, s8, u8 -------------------------------------
 * d = 23 - M bits dropped: adding (~r) >> (32 - d) to |x|'s bits carries
 * exactly when the magnitude rounds up; below the normal range the same on
 * y/2 = (|x| + 2^emin) / 2 toward zero (vfmadd in the MXCSR rounding toward
 * zero set here), which loses the bits of |x| below 2^(emin - 23): when r's
 * top d bits equal y's dropped bits (a chance of 2^-d) those decide, and
 * such vectors, and those with overflow, inf or NaN, are redone by the
 * exact integer method of cvt-round-avx2.h (mxp_f32_to_narrow_avx2,
 * mxp_f32_to_small_int_avx2).  float32 subnormals are read as zero (MXCSR.DAZ,
 * set here: their fraction of any target's ulp is below 2^-32, so they never
 * round up).  int8: y = min(|x|, 256) + 256 toward zero keeps 15 bits of
 * fraction, the same way.
 *
 * In the registers: with t = r >> (32 - d) (r's top d bits) and w = t - b
 * (b: the bits added to), the sum b + (~r >> (32 - d)) is 2^d - 1 - w, so
 * its bits above d are -(w >> d) (arithmetic shift) and its low d bits are
 * all ones where w's are zero; the sign goes in with the rebias (one
 * subtract of a constant vblendvps picks by the sign).  The step keeps
 * only its four results and an OR of the redo masks; the rare redo reloads
 * x and draws r again. */
/* The exact method's description of float target t (the rare redo) */
MXP_INLINE mxp_narrow_fmt2 mxp_sr_narrow_fmt_avx2(mxp_sr_target t)
{
    const mxp_sr_fmt f = mxp_sr_fmts[t];
    return (mxp_narrow_fmt2){ f.bits, f.mbits, f.bias, f.has_inf, f.style };
}

/* r's top `bits` bits (bits <= 16: h's, the last xor-shift not needed) */
MXP_INLINE __m256i mxp_sr_top_avx2(__m256i h, int bits)
{
    if (bits > 16)
        h = _mm256_xor_si256(h, _mm256_srli_epi32(h, 16));
    return _mm256_srli_epi32(h, 32 - bits);
}

/* The loop's constants, made once per call and hidden from the compiler
 * (an empty asm), which would otherwise rebuild each from an immediate
 * (three instructions) in every step when registers run short, instead of
 * reading it from the stack.  float8: fmul, fadd = 1/2, 2^(emin - 1);
 * low = 2^d - 1; sc0, sc1 = the rebias with sign 0 and 1.  int8: fmul,
 * fadd = 256, 257 - 2^-15; low = 0x7fff; sc0 = -(256.0f's bits >> 15). */
typedef struct mxp_sr_f32_consts {
    __m256i mul1, mul2, k2, eight, abs, low, sc0, sc1;
    __m256 fmul, fadd;
} mxp_sr_f32_consts;

MXP_INLINE __m256i mxp_sr_opaque_avx2(__m256i v)
{
    __asm__("" : "+x"(v));
    return v;
}

MXP_INLINE __m256 mxp_sr_opaque_ps_avx2(__m256 v)
{
    __asm__("" : "+x"(v));
    return v;
}

MXP_INLINE mxp_sr_f32_consts mxp_sr_f32_consts_avx2(mxp_sr_target t, mxp_sr_key key)
{
    mxp_sr_f32_consts c;
    c.mul1 = mxp_sr_opaque_avx2(MXP_V8(0x7feb352du));
    c.mul2 = mxp_sr_opaque_avx2(MXP_V8(0x846ca68bu));
    c.k2 = mxp_sr_opaque_avx2(MXP_V8(key.k2));
    c.eight = mxp_sr_opaque_avx2(MXP_V8(8));
    c.abs = mxp_sr_opaque_avx2(MXP_V8(0x7fffffff));
    if (mxp_sr_int(t)) {
        c.fmul = mxp_sr_opaque_ps_avx2(_mm256_set1_ps(256.0f));
        c.fadd = mxp_sr_opaque_ps_avx2(_mm256_set1_ps(257.0f - 0x1p-15f));
        c.low = mxp_sr_opaque_avx2(MXP_V8(0x7fff));
        c.sc0 = mxp_sr_opaque_avx2(MXP_V8(-(0x43800000 >> 15)));
        c.sc1 = c.sc0;
    } else {
        const mxp_sr_fmt f = mxp_sr_fmts[t];
        const unsigned rebias = (127u - f.bias) << f.mbits;
        c.fmul = mxp_sr_opaque_ps_avx2(_mm256_set1_ps(0.5f));
        c.fadd = mxp_sr_opaque_ps_avx2(_mm256_set1_ps((float)__builtin_ldexp(1.0, -f.bias)));
        c.low = mxp_sr_opaque_avx2(MXP_V8((1u << (23 - f.mbits)) - 1));
        c.sc0 = mxp_sr_opaque_avx2(MXP_V8(0u - rebias));
        c.sc1 = mxp_sr_opaque_avx2(MXP_V8((1u << (f.bits - 1)) - rebias));
    }
    return c;
}

/* mxp_sr_mix_rounds_k1_avx2 with the constants above */
MXP_INLINE __m256i mxp_sr_f32_rounds_avx2(__m256i x, const mxp_sr_f32_consts *c)
{
    x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
    x = _mm256_mullo_epi32(x, c->mul1);
    x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
    return _mm256_mullo_epi32(_mm256_xor_si256(x, c->k2), c->mul2);
}

/* What decides a redo, gathered over the vectors of a step by vpmax/vpmin
 * (first: the step's first vector).  float8: a tie where w's low d bits
 * are zero (tie: their minimum), overflow, inf or NaN where w < 2^d - ovf
 * (big: w's minimum).  int8: a tie where the sum's low 15 bits are all
 * ones (their maximum), NaN where the result is above 257 (big: its
 * maximum). */
typedef struct mxp_sr_f32_check {
    __m256i tie, big;
} mxp_sr_f32_check;

MXP_INLINE void mxp_sr_f32_gather_avx2(mxp_sr_f32_check *c, __m256i tie, __m256i big, int is_max, int first)
{
    c->tie = first ? tie : is_max ? _mm256_max_epi32(c->tie, tie) : _mm256_min_epi32(c->tie, tie);
    c->big = first ? big : is_max ? _mm256_max_epi32(c->big, big) : _mm256_min_epi32(c->big, big);
}

MXP_INLINE int mxp_sr_f32_redo_any_avx2(mxp_sr_f32_check c, mxp_sr_target t)
{
    __m256i m;
    if (mxp_sr_int(t)) {
        m = _mm256_or_si256(_mm256_cmpeq_epi32(c.tie, MXP_V8(0x7fff)), _mm256_cmpgt_epi32(c.big, MXP_V8(257)));
    } else {
        const mxp_sr_fmt f = mxp_sr_fmts[t];
        const int d = 23 - f.mbits;
        m = _mm256_or_si256(_mm256_cmpeq_epi32(c.tie, _mm256_setzero_si256()),
                            _mm256_cmpgt_epi32(MXP_V8((1u << d) - f.ovf_bits), c.big)); /* sum >= ovf */
    }
    return !_mm256_testz_si256(m, m);
}

/* The fast way.  h: the rounds' output (mxp_sr_mix_rounds_k1_avx2). */
MXP_INLINE __m256i mxp_sr_f32_float8_avx2(__m256i x, __m256i h, mxp_sr_target t, const mxp_sr_f32_consts *k,
                                          mxp_sr_f32_check *c, int first)
{
    const int d = 23 - mxp_sr_fmts[t].mbits;
    const __m256i a = _mm256_and_si256(x, k->abs);
    const __m256 y2 = _mm256_fmadd_ps(_mm256_castsi256_ps(a), k->fmul, k->fadd);
    const __m256i w = _mm256_sub_epi32(mxp_sr_top_avx2(h, d), _mm256_max_epu32(a, _mm256_castps_si256(y2)));
    mxp_sr_f32_gather_avx2(c, _mm256_and_si256(w, k->low), w, 0, first);
    const __m256 sc = _mm256_blendv_ps(_mm256_castsi256_ps(k->sc0), _mm256_castsi256_ps(k->sc1), _mm256_castsi256_ps(x));
    const __m256i r = _mm256_sub_epi32(_mm256_castps_si256(sc), _mm256_srai_epi32(w, d));
    return mxp_sr_fnuz_avx2(t) ? _mm256_andnot_si256(_mm256_cmpeq_epi32(r, MXP_V8(0x80)), r) : r; /* -0: +0 */
}

/* int32 in [-256, 256] (NaN: far above), for the saturating packs.  y +
 * 0x7fff (its ulp is 2^-15) is y' = q + (257 - 2^-15) toward zero where
 * that stays below 512; above, the result saturates either way.  NaN
 * stays NaN through vminps (the second operand) and the add. */
MXP_INLINE __m256i mxp_sr_f32_int8_avx2(__m256i x, __m256i h, const mxp_sr_f32_consts *k, mxp_sr_f32_check *c,
                                        int first)
{
    const __m256 q = _mm256_min_ps(k->fmul, _mm256_castsi256_ps(_mm256_and_si256(x, k->abs)));
    const __m256i y = _mm256_castps_si256(_mm256_add_ps(q, k->fadd));
    const __m256i sum = _mm256_sub_epi32(y, _mm256_srli_epi32(h, 17));
    const __m256i mag = _mm256_add_epi32(_mm256_srli_epi32(sum, 15), k->sc0);
    mxp_sr_f32_gather_avx2(c, _mm256_and_si256(sum, k->low), mag, 1, first);
    return _mm256_sign_epi32(mag, x);
}

MXP_INLINE __m256i mxp_sr_f32_fast8_avx2(__m256i x, __m256i h, mxp_sr_target t, const mxp_sr_f32_consts *k,
                                         mxp_sr_f32_check *c, int first)
{
    return mxp_sr_int(t) ? mxp_sr_f32_int8_avx2(x, h, k, c, first)
                                    : mxp_sr_f32_float8_avx2(x, h, t, k, c, first);
}

/* Two vectors of results packed (int8: int32 lanes, saturating packs),
 * as soon as they are there (fewer registers live); then 32 stored. */
MXP_INLINE __m256i mxp_sr_f32_pack2_avx2(__m256i r0, __m256i r1, mxp_sr_target t)
{
    if (mxp_sr_int(t))
        return _mm256_packs_epi32(r0, r1);
    if (mxp_sr_out_size(t) == 2)
        return mxp_pack16_avx2(r0, r1);
    return _mm256_packus_epi32(r0, r1);
}

MXP_INLINE void mxp_sr_f32_store32_avx2(void *d, __m256i p0, __m256i p1, mxp_sr_target t, int stream)
{
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    if (mxp_sr_out_size(t) == 2) {
        mxp_store256_avx2(d, p0, stream);
        mxp_store256_avx2((uint16_t *)d + 16, p1, stream);
    } else {
        const __m256i b = mxp_sr_signed(t) ? _mm256_packs_epi16(p0, p1) : _mm256_packus_epi16(p0, p1);
        mxp_store256_avx2(d, mxp_sr_sub_byte_avx2(_mm256_permutevar8x32_epi32(b, order), t), stream);
    }
}

/* The step again where the fast way flags a lane: each vector of 8 that
 * has one the exact way.  Out of line, so that nothing of the fast loop
 * has to live across it (unused: not every file that includes this
 * converts from float32). */
__attribute__((noinline, unused)) static void mxp_sr_f32_redo32_avx2(void *d, const float *s, mxp_sr_target t,
                                                                     int saturate, __m256i v, mxp_sr_key key,
                                                                     int stream)
{
    __m256i r[4];
    for (int k = 0; k < 4; k++) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(s + 8 * k));
        const __m256i h = mxp_sr_mix_rounds_k1_avx2(_mm256_add_epi32(v, MXP_V8(8 * k)), key);
        const mxp_sr_f32_consts kc = mxp_sr_f32_consts_avx2(t, key);
        mxp_sr_f32_check c;
        r[k] = mxp_sr_f32_fast8_avx2(x, h, t, &kc, &c, 1);
        if (!mxp_sr_f32_redo_any_avx2(c, t))
            continue;
        const __m256i rnd = _mm256_xor_si256(h, _mm256_srli_epi32(h, 16));
        if (mxp_sr_int(t))
            r[k] = mxp_f32_to_small_int_avx2(x, mxp_sr_lo(t), mxp_sr_hi(t), MXP_ROUND_STOCHASTIC, rnd);
        else
            r[k] = mxp_f32_to_narrow_avx2(x, mxp_sr_narrow_fmt_avx2(t), MXP_ROUND_STOCHASTIC, saturate, rnd);
    }
    mxp_sr_f32_store32_avx2(d, mxp_sr_f32_pack2_avx2(r[0], r[1], t), mxp_sr_f32_pack2_avx2(r[2], r[3], t), t, stream);
}

/* 32 elements from element i of s; v: lo32(index) + k1 of the first 8,
 * one a lane.  One test for the four vectors (a chance of about 2^-d a
 * lane, or overflow, inf, NaN); the redo reads other sources widened on
 * the stack. */
MXP_INLINE void mxp_sr_f32_step32_avx2(void *d, const void *s, size_t i, mxp_src32_avx2 sk, mxp_sr_target t,
                                       int saturate, __m256i v, mxp_sr_key key, const mxp_sr_f32_consts *k,
                                       int stream)
{
    __m256i p[2], vk = v;
    mxp_sr_f32_check c;
    for (int j = 0; j < 2; j++) {
        const __m256i x0 = mxp_src32_load8_avx2(s, i + 16 * (size_t)j, sk);
        const __m256i r0 = mxp_sr_f32_fast8_avx2(x0, mxp_sr_f32_rounds_avx2(vk, k), t, k, &c, j == 0);
        vk = _mm256_add_epi32(vk, k->eight);
        const __m256i x1 = mxp_src32_load8_avx2(s, i + 16 * (size_t)j + 8, sk);
        const __m256i r1 = mxp_sr_f32_fast8_avx2(x1, mxp_sr_f32_rounds_avx2(vk, k), t, k, &c, 0);
        vk = _mm256_add_epi32(vk, k->eight);
        p[j] = mxp_sr_f32_pack2_avx2(r0, r1, t);
    }
    if (__builtin_expect(mxp_sr_f32_redo_any_avx2(c, t), 0)) {
        float w[32];
        if (sk != SRC32_F32)
            mxp_widen32_avx2(w, s, i, sk);
        mxp_sr_f32_redo32_avx2(d, sk == SRC32_F32 ? (const float *)s + i : w, t, saturate, v, key, stream);
    } else {
        mxp_sr_f32_store32_avx2(d, p[0], p[1], t, stream);
    }
}

MXP_INLINE void mxp_sr_f32_part32_avx2(void *d, const void *s, size_t count, mxp_src32_avx2 sk, mxp_sr_target t,
                                       int saturate, __m256i v, mxp_sr_key key)
{
    float in[32] = { 0 }; /* room for 32 elements of any source */
    uint16_t out[32];
    memcpy(in, s, count * mxp_src32_size_avx2(sk));
    const mxp_sr_f32_consts k = mxp_sr_f32_consts_avx2(t, key);
    mxp_sr_f32_step32_avx2(out, in, 0, sk, t, saturate, v, key, &k, 0);
    memcpy(d, out, count * mxp_sr_out_size(t));
}

/* Stochastic rounding of n elements of source kind sk into t. */
MXP_INLINE void mxp_sr_src_avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_sr_target t,
                                mxp_src32_avx2 sk)
{
    const size_t os = mxp_sr_out_size(t), is = mxp_src32_size_avx2(sk);
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_sr_key key = mxp_sr_key_for(p->seed, p->index0);
    const __m256i idx = _mm256_add_epi32(mxp_sr_index_avx2(p->index0), MXP_V8(key.k1));
    const mxp_fpenv env = mxp_fpenv_enter();
    const unsigned csr = _mm_getcsr();
    _mm_setcsr(csr | 0x6040u); /* toward zero, DAZ */
    unsigned char *d = dst;
    const unsigned char *sb = src;
    size_t i = 0;
    const int stream = mxp_streams(n * (is + os)) && (uintptr_t)dst % os == 0;
    const mxp_sr_f32_consts k = mxp_sr_f32_consts_avx2(t, key);
    if (stream) {
        size_t head = ((32 - (uintptr_t)dst % 32) % 32) / os;
        head = head < n ? head : n;
        if (head) {
            mxp_sr_f32_part32_avx2(d, sb, head, sk, t, saturate, idx, key);
            i = head;
        }
    }
    for (; i + 32 <= n; i += 32) {
        _mm_prefetch((const char *)(sb + i * is + 1024), _MM_HINT_T0);
        if (is == 4)
            _mm_prefetch((const char *)(sb + i * is + 1024 + 64), _MM_HINT_T0);
        mxp_sr_f32_step32_avx2(d + i * os, src, i, sk, t, saturate, _mm256_add_epi32(idx, MXP_V8(i)), key, &k,
                               stream);
    }
    if (i < n)
        mxp_sr_f32_part32_avx2(d + i * os, sb + i * is, n - i, sk, t, saturate, _mm256_add_epi32(idx, MXP_V8(i)),
                               key);
    if (stream)
        _mm_sfence();
    _mm_setcsr((csr & ~(unsigned)MXP_MXCSR_FLAGS) | (_mm_getcsr() & MXP_MXCSR_FLAGS));
    mxp_fpenv_leave(env);
}

MXP_INLINE void mxp_sr_f32_avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_sr_target t)
{
    mxp_sr_src_avx2(dst, src, n, p, t, SRC32_F32);
}

#endif

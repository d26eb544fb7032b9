/* float32 -> bf16, f16, e4m3, e5m2, s8, u8 (and the sub-byte integers, a
 * byte each) with AVX2 in every rounding mode,
 * by the integer methods of cvt-round-avx2.h (float8 and float16 in the
 * deterministic modes: its float-unit step, in MXCSR set to the mode;
 * e5m2 there faster through float16 by F16C), 32 elements a step: the loop
 * shared by the src/kernels/f32-<dst>-vcvt/avx2.c kernels.  Tails (and the
 * head before an aligned streaming store) go through a small zero-padded
 * buffer.  Forward, reading a step's input before writing its results:
 * in-place narrowing (dst == src) works. */
#ifndef MXP_KERNELS_CVT_F32_AVX2_H
#define MXP_KERNELS_CVT_F32_AVX2_H

#include <immintrin.h>
#include <string.h>

#include "core/fpenv.h"
#include "kernels/cvt-round-avx2.h"
#include "kernels/cvt-widen-avx2.h"

/* ---- every mode by integer arithmetic ------------------------------------
 * fmt.bits == 0 selects an integer target with range [lo, hi]. */
typedef struct mxp_f32_target2 {
    mxp_narrow_fmt2 fmt;
    int lo, hi;
    int fp; /* deterministic modes by the float unit (mxp_f32_narrow_fp_mag_avx2) */
} mxp_f32_target2;

MXP_INLINE size_t mxp_f32_out_size_avx2(mxp_f32_target2 t)
{
    return t.fmt.bits == 16 ? 2 : 1;
}

/* 8 lanes; r: the random bits (stochastic rounding) */
MXP_INLINE __m256i mxp_f32_convert8_avx2(__m256i x, mxp_f32_target2 t, mxp_rounding mode, int saturate, __m256i r)
{
    if (t.fmt.bits == 16 && t.fmt.mbits == 7)
        return mxp_f32_to_bf16_avx2(x, mode, saturate, mxp_not_avx2(r));
    if (t.fmt.bits && t.fp && mode != MXP_ROUND_STOCHASTIC)
        return mxp_f32_to_narrow_fp_avx2(x, t.fmt, mode, saturate, 1);
    if (t.fmt.bits)
        return mxp_f32_to_narrow_avx2(x, t.fmt, mode, saturate, r);
    if (mode != MXP_ROUND_STOCHASTIC) { /* int32, for the saturating packs (|x| clamped to 256 first) */
        if (t.hi >= 127) /* int8, uint8: the packs saturate */
            return mxp_f32_to_int_sat_avx2(x, mode, 1);
        const __m256i v = mxp_f32_to_int_clamped_avx2(x, mode, 1, (float)t.lo, (float)t.hi);
        return t.lo < 0 ? _mm256_and_si256(v, MXP_V8(2 * t.hi + 1)) : v; /* signed: the low bits, as below */
    }
    const __m256i v = mxp_f32_to_small_int_avx2(x, t.lo, t.hi, mode, r);
    if (t.lo < 0 && t.hi < 127) /* int4/int2/int1: the low bits, the bits above zero (the AVX-512 kernels') */
        return _mm256_and_si256(v, MXP_V8(2 * t.hi + 1));
    return _mm256_and_si256(v, MXP_V8(0xff));
}

/* 32 elements from s to d; idx: lo32 of element 0's index in every lane's
 * place (lanes 0..7). */
MXP_INLINE void mxp_f32_step32_avx2(void *d, const float *s, mxp_f32_target2 t, mxp_rounding mode, int saturate,
                                    __m256i idx, mxp_sr_key key, int stream)
{
    __m256i x[4], r[4], z = _mm256_setzero_si256();
    for (int k = 0; k < 4; k++)
        x[k] = _mm256_loadu_si256((const __m256i *)(s + 8 * k));
    if (t.fmt.bits && t.fmt.bits < 16 && t.fp && mode != MXP_ROUND_STOCHASTIC) { /* the finish once for 32 lanes */
        for (int k = 0; k < 4; k++)
            r[k] = mxp_f32_narrow_fp_mag_avx2(x[k], t.fmt, mode, 1);
        mxp_store256_avx2(d, mxp_narrow_finish32_avx2(r, x, t.fmt, mode, saturate), stream);
        return;
    }
    for (int k = 0; k < 4; k++) {
        __m256i rk = z;
        if (mode == MXP_ROUND_STOCHASTIC)
            rk = mxp_sr_mix_avx2(_mm256_add_epi32(idx, MXP_V8(8 * k)), key);
        r[k] = mxp_f32_convert8_avx2(x[k], t, mode, saturate, rk);
    }
    if (mxp_f32_out_size_avx2(t) == 2) {
        mxp_store256_avx2(d, mxp_pack16_avx2(r[0], r[1]), stream);
        mxp_store256_avx2((uint16_t *)d + 16, mxp_pack16_avx2(r[2], r[3]), stream);
    } else if (t.fmt.bits == 0 && t.hi >= 127 && mode != MXP_ROUND_STOCHASTIC) {
        mxp_store256_avx2(d, t.lo ? mxp_pack_s8_avx2(r[0], r[1], r[2], r[3]) : mxp_pack_u8_avx2(r[0], r[1], r[2], r[3]),
                          stream);
    } else {
        mxp_store256_avx2(d, mxp_pack8_avx2(r[0], r[1], r[2], r[3]), stream);
    }
}

/* The source: float32, or bfloat16 / float16 widened exactly to float32 in
 * a 32-element block on the stack (bfloat16: the top half of a float32;
 * float16: vcvtph2ps), so that the 16-bit sources take the float32 cores
 * in one pass, without a float32 array written and read back; the 8-bit
 * sources int8, uint8, e4m3 and e5m2 as cvt-widen-avx2.h widens them
 * (stochastic rounding only: cvt-sr-avx2.h). */
typedef enum { SRC32_F32, SRC32_BF16, SRC32_F16, SRC32_S8, SRC32_U8, SRC32_E4M3, SRC32_E5M2 } mxp_src32_avx2;

MXP_INLINE size_t mxp_src32_size_avx2(mxp_src32_avx2 sk)
{
    return sk == SRC32_F32 ? 4 : sk == SRC32_BF16 || sk == SRC32_F16 ? 2 : 1;
}

/* Eight elements from element i of s as float32 bits, exactly. */
MXP_INLINE __m256i mxp_src32_load8_avx2(const void *s, size_t i, mxp_src32_avx2 sk)
{
    const unsigned char *p = (const unsigned char *)s + i * mxp_src32_size_avx2(sk);
    const __m128i *h = (const __m128i *)(const void *)p;
    switch (sk) {
    case SRC32_F32: return _mm256_loadu_si256((const __m256i *)(const void *)p);
    case SRC32_BF16: return _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(h)), 16);
    case SRC32_F16: return _mm256_castps_si256(_mm256_cvtph_ps(_mm_loadu_si128(h)));
    case SRC32_S8: return _mm256_castps_si256(mxp_widen8_avx2(p, WIDEN2_S8, 0));
    case SRC32_U8: return _mm256_castps_si256(mxp_widen8_avx2(p, WIDEN2_U8, 0));
    case SRC32_E4M3: return _mm256_castps_si256(mxp_widen8_avx2(p, WIDEN2_E4M3, 0));
    default: return _mm256_castps_si256(mxp_widen8_avx2(p, WIDEN2_E5M2, 0));
    }
}

/* 32 elements from element i of s widened into out. */
MXP_INLINE void mxp_widen32_avx2(float *out, const void *s, size_t i, mxp_src32_avx2 sk)
{
    for (size_t k = 0; k < 4; k++)
        _mm256_storeu_si256((__m256i *)(void *)(out + 8 * k), mxp_src32_load8_avx2(s, i + 8 * k, sk));
}

/* 8 float32 lanes to int32 in a deterministic mode by the conversion in
 * MXCSR's rounding, which mxp_src_by_mode_avx2 sets to the mode's (nearest
 * away: toward zero, after an add of copysign(1/2, x): floor(|x| + 1/2)
 * with x's sign, |x| <= 256 here).  No NaN here. */
MXP_INLINE __m256i mxp_h16_cvt8_avx2(__m256i x, mxp_rounding mode)
{
    const __m256 f = _mm256_castsi256_ps(x);
    if (mode == MXP_ROUND_TOWARD_ZERO)
        return _mm256_cvttps_epi32(f);
    if (mode == MXP_ROUND_NEAREST_AWAY)
        return _mm256_cvttps_epi32(_mm256_add_ps(
            f, _mm256_or_ps(_mm256_set1_ps(0.5f), _mm256_and_ps(f, _mm256_castsi256_ps(MXP_V8(0x80000000u))))));
    return _mm256_cvtps_epi32(f);
}

/* 32 bfloat16 or float16 elements to integers in [t.lo, t.hi], a byte each
 * (a signed sub-byte target in its low bits), in a deterministic mode, in
 * registers.  The clamp is done on the 16-bit patterns, before rounding,
 * which commutes with it (the bounds are integers): vpminuw caps the
 * negative patterns' magnitude at -lo (the positive ones are below 0x8000),
 * vpminsw the positive ones at hi (the negative ones are below zero as
 * int16); NaN lanes are zeroed there (NaN -> 0).  Then each half of 8
 * lanes widens exactly to float32 (bfloat16: vpunpck with zeros; float16:
 * vcvtph2ps), vcvtps2dq, and the int32 lanes pack to bytes with
 * saturation; one permutation puts the bytes back in order. */
MXP_INLINE __m256i mxp_h16_int32_avx2(const uint16_t *s, mxp_src32_avx2 sk, mxp_f32_target2 t, mxp_rounding mode)
{
    const int bf16 = sk == SRC32_BF16;
    union {
        float f;
        uint32_t u;
    } neg = { (float)-t.lo }, pos = { (float)t.hi };
    const unsigned short neg16 = (unsigned short)(bf16 ? neg.u >> 16 : (unsigned)_cvtss_sh(neg.f, 0));
    const short pos16 = (short)(bf16 ? pos.u >> 16 : (unsigned)_cvtss_sh(pos.f, 0));
    const short inf = (short)(bf16 ? 0x7f80 : 0x7c00);
    __m256i w[2];
    for (int k = 0; k < 2; k++) {
        const __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)(s + 16 * k));
        const __m256i nan = _mm256_cmpgt_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7fff)), _mm256_set1_epi16(inf));
        __m256i c = _mm256_min_epu16(h, _mm256_set1_epi16((short)(0x8000u | neg16)));
        c = _mm256_andnot_si256(nan, _mm256_min_epi16(c, _mm256_set1_epi16(pos16)));
        __m256i q0, q1;
        if (bf16) { /* lanes 0-3 and 4-7 of each 128-bit half */
            q0 = _mm256_unpacklo_epi16(_mm256_setzero_si256(), c);
            q1 = _mm256_unpackhi_epi16(_mm256_setzero_si256(), c);
        } else { /* lanes 0-7 and 8-15 */
            q0 = _mm256_castps_si256(_mm256_cvtph_ps(_mm256_castsi256_si128(c)));
            q1 = _mm256_castps_si256(_mm256_cvtph_ps(_mm256_extracti128_si256(c, 1)));
        }
        w[k] = _mm256_packs_epi32(mxp_h16_cvt8_avx2(q0, mode), mxp_h16_cvt8_avx2(q1, mode));
    }
    __m256i b = t.lo == 0 && t.hi == 255 ? _mm256_packus_epi16(w[0], w[1]) : _mm256_packs_epi16(w[0], w[1]);
    /* bfloat16: 128-bit halves hold elements 0-7, 16-23 | 8-15, 24-31;
     * float16: dwords of 4 elements 0, 8, 16, 24 | 4, 12, 20, 28 */
    b = bf16 ? _mm256_permute4x64_epi64(b, _MM_SHUFFLE(3, 1, 2, 0))
             : _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    if (t.lo < 0 && t.hi < 127) /* int4/int2/int1: the low bits */
        b = _mm256_and_si256(b, _mm256_set1_epi8((char)(2 * t.hi + 1)));
    return b;
}

/* 32 elements from element i of src, of the source kind */
MXP_INLINE void mxp_src_step32_avx2(void *d, const void *src, size_t i, mxp_src32_avx2 sk, mxp_f32_target2 t,
                                    mxp_rounding mode, int saturate, __m256i idx, mxp_sr_key key, int stream)
{
    if (sk == SRC32_F32) {
        mxp_f32_step32_avx2(d, (const float *)src + i, t, mode, saturate, idx, key, stream);
        return;
    }
    if (t.fmt.bits == 0 && mode != MXP_ROUND_STOCHASTIC && mxp_src32_size_avx2(sk) == 2) {
        mxp_store256_avx2(d, mxp_h16_int32_avx2((const uint16_t *)src + i, sk, t, mode), stream);
        return;
    }
    float w[32];
    mxp_widen32_avx2(w, src, i, sk);
    mxp_f32_step32_avx2(d, w, t, mode, saturate, idx, key, stream);
}

/* count < 32 elements through a buffer */
MXP_INLINE void mxp_f32_part32_avx2(void *d, const void *src, size_t i, size_t count, mxp_src32_avx2 sk,
                                    mxp_f32_target2 t, mxp_rounding mode, int saturate, __m256i idx, mxp_sr_key key)
{
    const size_t is = mxp_src32_size_avx2(sk);
    float in[32] = { 0 };
    uint16_t out[32];
    memcpy(in, (const unsigned char *)src + i * is, count * is);
    mxp_src_step32_avx2(out, in, 0, sk, t, mode, saturate, idx, key, 0);
    memcpy(d, out, count * mxp_f32_out_size_avx2(t));
}

MXP_INLINE void mxp_f32_loop_avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_f32_target2 t,
                                  mxp_rounding mode, mxp_src32_avx2 sk)
{
    const size_t os = mxp_f32_out_size_avx2(t), is = mxp_src32_size_avx2(sk);
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_sr_key key = mxp_sr_key_for(p->seed, p->index0);
    __m256i idx = mxp_sr_index_avx2(p->index0);
    unsigned char *d = dst;
    size_t i = 0;
    const int stream = mxp_streams(n * (is + os)) && (uintptr_t)dst % os == 0;
    if (stream) {
        size_t head = ((32 - (uintptr_t)dst % 32) % 32) / os;
        head = head < n ? head : n;
        if (head) {
            mxp_f32_part32_avx2(d, src, 0, head, sk, t, mode, saturate, idx, key);
            i = head;
        }
    }
    /* A software prefetch 2 KiB of source ahead: measured on the Xeon
     * (family 6 model 0xa7) to take the compute-heavier modes closer to
     * memcpy (16-bit sources into float8 at MXP_ISA=avx2: 7.2-7.6 ->
     * 8.7-9.0 GB/s against 512 bytes ahead; float32 ones the same as at
     * 1 KiB). */
    const char *sb = src;
    for (; i + 32 <= n; i += 32) {
        _mm_prefetch(sb + i * is + 2048, _MM_HINT_T0);
        if (is == 4)
            _mm_prefetch(sb + i * is + 2048 + 64, _MM_HINT_T0);
        mxp_src_step32_avx2(d + i * os, src, i, sk, t, mode, saturate, _mm256_add_epi32(idx, MXP_V8(i)), key, stream);
    }
    if (i < n)
        mxp_f32_part32_avx2(d + i * os, src, i, n - i, sk, t, mode, saturate, _mm256_add_epi32(idx, MXP_V8(i)), key);
    if (stream)
        _mm_sfence();
}

/* MXCSR's rounding-control bits for the float-unit steps in a mode: the
 * mode's; nearest away: toward zero (those steps add 1/2 first). */
MXP_INLINE unsigned mxp_mxcsr_rc_avx2(mxp_rounding m)
{
    return m == MXP_ROUND_TOWARD_ZERO || m == MXP_ROUND_NEAREST_AWAY ? 0x6000
           : m == MXP_ROUND_UP                                     ? 0x4000
           : m == MXP_ROUND_DOWN                                   ? 0x2000
                                                                   : 0;
}

/* One instantiation of the loop per rounding mode, so the mode is a constant. */
MXP_INLINE void mxp_src_by_mode_avx2(void *dst, const void *s, size_t n, const mxp_cvt_params *p, mxp_f32_target2 t,
                                     mxp_src32_avx2 sk)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    /* MXCSR's rounding: the mode's, for the float-unit step; nothing else
     * here depends on it */
    const unsigned csr = _mm_getcsr();
    _mm_setcsr((csr & ~0x6000u) | mxp_mxcsr_rc_avx2(p->rounding));
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: mxp_f32_loop_avx2(dst, s, n, p, t, MXP_ROUND_NEAREST_EVEN, sk); break;
    case MXP_ROUND_NEAREST_AWAY: mxp_f32_loop_avx2(dst, s, n, p, t, MXP_ROUND_NEAREST_AWAY, sk); break;
    case MXP_ROUND_TOWARD_ZERO: mxp_f32_loop_avx2(dst, s, n, p, t, MXP_ROUND_TOWARD_ZERO, sk); break;
    case MXP_ROUND_UP: mxp_f32_loop_avx2(dst, s, n, p, t, MXP_ROUND_UP, sk); break;
    case MXP_ROUND_DOWN: mxp_f32_loop_avx2(dst, s, n, p, t, MXP_ROUND_DOWN, sk); break;
    default: mxp_f32_loop_avx2(dst, s, n, p, t, MXP_ROUND_STOCHASTIC, sk); break;
    }
    _mm_setcsr((csr & ~(unsigned)MXP_MXCSR_FLAGS) | (_mm_getcsr() & MXP_MXCSR_FLAGS));
    mxp_fpenv_leave(env);
}

MXP_INLINE void mxp_f32_by_mode_avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_f32_target2 t)
{
    mxp_src_by_mode_avx2(dst, src, n, p, t, SRC32_F32);
}

#endif

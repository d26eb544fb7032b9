/* float64 -> f32 (nearest even, toward zero, up, down: vcvtpd2ps in that
 * MXCSR rounding) and float64 -> bf16, f16, e4m3, e5m2, s8 in the
 * deterministic modes through float32 rounded to odd, with AVX2, 32
 * elements a step: the loop shared by the src/kernels/f64-<dst>-vcvt/avx2.c
 * kernels.
 *
 * Rounded to odd (docs/conversions.md): vcvtpd2ps toward zero, its last
 * bit set where the conversion back (vcvtps2pd) differs, keeps the sign,
 * every bit the final rounding to a format at least two bits narrower looks
 * at and the sticky bit, so the float32 step of cvt-round-avx2.h (bf16:
 * add-and-shift; float8: the float unit; int8: the conversion; f16:
 * F16C's vcvtps2ph) in any deterministic mode gives the rounding of the
 * float64.  Beyond float32's
 * range the intermediate is max (odd), which overflows every target as the
 * source does.  The directed modes (toward zero, up, down) convert in their
 * own MXCSR rounding instead, without the odd bit: directed roundings
 * compose (every target value is a float32); NaNs come out quiet with the top payload bits.  The kernels
 * set MXCSR themselves: the library's (no FTZ/DAZ) with the rounding the
 * conversion needs (every other float operation is exact or has its own
 * rounding immediate).  Tails through a zero-padded buffer; forward, so
 * in-place narrowing works. */
#ifndef MXP_KERNELS_CVT_F64_AVX2_H
#define MXP_KERNELS_CVT_F64_AVX2_H

#include <immintrin.h>
#include <string.h>

#include "core/fpenv.h"
#include "kernels/cvt-round-avx2.h"

typedef enum { F64_TO_F32, F64_TO_BF16, F64_TO_F16, F64_TO_E4M3, F64_TO_E5M2, F64_TO_S8 } mxp_f64_target2;

MXP_INLINE size_t mxp_f64_out_size_avx2(mxp_f64_target2 t)
{
    return t == F64_TO_F32 ? 4 : t == F64_TO_BF16 || t == F64_TO_F16 ? 2 : 1;
}

/* 8 float64 to 8 float32 in the current MXCSR rounding; odd: the inexact
 * lanes' last bit set. */
MXP_INLINE __m256i mxp_f64_cvt8_avx2(const double *s, int odd)
{
    const __m256d x0 = _mm256_loadu_pd(s), x1 = _mm256_loadu_pd(s + 4);
    const __m128 h0 = _mm256_cvtpd_ps(x0), h1 = _mm256_cvtpd_ps(x1);
    __m256i h = _mm256_castps_si256(_mm256_set_m128(h1, h0));
    if (odd) {
        const __m256i m0 = _mm256_castpd_si256(_mm256_cmp_pd(_mm256_cvtps_pd(h0), x0, _CMP_NEQ_UQ));
        const __m256i m1 = _mm256_castpd_si256(_mm256_cmp_pd(_mm256_cvtps_pd(h1), x1, _CMP_NEQ_UQ));
        const __m256i sel = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
        const __m256i m = _mm256_blend_epi32(_mm256_permutevar8x32_epi32(m0, sel), _mm256_permutevar8x32_epi32(m1, sel), 0xf0);
        h = _mm256_or_si256(h, _mm256_and_si256(m, MXP_V8(1)));
    }
    return h;
}

MXP_INLINE __m256i mxp_f64_narrow8_avx2(__m256i x, mxp_f64_target2 t, mxp_rounding mode, int saturate)
{
    const int rz = mode != MXP_ROUND_NEAREST_EVEN; /* MXCSR: the mode's rounding (nearest away: toward zero) */
    switch (t) {
    case F64_TO_BF16: return mxp_f32_to_bf16_avx2(x, mode, saturate, _mm256_setzero_si256());
    case F64_TO_F16: return mxp_f32_to_narrow_fp_avx2(x, (mxp_narrow_fmt2){ 16, 10, 15, 1, 0 }, mode, saturate, rz);
    case F64_TO_E4M3: return mxp_f32_to_narrow_fp_avx2(x, (mxp_narrow_fmt2){ 8, 3, 7, 0, 0 }, mode, saturate, rz);
    case F64_TO_E5M2: return mxp_f32_to_narrow_fp_avx2(x, (mxp_narrow_fmt2){ 8, 2, 15, 1, 0 }, mode, saturate, rz);
    default: return mxp_f32_to_int_sat_avx2(x, mode, 0); /* int32, for the saturating packs */
    }
}

/* float16 by F16C: vcvtps2ph in the mode from the odd float32 (nearest
 * even) or the float32 rounded in the mode (toward zero, up, down).  Nearest away: vcvtps2ph to nearest even
 * from the truncation with its last bit set (not at inf), which lies
 * above a float16 halfway point exactly when the float64 reaches it (the
 * halfway points have few bits, the bit below them is 0) and below it
 * otherwise, so ties go up.  8 lanes; saturation: +-inf - 1 ulp = +-max. */
MXP_INLINE __m128i mxp_f64_f16x8_avx2(const double *s, mxp_rounding mode, int saturate)
{
    return mxp_f16x8_avx2(mxp_f64_cvt8_avx2(s, mode == MXP_ROUND_NEAREST_EVEN), mode, saturate);
}

MXP_INLINE void mxp_f64_step32_avx2(void *d, const double *s, mxp_f64_target2 t, mxp_rounding mode, int saturate,
                                    int stream)
{
    if (t == F64_TO_F16) {
        for (int k = 0; k < 2; k++)
            mxp_store256_avx2((uint16_t *)d + 16 * k,
                              _mm256_set_m128i(mxp_f64_f16x8_avx2(s + 16 * k + 8, mode, saturate),
                                               mxp_f64_f16x8_avx2(s + 16 * k, mode, saturate)),
                              stream);
        return;
    }
    __m256i h[4];
    for (int k = 0; k < 4; k++)
        h[k] = mxp_f64_cvt8_avx2(s + 8 * k, t != F64_TO_F32 && (mode == MXP_ROUND_NEAREST_EVEN ||
                                                               mode == MXP_ROUND_NEAREST_AWAY));
    if (t == F64_TO_F32) {
        for (int k = 0; k < 4; k++) {
            __m256i r = h[k];
            if (saturate) { /* +-inf - 1 ulp = +-max */
                __m256i inf = _mm256_cmpeq_epi32(_mm256_and_si256(r, MXP_V8(0x7fffffff)), MXP_V8(0x7f800000));
                r = _mm256_add_epi32(r, inf);
            }
            mxp_store256_avx2((float *)d + 8 * k, r, stream);
        }
        return;
    }
    __m256i r[4];
    for (int k = 0; k < 4; k++)
        r[k] = mxp_f64_narrow8_avx2(h[k], t, mode, saturate);
    if (mxp_f64_out_size_avx2(t) == 2) {
        mxp_store256_avx2(d, mxp_pack16_avx2(r[0], r[1]), stream);
        mxp_store256_avx2((uint16_t *)d + 16, mxp_pack16_avx2(r[2], r[3]), stream);
    } else {
        mxp_store256_avx2(d, t == F64_TO_S8 ? mxp_pack_s8_avx2(r[0], r[1], r[2], r[3])
                                            : mxp_pack8_avx2(r[0], r[1], r[2], r[3]),
                          stream);
    }
}

MXP_INLINE void mxp_f64_part32_avx2(void *d, const double *s, size_t count, mxp_f64_target2 t, mxp_rounding mode,
                                    int saturate)
{
    double in[32] = { 0 };
    float out[32];
    memcpy(in, s, count * 8);
    mxp_f64_step32_avx2(out, in, t, mode, saturate, 0);
    memcpy(d, out, count * mxp_f64_out_size_avx2(t));
}

MXP_INLINE void mxp_f64_loop_avx2(void *dst, const double *src, size_t n, int saturate, mxp_f64_target2 t,
                                  mxp_rounding mode)
{
    const size_t os = mxp_f64_out_size_avx2(t);
    unsigned char *d = dst;
    size_t i = 0;
    const int stream = mxp_streams(n * (8 + os)) && (uintptr_t)dst % os == 0;
    if (stream) {
        size_t head = ((32 - (uintptr_t)dst % 32) % 32) / os;
        head = head < n ? head : n;
        if (head) {
            mxp_f64_part32_avx2(d, src, head, t, mode, saturate);
            i = head;
        }
    }
    for (; i + 32 <= n; i += 32) {
        _mm_prefetch((const char *)(src + i + 128), _MM_HINT_T0);
        _mm_prefetch((const char *)(src + i + 136), _MM_HINT_T0);
        _mm_prefetch((const char *)(src + i + 144), _MM_HINT_T0);
        _mm_prefetch((const char *)(src + i + 152), _MM_HINT_T0);
        mxp_f64_step32_avx2(d + i * os, src + i, t, mode, saturate, stream);
    }
    if (i < n)
        mxp_f64_part32_avx2(d + i * os, src + i, n - i, t, mode, saturate);
    if (stream)
        _mm_sfence();
}

MXP_INLINE void mxp_f64_by_mode_avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_f64_target2 t)
{
    const double *s = src;
    const int sat = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_fpenv env = mxp_fpenv_enter();
    const unsigned csr = _mm_getcsr();
    /* the conversion's rounding: toward zero for the odd intermediate (and
     * nearest away's truncation); the directed modes' own */
    unsigned rc = p->rounding == MXP_ROUND_UP ? 0x4000 : p->rounding == MXP_ROUND_DOWN ? 0x2000 : 0x6000;
    if (t == F64_TO_F32)
        rc = p->rounding == MXP_ROUND_TOWARD_ZERO ? 0x6000 : p->rounding == MXP_ROUND_UP ? 0x4000
             : p->rounding == MXP_ROUND_DOWN ? 0x2000 : 0;
    _mm_setcsr((csr & ~0x6000u) | rc);
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: mxp_f64_loop_avx2(dst, s, n, sat, t, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_NEAREST_AWAY: mxp_f64_loop_avx2(dst, s, n, sat, t, MXP_ROUND_NEAREST_AWAY); break;
    case MXP_ROUND_TOWARD_ZERO: mxp_f64_loop_avx2(dst, s, n, sat, t, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: mxp_f64_loop_avx2(dst, s, n, sat, t, MXP_ROUND_UP); break;
    default: mxp_f64_loop_avx2(dst, s, n, sat, t, MXP_ROUND_DOWN); break;
    }
    _mm_setcsr((csr & ~(unsigned)MXP_MXCSR_FLAGS) | (_mm_getcsr() & MXP_MXCSR_FLAGS));
    mxp_fpenv_leave(env);
}

#endif

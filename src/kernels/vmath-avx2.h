/* Vector math through SLEEF, AVX2: the helpers of src/kernels/f32-vmath/,
 * f64-vmath/ and f16-vmath/avx2.c (8 float32 or 4 float64 lanes).  See
 * vmath-kernels.h.  Only for files built with the AVX2 flags and SLEEF. */
#ifndef MXP_KERNELS_VMATH_AVX2_H
#define MXP_KERNELS_VMATH_AVX2_H

#include <immintrin.h>
#include <sleef.h>
#include <string.h>

#include "kernels/gelu-avx2.h"
#include "kernels/vmath-kernels.h"

/* A NaN result as the positive quiet NaN (as src/kernels/f32-canonical-nan/ writes it). */
static inline __m256 canonical_nan(__m256 r)
{
    return _mm256_blendv_ps(r, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)), _mm256_cmp_ps(r, r, _CMP_UNORD_Q));
}

typedef __m256 (*f32_fn)(__m256);
static const f32_fn f32_fns[MXP_VMATH_F32_COUNT] = {
    [MXP_VMATH_EXP] = Sleef_expf8_u10avx2, [MXP_VMATH_LOG] = Sleef_logf8_u10avx2,
    [MXP_VMATH_TANH] = Sleef_tanhf8_u10avx2, [MXP_VMATH_SIN] = Sleef_sinf8_u10avx2,
    [MXP_VMATH_COS] = Sleef_cosf8_u10avx2,
};

/* The reference's formulas (src/ops/elementwise-math.c), operation for
 * operation, with SLEEF's exp and erfc. */
static inline __m256d sigmoid(__m256d x)
{
    const __m256d one = _mm256_set1_pd(1.0), zero = _mm256_setzero_pd();
    const __m256d negabs = _mm256_or_pd(x, _mm256_set1_pd(-0.0)); /* -|x| */
    const __m256d e = Sleef_expd4_u10avx2(negabs);
    const __m256d d = _mm256_add_pd(one, e);
    const __m256d pos = _mm256_cmp_pd(x, zero, _CMP_GE_OQ);
    return _mm256_div_pd(_mm256_blendv_pd(e, one, pos), d); /* one division: e/d or 1/d */
}

/* silu, gelu and gelu_tanh of 2^-1000 < |x| < 2^-54: the next double above
 * x/2 (see avx512f.c); r elsewhere. */
static inline __m256d tiny_nudge(__m256d x, __m256d r)
{
    const __m256d ax = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
    const __m256d tiny = _mm256_and_pd(_mm256_cmp_pd(ax, _mm256_set1_pd(0x1p-54), _CMP_LT_OQ),
                                       _mm256_cmp_pd(ax, _mm256_set1_pd(0x1p-1000), _CMP_GT_OQ));
    if (_mm256_testz_pd(tiny, tiny))
        return r;
    const __m256d h = _mm256_mul_pd(x, _mm256_set1_pd(0.5));
    const __m256i b = _mm256_castpd_si256(h), one = _mm256_set1_epi64x(1);
    const __m256d pos = _mm256_cmp_pd(h, _mm256_setzero_pd(), _CMP_GT_OQ);
    const __m256d up = _mm256_blendv_pd(_mm256_castsi256_pd(_mm256_sub_epi64(b, one)),
                                        _mm256_castsi256_pd(_mm256_add_epi64(b, one)), pos);
    return _mm256_blendv_pd(r, up, tiny);
}

static inline __m256d apply(int fn, __m256d x)
{
    switch (fn) {
    case MXP_VMATH_EXP: return Sleef_expd4_u10avx2(x);
    case MXP_VMATH_LOG: return Sleef_logd4_u10avx2(x);
    case MXP_VMATH_TANH: return Sleef_tanhd4_u10avx2(x);
    case MXP_VMATH_SIN: return Sleef_sind4_u10avx2(x);
    case MXP_VMATH_COS: return Sleef_cosd4_u10avx2(x);
    case MXP_VMATH_SIGMOID: return sigmoid(x);
    case MXP_VMATH_SILU: return tiny_nudge(x, _mm256_mul_pd(x, sigmoid(x)));
    case MXP_VMATH_GELU: {
        const __m256d z = _mm256_mul_pd(_mm256_sub_pd(_mm256_setzero_pd(), x), _mm256_set1_pd(0.70710678118654752440));
        return tiny_nudge(x, _mm256_mul_pd(_mm256_mul_pd(_mm256_set1_pd(0.5), x), Sleef_erfcd4_u15avx2(z)));
    }
    default: { /* gelu_tanh */
        const __m256d c3 = _mm256_mul_pd(_mm256_mul_pd(_mm256_mul_pd(_mm256_set1_pd(0.044715), x), x), x);
        const __m256d z = _mm256_mul_pd(_mm256_set1_pd(2.0 * 0.79788456080286535588), _mm256_add_pd(x, c3));
        return tiny_nudge(x, _mm256_mul_pd(x, sigmoid(z)));
    }
    }
}

/* The activations of float32: widened to float64, computed as
 * mxp_f64_vmath__avx2 does, rounded to nearest even once (cvtpd_ps under
 * the library's floating-point environment). */
static inline __m256 f32_via_f64(int fn, __m256 v)
{
    const __m128 lo = _mm256_cvtpd_ps(apply(fn, _mm256_cvtps_pd(_mm256_castps256_ps128(v))));
    const __m128 hi = _mm256_cvtpd_ps(apply(fn, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))));
    return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
}

/* ---- float32 results for a float16 output (see vmath-kernels.h) ---- */

/* Lanes of y whose rounding to nearest even into float16 is not
 * settled (all ones), as in avx512f.c: some float32 within
 * MXP_VMATH_H16_MARGIN steps of y rounds to another value; y = 0 and NaN
 * count as settled. */
static inline __m256i unsettled(__m256 y)
{
    const __m256i a = _mm256_and_si256(_mm256_castps_si256(y), _mm256_set1_epi32(0x7fffffff));
    /* the 13 discarded bits within the margin of the tie 0x1000,
     * for |y| below 2^16; below 2^-14 those of z = |y| + 2^-14 (see
     * avx512f.c) */
    const __m256 ay = _mm256_castsi256_ps(a);
    const __m256 small = _mm256_cmp_ps(ay, _mm256_set1_ps(0x1p-14f), _CMP_LT_OQ);
    const __m256i z = _mm256_castps_si256(_mm256_add_ps(ay, _mm256_and_ps(small, _mm256_set1_ps(0x1p-14f))));
    const __m256i d = _mm256_and_si256(_mm256_add_epi32(z, _mm256_set1_epi32(MXP_VMATH_H16_MARGIN - 0x1000)),
                                       _mm256_set1_epi32(0x1fff));
    const __m256i near = _mm256_cmpgt_epi32(_mm256_set1_epi32(2 * MXP_VMATH_H16_MARGIN + 1), d);
    return _mm256_and_si256(near, _mm256_cmpgt_epi32(_mm256_set1_epi32(0x47800000), a));
}

/* Four float64 results rounded to float32 to odd (toward zero, the last bit
 * set when inexact), without touching MXCSR: the nearest-even conversion,
 * one step back toward zero where it rounded away, then the sticky bit. */
static inline __m128i f32_odd(__m256d d)
{
    const __m128 f = _mm256_cvtpd_ps(d);
    const __m256d back = _mm256_cvtps_pd(f), sign = _mm256_set1_pd(-0.0);
    const __m256d inexact = _mm256_cmp_pd(back, d, _CMP_NEQ_OQ);
    const __m256d away = _mm256_cmp_pd(_mm256_andnot_pd(sign, back), _mm256_andnot_pd(sign, d), _CMP_GT_OQ);
    /* the 64-bit masks narrowed to 32 (every lane all ones or zeros) */
    const __m128i in32 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
        _mm256_castpd_si256(inexact), _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7)));
    const __m128i aw32 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
        _mm256_castpd_si256(away), _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7)));
    const __m128i b = _mm_add_epi32(_mm_castps_si128(f), aw32); /* - 1 where away */
    return _mm_or_si128(b, _mm_srli_epi32(in32, 31));
}

/* fn(v) through the float64 kernel, rounded to float32 to odd: its 24 bits
 * round to nearest even into float16 as the float64 value does. */
static inline __m256 f32_odd_via_f64(int fn, __m256 v)
{
    const __m128i lo = f32_odd(apply(fn, _mm256_cvtps_pd(_mm256_castps256_ps128(v))));
    const __m128i hi = f32_odd(apply(fn, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))));
    return _mm256_castsi256_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1));
}

static inline __m256 f32_h16(int fn, __m256 v, size_t *redo)
{
    const __m256 y = f32_fns[fn](v);
    const __m256i u = unsettled(y);
    if (__builtin_expect(_mm256_testz_si256(u, u), 1))
        return y;
    *redo += (size_t)__builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(u)));
    return _mm256_blendv_ps(y, f32_odd_via_f64(fn, v), _mm256_castsi256_ps(u));
}

/* ---- float32 results for a bfloat16 output (see vmath-kernels.h) ---- */

/* bfloat16's unsettled(): the 16 discarded bits within margin steps of
 * the tie 0x8000, at every magnitude (bfloat16's subnormals and overflow
 * are float32's with the same steps); infinities and NaN settled */
static inline __m256i unsettled_bf16(__m256 y, int margin)
{
    const __m256i a = _mm256_and_si256(_mm256_castps_si256(y), _mm256_set1_epi32(0x7fffffff));
    const __m256i d = _mm256_and_si256(_mm256_add_epi32(a, _mm256_set1_epi32(margin - 0x8000)),
                                       _mm256_set1_epi32(0xffff));
    const __m256i near = _mm256_cmpgt_epi32(_mm256_set1_epi32(2 * margin + 1), d);
    return _mm256_and_si256(near, _mm256_cmpgt_epi32(_mm256_set1_epi32(0x7f800000), a));
}

/* gelu for a bfloat16 output: the float32 approximation (gelu-avx2.h)
 * where its rounding is settled beyond MXP_GELU_F32_MARGIN; unsettled
 * too: x not finite, x <= -13 (|x| clamped; the exact |y| is below 2^-100)
 * and |y| < 2^-100 unless x is a zero (exact: y = x) */
static inline __m256i gelu_f32_fast_unsettled(__m256 v, __m256 y)
{
    const __m256 abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 tiny = _mm256_or_ps(_mm256_and_ps(_mm256_cmp_ps(_mm256_and_ps(y, abs), _mm256_set1_ps(0x1p-100f), _CMP_NGE_UQ),
                                                   _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_NEQ_UQ)),
                                     _mm256_cmp_ps(v, _mm256_set1_ps(-13.0f), _CMP_LE_OQ));
    const __m256 odd = _mm256_cmp_ps(_mm256_and_ps(v, abs), _mm256_set1_ps(INFINITY), _CMP_NLT_UQ);
    return _mm256_or_si256(unsettled_bf16(y, MXP_GELU_F32_MARGIN), _mm256_castps_si256(_mm256_or_ps(tiny, odd)));
}

/* float32 results for a bfloat16 output, the float64 path's bits: SLEEF's
 * float32 result (gelu: the float32 approximation with its wider margin)
 * where its rounding is settled, the float64 kernel rounded to odd
 * elsewhere (a float32 rounding rounded again is not always right) */
static inline __m256 f32_bf16(int fn, __m256 v, size_t *redo)
{
    __m256 y;
    __m256i u;
    if (fn == MXP_VMATH_GELU) {
        y = mxp_gelu_f32_fast(v);
        u = gelu_f32_fast_unsettled(v, y);
    } else {
        y = f32_fns[fn](v);
        u = unsettled_bf16(y, MXP_VMATH_H16_MARGIN);
    }
    if (__builtin_expect(_mm256_testz_si256(u, u), 1))
        return y;
    *redo += (size_t)__builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(u)));
    return _mm256_blendv_ps(y, f32_odd_via_f64(fn, v), _mm256_castsi256_ps(u));
}

#endif

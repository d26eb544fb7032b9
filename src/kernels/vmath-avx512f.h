/* Vector math through SLEEF, AVX-512: the helpers of
 * src/kernels/f32-vmath/, f64-vmath/ and f16-vmath/avx512f.c (16 float32 or
 * 8 float64 lanes).  See vmath-kernels.h.  Only for files built with the
 * AVX-512 flags and SLEEF. */
#ifndef MXP_KERNELS_VMATH_AVX512F_H
#define MXP_KERNELS_VMATH_AVX512F_H

#include <immintrin.h>
#include <sleef.h>

#include "kernels/gelu-avx512f.h"
#include "kernels/vmath-kernels.h"

/* A NaN result as the positive quiet NaN (as src/kernels/f32-canonical-nan/ writes it). */
static inline __m512 canonical_nan(__m512 r)
{
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q), _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000)));
}

typedef __m512 (*f32_fn)(__m512);
static const f32_fn f32_fns[MXP_VMATH_F32_COUNT] = {
    [MXP_VMATH_EXP] = Sleef_expf16_u10avx512f, [MXP_VMATH_LOG] = Sleef_logf16_u10avx512f,
    [MXP_VMATH_TANH] = Sleef_tanhf16_u10avx512f, [MXP_VMATH_SIN] = Sleef_sinf16_u10avx512f,
    [MXP_VMATH_COS] = Sleef_cosf16_u10avx512f,
};

/* The reference's formulas (src/ops/elementwise-math.c), operation for
 * operation, with SLEEF's exp and erfc. */
static inline __m512d sigmoid(__m512d x)
{
    const __m512d one = _mm512_set1_pd(1.0);
    const __m512d e = Sleef_expd8_u10avx512f(_mm512_sub_pd(_mm512_setzero_pd(), _mm512_abs_pd(x))); /* e^-|x| */
    const __m512d d = _mm512_add_pd(one, e);
    const __mmask8 pos = _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_GE_OQ);
    return _mm512_div_pd(_mm512_mask_blend_pd(pos, e, one), d); /* one division: e/d or 1/d */
}

/* silu, gelu and gelu_tanh are x/2 + k x^2 + ... with k > 0: for
 * 2^-1000 < |x| < 2^-54 (k x^2 below x/2's ulp) the value lies strictly
 * between x/2 and the next double above it, which therefore rounds as it
 * does into any narrower format; x/2 itself can be a tie there (subnormal
 * float32 and bfloat16 x) that rounds the wrong way.  r elsewhere. */
static inline __m512d tiny_nudge(__m512d x, __m512d r)
{
    const __m512d ax = _mm512_abs_pd(x);
    const __mmask8 tiny = _mm512_cmp_pd_mask(ax, _mm512_set1_pd(0x1p-54), _CMP_LT_OQ) &
                          _mm512_cmp_pd_mask(ax, _mm512_set1_pd(0x1p-1000), _CMP_GT_OQ);
    if (!tiny)
        return r;
    const __m512d h = _mm512_mul_pd(x, _mm512_set1_pd(0.5));
    const __m512i b = _mm512_castpd_si512(h), one = _mm512_set1_epi64(1);
    const __mmask8 pos = _mm512_cmp_pd_mask(h, _mm512_setzero_pd(), _CMP_GT_OQ);
    const __m512i up = _mm512_mask_blend_epi64(pos, _mm512_sub_epi64(b, one), _mm512_add_epi64(b, one));
    return _mm512_mask_blend_pd(tiny, r, _mm512_castsi512_pd(up));
}

static inline __m512d apply(int fn, __m512d x)
{
    switch (fn) {
    case MXP_VMATH_EXP: return Sleef_expd8_u10avx512f(x);
    case MXP_VMATH_LOG: return Sleef_logd8_u10avx512f(x);
    case MXP_VMATH_TANH: return Sleef_tanhd8_u10avx512f(x);
    case MXP_VMATH_SIN: return Sleef_sind8_u10avx512f(x);
    case MXP_VMATH_COS: return Sleef_cosd8_u10avx512f(x);
    case MXP_VMATH_SIGMOID: return sigmoid(x);
    case MXP_VMATH_SILU: return tiny_nudge(x, _mm512_mul_pd(x, sigmoid(x)));
    case MXP_VMATH_GELU: {
        const __m512d z = _mm512_mul_pd(_mm512_sub_pd(_mm512_setzero_pd(), x), _mm512_set1_pd(0.70710678118654752440));
        return tiny_nudge(x, _mm512_mul_pd(_mm512_mul_pd(_mm512_set1_pd(0.5), x), Sleef_erfcd8_u15avx512f(z)));
    }
    default: { /* gelu_tanh */
        const __m512d c3 = _mm512_mul_pd(_mm512_mul_pd(_mm512_mul_pd(_mm512_set1_pd(0.044715), x), x), x);
        const __m512d z = _mm512_mul_pd(_mm512_set1_pd(2.0 * 0.79788456080286535588), _mm512_add_pd(x, c3));
        return tiny_nudge(x, _mm512_mul_pd(x, sigmoid(z)));
    }
    }
}

/* The activations of float32: widened to float64, computed as
 * mxp_f64_vmath__avx512f does, rounded to nearest even once (cvtpd_ps under
 * the library's floating-point environment). */
static inline __m512 f32_via_f64(int fn, __m512 v)
{
    const __m256 lo = _mm512_cvtpd_ps(apply(fn, _mm512_cvtps_pd(_mm512_castps512_ps256(v))));
    const __m256 hi = _mm512_cvtpd_ps(apply(fn, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1))));
    return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
}

/* ---- float32 results for a float16 output (see vmath-kernels.h) ---- */

/* Lanes of y (SLEEF's float32 result, within 1 float32 ulp of the exact
 * value) whose rounding to nearest even into float16 is not
 * settled: some float32 within MXP_VMATH_H16_MARGIN steps of y (its bit
 * pattern +- the margin) rounds to another value.  Magnitudes only (the
 * rounding is symmetric); y = 0 (exact zeros: log 1, sin 0, tanh 0, exp's
 * underflow) and NaN count as settled. */
static inline __mmask16 unsettled(__m512 y)
{
    const __m512i a = _mm512_and_si512(_mm512_castps_si512(y), _mm512_set1_epi32(0x7fffffff));
    /* the 13 discarded bits within the margin of the tie 0x1000,
     * for |y| from 2^-14 (float16's normals) to 2^16 (from there on, inf
     * and NaN too, everything rounds to inf; the overflow threshold 65520 is
     * 0x477ff000).  Below 2^-14, float16's step is 2^-24 as in [2^-14,
     * 2^-13): z = |y| + 2^-14 moves float16's ties there, and the addition's
     * rounding (half a step of z) with y's error (at most a step of z)
     * stays within the margin of 2. */
    const __m512 ay = _mm512_castsi512_ps(a);
    const __mmask16 small = _mm512_cmp_ps_mask(ay, _mm512_set1_ps(0x1p-14f), _CMP_LT_OQ);
    const __m512i z = _mm512_castps_si512(_mm512_mask_add_ps(ay, small, ay, _mm512_set1_ps(0x1p-14f)));
    const __m512i d = _mm512_and_si512(_mm512_add_epi32(z, _mm512_set1_epi32(MXP_VMATH_H16_MARGIN - 0x1000)),
                                       _mm512_set1_epi32(0x1fff));
    return _mm512_mask_cmple_epu32_mask(_mm512_cmplt_epu32_mask(a, _mm512_set1_epi32(0x47800000)), d,
                                        _mm512_set1_epi32(2 * MXP_VMATH_H16_MARGIN));
}

/* fn(v) through the float64 kernel, rounded to float32 to odd (toward zero,
 * the last bit set when inexact): float32's 24 bits then round to nearest
 * even into float16 as the float64 value itself would. */
static inline __m512 f32_odd_via_f64(int fn, __m512 v)
{
    const __m512d dlo = apply(fn, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    const __m512d dhi = apply(fn, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
    const __m256 flo = _mm512_cvt_roundpd_ps(dlo, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 fhi = _mm512_cvt_roundpd_ps(dhi, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask16 inexact = (__mmask16)(_mm512_cmp_pd_mask(_mm512_cvtps_pd(flo), dlo, _CMP_NEQ_OQ) |
                                          (unsigned)_mm512_cmp_pd_mask(_mm512_cvtps_pd(fhi), dhi, _CMP_NEQ_OQ) << 8);
    const __m512i b = _mm512_castps_si512(_mm512_insertf32x8(_mm512_castps256_ps512(flo), fhi, 1));
    return _mm512_castsi512_ps(_mm512_mask_or_epi32(b, inexact, b, _mm512_set1_epi32(1)));
}

/* bfloat16's unsettled(): the 16 discarded bits within margin steps of
 * the tie 0x8000, at every magnitude (bfloat16's subnormals and overflow
 * are float32's with the same steps); infinities and NaN settled */
static inline __mmask16 unsettled_bf16(__m512 y, int margin)
{
    const __m512i a = _mm512_and_si512(_mm512_castps_si512(y), _mm512_set1_epi32(0x7fffffff));
    const __m512i d = _mm512_and_si512(_mm512_add_epi32(a, _mm512_set1_epi32(margin - 0x8000)),
                                       _mm512_set1_epi32(0xffff));
    return _mm512_mask_cmple_epu32_mask(_mm512_cmplt_epu32_mask(a, _mm512_set1_epi32(0x7f800000)), d,
                                        _mm512_set1_epi32(2 * margin));
}

/* gelu for a bfloat16 output: the float32 approximation (gelu-avx512f.h,
 * within 6.65 ulps) where its rounding is settled beyond
 * MXP_GELU_F32_MARGIN; unsettled too: x not finite, x <= -13.5 (where
 * the approximation clamps |x|: the exact |y| is below 2^-100 there), and
 * |y| < 2^-100 unless x is a zero (exact: y = x) */
static inline __mmask16 gelu_f32_fast_unsettled(__m512 v, __m512 y)
{
    const __mmask16 tiny = (_mm512_cmp_ps_mask(_mm512_abs_ps(y), _mm512_set1_ps(0x1p-100f), _CMP_NGE_UQ) &
                            _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_NEQ_UQ)) |
                           _mm512_cmp_ps_mask(v, _mm512_set1_ps(-13.5f), _CMP_LE_OQ);
    const __mmask16 odd = _mm512_cmp_ps_mask(_mm512_abs_ps(v), _mm512_set1_ps(INFINITY), _CMP_NLT_UQ);
    return unsettled_bf16(y, MXP_GELU_F32_MARGIN) | tiny | odd;
}

/* fn(v) within 1 float32 ulp: SLEEF's float32 function, or gelu's float64
 * approximation rounded (gelu-avx512f.h; NaN for NaN and -inf, as the
 * float64 path) */
static inline __m512 f32_near(int fn, __m512 v)
{
    return fn == MXP_VMATH_GELU ? mxp_gelu_f32_near(v) : f32_fns[fn](v);
}

static inline __m512 f32_h16(int fn, __m512 v, size_t *redo)
{
    const __m512 y = f32_near(fn, v);
    const __mmask16 u = unsettled(y);
    if (__builtin_expect(u == 0, 1))
        return y;
    *redo += (size_t)__builtin_popcount(u);
    return _mm512_mask_blend_ps(u, y, f32_odd_via_f64(fn, v));
}

/* float32 results for a bfloat16 output, the float64 path's bits (gelu:
 * the float32 approximation and its wider margin; a float32 rounding
 * rounded again is not always right) */
static inline __m512 f32_bf16(int fn, __m512 v, size_t *redo)
{
    const __m512 y = fn == MXP_VMATH_GELU ? mxp_gelu_f32_fast(v) : f32_near(fn, v);
    const __mmask16 u = fn == MXP_VMATH_GELU ? gelu_f32_fast_unsettled(v, y) : unsettled_bf16(y, MXP_VMATH_H16_MARGIN);
    if (__builtin_expect(u == 0, 1))
        return y;
    *redo += (size_t)__builtin_popcount(u);
    return _mm512_mask_blend_ps(u, y, f32_odd_via_f64(fn, v));
}

#endif

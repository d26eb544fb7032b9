/* gelu(x) = x/2 erfc(-x/sqrt 2) of float32 x in float64, AVX-512, without
 * erfc: the fast path's approximation y (src/kernels/f32-gelu/avx512f.c,
 * and the 16-bit outputs in vmath-avx512f.h).  Only for files
 * built with the AVX-512 flags.
 *
 * gelu(x) = x Phi(x) with Phi(-a) = e^(-a^2/2) R(a), a = |x|:
 *
 *   e^(-a^2/2)  a^2 is exact (a has 24 bits); n = round(-a^2/2 16/ln 2),
 *               r = -a^2/2 - n ln2/16 (|r| <= ln2/32, two FMAs), e^r by
 *               Taylor to degree 6 (truncation < 2^-51), times 2^(j/16)
 *               (j = n mod 16, a table), scaled by 2^floor(n/16) (an
 *               integer addition to the exponent field of the product q)
 *   R(a)        P(a) / Q(a), degrees 7 and 8, positive coefficients
 *               (gelu-tables.h: relative error < 2^-45 on [0, 14.5])
 *   Phi(x)      q = e^(-a^2/2) R(a) for x < 0, 1 - q otherwise (q <= 1/2:
 *               no cancellation); q = 0 for a >= 14.5, where |x| q(a) is
 *               below 2^-150 (half float32's smallest subnormal) from
 *               a = 14.356 on, and 1 - q is 1 within 2^-150
 *
 * y is within 2^-44.9 |y| of the exact value (R's 2^-45, a few float64
 * roundings); exhaustive_gelu_f32 measures it against SLEEF's on all
 * float32 x. */
#ifndef MXP_KERNELS_GELU_AVX512F_H
#define MXP_KERNELS_GELU_AVX512F_H

#include <immintrin.h>

#include "kernels/gelu-tables.h"
#include "kernels/nexpf-avx512.h"

#define MXP_GELU_FAR 14.5

/* tab[idx & 15] per lane */
static inline __m512d gelu_pick(const double *tab, __m512i idx)
{
    return _mm512_permutex2var_pd(_mm512_load_pd(tab), idx, _mm512_load_pd(tab + 8));
}

/* e^(-w/2) 2^-k and k 2^52 (to add to a float64's bits) for 0 <= w <= 210.25:
 * n = round(-w/2 16/ln2) = 16 k + j; r3 = w + 2 n ln2/16 = -2 r with
 * |r| <= ln2/32; e^(-w/2) = 2^k 2^(j/16) e^r, e^r = sum (-r3/2)^i / i! to
 * degree 6 (truncation < 2^-51). */
static inline __m512d gelu_exp_half_neg(__m512d w, __m512i *k52)
{
    const __m512d magic = _mm512_set1_pd(0x1.8p52); /* n in the low bits of w (-8/ln2) + magic */
    const __m512d tn = _mm512_fmadd_pd(w, _mm512_set1_pd(-0x1.71547652b82fep+3), magic);
    const __m512d n = _mm512_sub_pd(tn, magic);
    __m512d r3 = _mm512_fmadd_pd(n, _mm512_set1_pd(0x1.62e42fefa39efp-4), w); /* ln2/8, high and low */
    r3 = _mm512_fmadd_pd(n, _mm512_set1_pd(0x1.abc9e3b39803fp-59), r3);
    __m512d p = _mm512_set1_pd(1.0 / (720 * 64));
    p = _mm512_fmadd_pd(p, r3, _mm512_set1_pd(-1.0 / (120 * 32)));
    p = _mm512_fmadd_pd(p, r3, _mm512_set1_pd(1.0 / (24 * 16)));
    p = _mm512_fmadd_pd(p, r3, _mm512_set1_pd(-1.0 / (6 * 8)));
    p = _mm512_fmadd_pd(p, r3, _mm512_set1_pd(1.0 / 8));
    p = _mm512_fmadd_pd(p, r3, _mm512_set1_pd(-0.5));
    p = _mm512_fmadd_pd(p, r3, _mm512_set1_pd(1.0));
    /* n = 16 k + j in tn's low bits (magic's low 16 bits are zero): k 2^52 =
     * (n & ~15) << 48 */
    const __m512i tb = _mm512_castpd_si512(tn);
    *k52 = _mm512_slli_epi64(_mm512_andnot_si512(_mm512_set1_epi64(15), tb), 48);
    return _mm512_mul_pd(gelu_pick(gelu_exp2, tb), p);
}

static inline __m512d gelu_poly(const double *c, int degree, __m512d a)
{
    __m512d p = _mm512_set1_pd(c[degree]);
    for (int j = degree - 1; j >= 0; j--)
        p = _mm512_fmadd_pd(p, a, _mm512_set1_pd(c[j]));
    return p;
}

/* y for 8 float64 lanes holding float32 values */
static inline __m512d mxp_gelu_approx(__m512d x)
{
    const __m512d a = _mm512_min_pd(_mm512_abs_pd(x), _mm512_set1_pd(MXP_GELU_FAR)); /* NaN: MXP_GELU_FAR */
    const __mmask8 near = _mm512_cmp_pd_mask(a, _mm512_set1_pd(MXP_GELU_FAR), _CMP_LT_OQ);
    __m512i k52;
    const __m512d e = gelu_exp_half_neg(_mm512_mul_pd(a, a), &k52);
    const __m512d r = _mm512_div_pd(gelu_poly(gelu_p, MXP_GELU_NP, a), gelu_poly(gelu_q, MXP_GELU_NQ, a));
    /* q = e^(-a^2/2) R(a) >= 2^-160, normal: 2^k by adding to the exponent */
    const __m512i qb = _mm512_add_epi64(_mm512_castpd_si512(_mm512_mul_pd(e, r)), k52);
    const __m512d q = _mm512_maskz_mov_pd(near, _mm512_castsi512_pd(qb));
    const __mmask8 neg = _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_LT_OQ);
    return _mm512_mul_pd(x, _mm512_mask_sub_pd(q, (__mmask8)~neg, _mm512_set1_pd(1.0), q)); /* -0: -0 (1 - q) */
}

/* y rounded to float32 (nearest even): within 1 float32 ulp of the exact
 * value, NaN for NaN and -inf */
static inline __m512 mxp_gelu_f32_near(__m512 v)
{
    const __m256 lo = _mm512_cvtpd_ps(mxp_gelu_approx(_mm512_cvtps_pd(_mm512_castps512_ps256(v))));
    const __m256 hi = _mm512_cvtpd_ps(mxp_gelu_approx(_mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1))));
    return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
}

/* ---- the float32 approximation, for bfloat16 outputs ---- */

/* gelu(x) in float32 arithmetic on sixteen lanes: the same formula with
 * gelu_p32 / gelu_q32 (degrees 4 and 5, positive coefficients: no
 * cancellation in Horner's rule), e^(-a^2/2) as nexpf(-w/2) (1 - l/2)
 * where a^2 = w + l exactly (an FMA gives l), a = min(|x|, 13.5).  Where x
 * is finite and |y| >= 2^-100 it is within 6.65 float32 ulps of the exact
 * value (measured on every such float32 against mxp_gelu_approx, itself
 * within 2^-44.9), so a bfloat16 rounding of it is settled beyond
 * MXP_GELU_F32_MARGIN steps of a tie (within 6.65 ulps of a power of two
 * the 16 discarded bits are far from the tie 0x8000: the binade changes
 * nothing).  exhaustive_gelu_f32 checks the bfloat16 results bit for bit
 * on every float32. */
enum { MXP_GELU_F32_MARGIN = 12 };

static inline __m512 gelu_poly32(const float *c, int degree, __m512 a)
{
    __m512 p = _mm512_set1_ps(c[degree]);
    for (int j = degree - 1; j >= 0; j--)
        p = _mm512_fmadd_ps(p, a, _mm512_set1_ps(c[j]));
    return p;
}

static inline __m512 mxp_gelu_f32_fast(__m512 x)
{
    const __m512 a = _mm512_min_ps(_mm512_abs_ps(x), _mm512_set1_ps(13.5f));
    const __m512 w = _mm512_mul_ps(a, a), l = _mm512_fmsub_ps(a, a, w);
    const __m512 e = mxp_nexp_ps_avx512(_mm512_mul_ps(w, _mm512_set1_ps(-0.5f)));
    const __m512 r = _mm512_div_ps(gelu_poly32(gelu_p32, MXP_GELU_NP32, a), gelu_poly32(gelu_q32, MXP_GELU_NQ32, a));
    const __m512 er = _mm512_mul_ps(e, r);
    const __m512 q = _mm512_fmadd_ps(er, _mm512_mul_ps(l, _mm512_set1_ps(-0.5f)), er); /* Phi(-a) */
    const __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
    return _mm512_mul_ps(x, _mm512_mask_sub_ps(q, (__mmask16)~neg, _mm512_set1_ps(1.0f), q));
}

#endif

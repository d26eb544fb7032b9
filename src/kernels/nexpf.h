/* exp(t) in float32 for t <= 0, reproducible to the bit at every ISA
 * level (the scalar function here, 16 lanes in nexpf-avx512.h, 8 in
 * nexpf-avx2.h): k = round(t log2 e), r = t - k ln 2 (two FMAs, ln 2 in
 * two parts), the Taylor polynomial of degree 7 in FMAs (Horner), scaled
 * by 2^k with one rounding (ldexpf here, vscalefps at AVX-512, an exponent
 * addition at AVX2 where the result is normal): within 2 ulps
 * (test_nn_softmax_kernels measures it against long double); t < -104
 * (-inf too) gives +0.  User: gelu's float32 fast path (gelu-avx512f.h).
 *
 * The short form (short5, mxp_sexpf): the same steps with a polynomial of
 * degree 5 instead, 1 + r + r^2 (c2 + c3 r + c4 r^2 + c5 r^3) with c2-c5
 * the float32 roundings of the minimax fit of the relative error on
 * [-ln2/2, ln2/2] (2^-23.2), two FMAs fewer: within 2.2 ulps (measured
 * 2.18 against long double on every float32 t in [-87, 0], and
 * test_nn_softmax_kernels).  User: the bfloat16 row kernels (bf16-narrow.h),
 * whose results carry 8 bits: the FMAs bound their exp pass (AMD Zen 4,
 * MXP_ISA=avx2, 4M bfloat16 softmax in rows of 384: 2.36 -> 2.10 ms). */
#ifndef MXP_KERNELS_NEXPF_H
#define MXP_KERNELS_NEXPF_H

#include <math.h>

#define MXP_NEXP_LOG2E 0x1.715476p+0f
#define MXP_NEXP_MAGIC 0x1.8p23f /* t log2e + this: k in the low bits */
#define MXP_NEXP_LN2_HI 0x1.62e430p-1f
#define MXP_NEXP_LN2_LO (-0x1.05c610p-29f)
#define MXP_NEXP_ZERO (-104.0f)  /* below: +0 */
#define MXP_NEXP_NORMAL (-86.0f) /* from here 2^k times the polynomial is normal */
#define MXP_NEXP_C2 0x1.000000p-1f
#define MXP_NEXP_C3 0x1.555556p-3f
#define MXP_NEXP_C4 0x1.555556p-5f
#define MXP_NEXP_C5 0x1.111112p-7f
#define MXP_NEXP_C6 0x1.6c16c2p-10f
#define MXP_NEXP_C7 0x1.a01a02p-13f
#define MXP_SEXP_C2 0x1.fffdfcp-2f /* the short form's minimax coefficients */
#define MXP_SEXP_C3 0x1.5557acp-3f
#define MXP_SEXP_C4 0x1.572a0cp-5f
#define MXP_SEXP_C5 0x1.1063c2p-7f

/* The polynomial's coefficients from the highest degree down to c2 (the
 * last two, 1 and 1, follow): the long form's and the short form's. */
static const float mxp_nexp_long[] = { MXP_NEXP_C7, MXP_NEXP_C6, MXP_NEXP_C5, MXP_NEXP_C4, MXP_NEXP_C3, MXP_NEXP_C2 };
static const float mxp_nexp_short[] = { MXP_SEXP_C5, MXP_SEXP_C4, MXP_SEXP_C3, MXP_SEXP_C2 };
#define MXP_NEXP_COEFS(short5) ((short5) ? mxp_nexp_short : mxp_nexp_long)
#define MXP_NEXP_NCOEFS(short5) ((short5) ? 4 : 6)

/* The polynomial and k of mxp_nexpf (short5: mxp_sexpf's), before the
 * scaling. */
static inline float mxp_nexpf_poly(float t, float *k, int short5)
{
    const float kf = fmaf(t, MXP_NEXP_LOG2E, MXP_NEXP_MAGIC) - MXP_NEXP_MAGIC;
    float r = fmaf(-kf, MXP_NEXP_LN2_HI, t);
    r = fmaf(-kf, MXP_NEXP_LN2_LO, r);
    const float *c = MXP_NEXP_COEFS(short5);
    float q = c[0];
    for (int i = 1; i < MXP_NEXP_NCOEFS(short5); i++)
        q = fmaf(q, r, c[i]);
    q = fmaf(q, r, 1.0f);
    *k = kf;
    return fmaf(q, r, 1.0f);
}

static inline float mxp_nexpf_k(float t, int short5)
{
    if (!(t >= MXP_NEXP_ZERO))
        return 0.0f;
    float k;
    const float q = mxp_nexpf_poly(t, &k, short5);
    return ldexpf(q, (int)k);
}

static inline float mxp_nexpf(float t)
{
    return mxp_nexpf_k(t, 0);
}

static inline float mxp_sexpf(float t)
{
    return mxp_nexpf_k(t, 1);
}

#endif

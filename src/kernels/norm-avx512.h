/* The AVX-512 body of the float32 layer / RMS norm and L2 row kernel
 * (f32-norm/avx512f.c; norm-kernels.h): eight float64 lanes, the eight
 * running sums one register, float32 rows widened by vcvtps2pd (once, into
 * the scratch, where the caller gives one); the rows' sums interleaved, the
 * outputs a row at a time. */
#ifndef MXP_KERNELS_NORM_AVX512_H
#define MXP_KERNELS_NORM_AVX512_H

#include <immintrin.h>

#include "kernels/norm-kernels.h"
#include "kernels/stream-loop.h"

static inline __m512d mxp_norm_load8_avx512(const float *x, size_t i)
{
    return _mm512_cvtps_pd(_mm256_loadu_ps(x + i));
}

static inline void mxp_norm_store8_avx512(float *y, size_t i, __m512d v)
{
    _mm256_storeu_ps(y + i, _mm512_cvtpd_ps(v));
}

/* eight outputs at y + i, by a streaming store where st (y + i 32-byte
 * aligned) */
static inline void mxp_norm_put8_avx512(float *y, size_t i, __m256 v, int st)
{
    if (st)
        _mm256_stream_ps(y + i, v);
    else
        _mm256_storeu_ps(y + i, v);
}

/* x / d rounded to float64, then to float32 (mxp_norm_l2_out's bits),
 * through a multiply by r = 1 / d: t = x r lies within 4 float64 ulps of
 * the quotient's float64 value (three roundings of half an ulp each, an
 * ulp of the lower binade counting half), so where t is more than 8 ulps
 * from a float32 tie -- the 29 bits float32 drops of t's 52 not within 8
 * of 2^28 -- and float32 keeps those 23 bits (0 < |t| < 2^-126:
 * subnormal; |t| >= 2^127, inf, NaN) or t is 0, t rounds as the quotient
 * does; else (about one vector in 2^22 on random rows) the vector is
 * divided.  vdivpd was the kernel's bottleneck (16 cycles for eight
 * quotients on the Xeon); the test on t's bits replaced two conversions
 * of t +- 8 ulps and their compare (Zen 4, rows of 384 from DRAM: l2
 * normalize 0.42 -> 0.39 ns an element). */
static inline __m256 mxp_norm_l2_quot8_avx512(__m512d x, __m512d vr, __m512d vd)
{
    const __m512d t = _mm512_mul_pd(x, vr);
    const __m512i bits = _mm512_castpd_si512(t), a = _mm512_and_si512(bits, _mm512_set1_epi64(INT64_MAX));
    const __m512i drop = _mm512_and_si512(_mm512_add_epi64(bits, _mm512_set1_epi64(8 - (1 << 28))),
                                          _mm512_set1_epi64((1 << 29) - 1)); /* below 16: within 8 of the tie */
    const __m512i lo = _mm512_set1_epi64(0x3810000000000000); /* 2^-126; the span up to 2^127 */
    const __m512i span = _mm512_set1_epi64(0x47e0000000000000 - 0x3810000000000000);
    const __mmask8 odd = _mm512_cmplt_epu64_mask(drop, _mm512_set1_epi64(16)) |
                         _mm512_mask_cmpge_epu64_mask(_mm512_test_epi64_mask(a, a), _mm512_sub_epi64(a, lo), span);
    return _mm512_cvtpd_ps(odd ? _mm512_div_pd(x, vd) : t);
}

/* Elements i .. i + 7 of a row in float64: from its widened copy, or x
 * widened. */
static inline __m512d mxp_norm_get8_avx512(const float *x, const double *wide, size_t i)
{
    return wide ? _mm512_loadu_pd(wide + i) : mxp_norm_load8_avx512(x, i);
}

/* The sums of rows rows in mxp_sum8's order, their vectors interleaved:
 * sq: (x - c[r])^2, else x.  first: the pass that reads x (ahead, by
 * prefetches: ~1.2x from L3 on the Xeon) and keeps it widened into wide; the
 * others read wide where there is one. */
MXP_INLINE void mxp_norm_sums_avx512(const float *const *x, size_t rows, size_t n, const double *c, int sq,
                                     double *out, double *wide, int first)
{
    __m512d s[MXP_NORM_ROWS], vc[MXP_NORM_ROWS];
    for (size_t r = 0; r < rows; r++) {
        s[r] = _mm512_setzero_pd();
        vc[r] = _mm512_set1_pd(c[r]);
    }
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t r = 0; r < rows; r++) {
            __m512d v;
            if (first) {
                if (i % 16 == 0)
                    _mm_prefetch((const char *)(x[r] + i) + MXP_STREAM_PREFETCH, _MM_HINT_T0);
                v = mxp_norm_load8_avx512(x[r], i);
                if (wide)
                    _mm512_storeu_pd(wide + r * n + i, v);
            } else {
                v = mxp_norm_get8_avx512(x[r], wide ? wide + r * n : NULL, i);
            }
            const __m512d d = _mm512_sub_pd(v, vc[r]);
            s[r] = _mm512_add_pd(s[r], sq ? _mm512_mul_pd(d, d) : v);
        }
    for (size_t r = 0; r < rows; r++) {
        double v[8];
        _mm512_storeu_pd(v, s[r]);
        out[r] = mxp_norm_fold(v, x[r], i, n, c[r], sq);
    }
}

MXP_INLINE void mxp_norm_rows_avx512(float *const *y, const float *const *x, size_t rows, size_t n, const double *w,
                                     const double *b, double eps, int mode, double *wide)
{
    double c[MXP_NORM_ROWS] = { 0, 0, 0, 0 }, s[MXP_NORM_ROWS];
    const int stream = mode & MXP_NORM_STREAM;
    mode &= ~MXP_NORM_STREAM;
    if (mode == MXP_NORM_LAYER) {
        mxp_norm_sums_avx512(x, rows, n, c, 0, s, wide, 1);
        for (size_t r = 0; r < rows; r++)
            c[r] = s[r] / (double)n;
    }
    mxp_norm_sums_avx512(x, rows, n, c, 1, s, wide, mode != MXP_NORM_LAYER);
    const ptrdiff_t ahead = mxp_norm_rows_ahead(x, rows); /* the next call's rows, prefetched row by row */
    for (size_t r = 0; r < rows; r++) {
        mxp_norm_rows_prefetch(x[r], n * sizeof(float), ahead);
        const double *wr = wide ? wide + r * n : NULL;
        const int st = stream && wr && (uintptr_t)y[r] % 32 == 0; /* x not read again: no line evicted under it */
        size_t i = 0;
        if (mode == MXP_NORM_L2) {
            const double d = mxp_norm_l2_div(s[r], eps);
            const __m512d vs = _mm512_set1_pd(d), vr = _mm512_set1_pd(1 / d);
            for (; i + 8 <= n; i += 8)
                mxp_norm_put8_avx512(y[r], i, mxp_norm_l2_quot8_avx512(mxp_norm_get8_avx512(x[r], wr, i), vr, vs), st);
            mxp_norm_l2_out(y[r], x[r], i, n, d);
            continue;
        }
        const double rstd = mxp_norm_rstd(s[r], n, eps);
        const __m512d vm = _mm512_set1_pd(c[r]), vr = _mm512_set1_pd(rstd);
        for (; i + 8 <= n; i += 8) {
            __m512d h = _mm512_mul_pd(_mm512_sub_pd(mxp_norm_get8_avx512(x[r], wr, i), vm), vr);
            if (w)
                h = _mm512_mul_pd(h, _mm512_loadu_pd(w + i));
            h = _mm512_add_pd(h, b ? _mm512_loadu_pd(b + i) : _mm512_setzero_pd());
            mxp_norm_put8_avx512(y[r], i, _mm512_cvtpd_ps(h), st);
        }
        mxp_norm_out(y[r], x[r], i, n, w, b, c[r], rstd);
    }
}

#endif

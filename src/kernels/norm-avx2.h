/* The AVX2 body of the float32 layer / RMS norm and L2 row kernel
 * (f32-norm/avx2.c; norm-kernels.h): groups of 8 as two registers of four
 * float64 lanes (the eight running sums), widened once into the scratch
 * where the caller gives one (norm-avx512.h). */
#ifndef MXP_KERNELS_NORM_AVX2_H
#define MXP_KERNELS_NORM_AVX2_H

#include <immintrin.h>

#include "kernels/norm-kernels.h"
#include "kernels/stream-loop.h"

static inline __m256d mxp_norm_load4_avx2(const float *x, size_t i)
{
    return _mm256_cvtps_pd(_mm_loadu_ps(x + i));
}

static inline void mxp_norm_store4_avx2(float *y, size_t i, __m256d v)
{
    _mm_storeu_ps(y + i, _mm256_cvtpd_ps(v));
}

/* four outputs at y + i, by a streaming store where st (y + i 16-byte
 * aligned) */
static inline void mxp_norm_put4_avx2(float *y, size_t i, __m128 v, int st)
{
    if (st)
        _mm_stream_ps(y + i, v);
    else
        _mm_storeu_ps(y + i, v);
}

/* mxp_norm_l2_quot8_avx512 on four lanes: x / d's float32 bits through
 * a multiply by r = 1 / d where t - 8 ulps and t + 8 ulps round alike. */
static inline __m128 mxp_norm_l2_quot4_avx2(__m256d x, __m256d vr, __m256d vd)
{
    const __m256d t = _mm256_mul_pd(x, vr);
    const __m256i a = _mm256_and_si256(_mm256_castpd_si256(t), _mm256_set1_epi64x(INT64_MAX)), e = _mm256_set1_epi64x(8);
    const __m256i below = _mm256_cmpgt_epi64(e, a); /* a < 8: t - 8 ulps clamped at 0 */
    const __m128 lo = _mm256_cvtpd_ps(_mm256_castsi256_pd(_mm256_andnot_si256(below, _mm256_sub_epi64(a, e))));
    const __m128 hi = _mm256_cvtpd_ps(_mm256_castsi256_pd(_mm256_add_epi64(a, e)));
    if (_mm_movemask_ps(_mm_cmp_ps(lo, hi, _CMP_EQ_OQ)) == 0xf)
        return _mm256_cvtpd_ps(t);
    return _mm256_cvtpd_ps(_mm256_div_pd(x, vd));
}

/* Elements i .. i + 3 of a row in float64: from its widened copy, or x
 * widened. */
static inline __m256d mxp_norm_get4_avx2(const float *x, const double *wide, size_t i)
{
    return wide ? _mm256_loadu_pd(wide + i) : mxp_norm_load4_avx2(x, i);
}

/* The sums of rows rows in mxp_sum8's order, their vectors interleaved:
 * sq: (x - c[r])^2, else x; first: the pass that reads x (mxp_norm_sums_avx512). */
MXP_INLINE void mxp_norm_sums_avx2(const float *const *x, size_t rows, size_t n, const double *c, int sq,
                                   double *out, double *wide, int first)
{
    __m256d s0[MXP_NORM_ROWS], s1[MXP_NORM_ROWS], vc[MXP_NORM_ROWS];
    for (size_t r = 0; r < rows; r++) {
        s0[r] = s1[r] = _mm256_setzero_pd();
        vc[r] = _mm256_set1_pd(c[r]);
    }
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t r = 0; r < rows; r++) {
            const double *wr = wide ? wide + r * n : NULL;
            __m256d a, b;
            if (first) {
                if (i % 16 == 0)
                    _mm_prefetch((const char *)(x[r] + i) + MXP_STREAM_PREFETCH, _MM_HINT_T0);
                a = mxp_norm_load4_avx2(x[r], i);
                b = mxp_norm_load4_avx2(x[r], i + 4);
                if (wr) {
                    _mm256_storeu_pd(wide + r * n + i, a);
                    _mm256_storeu_pd(wide + r * n + i + 4, b);
                }
            } else {
                a = mxp_norm_get4_avx2(x[r], wr, i);
                b = mxp_norm_get4_avx2(x[r], wr, i + 4);
            }
            const __m256d da = _mm256_sub_pd(a, vc[r]), db = _mm256_sub_pd(b, vc[r]);
            s0[r] = _mm256_add_pd(s0[r], sq ? _mm256_mul_pd(da, da) : a);
            s1[r] = _mm256_add_pd(s1[r], sq ? _mm256_mul_pd(db, db) : b);
        }
    for (size_t r = 0; r < rows; r++) {
        double v[8];
        _mm256_storeu_pd(v, s0[r]);
        _mm256_storeu_pd(v + 4, s1[r]);
        out[r] = mxp_norm_fold(v, x[r], i, n, c[r], sq);
    }
}

MXP_INLINE void mxp_norm_rows_avx2(float *const *y, const float *const *x, size_t rows, size_t n, const double *w,
                                   const double *b, double eps, int mode, double *wide)
{
    double c[MXP_NORM_ROWS] = { 0, 0, 0, 0 }, s[MXP_NORM_ROWS];
    const int stream = mode & MXP_NORM_STREAM;
    mode &= ~MXP_NORM_STREAM;
    if (mode == MXP_NORM_LAYER) {
        mxp_norm_sums_avx2(x, rows, n, c, 0, s, wide, 1);
        for (size_t r = 0; r < rows; r++)
            c[r] = s[r] / (double)n;
    }
    mxp_norm_sums_avx2(x, rows, n, c, 1, s, wide, mode != MXP_NORM_LAYER);
    const ptrdiff_t ahead = mxp_norm_rows_ahead(x, rows); /* the next call's rows, prefetched row by row */
    for (size_t r = 0; r < rows; r++) {
        mxp_norm_rows_prefetch(x[r], n * sizeof(float), ahead);
        /* the widened copy holds the whole groups of 8 */
        const double *wr = wide ? wide + r * n : NULL;
        const int st = stream && wr && (uintptr_t)y[r] % 16 == 0; /* x not read again: no line evicted under it */
        const size_t whole = n / 8 * 8;
        size_t i = 0;
        if (mode == MXP_NORM_L2) {
            const double d = mxp_norm_l2_div(s[r], eps);
            const __m256d vs = _mm256_set1_pd(d), vr = _mm256_set1_pd(1 / d);
            for (; i + 4 <= whole; i += 4)
                mxp_norm_put4_avx2(y[r], i, mxp_norm_l2_quot4_avx2(mxp_norm_get4_avx2(x[r], wr, i), vr, vs), st);
            mxp_norm_l2_out(y[r], x[r], i, n, d);
            continue;
        }
        const double rstd = mxp_norm_rstd(s[r], n, eps);
        const __m256d vm = _mm256_set1_pd(c[r]), vr = _mm256_set1_pd(rstd);
        for (; i + 4 <= whole; i += 4) {
            __m256d h = _mm256_mul_pd(_mm256_sub_pd(mxp_norm_get4_avx2(x[r], wr, i), vm), vr);
            if (w)
                h = _mm256_mul_pd(h, _mm256_loadu_pd(w + i));
            h = _mm256_add_pd(h, b ? _mm256_loadu_pd(b + i) : _mm256_setzero_pd());
            mxp_norm_put4_avx2(y[r], i, _mm256_cvtpd_ps(h), st);
        }
        mxp_norm_out(y[r], x[r], i, n, w, b, c[r], rstd);
    }
}

#endif

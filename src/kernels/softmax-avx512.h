/* The AVX-512 body of the float32 softmax row kernel (f32-softmax/avx512f.c;
 * softmax-kernels.h): the maximum over sixteen float32 lanes (with a mask:
 * eight float64 lanes of x + mask, kept in e), then eight float64 lanes --
 * expshift-avx512.h's exp, the eight running sums one register -- and the
 * results rounded to float32. */
#ifndef MXP_KERNELS_SOFTMAX_AVX512_H
#define MXP_KERNELS_SOFTMAX_AVX512_H

#include <immintrin.h>

#include "kernels/expshift-avx512.h"
#include "kernels/norm-avx512.h"
#include "kernels/softmax-kernels.h"
#include "kernels/stream-loop.h"

/* v = x + mask in float64 into e (eight lanes, the tail masked); the
 * maximum, whether there is a NaN, and the minimum */
static inline double mxp_softmax_masked_max_avx512(const float *x, const float *mask, size_t n, double *e, int *nan,
                                                   double *lo)
{
    __m512d mv = _mm512_set1_pd(-INFINITY), lv = _mm512_set1_pd(INFINITY);
    __mmask8 nans = 0;
    for (size_t i = 0; i < n; i += 8) {
        const __mmask8 k = n - i >= 8 ? 0xff : (__mmask8)((1u << (n - i)) - 1);
        const __m512d v = _mm512_add_pd(_mm512_cvtps_pd(_mm256_maskz_loadu_ps(k, x + i)),
                                        _mm512_cvtps_pd(_mm256_maskz_loadu_ps(k, mask + i)));
        nans |= _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q); /* the lanes beyond n hold 0 */
        mv = _mm512_mask_max_pd(mv, k, v, mv);
        lv = _mm512_mask_min_pd(lv, k, v, lv);
        _mm512_mask_storeu_pd(e + i, k, v);
    }
    *nan = nans != 0;
    *lo = _mm512_reduce_min_pd(lv);
    return _mm512_reduce_max_pd(mv);
}

static inline __attribute__((always_inline)) __m512d mxp_softmax_v8_avx512(const float *x, const double *e, size_t i,
                                                                          int masked)
{
    return masked ? _mm512_loadu_pd(e + i) : mxp_norm_load8_avx512(x, i);
}

/* the k lanes of v from i on, 0 beyond */
static inline __attribute__((always_inline)) __m512d mxp_softmax_tail8_avx512(const float *x, const double *e, size_t i,
                                                                            __mmask8 k, int masked)
{
    return masked ? _mm512_maskz_loadu_pd(k, e + i) : _mm512_cvtps_pd(_mm256_maskz_loadu_ps(k, x + i));
}

/* normal: every t >= MXP_EXPSHIFT_NORMAL, exp without its test and scaling
 * by an integer add. */
static inline __attribute__((always_inline)) __m512d mxp_softmax_exp_avx512(const mxp_expshift_avx512 *c, __m512d t,
                                                                           int normal)
{
    return normal ? mxp_expshift_pd_normal_avx512(c, t) : mxp_expshift_pd_avx512(c, t);
}

static inline __attribute__((always_inline)) void mxp_softmax_exps_avx512(float *y, const float *x, size_t n,
                                                                         double *e, int lg, int masked, double m,
                                                                         int normal)
{
    const mxp_expshift_avx512 c = mxp_expshift_avx512_init();
    const __m512d vm = _mm512_set1_pd(m);
    __m512d s = _mm512_setzero_pd();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m512d tv = _mm512_sub_pd(mxp_softmax_v8_avx512(x, e, i, masked), vm);
        const __m512d ev = mxp_softmax_exp_avx512(&c, tv, normal);
        if (!lg) /* log_softmax keeps v (with a mask: in e) */
            _mm512_storeu_pd(e + i, ev);
        s = _mm512_add_pd(s, ev);
    }
    double t = 0, lanes[8];
    const __mmask8 tail = (__mmask8)((1u << (n - i)) - 1);
    if (i < n) { /* the last elements in lanes of their own, the rest exp(0); masked loads, not a
                    vector assembled from scalar stores (a store-forwarding stall: an eighth of a
                    row of 33) */
        const __m512d ev = mxp_expshift_pd_avx512(&c, _mm512_maskz_sub_pd(tail, mxp_softmax_tail8_avx512(x, e, i, tail,
                                                                                                        masked), vm));
        if (!lg)
            _mm512_mask_storeu_pd(e + i, tail, ev);
        _mm512_storeu_pd(lanes, ev);
        for (size_t k = 0; k < n - i; k++)
            t += lanes[k];
    }
    _mm512_storeu_pd(lanes, s);
    const double sum = mxp_sum8_fold(lanes, t), r = 1 / sum, ls = lg ? log(sum) : 0;
    const __m512d vr = _mm512_set1_pd(r), vls = _mm512_set1_pd(ls);
    for (i = 0; i + 8 <= n; i += 8)
        mxp_norm_store8_avx512(y, i,
                               lg ? _mm512_sub_pd(_mm512_sub_pd(mxp_softmax_v8_avx512(x, e, i, masked), vm), vls)
                                  : _mm512_mul_pd(_mm512_loadu_pd(e + i), vr));
    if (i < n) /* mxp_softmax_out's arithmetic in masked lanes */
        _mm256_mask_storeu_ps(y + i, tail,
                              _mm512_cvtpd_ps(lg ? _mm512_sub_pd(_mm512_sub_pd(mxp_softmax_tail8_avx512(x, e, i, tail,
                                                                                                        masked),
                                                                               vm),
                                                                 vls)
                                                 : _mm512_mul_pd(_mm512_maskz_loadu_pd(tail, e + i), vr)));
}

/* t = v - m >= lo - m for every element (rounding is monotonic): where that
 * is at least MXP_EXPSHIFT_NORMAL, the exps take the copy without tests. */
static inline __attribute__((always_inline)) void mxp_softmax_body_avx512(float *y, const float *x,
                                                                         const float *mask, size_t n, double *e,
                                                                         int lg, int masked)
{
    double m, lo;
    int nan;
    if (masked) {
        m = mxp_softmax_masked_max_avx512(x, mask, n, e, &nan, &lo);
    } else {
        /* two running maxima: one chain of vmaxps (4 cycles a step) bound
           the pass; the maximum is exact in any order, and a NaN row (any
           order's +-0 aside, which no output sees) is caught apart */
        const __m512 ninf = _mm512_set1_ps(-INFINITY);
        __m512 mv = ninf, mv1 = ninf, lv = _mm512_set1_ps(INFINITY), lv1 = lv;
        __mmask16 nans = 0;
        size_t i = 0;
        for (; i + 32 <= n; i += 32) { /* the first read, prefetched ahead */
            _mm_prefetch((const char *)(x + i) + MXP_STREAM_PREFETCH, _MM_HINT_T0);
            _mm_prefetch((const char *)(x + i + 16) + MXP_STREAM_PREFETCH, _MM_HINT_T0);
            const __m512 v = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
            nans |= _mm512_cmp_ps_mask(v, v1, _CMP_UNORD_Q);
            mv = _mm512_max_ps(v, mv);
            mv1 = _mm512_max_ps(v1, mv1);
            lv = _mm512_min_ps(v, lv);
            lv1 = _mm512_min_ps(v1, lv1);
        }
        for (; i < n; i += 16) {
            const __mmask16 k = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
            const __m512 v = _mm512_mask_loadu_ps(ninf, k, x + i);
            nans |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
            mv = _mm512_max_ps(v, mv);
            lv = _mm512_mask_min_ps(lv, k, v, lv);
        }
        m = _mm512_reduce_max_ps(_mm512_max_ps(mv, mv1));
        lo = _mm512_reduce_min_ps(_mm512_min_ps(lv, lv1));
        nan = nans != 0;
    }
    if (mxp_softmax_nan_row(y, n, m, nan))
        return;
    if (lo - m >= MXP_EXPSHIFT_NORMAL)
        mxp_softmax_exps_avx512(y, x, n, e, lg, masked, m, 1);
    else
        mxp_softmax_exps_avx512(y, x, n, e, lg, masked, m, 0);
}

static inline void mxp_softmax_avx512(float *y, const float *x, const float *mask, size_t n, double *e, int lg)
{
    if (mask)
        mxp_softmax_body_avx512(y, x, mask, n, e, lg, 1);
    else
        mxp_softmax_body_avx512(y, x, NULL, n, e, lg, 0);
}

#endif

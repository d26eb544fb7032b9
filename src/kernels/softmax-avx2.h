/* The AVX2 body of the float32 softmax row kernel (f32-softmax/avx2.c;
 * softmax-kernels.h): the maximum over eight float32 lanes (with a mask:
 * four float64 lanes of x + mask, kept in e), then groups of 8 as two
 * registers of four float64 lanes -- expshift-avx2.h's exp, the eight
 * running sums -- and the results rounded to float32. */
#ifndef MXP_KERNELS_SOFTMAX_AVX2_H
#define MXP_KERNELS_SOFTMAX_AVX2_H

#include <immintrin.h>
#include "kernels/expshift-avx2.h"
#include "kernels/maxmin-avx2.h"
#include "kernels/norm-avx2.h"
#include "kernels/softmax-kernels.h"
#include "kernels/stream-loop.h"

static inline __attribute__((always_inline)) __m256d mxp_softmax_v4_avx2(const float *x, const double *e, size_t i,
                                                                       int masked)
{
    return masked ? _mm256_loadu_pd(e + i) : mxp_norm_load4_avx2(x, i);
}

/* The maximum of the row and whether there is a NaN (*lo: the minimum):
 * over eight float32 lanes; with a mask over v = x + mask in four float64
 * lanes, v kept in e. */
static inline __attribute__((always_inline)) double mxp_softmax_max_avx2(const float *x, const float *mask, size_t n,
                                                                        double *e, int *nan, double *lo, int masked)
{
    double m = -INFINITY, low = INFINITY, l[8];
    size_t i = 0;
    if (masked) {
        __m256d mv = _mm256_set1_pd(-INFINITY), lv = _mm256_set1_pd(INFINITY), nanv = _mm256_setzero_pd();
        for (; i + 4 <= n; i += 4) {
            const __m256d v = _mm256_add_pd(mxp_norm_load4_avx2(x, i), mxp_norm_load4_avx2(mask, i));
            nanv = _mm256_or_pd(nanv, _mm256_cmp_pd(v, v, _CMP_UNORD_Q));
            mv = _mm256_max_pd(v, mv);
            lv = _mm256_min_pd(v, lv);
            _mm256_storeu_pd(e + i, v);
        }
        _mm256_storeu_pd(l, mv);
        _mm256_storeu_pd(l + 4, lv);
        *nan = _mm256_movemask_pd(nanv);
        for (int k = 0; k < 4; k++) {
            m = l[k] > m ? l[k] : m;
            low = l[k + 4] < low ? l[k + 4] : low;
        }
    } else {
        __m256 m2[2] = { _mm256_set1_ps(-INFINITY), _mm256_set1_ps(-INFINITY) };
        __m256 l2[2] = { _mm256_set1_ps(INFINITY), _mm256_set1_ps(INFINITY) };
        __m256 n2[2] = { _mm256_setzero_ps(), _mm256_setzero_ps() };
        for (; i + 16 <= n; i += 16) {
            _mm_prefetch((const char *)(x + i) + MXP_STREAM_PREFETCH, _MM_HINT_T0); /* the first read ahead */
            mxp_maxmin2_avx2(_mm256_loadu_ps(x + i), _mm256_loadu_ps(x + i + 8), m2, l2, n2);
        }
        const __m256 mv = _mm256_max_ps(m2[0], m2[1]), lv = _mm256_min_ps(l2[0], l2[1]);
        const __m256 nanv = _mm256_or_ps(n2[0], n2[1]);
        float l8[16];
        _mm256_storeu_ps(l8, mv);
        _mm256_storeu_ps(l8 + 8, lv);
        *nan = _mm256_movemask_ps(nanv);
        for (int k = 0; k < 8; k++) {
            m = l8[k] > m ? l8[k] : m;
            low = l8[k + 8] < low ? l8[k + 8] : low;
        }
    }
    for (; i < n; i++) {
        const double v = masked ? (double)x[i] + (double)mask[i] : (double)x[i];
        if (masked)
            e[i] = v;
        *nan |= v != v;
        m = v > m ? v : m;
        low = v < low ? v : low;
    }
    *lo = low; /* (a NaN row's is not used) */
    return m;
}

/* normal: every t >= MXP_EXPSHIFT_NORMAL, exp without its tests. */
static inline __attribute__((always_inline)) __m256d mxp_softmax_exp_avx2(__m256d t, int normal)
{
    return normal ? mxp_expshift_pd_normal_avx2(t) : mxp_expshift_pd_avx2(t);
}

/* The rest of the row once its maximum m is known (normal: as above, a
 * copy of the loop each way). */
static inline __attribute__((always_inline)) void mxp_softmax_exps_avx2(float *y, const float *x, size_t n, double *e,
                                                                       int lg, int masked, double m, int normal)
{
    const __m256d vm = _mm256_set1_pd(m);
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256d e0 = mxp_softmax_exp_avx2(_mm256_sub_pd(mxp_softmax_v4_avx2(x, e, i, masked), vm), normal);
        const __m256d e1 = mxp_softmax_exp_avx2(_mm256_sub_pd(mxp_softmax_v4_avx2(x, e, i + 4, masked), vm), normal);
        if (!lg) { /* log_softmax keeps v (with a mask: in e) */
            _mm256_storeu_pd(e + i, e0);
            _mm256_storeu_pd(e + i + 4, e1);
        }
        s0 = _mm256_add_pd(s0, e0);
        s1 = _mm256_add_pd(s1, e1);
    }
    double t = 0, lanes[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
    if (i < n) { /* the last elements in lanes of their own, the rest exp(0) */
        for (size_t k = 0; k < n - i; k++)
            lanes[k] = (masked ? e[i + k] : (double)x[i + k]) - m;
        _mm256_storeu_pd(lanes, mxp_expshift_pd_avx2(_mm256_loadu_pd(lanes)));
        _mm256_storeu_pd(lanes + 4, mxp_expshift_pd_avx2(_mm256_loadu_pd(lanes + 4)));
        for (size_t k = 0; k < n - i; k++) {
            if (!lg)
                e[i + k] = lanes[k];
            t += lanes[k];
        }
    }
    _mm256_storeu_pd(lanes, s0);
    _mm256_storeu_pd(lanes + 4, s1);
    const double sum = mxp_sum8_fold(lanes, t), r = 1 / sum, ls = lg ? log(sum) : 0;
    const __m256d vr = _mm256_set1_pd(r), vls = _mm256_set1_pd(ls);
    for (i = 0; i + 4 <= n; i += 4)
        mxp_norm_store4_avx2(y, i,
                             lg ? _mm256_sub_pd(_mm256_sub_pd(mxp_softmax_v4_avx2(x, e, i, masked), vm), vls)
                                : _mm256_mul_pd(_mm256_loadu_pd(e + i), vr));
    mxp_softmax_out(y, x, e, i, n, m, r, ls, lg, masked);
}

/* t = v - m >= lo - m for every element (rounding is monotonic): where that
 * is at least MXP_EXPSHIFT_NORMAL, no exp needs expshift-avx2.h's tests. */
static inline __attribute__((always_inline)) void mxp_softmax_body_avx2(float *y, const float *x, const float *mask,
                                                                       size_t n, double *e, int lg, int masked)
{
    int nan = 0;
    double lo;
    const double m = mxp_softmax_max_avx2(x, mask, n, e, &nan, &lo, masked);
    if (mxp_softmax_nan_row(y, n, m, nan))
        return;
    if (lo - m >= MXP_EXPSHIFT_NORMAL)
        mxp_softmax_exps_avx2(y, x, n, e, lg, masked, m, 1);
    else
        mxp_softmax_exps_avx2(y, x, n, e, lg, masked, m, 0);
}

static inline void mxp_softmax_avx2(float *y, const float *x, const float *mask, size_t n, double *e, int lg)
{
    if (mask)
        mxp_softmax_body_avx2(y, x, mask, n, e, lg, 1);
    else
        mxp_softmax_body_avx2(y, x, NULL, n, e, lg, 0);
}

#endif

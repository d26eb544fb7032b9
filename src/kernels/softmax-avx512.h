/* The AVX-512 body of the float32 softmax row kernel (f32-softmax/avx512f.c;
 * softmax-kernels.h): the maximum over sixteen float32 lanes, then eight
 * float64 lanes -- expshift-avx512.h's exp, the eight running sums one
 * register -- and the results rounded to float32. */
#ifndef MXP_KERNELS_SOFTMAX_AVX512_H
#define MXP_KERNELS_SOFTMAX_AVX512_H

#include <immintrin.h>

#include "kernels/expshift-avx512.h"
#include "kernels/norm-avx512.h"
#include "kernels/softmax-kernels.h"

static inline void mxp_softmax_avx512(float *y, const float *x, size_t n, double *e, int lg)
{
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __m512 mv = ninf;
    __mmask16 nan = 0;
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 k = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
        const __m512 v = _mm512_mask_loadu_ps(ninf, k, x + i);
        nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        mv = _mm512_max_ps(v, mv);
    }
    const double m = _mm512_reduce_max_ps(mv);
    if (mxp_softmax_nan_row(y, n, m, nan != 0))
        return;
    const mxp_expshift_avx512 c = mxp_expshift_avx512_init();
    const __m512d vm = _mm512_set1_pd(m);
    __m512d s = _mm512_setzero_pd();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m512d ev = mxp_expshift_pd_avx512(&c, _mm512_sub_pd(mxp_norm_load8_avx512(x, i), vm));
        if (!lg)
            _mm512_storeu_pd(e + i, ev);
        s = _mm512_add_pd(s, ev);
    }
    double t = 0, lanes[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
    if (i < n) { /* the last elements in lanes of their own, the rest exp(0) */
        for (size_t k = 0; k < n - i; k++)
            lanes[k] = (double)x[i + k] - m;
        _mm512_storeu_pd(lanes, mxp_expshift_pd_avx512(&c, _mm512_loadu_pd(lanes)));
        for (size_t k = 0; k < n - i; k++)
            t += e[i + k] = lanes[k];
    }
    _mm512_storeu_pd(lanes, s);
    const double sum = mxp_sum8_fold(lanes, t), r = 1 / sum, ls = lg ? log(sum) : 0;
    const __m512d vr = _mm512_set1_pd(r), vls = _mm512_set1_pd(ls);
    for (i = 0; i + 8 <= n; i += 8)
        mxp_norm_store8_avx512(y, i,
                               lg ? _mm512_sub_pd(_mm512_sub_pd(mxp_norm_load8_avx512(x, i), vm), vls)
                                  : _mm512_mul_pd(_mm512_loadu_pd(e + i), vr));
    mxp_softmax_out(y, x, e, i, n, m, r, ls, lg);
}

#endif

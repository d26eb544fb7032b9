/* Float32 batch-norm blocks, AVX-512: rows of a channel eight values a
 * step (the sums norm-avx512.h's), or eight channels of a pixel (NHWC).
 * See bnorm-kernels.h. */
#include "kernels/bnorm-kernels.h"
#include "kernels/norm-avx512.h"

static inline __m512d at8(const double *a, size_t k, __m512d none)
{
    return a ? _mm512_loadu_pd(a + k) : none;
}

/* Channel sums of rows channels (a constant), the pass a constant too. */
MXP_INLINE void sums(const float *const *x, size_t rows, const mxp_f32_bnorm_params *p, const double *c, double *out)
{
    if (p->pass == MXP_BNORM_SUMSQ)
        mxp_norm_sums_avx512(x, rows, p->inner, c, 1, out, NULL, 1);
    else
        mxp_norm_sums_avx512(x, rows, p->inner, c, 0, out, NULL, 1);
}

void mxp_f32_bnorm__avx512f(const mxp_f32_bnorm_params *p)
{
    const __m512d zero = _mm512_setzero_pd();
    if (p->inner == 1) {
        size_t k = 0;
        for (; k + 8 <= p->c; k += 8) {
            const __m512d v = _mm512_cvtps_pd(_mm256_loadu_ps(p->x + k));
            if (p->pass == MXP_BNORM_SUM) {
                _mm512_storeu_pd(p->s + k, _mm512_add_pd(_mm512_loadu_pd(p->s + k), v));
            } else if (p->pass == MXP_BNORM_SUMSQ) {
                const __m512d d = _mm512_sub_pd(v, _mm512_loadu_pd(p->mean + k));
                _mm512_storeu_pd(p->s + k, _mm512_add_pd(_mm512_loadu_pd(p->s + k), _mm512_mul_pd(d, d)));
            } else {
                __m512d h = _mm512_mul_pd(_mm512_sub_pd(v, _mm512_loadu_pd(p->mean + k)), _mm512_loadu_pd(p->rstd + k));
                if (p->w)
                    h = _mm512_mul_pd(h, _mm512_loadu_pd(p->w + k));
                _mm256_storeu_ps(p->y + k, _mm512_cvtpd_ps(_mm512_add_pd(h, at8(p->b, k, zero))));
            }
        }
        mxp_bnorm_pixel_tail(p, k);
        return;
    }
    if (p->pass != MXP_BNORM_NORM) {
        MXP_BNORM_CHANNEL_SUMS(p, sums);
        return;
    }
    for (size_t k = 0; k < p->c; k++) {
        const float *x = p->x + k * p->inner;
        const __m512d m = _mm512_set1_pd(p->mean[k]), r = _mm512_set1_pd(p->rstd[k]);
        const __m512d w = _mm512_set1_pd(p->w ? p->w[k] : 1), b = _mm512_set1_pd(p->b ? p->b[k] : 0);
        float *y = p->y + k * p->inner;
        size_t i = 0;
        for (; i + 8 <= p->inner; i += 8) {
            __m512d h = _mm512_mul_pd(_mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(x + i)), m), r);
            if (p->w)
                h = _mm512_mul_pd(h, w);
            _mm256_storeu_ps(y + i, _mm512_cvtpd_ps(_mm512_add_pd(h, b)));
        }
        mxp_bnorm_row_tail(p, k, i);
    }
}

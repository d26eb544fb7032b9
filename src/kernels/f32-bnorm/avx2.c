/* Float32 batch-norm blocks, AVX2: rows of a channel four values a step
 * (the sums norm-avx2.h's), or four channels of a pixel (NHWC).  See
 * bnorm-kernels.h. */
#include "kernels/bnorm-kernels.h"
#include "kernels/norm-avx2.h"

/* Channel sums of rows channels (a constant), the pass a constant too. */
MXP_INLINE void sums(const float *const *x, size_t rows, const mxp_f32_bnorm_params *p, const double *c, double *out)
{
    if (p->pass == MXP_BNORM_SUMSQ)
        mxp_norm_sums_avx2(x, rows, p->inner, c, 1, out, NULL, 1);
    else
        mxp_norm_sums_avx2(x, rows, p->inner, c, 0, out, NULL, 1);
}

static void one_block(const mxp_f32_bnorm_params *p)
{
    if (p->inner == 1) {
        size_t k = 0;
        for (; k + 4 <= p->c; k += 4) {
            const __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(p->x + k));
            if (p->pass == MXP_BNORM_SUM) {
                _mm256_storeu_pd(p->s + k, _mm256_add_pd(_mm256_loadu_pd(p->s + k), v));
            } else if (p->pass == MXP_BNORM_SUMSQ) {
                const __m256d d = _mm256_sub_pd(v, _mm256_loadu_pd(p->mean + k));
                _mm256_storeu_pd(p->s + k, _mm256_add_pd(_mm256_loadu_pd(p->s + k), _mm256_mul_pd(d, d)));
            } else {
                __m256d a = _mm256_loadu_pd(p->rstd + k);
                if (p->w)
                    a = _mm256_mul_pd(a, _mm256_loadu_pd(p->w + k));
                const __m256d d = _mm256_sub_pd(v, _mm256_loadu_pd(p->mean + k));
                _mm_storeu_ps(p->y + k, _mm256_cvtpd_ps(_mm256_fmadd_pd(d, a, p->b ? _mm256_loadu_pd(p->b + k)
                                                                                     : _mm256_setzero_pd())));
            }
        }
        mxp_bnorm_pixel_tail(p, k);
        return;
    }
    const size_t inner = p->inner;
    for (size_t k = 0; k < p->c; k++) {
        const float *x = p->x + k * inner;
        const __m256d m = _mm256_set1_pd(p->mean[k]), a = _mm256_set1_pd(mxp_bnorm_scale(p, k));
        const __m256d b = _mm256_set1_pd(p->b ? p->b[k] : 0);
        float *y = p->y + k * inner;
        size_t i = 0;
        for (; i + 8 <= inner; i += 8) {
            const __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i)), m);
            const __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)), m);
            _mm_storeu_ps(y + i, _mm256_cvtpd_ps(_mm256_fmadd_pd(d0, a, b)));
            _mm_storeu_ps(y + i + 4, _mm256_cvtpd_ps(_mm256_fmadd_pd(d1, a, b)));
        }
        for (; i + 4 <= inner; i += 4)
            _mm_storeu_ps(y + i, _mm256_cvtpd_ps(_mm256_fmadd_pd(_mm256_sub_pd(_mm256_cvtps_pd(
                                                                     _mm_loadu_ps(x + i)), m), a, b)));
        mxp_bnorm_row_tail(p, k, i);
    }
}

void mxp_f32_bnorm__avx2(const mxp_f32_bnorm_params *p)
{
    MXP_BNORM_KERNEL_BODY(p, sums, one_block);
}

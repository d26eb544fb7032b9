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

static void one_block(const mxp_f32_bnorm_params *p)
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
                __m512d a = _mm512_loadu_pd(p->rstd + k);
                if (p->w)
                    a = _mm512_mul_pd(a, _mm512_loadu_pd(p->w + k));
                const __m512d d = _mm512_sub_pd(v, _mm512_loadu_pd(p->mean + k));
                _mm256_storeu_ps(p->y + k, _mm512_cvtpd_ps(_mm512_fmadd_pd(d, a, at8(p->b, k, zero))));
            }
        }
        mxp_bnorm_pixel_tail(p, k);
        return;
    }
    const size_t inner = p->inner;
    for (size_t k = 0; k < p->c; k++) {
        const float *x = p->x + k * inner;
        const __m512d m = _mm512_set1_pd(p->mean[k]), a = _mm512_set1_pd(mxp_bnorm_scale(p, k));
        const __m512d b = _mm512_set1_pd(p->b ? p->b[k] : 0);
        float *y = p->y + k * inner;
        size_t i = 0;
        for (; i + 16 <= inner; i += 16) {
            const __m512d d0 = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(x + i)), m);
            const __m512d d1 = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8)), m);
            _mm256_storeu_ps(y + i, _mm512_cvtpd_ps(_mm512_fmadd_pd(d0, a, b)));
            _mm256_storeu_ps(y + i + 8, _mm512_cvtpd_ps(_mm512_fmadd_pd(d1, a, b)));
        }
        for (; i + 8 <= inner; i += 8)
            _mm256_storeu_ps(y + i, _mm512_cvtpd_ps(_mm512_fmadd_pd(_mm512_sub_pd(_mm512_cvtps_pd(
                                                                        _mm256_loadu_ps(x + i)), m), a, b)));
        mxp_bnorm_row_tail(p, k, i);
    }
}

void mxp_f32_bnorm__avx512f(const mxp_f32_bnorm_params *p)
{
    MXP_BNORM_KERNEL_BODY(p, sums, one_block);
}

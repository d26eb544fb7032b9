/* Float32 pooling rows, AVX2.  Every output vector stays in registers
 * over the window's offsets (p, q) in order, then is stored once: eight
 * output columns of one channel (NCHW, strides 1 and 2: the even columns
 * picked from two vectors), or eight channels of a pixel (NHWC, and the
 * global sum's eight lanes along a wide window); the edge columns, the
 * last channels and other strides by the portable loop.  Max: vmaxps
 * (x > a ? x : a), then a NaN x taken; sums widened and added in float64.
 * See pool-kernels.h. */
#include <immintrin.h>

#include "kernels/pool-kernels.h"

typedef struct acc8 {
    __m256 m;      /* max */
    __m256d s[2];  /* sums: lanes 0-3, 4-7 */
} acc8;

static inline void acc_init(int kind, acc8 *a)
{
    a->m = _mm256_set1_ps(kind == MXP_POOL_MAX ? -INFINITY : 0.0f); /* both set: no field left undefined */
    a->s[0] = a->s[1] = _mm256_setzero_pd();
}

static inline void acc_add(int kind, acc8 *a, __m256 x)
{
    if (kind == MXP_POOL_MAX) {
        a->m = _mm256_blendv_ps(_mm256_max_ps(x, a->m), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
        return;
    }
    a->s[0] = _mm256_add_pd(a->s[0], _mm256_cvtps_pd(_mm256_castps256_ps128(x)));
    a->s[1] = _mm256_add_pd(a->s[1], _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)));
}

/* Stores a at dst (eight output columns or channels from j): sums divided
 * first by the divisors at d (one each), or by one divisor d1. */
static inline void acc_store(const mxp_f32_pool_params *p, void *dst, const acc8 *a, const double *d, double d1)
{
    if (p->kind == MXP_POOL_MAX) {
        _mm256_storeu_ps(dst, a->m);
        return;
    }
    __m256d s0 = a->s[0], s1 = a->s[1];
    if (p->div) {
        s0 = _mm256_div_pd(s0, d ? _mm256_loadu_pd(d) : _mm256_set1_pd(d1));
        s1 = _mm256_div_pd(s1, d ? _mm256_loadu_pd(d + 4) : _mm256_set1_pd(d1));
    }
    _mm256_storeu_pd(dst, s0);
    _mm256_storeu_pd((double *)dst + 4, s1);
}

/* Eight consecutive output columns of one channel from j, offset q of row x. */
static inline __m256 columns8(const mxp_f32_pool_params *p, const float *x, size_t q, size_t j)
{
    const float *x0 = x + j * p->s + q - p->pw;
    if (p->s == 1)
        return _mm256_loadu_ps(x0);
    const __m256 t = _mm256_shuffle_ps(_mm256_loadu_ps(x0), _mm256_loadu_ps(x0 + 8), _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
}

static void narrow(void *acc, const mxp_f32_pool_params *p)
{
    size_t lo[MXP_POOL_WIDE], hi[MXP_POOL_WIDE], j0, j1;
    for (size_t q = 0; q < p->kw; q++)
        mxp_pool_columns(p, q, &lo[q], &hi[q]);
    mxp_pool_interior(p, lo, hi, &j0, &j1);
    const size_t ch = p->ch, size = p->kind == MXP_POOL_MAX ? 4 : 8;
    char *a = acc;
    mxp_pool_init(acc, p);
    if (ch == 1) {
        /* blocks of eight inside every run; stride 2 reads column 2j + 15 of the
         * block at j: one column past its last, so one block less */
        size_t jb = j0;
        if (p->s <= 2)
            for (; jb + 8 + (p->s == 2) <= j1; jb += 8) {
                acc8 r;
                acc_init(p->kind, &r);
                for (size_t pr = 0; pr < p->kh; pr++)
                    for (size_t q = 0; p->rows[pr] && q < p->kw; q++)
                        acc_add(p->kind, &r, columns8(p, p->rows[pr], q, jb));
                acc_store(p, a + jb * size, &r, p->div ? p->div + jb : NULL, 0);
            }
        for (size_t j = 0; j < p->ow; j++) { /* the rest */
            if (j == j0)
                j = jb;
            if (j < p->ow)
                mxp_pool_point(acc, p, lo, hi, j, 0);
        }
        return;
    }
    const size_t c8 = ch / 8 * 8;
    for (size_t j = 0; j < p->ow; j++) {
        for (size_t c = 0; c < c8; c += 8) {
            acc8 r;
            acc_init(p->kind, &r);
            for (size_t pr = 0; pr < p->kh; pr++)
                for (size_t q = 0; p->rows[pr] && q < p->kw; q++)
                    if (j >= lo[q] && j < hi[q])
                        acc_add(p->kind, &r, _mm256_loadu_ps(p->rows[pr] + (j * p->s + q - p->pw) * ch + c));
            acc_store(p, a + (j * ch + c) * size, &r, NULL, p->div ? p->div[j] : 1);
        }
        if (c8 < ch)
            mxp_pool_point(acc, p, lo, hi, j, c8);
    }
}

/* Wide windows: each window's columns in turn, channels eight at a time
 * (the last ones by the portable loop); one channel: eight columns at a
 * time for max, the portable chain for sums. */
static void wide(void *acc, const mxp_f32_pool_params *p)
{
    const size_t ch = p->ch, size = p->kind == MXP_POOL_MAX ? 4 : 8, c8 = ch / 8 * 8;
    if (ch == 1 && p->kind != MXP_POOL_MAX) { /* one chain: the additions' order */
        mxp_f32_pool__scalar(acc, p);
        return;
    }
    mxp_pool_init(acc, p);
    for (size_t j = 0; j < p->ow; j++) {
        size_t w0 = j * p->s, w1 = w0 + p->kw;
        w0 = w0 > p->pw ? w0 - p->pw : 0;
        w1 = w1 > p->pw ? w1 - p->pw : 0;
        w1 = w1 < p->w ? w1 : p->w;
        if (ch == 1) { /* eight lane maxima, NaNs noted; the last columns one by one */
            __m256 m = _mm256_set1_ps(-INFINITY), nan = _mm256_setzero_ps();
            float mt = -INFINITY;
            int nant = 0;
            for (size_t pr = 0; pr < p->kh; pr++) {
                const float *x = p->rows[pr];
                size_t w = w0;
                for (; x && w + 8 <= w1; w += 8) {
                    const __m256 v = _mm256_loadu_ps(x + w);
                    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
                    m = _mm256_max_ps(v, m);
                }
                for (; x && w < w1; w++) {
                    nant |= x[w] != x[w];
                    mt = x[w] > mt ? x[w] : mt;
                }
            }
            float l[8];
            _mm256_storeu_ps(l, m);
            for (int k = 0; k < 8; k++)
                mt = l[k] > mt ? l[k] : mt;
            mxp_pool_wide_max1(acc, p, j, w0, w1, mt, nant || _mm256_movemask_ps(nan));
            continue;
        }
        for (size_t c = 0; c < c8; c += 8) {
            acc8 r;
            acc_init(p->kind, &r);
            for (size_t pr = 0; pr < p->kh; pr++)
                for (size_t w = w0; p->rows[pr] && w < w1; w++)
                    acc_add(p->kind, &r, _mm256_loadu_ps(p->rows[pr] + w * ch + c));
            acc_store(p, (char *)acc + (j * ch + c) * size, &r, NULL, p->div ? p->div[j] : 1);
        }
        for (size_t pr = 0; c8 < ch && pr < p->kh; pr++)
            if (p->rows[pr] && w1 > w0)
                mxp_pool_wide_tail(acc, p, p->rows[pr], j, w0, w1, c8);
        mxp_pool_divide(acc, p, j, j + 1, c8);
    }
}

void mxp_f32_pool__avx2(void *acc, const mxp_f32_pool_params *p)
{
    if (p->kw > MXP_POOL_WIDE)
        wide(acc, p);
    else
        narrow(acc, p);
}

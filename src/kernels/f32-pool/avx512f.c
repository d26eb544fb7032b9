/* Float32 pooling rows, AVX-512.  Every output vector stays in registers
 * over the window's offsets (p, q) in order, then is stored once: sixteen
 * output columns of one channel (NCHW, strides 1 and 2: the even columns
 * picked from two vectors), or sixteen channels of a pixel (NHWC, and the
 * global sum's eight lanes along a wide window); the columns where some
 * offset leaves x, and other strides, by the portable loop.  Max: vmaxps
 * (x > a ? x : a), then a NaN x taken; sums widened and added in float64.
 * See pool-kernels.h. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/pool-kernels.h"

typedef struct acc16 {
    __m512 m;      /* max */
    __m512d s[2];  /* sums: channels 0-7, 8-15 */
} acc16;

static inline __mmask16 first(size_t n)
{
    return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
}

static inline void acc_init(int kind, acc16 *a)
{
    a->m = _mm512_set1_ps(kind == MXP_POOL_MAX ? -INFINITY : 0.0f); /* both set: no field left undefined */
    a->s[0] = a->s[1] = _mm512_setzero_pd();
}

static inline void acc_add(int kind, acc16 *a, __m512 x)
{
    if (kind == MXP_POOL_MAX) {
        a->m = _mm512_mask_mov_ps(_mm512_max_ps(x, a->m), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
        return;
    }
    a->s[0] = _mm512_add_pd(a->s[0], _mm512_cvtps_pd(_mm512_castps512_ps256(x)));
    a->s[1] = _mm512_add_pd(a->s[1], _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1))));
}

/* Stores n lanes of a at dst (output columns or channels from j): sums
 * divided first by the divisors at d (one each), or by one divisor d1. */
static inline void acc_store(const mxp_f32_pool_params *p, void *dst, const acc16 *a, size_t n, const double *d,
                             double d1)
{
    const __mmask16 m = first(n);
    if (p->kind == MXP_POOL_MAX) {
        _mm512_mask_storeu_ps(dst, m, a->m);
        return;
    }
    __m512d s0 = a->s[0], s1 = a->s[1];
    if (p->div) {
        s0 = _mm512_div_pd(s0, d ? _mm512_mask_loadu_pd(_mm512_set1_pd(1), (__mmask8)m, d) : _mm512_set1_pd(d1));
        s1 = _mm512_div_pd(s1, d ? _mm512_mask_loadu_pd(_mm512_set1_pd(1), (__mmask8)(m >> 8), d + 8)
                                 : _mm512_set1_pd(d1));
    }
    _mm512_mask_storeu_pd(dst, (__mmask8)m, s0);
    if (n > 8)
        _mm512_mask_storeu_pd((double *)dst + 8, (__mmask8)(m >> 8), s1);
}

/* Output columns j + l of one channel, l < n, from offset q of row x where
 * l is in [l0, l1) (the rest: -inf for max, 0 for sums: no change).  The
 * loads cover only columns of x: masked lanes do not fault. */
static inline __m512 columns16(const mxp_f32_pool_params *p, const float *x, size_t q, size_t j, size_t l0, size_t l1)
{
    const __m512 fill = _mm512_set1_ps(p->kind == MXP_POOL_MAX ? -INFINITY : 0.0f);
    const float *x0 = x + (ptrdiff_t)(j * p->s + q) - (ptrdiff_t)p->pw;
    if (p->s == 1)
        return _mm512_mask_loadu_ps(fill, (__mmask16)(first(l1) & ~first(l0)), x0);
    /* columns 2 l0 .. 2 l1 - 2 of x0 (all inside x), the even ones kept */
    const uint32_t m = (uint32_t)((1ull << (2 * l1 - 1)) - 1) & ~(uint32_t)((1ull << (2 * l0)) - 1);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(_mm512_mask_loadu_ps(fill, (__mmask16)m, x0), even,
                                  _mm512_mask_loadu_ps(fill, (__mmask16)(m >> 16), x0 + 16));
}

static void narrow(void *acc, const mxp_f32_pool_params *p)
{
    size_t lo[MXP_POOL_WIDE], hi[MXP_POOL_WIDE];
    for (size_t q = 0; q < p->kw; q++)
        mxp_pool_columns(p, q, &lo[q], &hi[q]);
    const size_t ch = p->ch, size = p->kind == MXP_POOL_MAX ? 4 : 8;
    char *a = acc;
    if (ch == 1 && p->s > 2) {
        mxp_f32_pool__scalar(acc, p);
        return;
    }
    if (ch == 1) { /* sixteen output columns a step, each offset's run masked */
        for (size_t j = 0; j < p->ow; j += 16) {
            const size_t n = p->ow - j < 16 ? p->ow - j : 16;
            acc16 r;
            acc_init(p->kind, &r);
            for (size_t pr = 0; pr < p->kh; pr++)
                for (size_t q = 0; p->rows[pr] && q < p->kw; q++) {
                    const size_t l0 = lo[q] > j ? lo[q] - j : 0, l1 = hi[q] - j < n ? hi[q] - j : n;
                    if (hi[q] > j && l1 > l0)
                        acc_add(p->kind, &r, columns16(p, p->rows[pr], q, j, l0, l1));
                }
            acc_store(p, a + j * size, &r, n, p->div ? p->div + j : NULL, 0);
        }
        return;
    }
    for (size_t j = 0; j < p->ow; j++)
        for (size_t c = 0; c < ch; c += 16) {
            const size_t n = ch - c < 16 ? ch - c : 16;
            acc16 r;
            acc_init(p->kind, &r);
            for (size_t pr = 0; pr < p->kh; pr++)
                for (size_t q = 0; p->rows[pr] && q < p->kw; q++)
                    if (j >= lo[q] && j < hi[q])
                        acc_add(p->kind, &r, _mm512_maskz_loadu_ps(first(n), p->rows[pr] + (j * p->s + q - p->pw) * ch + c));
            acc_store(p, a + (j * ch + c) * size, &r, n, NULL, p->div ? p->div[j] : 1);
        }
}

/* Wide windows: each window's columns in turn, channels sixteen at a time;
 * one channel: sixteen columns at a time for max, the portable chain for
 * sums. */
static void wide(void *acc, const mxp_f32_pool_params *p)
{
    const size_t ch = p->ch, size = p->kind == MXP_POOL_MAX ? 4 : 8;
    if (ch == 1 && p->kind != MXP_POOL_MAX) { /* one chain: the additions' order */
        mxp_f32_pool__scalar(acc, p);
        return;
    }
    for (size_t j = 0; j < p->ow; j++) {
        size_t w0 = j * p->s, w1 = w0 + p->kw;
        w0 = w0 > p->pw ? w0 - p->pw : 0;
        w1 = w1 > p->pw ? w1 - p->pw : 0;
        w1 = w1 < p->w ? w1 : p->w;
        if (ch == 1) { /* sixteen lane maxima, NaNs noted */
            __m512 m = _mm512_set1_ps(-INFINITY);
            __mmask16 nan = 0;
            for (size_t pr = 0; pr < p->kh; pr++)
                for (size_t w = w0; p->rows[pr] && w < w1; w += 16) {
                    const __m512 v = _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), first(w1 - w), p->rows[pr] + w);
                    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
                    m = _mm512_max_ps(v, m);
                }
            mxp_pool_wide_max1(acc, p, j, w0, w1, _mm512_reduce_max_ps(m), nan != 0);
            continue;
        }
        for (size_t c = 0; c < ch; c += 64) { /* four sixteen-channel accumulators: four chains in flight */
            acc16 r[4];
            __mmask16 k[4];
            for (size_t u = 0; u < 4; u++) {
                k[u] = c + 16 * u < ch ? first(ch - c - 16 * u) : 0;
                acc_init(p->kind, &r[u]);
            }
            for (size_t pr = 0; pr < p->kh; pr++)
                for (size_t w = w0; p->rows[pr] && w < w1; w++)
                    for (size_t u = 0; u < 4; u++)
                        if (k[u])
                            acc_add(p->kind, &r[u], _mm512_maskz_loadu_ps(k[u], p->rows[pr] + w * ch + c + 16 * u));
            for (size_t u = 0; u < 4 && k[u]; u++)
                acc_store(p, (char *)acc + (j * ch + c + 16 * u) * size, &r[u], ch - c - 16 * u, NULL,
                          p->div ? p->div[j] : 1);
        }
    }
}

void mxp_f32_pool__avx512f(void *acc, const mxp_f32_pool_params *p)
{
    if (p->kw > MXP_POOL_WIDE)
        wide(acc, p);
    else
        narrow(acc, p);
}

/* The finite minimum and maximum of float32 with AVX-512: masked min/max
 * on the finite lanes, two vectors a step, the tail masked; per column
 * (one row folded into per-column ranges) 16 columns a step.  See
 * quant-kernels.h. */
#include <immintrin.h>

#include "kernels/quant-kernels.h"

void mxp_f32_minmax__avx512f(const float *x, size_t n, float *lo, float *hi)
{
    const __m512 inf = _mm512_set1_ps(__builtin_inff());
    __m512 a0 = _mm512_set1_ps(*lo), a1 = a0, b0 = _mm512_set1_ps(*hi), b1 = b0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
        const __mmask16 f0 = _mm512_cmp_ps_mask(_mm512_abs_ps(v0), inf, _CMP_LT_OQ); /* finite */
        const __mmask16 f1 = _mm512_cmp_ps_mask(_mm512_abs_ps(v1), inf, _CMP_LT_OQ);
        a0 = _mm512_mask_min_ps(a0, f0, v0, a0);
        b0 = _mm512_mask_max_ps(b0, f0, v0, b0);
        a1 = _mm512_mask_min_ps(a1, f1, v1, a1);
        b1 = _mm512_mask_max_ps(b1, f1, v1, b1);
    }
    for (; i < n; i += 16) {
        const size_t len = n - i < 16 ? n - i : 16;
        const __mmask16 m = (__mmask16)((1u << len) - 1);
        const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        const __mmask16 f = _mm512_cmp_ps_mask(_mm512_abs_ps(v), inf, _CMP_LT_OQ) & m;
        a0 = _mm512_mask_min_ps(a0, f, v, a0);
        b0 = _mm512_mask_max_ps(b0, f, v, b0);
    }
    *lo = _mm512_reduce_min_ps(_mm512_min_ps(a0, a1));
    *hi = _mm512_reduce_max_ps(_mm512_max_ps(b0, b1));
}

void mxp_f32_minmax_cols__avx512f(const float *x, size_t n, float *lo, float *hi)
{
    const __m512 inf = _mm512_set1_ps(__builtin_inff());
    for (size_t i = 0; i < n; i += 16) {
        const size_t len = n - i < 16 ? n - i : 16;
        const __mmask16 m = (__mmask16)((1u << len) - 1);
        const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        const __mmask16 f = _mm512_cmp_ps_mask(_mm512_abs_ps(v), inf, _CMP_LT_OQ) & m;
        const __m512 a = _mm512_maskz_loadu_ps(m, lo + i), b = _mm512_maskz_loadu_ps(m, hi + i);
        _mm512_mask_storeu_ps(lo + i, f, _mm512_min_ps(v, a));
        _mm512_mask_storeu_ps(hi + i, f, _mm512_max_ps(v, b));
    }
}

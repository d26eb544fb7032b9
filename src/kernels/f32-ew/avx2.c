/* float32/float64 + - * / with AVX2: 16 float32 (8 float64) lanes a step,
 * the tail by the scalar operation (the same IEEE operation).  See
 * f32-ew-kernels.h. */
#include <immintrin.h>

#include "kernels/f32-ew-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

MXP_INLINE __m256 op_ps(int op, __m256 x, __m256 y)
{
    switch (op) {
    case MXP_ARITH_ADD: return _mm256_add_ps(x, y);
    case MXP_ARITH_SUB: return _mm256_sub_ps(x, y);
    case MXP_ARITH_MUL: return _mm256_mul_ps(x, y);
    default: return _mm256_div_ps(x, y);
    }
}

MXP_INLINE __m256d op_pd(int op, __m256d x, __m256d y)
{
    switch (op) {
    case MXP_ARITH_ADD: return _mm256_add_pd(x, y);
    case MXP_ARITH_SUB: return _mm256_sub_pd(x, y);
    case MXP_ARITH_MUL: return _mm256_mul_pd(x, y);
    default: return _mm256_div_pd(x, y);
    }
}

MXP_INLINE float op_ss(int op, float x, float y)
{
    return op == MXP_ARITH_ADD ? x + y : op == MXP_ARITH_SUB ? x - y : op == MXP_ARITH_MUL ? x * y : x / y;
}

MXP_INLINE double op_sd(int op, double x, double y)
{
    return op == MXP_ARITH_ADD ? x + y : op == MXP_ARITH_SUB ? x - y : op == MXP_ARITH_MUL ? x * y : x / y;
}

MXP_INLINE void f32_loop(int op, float *y, const float *a, const float *b, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 r0 = op_ps(op, _mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
        const __m256 r1 = op_ps(op, _mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
        _mm256_storeu_ps(y + i, r0);
        _mm256_storeu_ps(y + i + 8, r1);
    }
    for (; i < n; i++)
        y[i] = op_ss(op, a[i], b[i]);
}

MXP_INLINE void f64_loop(int op, double *y, const double *a, const double *b, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256d r0 = op_pd(op, _mm256_loadu_pd(a + i), _mm256_loadu_pd(b + i));
        const __m256d r1 = op_pd(op, _mm256_loadu_pd(a + i + 4), _mm256_loadu_pd(b + i + 4));
        _mm256_storeu_pd(y + i, r0);
        _mm256_storeu_pd(y + i + 4, r1);
    }
    for (; i < n; i++)
        y[i] = op_sd(op, a[i], b[i]);
}

void mxp_f32_arith__avx2(int op, float *y, const float *a, const float *b, size_t n)
{
    switch (op) {
    case MXP_ARITH_ADD: f32_loop(MXP_ARITH_ADD, y, a, b, n); break;
    case MXP_ARITH_SUB: f32_loop(MXP_ARITH_SUB, y, a, b, n); break;
    case MXP_ARITH_MUL: f32_loop(MXP_ARITH_MUL, y, a, b, n); break;
    default: f32_loop(MXP_ARITH_DIV, y, a, b, n); break;
    }
}

void mxp_f64_arith__avx2(int op, double *y, const double *a, const double *b, size_t n)
{
    switch (op) {
    case MXP_ARITH_ADD: f64_loop(MXP_ARITH_ADD, y, a, b, n); break;
    case MXP_ARITH_SUB: f64_loop(MXP_ARITH_SUB, y, a, b, n); break;
    case MXP_ARITH_MUL: f64_loop(MXP_ARITH_MUL, y, a, b, n); break;
    default: f64_loop(MXP_ARITH_DIV, y, a, b, n); break;
    }
}

void mxp_f32_canonical_nan__avx2(float *x, size_t n)
{
    const __m256 q = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        _mm256_storeu_ps(x + i, _mm256_blendv_ps(v, q, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    }
    for (; i < n; i++) /* as the reference (src/ops/strided.c) */
        if (x[i] != x[i])
            x[i] = _mm_cvtss_f32(_mm256_castps256_ps128(q));
}

void mxp_f64_canonical_nan__avx2(double *x, size_t n)
{
    const __m256d q = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7ff8000000000000ll));
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const __m256d v = _mm256_loadu_pd(x + i);
        _mm256_storeu_pd(x + i, _mm256_blendv_pd(v, q, _mm256_cmp_pd(v, v, _CMP_UNORD_Q)));
    }
    for (; i < n; i++)
        if (x[i] != x[i])
            x[i] = _mm_cvtsd_f64(_mm256_castpd256_pd128(q));
}

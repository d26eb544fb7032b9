/* float32 + - * / with AVX2: 16 lanes a step, the tail by the scalar
 * operation (the same IEEE operation).  See arith-kernels.h. */
#include <immintrin.h>

#include "kernels/arith-kernels.h"

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

MXP_INLINE float op_ss(int op, float x, float y)
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

void mxp_f32_arith__avx2(int op, float *y, const float *a, const float *b, size_t n)
{
    switch (op) {
    case MXP_ARITH_ADD: f32_loop(MXP_ARITH_ADD, y, a, b, n); break;
    case MXP_ARITH_SUB: f32_loop(MXP_ARITH_SUB, y, a, b, n); break;
    case MXP_ARITH_MUL: f32_loop(MXP_ARITH_MUL, y, a, b, n); break;
    default: f32_loop(MXP_ARITH_DIV, y, a, b, n); break;
    }
}

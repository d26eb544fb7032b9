/* float64 + - * / with AVX2: 8 lanes a step, the tail by the scalar
 * operation (the same IEEE operation).  See arith-kernels.h. */
#include <immintrin.h>

#include "kernels/arith-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

MXP_INLINE __m256d op_pd(int op, __m256d x, __m256d y)
{
    switch (op) {
    case MXP_ARITH_ADD: return _mm256_add_pd(x, y);
    case MXP_ARITH_SUB: return _mm256_sub_pd(x, y);
    case MXP_ARITH_MUL: return _mm256_mul_pd(x, y);
    default: return _mm256_div_pd(x, y);
    }
}

MXP_INLINE double op_sd(int op, double x, double y)
{
    return op == MXP_ARITH_ADD ? x + y : op == MXP_ARITH_SUB ? x - y : op == MXP_ARITH_MUL ? x * y : x / y;
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

void mxp_f64_arith__avx2(int op, double *y, const double *a, const double *b, size_t n)
{
    switch (op) {
    case MXP_ARITH_ADD: f64_loop(MXP_ARITH_ADD, y, a, b, n); break;
    case MXP_ARITH_SUB: f64_loop(MXP_ARITH_SUB, y, a, b, n); break;
    case MXP_ARITH_MUL: f64_loop(MXP_ARITH_MUL, y, a, b, n); break;
    default: f64_loop(MXP_ARITH_DIV, y, a, b, n); break;
    }
}

/* float64 + - * / with AVX-512F: 16 float64 lanes a step, the tail masked.
 * See arith-kernels.h. */
#include <immintrin.h>

#include "kernels/arith-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

MXP_INLINE __m512d op_pd(int op, __m512d x, __m512d y)
{
    switch (op) {
    case MXP_ARITH_ADD: return _mm512_add_pd(x, y);
    case MXP_ARITH_SUB: return _mm512_sub_pd(x, y);
    case MXP_ARITH_MUL: return _mm512_mul_pd(x, y);
    default: return _mm512_div_pd(x, y);
    }
}

MXP_INLINE void f64_loop(int op, double *y, const double *a, const double *b, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512d r0 = op_pd(op, _mm512_loadu_pd(a + i), _mm512_loadu_pd(b + i));
        const __m512d r1 = op_pd(op, _mm512_loadu_pd(a + i + 8), _mm512_loadu_pd(b + i + 8));
        _mm512_storeu_pd(y + i, r0);
        _mm512_storeu_pd(y + i + 8, r1);
    }
    for (; i < n; i += 8) {
        const __mmask8 m = n - i >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (n - i)) - 1);
        _mm512_mask_storeu_pd(y + i, m, op_pd(op, _mm512_maskz_loadu_pd(m, a + i), _mm512_maskz_loadu_pd(m, b + i)));
    }
}

void mxp_f64_arith__avx512f(int op, double *y, const double *a, const double *b, size_t n)
{
    switch (op) {
    case MXP_ARITH_ADD: f64_loop(MXP_ARITH_ADD, y, a, b, n); break;
    case MXP_ARITH_SUB: f64_loop(MXP_ARITH_SUB, y, a, b, n); break;
    case MXP_ARITH_MUL: f64_loop(MXP_ARITH_MUL, y, a, b, n); break;
    default: f64_loop(MXP_ARITH_DIV, y, a, b, n); break;
    }
}

/* float32/float64 + - * / with AVX-512F: 32 float32 (16 float64) lanes a
 * step, the tail masked.  See f32-ew-kernels.h. */
#include <immintrin.h>

#include "kernels/f32-ew-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

MXP_INLINE __m512 op_ps(int op, __m512 x, __m512 y)
{
    switch (op) {
    case MXP_ARITH_ADD: return _mm512_add_ps(x, y);
    case MXP_ARITH_SUB: return _mm512_sub_ps(x, y);
    case MXP_ARITH_MUL: return _mm512_mul_ps(x, y);
    default: return _mm512_div_ps(x, y);
    }
}

MXP_INLINE __m512d op_pd(int op, __m512d x, __m512d y)
{
    switch (op) {
    case MXP_ARITH_ADD: return _mm512_add_pd(x, y);
    case MXP_ARITH_SUB: return _mm512_sub_pd(x, y);
    case MXP_ARITH_MUL: return _mm512_mul_pd(x, y);
    default: return _mm512_div_pd(x, y);
    }
}

/* The op is a loop invariant: one loop per op, so the switch is hoisted. */
MXP_INLINE void f32_loop(int op, float *y, const float *a, const float *b, size_t n)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 r0 = op_ps(op, _mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
        const __m512 r1 = op_ps(op, _mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16));
        _mm512_storeu_ps(y + i, r0);
        _mm512_storeu_ps(y + i + 16, r1);
    }
    for (; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m, op_ps(op, _mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i)));
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

void mxp_f32_arith__avx512f(int op, float *y, const float *a, const float *b, size_t n)
{
    switch (op) {
    case MXP_ARITH_ADD: f32_loop(MXP_ARITH_ADD, y, a, b, n); break;
    case MXP_ARITH_SUB: f32_loop(MXP_ARITH_SUB, y, a, b, n); break;
    case MXP_ARITH_MUL: f32_loop(MXP_ARITH_MUL, y, a, b, n); break;
    default: f32_loop(MXP_ARITH_DIV, y, a, b, n); break;
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

void mxp_f32_canonical_nan__avx512f(float *x, size_t n)
{
    const __m512 q = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000));
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(x + i);
        _mm512_mask_storeu_ps(x + i, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), q);
    }
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        _mm512_mask_storeu_ps(x + i, m & _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), q);
    }
}

void mxp_f64_canonical_nan__avx512f(double *x, size_t n)
{
    const __m512d q = _mm512_castsi512_pd(_mm512_set1_epi64(0x7ff8000000000000ll));
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m512d v = _mm512_loadu_pd(x + i);
        _mm512_mask_storeu_pd(x + i, _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q), q);
    }
    if (i < n) {
        const __mmask8 m = (__mmask8)((1u << (n - i)) - 1);
        const __m512d v = _mm512_maskz_loadu_pd(m, x + i);
        _mm512_mask_storeu_pd(x + i, m & _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q), q);
    }
}

/* float32 + - * / with AVX-512F: 32 float32 lanes a step, the tail masked.
 * See arith-kernels.h. */
#include <immintrin.h>

#include "kernels/arith-kernels.h"

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

void mxp_f32_arith__avx512f(int op, float *y, const float *a, const float *b, size_t n)
{
    switch (op) {
    case MXP_ARITH_ADD: f32_loop(MXP_ARITH_ADD, y, a, b, n); break;
    case MXP_ARITH_SUB: f32_loop(MXP_ARITH_SUB, y, a, b, n); break;
    case MXP_ARITH_MUL: f32_loop(MXP_ARITH_MUL, y, a, b, n); break;
    default: f32_loop(MXP_ARITH_DIV, y, a, b, n); break;
    }
}
